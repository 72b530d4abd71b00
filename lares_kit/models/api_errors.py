"""A failed model request, explained in one sentence a learner can act on.

Taught in ``notebooks/15_safety_and_failure.ipynb``; used by the one
model-call path (:meth:`lares_kit.agents.AgentRun.request`), whose
``ModelFailed`` -- and so the episode's ``error`` and the ``model_error``
final message -- carries the sentence :func:`explain` writes.

A server's own error text is written for its developers: llama.cpp's server
answers a malformed message with seven pydantic validation errors and a
file path of its own source; a context overflow says "This model's maximum
context length is 2048 tokens. However, you requested 3036 tokens (...)".
:func:`explain` keeps what a learner needs -- what went wrong, the numbers,
the URL when nothing answered, and what to change -- and the SDK's class name
(``RateLimitError``, ``APITimeoutError``...) so the sentence can be searched.

What it reads, from the real ``openai`` exception types:

* ``APIConnectionError``: nothing answered at the URL (named);
* ``APITimeoutError``: no reply within the client's timeout (named, with the URL);
* ``APIStatusError``: the HTTP status and the server's message condensed
  (:func:`condense`); a context overflow in llama.cpp's, vLLM's, OpenAI's or
  LM Studio's wording becomes the two numbers and the server's setting for a
  larger context (:func:`context_overflow`); 401/403 name the key, 404 the
  model, 5xx says the server failed;
* anything else (a bug, a reply that is not a completion): its class and text.

It explains; it does not retry or decide (that is :mod:`.retries` and the loop).
"""

from __future__ import annotations

import ast
import json
import os
import re
from typing import Any

__all__ = ["CONTEXT_SETTINGS", "condense", "context_overflow", "explain", "larger_context"]

# How each server is given a larger context; the key is the LARES_SERVER name of that server.
CONTEXT_SETTINGS = {
    "llamacpp": "llama.cpp: --n_ctx {n}",
    "ollama": "Ollama: num_ctx {n}, or OLLAMA_CONTEXT_LENGTH={n}",
    "vllm": "vLLM: --max-model-len {n}",
    "lmstudio": "LM Studio: context length {n} when you load the model",
    "openai": "a model with a larger context window, or a smaller prompt: --knowledge-format retrieval",
}
SAID_AT_MOST = 160  # characters of a server's message kept in a sentence: enough for the reason, never a dump

# A context overflow, as each server words it: (window, needed) from named groups.
_OVERFLOW = [
    # llama.cpp's Python server, old vLLM, OpenAI: "maximum context length is 2048 tokens. However, you requested
    # 3036 tokens" / "However, your messages resulted in 9000 tokens" / "However, your request has 4176 input tokens"
    re.compile(r"maximum context length is (?P<window>[\d,]+) tokens.{0,40}?(?:you requested|resulted in|request "
               r"has) (?P<needed>[\d,]+)", re.I | re.S),
    # llama.cpp's C++ server (llama-server): "request (3307 tokens) exceeds the available context size (2048 tokens)"
    re.compile(r"request \((?P<needed>[\d,]+) tokens\) exceeds the available context size \((?P<window>[\d,]+)", re.I),
    # LM Studio: "Trying to keep the first 3307 tokens ... context length of only 2048 tokens"
    re.compile(r"keep the first (?P<needed>[\d,]+) tokens.{0,120}?context length of only (?P<window>[\d,]+)",
               re.I | re.S),
]
# vLLM when max_tokens is what overflows: "'max_tokens' ... is too large: 8000. This model's maximum context length
# is 4096 tokens and your request has 2778 input tokens" -- it needs input + completion.
_VLLM_MAX_TOKENS = re.compile(r"too large: (?P<completion>[\d,]+)\. This model's maximum context length is "
                              r"(?P<window>[\d,]+) tokens and your request has (?P<needed>[\d,]+) input", re.I)
_PATH = re.compile(r"\s*File \"[^\"]+\", line \d+.*|(?:[A-Za-z]:)?(?:/[\w.\-]+){2,}\.py\b")
_VALIDATION = re.compile(r"^(\d+) validation errors?\b")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def context_overflow(message: str) -> tuple[int, int] | None:
    """The context window and the tokens a request needs, read from a server's refusal; None if it is not one.

    Args:
        message: the server's error message, in any of the wordings above.

    Examples:
        >>> context_overflow("This model's maximum context length is 2048 tokens. However, you requested 3036 "
        ...                  "tokens (3031 in the messages, 5 in the completion).")
        (2048, 3036)
        >>> context_overflow("request (3307 tokens) exceeds the available context size (2048 tokens), try again")
        (2048, 3307)
        >>> context_overflow("'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum "
        ...                  "context length is 4096 tokens and your request has 2778 input tokens.")
        (4096, 10778)
        >>> context_overflow("Rate limit reached") is None
        True
    """
    found = _VLLM_MAX_TOKENS.search(message)
    if found:
        return _number(found["window"]), _number(found["needed"]) + _number(found["completion"])
    for pattern in _OVERFLOW:
        found = pattern.search(message)
        if found:
            return _number(found["window"]), _number(found["needed"])
    return None


def larger_context(needed: int) -> int:
    """A context size to suggest: a power of two at least twice what the request needs (episodes grow).

    Args:
        needed: tokens the refused request needs.

    Examples:
        >>> larger_context(3307), larger_context(1000), larger_context(5000)
        (8192, 2048, 16384)
    """
    size = 1024
    while size < 2 * needed:
        size *= 2
    return size


def _place(loc: Any) -> str:
    # ('body', 'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content') -> "messages[2].content": the
    # request's own path, without the server's class names for each member of a union.
    place = ""
    for part in loc if isinstance(loc, (list, tuple)) else [loc]:
        if part == "body" and not place:
            continue
        if isinstance(part, int):
            place += f"[{part}]"
        elif isinstance(part, str) and not part[:1].isupper():
            place += ("." if place else "") + part
    return place or "the request"


def _validation(errors: list[dict[str, Any]]) -> str:
    # A union of message kinds fails once per kind; the errors that only say "not this kind" (a wrong role, a
    # field of another kind missing) are noise: the one left says what is wrong with the message sent.
    def noise(err: dict[str, Any]) -> bool:
        loc = err.get("loc") or ()
        return (err.get("type") == "missing" or (err.get("type") == "literal_error" and list(loc)[-1:] == ["role"]))

    useful = [e for e in errors if not noise(e)] or errors
    first = useful[0]
    got = f", got {json.dumps(first['input'])}" if "input" in first and not isinstance(first["input"], (dict, list)) \
        else ""
    more = f" ({len(errors)} validation errors)" if len(errors) > 1 else ""
    return f"{_place(first.get('loc'))}: {str(first.get('msg', 'invalid')).lower()}{got}{more}"


def _parsed_errors(message: str) -> list[dict[str, Any]]:
    # llama-cpp-python prints pydantic's errors as Python dict reprs, one a line, under "N validation errors:".
    errors = []
    for line in message.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = ast.literal_eval(line)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, dict) and "msg" in value:
                errors.append(value)
    return errors


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SAID_AT_MOST else text[:SAID_AT_MOST].rsplit(" ", 1)[0] + " ..."


def condense(body: Any) -> str:
    """A server's error body (message text, or the parsed JSON) as one short clause: no file paths, no dumps.

    Args:
        body: what the SDK parsed (``exc.body``): a dict with ``message`` or FastAPI's ``detail`` list, or a string.

    Examples:
        >>> condense({"message": "1 validation error:\\n  {'type': 'literal_error', 'loc': ('body', "
        ...          "'response_format', 'type'), 'msg': \\"Input should be 'text' or 'json_object'\\", "
        ...          "'input': 'json_schema'}\\n\\n  File \\"/srv/llama_cpp/server/app.py\\", line 376, in create"})
        'response_format.type: input should be \\'text\\' or \\'json_object\\', got "json_schema"'
        >>> condense({"detail": [{"loc": ["body", "max_tokens"], "msg": "Input should be a valid integer",
        ...                       "type": "int_parsing", "input": "lots"}]})
        'max_tokens: input should be a valid integer, got "lots"'
        >>> condense("model 'llama9' not found, try pulling it first")
        "model 'llama9' not found, try pulling it first"
    """
    if isinstance(body, dict):
        detail = body.get("detail")
        if isinstance(detail, list) and detail and all(isinstance(d, dict) for d in detail):
            return _validation(detail)
        inner = body.get("error")
        body = body.get("message") or detail or (inner.get("message") if isinstance(inner, dict) else inner) or ""
    text = str(body or "").strip()
    if _VALIDATION.match(text):
        errors = _parsed_errors(text)
        if errors:
            return _validation(errors)
    return _clip(_PATH.sub("", text)).rstrip(" .")


def _server(server: str | None) -> str:
    return (server or os.environ.get("LARES_SERVER") or "").strip().lower()


def _context_hint(needed: int, server: str | None) -> str:
    size = larger_context(needed)
    name = _server(server)
    if name in CONTEXT_SETTINGS:
        return CONTEXT_SETTINGS[name].format(n=size)
    return "; ".join(CONTEXT_SETTINGS[k].format(n=size) for k in ("llamacpp", "vllm", "ollama"))


def _url(exc: Any, base_url: Any) -> str:
    if base_url:
        return str(base_url).rstrip("/")
    request = getattr(exc, "request", None)
    return str(getattr(request, "url", "")) or "the model server's URL"


def _timeout(exc: Any) -> str:
    # httpx keeps the timeouts it used in the request's extensions: {"connect": 5.0, "read": 60.0, ...}
    request = getattr(exc, "request", None)
    limits = getattr(request, "extensions", {}).get("timeout", {}) if request is not None else {}
    read = limits.get("read") if isinstance(limits, dict) else None
    return f"{read:g} s" if isinstance(read, (int, float)) else "the client's timeout"


def _model(exc: Any) -> str:
    try:
        return repr(json.loads(exc.request.content)["model"])
    except Exception:  # noqa: BLE001 -- no request, or a body that is not ours: name no model
        return "the model"


def explain(exc: BaseException, base_url: Any = None, server: str | None = None) -> str:
    """One sentence for a learner: what failed, the numbers or URL that matter, what to change.

    The sentence has no final stop: it is written to go in parentheses
    ("Stopped: the model call failed (...).").

    Args:
        exc: the exception the model call raised (an ``openai`` error after the client's retries, or any other).
        base_url: the client's base URL, named when the server could not be reached; None: the URL the request went to.
        server: the kind of server (``LARES_SERVER`` names: llamacpp, ollama, vllm, lmstudio, openai) for the
            setting to change; None: ``$LARES_SERVER``, else the settings of the common ones.

    Examples:
        >>> import httpx2 as httpx, openai, textwrap
        >>> request = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
        >>> print(textwrap.fill(explain(openai.APIConnectionError(request=request), "http://127.0.0.1:8080/v1"), 100))
        Connection error: nothing answered at http://127.0.0.1:8080/v1 (APIConnectionError) -- start the
        server there, or set OPENAI_BASE_URL to where it listens
        >>> said = ("This model's maximum context length is 2048 tokens. However, you requested 3307 tokens "
        ...         "(3307 in the messages, None in the completion).")
        >>> reply = httpx.Response(400, request=request, json={"error": {"message": said}})
        >>> print(textwrap.fill(explain(openai.BadRequestError(said, response=reply, body={"message": said}),
        ...                             server="llamacpp"), 100))
        the server rejected the request (HTTP 400, BadRequestError): its context window is 2,048 tokens and
        this request needs 3,307 -- start it with a larger context (llama.cpp: --n_ctx 8192)
        >>> explain(KeyError("choices"))
        "KeyError: 'choices'"
    """
    import openai  # here, not at the top: explaining an error must not make ``import lares_kit`` heavy

    kind = type(exc).__name__
    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its parent class
        return (f"the server at {_url(exc, base_url)} did not answer within {_timeout(exc)} ({kind}); it was not "
                "asked again, since a server that works on one request at a time would still be computing it -- "
                "bound the reply (max_tokens), use a smaller model, or give the client a longer timeout")
    if isinstance(exc, openai.APIConnectionError):
        return (f"Connection error: nothing answered at {_url(exc, base_url)} ({kind}) -- start the server there, "
                "or set OPENAI_BASE_URL to where it listens")
    if not isinstance(exc, openai.APIStatusError):
        return f"{kind}: {exc}"
    status = exc.status_code
    said = condense(exc.body if exc.body is not None else exc.message)
    what = f"(HTTP {status}, {kind})"
    overflow = context_overflow(json.dumps(exc.body) if exc.body is not None else str(exc.message))
    if overflow:
        window, needed = overflow
        return (f"the server rejected the request {what}: its context window is {window:,} tokens and this request "
                f"needs {needed:,} -- start it with a larger context ({_context_hint(needed, server)})")
    if status in (401, 403):
        return (f"the server at {_url(exc, base_url)} refused the API key {what}: {said} -- check OPENAI_API_KEY "
                "(any value works for a local server), or use --model offline")
    if status == 404:
        return (f"the server at {_url(exc, base_url)} has no {_model(exc)} {what}: {said} -- ask it for its models "
                "(GET /v1/models), and check that OPENAI_BASE_URL ends in /v1")
    if status == 429:
        return (f"the server is rate-limiting {what}: {said} -- the client waited and asked again; wait a while, or "
                "run fewer episodes at once (--concurrency)")
    if status >= 500 and _VALIDATION.match(str(exc.body.get("message", "") if isinstance(exc.body, dict) else "")):
        # llama-cpp-python answers a request that fails its schema with 500: the fault is the request's
        return f"the server rejected the request {what}: {said} -- the request does not fit the server's schema"
    if status >= 500:
        return f"the server failed {what}: {said} -- the fault is on its side; its own log says more"
    return f"the server rejected the request {what}: {said}"
