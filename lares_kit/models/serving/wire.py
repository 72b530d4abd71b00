"""The Chat Completions wire protocol around the offline model: requests in, JSON out.

Part of the offline model. :func:`handle` takes an HTTP method, path and raw
body and returns a status, headers and body, exactly as an OpenAI-compatible
server would; the in-process transport (:mod:`~lares_kit.models.transport`) and the HTTP
server (:mod:`.server`) both call it, so the SDK sees the same bytes either
way. It validates requests the way OpenAI does (:mod:`.wire_checks`: 400
with an error body ``{"error": {"message", "type", "param", "code"}}``, 404
``model_not_found`` for a model it does not serve), applies ``stop``,
``max_tokens``/``max_completion_tokens`` and ``n``, counts ``usage`` with
:mod:`~lares_kit.knowledge.tokens` (the prompt tokens a cache would reuse as ``prompt_tokens_details.cached_tokens``,
:mod:`~lares_kit.models.offline.prompt_cache`), and streams (``stream: true``) as server-sent events.

Deterministic: the completion id and tool-call ids are hashes of the request,
so the same request gets the same reply (only ``created`` differs, and the
cached tokens of a request that names its conversation with
``prompt_cache_key``: they count what that conversation sent before). The
model names served are :data:`SERVED_MODELS` (``offline``, and
``offline-multi`` with its teaching fault), also wrapped by the chaos model
(``chaos:offline@0.2``); the name is echoed back in the reply.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from ...knowledge.tokens import count_reply, count_tokens
from ..offline import FAULTY_MODEL, MODEL_NAME, Reply, respond
from ..offline.prompt_cache import PROMPT_CACHE
from .wire_checks import WireError, error_body, parse, validate

__all__ = ["SERVED_MODELS", "WireError", "completion", "error_body", "handle", "validate", "words_within"]

FINGERPRINT = "fp_lares_offline"
# The names this server answers to; another is a 404 model_not_found, as on OpenAI.
SERVED_MODELS = (MODEL_NAME, FAULTY_MODEL)


def _limit(content: str | None, body: dict[str, Any]) -> tuple[str | None, str]:
    # Apply stop sequences, then the token limit: -> (content, finish_reason)
    if content is None:
        return None, "stop"
    stops = body.get("stop") or []
    for stop in [stops] if isinstance(stops, str) else stops:
        if stop and stop in content:
            content = content[:content.index(stop)]
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    if limit and count_tokens(content) > limit:
        words = content.split(" ")
        return " ".join(words[:words_within(words, limit)]), "length"
    return content, "stop"


def words_within(words: list[str], limit: int) -> int:
    """How many leading words fit in ``limit`` tokens, joined by spaces.

    A binary search over prefixes: log2(n) tokenizations instead of one per word (5,000 words
    and ``max_tokens: 14000`` took 20 s one word at a time). Token counts grow with the prefix.

    Args:
        words: the text split on single spaces, in order.
        limit: the most tokens the joined words may take (as counted by :func:`.tokens.count_tokens`).

    Examples:
        >>> words = "turn on the light in the kitchen".split(" ")
        >>> words_within(words, 3), " ".join(words[:words_within(words, 3)])
        (3, 'turn on the')
    """
    low, high = 0, len(words) + 1  # count(words[:low]) <= limit < count(words[:high]); words[:n + 1] never fits
    while high - low > 1:
        middle = (low + high) // 2
        if count_tokens(" ".join(words[:middle])) <= limit:
            low = middle
        else:
            high = middle
    return low


# Request fields that say how to sample a reply, not what is asked.
# prompt_cache_key names the conversation for the prompt cache (lares_kit.models.offline.prompt_cache), not what
# is asked.
_SAMPLING = frozenset({"temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "frequency_penalty",
                       "presence_penalty", "stream", "stream_options", "prompt_cache_key"})


def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The ``chat.completion`` object for a validated request and the model's reply.

    Args:
        body: the request, already checked by :func:`validate` (``stop``, ``max_tokens`` and ``n`` are applied).
        reply: what the offline model said: its text, or its calls as (name, arguments) pairs.
    """
    # Ids name the conversation, not how it was sampled: the same request asked with another temperature or
    # token budget gets the same ids, so a transcript does not change when only those settings do.
    asked = {k: v for k, v in body.items() if k not in _SAMPLING}
    digest = hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()
    content, finish = _limit(reply.content, body)
    tool_calls = [{"id": f"call_{hashlib.sha256(f'{digest}:{i}'.encode()).hexdigest()[:24]}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}}
                  for i, (name, args) in enumerate(reply.calls)]
    message: dict[str, Any] = {"role": "assistant", "content": content if not tool_calls else None, "refusal": None}
    if tool_calls:
        message["tool_calls"], finish = tool_calls, "tool_calls"
    n = body.get("n") or 1
    prompt, cached = PROMPT_CACHE.usage(body)
    done = count_reply(message["content"], tool_calls) * n
    return {"id": f"chatcmpl-{digest[:29]}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "system_fingerprint": FINGERPRINT,
            "choices": [{"index": i, "message": message, "logprobs": None, "finish_reason": finish} for i in range(n)],
            "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def _sse(result: dict[str, Any], include_usage: bool) -> bytes:
    # One completion as server-sent events: role, content, each tool call, finish, [usage], [DONE].
    head = ({k: result[k] for k in ("id", "created", "model", "system_fingerprint")}
            | {"object": "chat.completion.chunk"})
    events = []
    for choice in result["choices"]:
        msg, i = choice["message"], choice["index"]
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if msg["content"]:
            deltas.append({"content": msg["content"]})
        for k, call in enumerate(msg.get("tool_calls") or []):
            deltas.append({"tool_calls": [{"index": k, **call}]})
        for delta in deltas:
            events.append(head | {"choices": [{"index": i, "delta": delta, "logprobs": None, "finish_reason": None}]})
        events.append(head | {"choices": [{"index": i, "delta": {}, "logprobs": None,
                                           "finish_reason": choice["finish_reason"]}]})
    if include_usage:
        events.append(head | {"choices": [], "usage": result["usage"]})
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


def _json(status: int, value: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps(value).encode()


def handle(method: str, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Serve one HTTP request to the offline model: (status, headers, body).

    Args:
        method: the HTTP method, e.g. ``"GET"`` or ``"POST"``.
        path: the URL path, e.g. ``"/v1/chat/completions"`` or ``"/v1/models"`` (a query string is ignored).
        raw: the request body: JSON bytes of a Chat Completions request (empty for a GET).

    Examples:
        >>> status, _, body = handle("POST", "/v1/chat/completions", b"{not json")
        >>> status, json.loads(body)["error"]["message"][:32]
        (400, 'We could not parse the JSON body')
        >>> handle("GET", "/v1/models", b"")[0]
        200
    """
    path = path.split("?", 1)[0].rstrip("/")
    if method == "GET" and path.endswith("/models"):
        return _json(200, {"object": "list", "data": [_model(MODEL_NAME)]})
    if method == "GET" and "/models/" in path:
        name = path.rsplit("/", 1)[-1]
        if name not in SERVED_MODELS:
            err = WireError(f"The model `{name}` does not exist or you do not have access to it.", "model",
                            "model_not_found", 404)
            return _json(404, error_body(err))
        return _json(200, _model(name))
    if not path.endswith("/chat/completions"):
        err = WireError(f"Unknown request URL: {method} {path}. Please check the URL for typos.", None,
                        "unknown_url", 404)
        return _json(404, error_body(err))
    if method != "POST":
        err = WireError(f"Method {method} is not allowed for {path}; use POST.", None, None, 405)
        return _json(405, error_body(err))
    try:
        body = validate(parse(raw), SERVED_MODELS)
    except WireError as err:
        return _json(err.status, error_body(err))
    try:
        result = completion(body, respond(body))
    except Exception as exc:  # noqa: BLE001 -- a bug in the rules must reach the caller as a 500, like any server's
        err = WireError(f"The offline model failed on this request ({type(exc).__name__}: {exc}).", None,
                        "server_error", 500, "server_error")
        return _json(500, error_body(err))
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))  # a bool or None: validated
        return 200, {"content-type": "text/event-stream"}, _sse(result, usage)
    return _json(200, result)


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "lares_kit"}
