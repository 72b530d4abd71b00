"""The local model behind the ``openai`` SDK: the Chat Completions wire, in process.

Part of the local model (:mod:`~lares_kit.models.local.llama`). Like the offline model's transport
(:mod:`~lares_kit.models.transport`), an HTTP transport answers the SDK's real requests with
no socket: the body is checked by :func:`lares_kit.models.serving.wire.validate` (the
same 400s as OpenAI), answered by llama.cpp, and returned as a
``chat.completion`` object with llama.cpp's own token counts in ``usage``.
Streaming is not offered (400).

The other way to serve it -- llama.cpp's own OpenAI-compatible server on
loopback -- needs no code here::

    GGUF="$(python -c 'from lares_kit.models.local.llama import gguf_path; print(gguf_path())')"
    python -m llama_cpp.server --model "$GGUF" --n_ctx 8192 --n_threads 2 --seed 0 --port 8080
    export OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=unused LARES_SERVER=llamacpp

(the GGUF's own chat template keeps tool results; ``docs/models.md`` says why
each flag is there and what that server accepts). Gemma's file is
``gguf_path("local-gemma")``; it has no template, and the server's
``--chat_format gemma`` drops system messages, which the in-process
``local-gemma`` moves into the first user turn instead. Qwen's is
``gguf_path("local-qwen")``, served the same way (its template shows the
tools); the server honours a forced call but reads no ``<tool_call>`` back
from an ``auto`` reply, which comes back as text.

This module is not the model: prompts, grammars and parsing are in :mod:`~lares_kit.models.local.llama`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any

import openai

from ..serving.wire import WireError, error_body, validate
from ..transport import httpx
from .llama import CONSTRAINED, LOCAL_MODELS, LocalModelMissing, get_local_model, local_available

__all__ = ["LOCAL_BASE_URL", "AsyncLocalTransport", "LocalTransport", "handle_local", "local_async_client",
           "local_client"]

# Never resolved: the transport answers first.
LOCAL_BASE_URL = "http://local.lares.invalid/v1"


def _json(status: int, value: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json"}, json.dumps(value).encode()


def _error(message: str, status: int = 400, code: str | None = None, kind: str = "invalid_request_error") -> tuple:
    return _json(status, error_body(WireError(message, None, code, status, kind)))


def handle_local(method: str, path: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Serve one HTTP request to the local model: (status, headers, body).

    Args:
        method: the HTTP method, e.g. ``"GET"`` or ``"POST"``.
        path: the URL path, e.g. ``"/v1/chat/completions"`` (a query string is ignored).
        raw: the request body: JSON bytes of a Chat Completions request (empty for a GET).

    Examples:
        >>> status, _, body = handle_local("GET", "/v1/models", b"")
        >>> status, [m["id"] for m in json.loads(body)["data"]]
        (200, ['local', 'local-unconstrained', 'local-gemma', 'local-qwen'])
        >>> handle_local("POST", "/v1/chat/completions", b'{"model": "local", "messages": []}')[0]
        400
    """
    path = path.split("?", 1)[0].rstrip("/")
    if method == "GET" and path.endswith("/models"):
        return _json(200, {"object": "list", "data": [{"id": name, "object": "model", "created": 0,
                                                        "owned_by": "lares_kit"} for name in LOCAL_MODELS]})
    if not (method == "POST" and path.endswith("/chat/completions")):
        return _error(f"Unknown request URL: {method} {path}.", 404, "unknown_url")
    try:
        body = validate(json.loads(raw or b"null"))
    except json.JSONDecodeError as exc:
        return _error(f"We could not parse the JSON body of your request. ({exc})")
    except WireError as err:
        return _json(err.status, error_body(err))
    if body.get("stream"):
        return _error("The local model does not stream; leave 'stream' out.")
    if (body.get("n") or 1) != 1:
        return _error("The local model makes one choice per request; leave 'n' out.")
    try:
        content, calls, finish, usage = get_local_model(model=body["model"]).complete(body)
    except LocalModelMissing as exc:
        return _error(str(exc), 503, "model_not_installed", "server_error")
    except ValueError as exc:  # llama.cpp: the prompt does not fit in the context window
        return _error(f"The local model cannot take this request ({exc}).", 400, "context_length_exceeded")
    digest = hashlib.sha256(raw).hexdigest()
    tool_calls = [{"id": f"call_{hashlib.sha256(f'{digest}:{i}'.encode()).hexdigest()[:24]}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt, done = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    return _json(200, {"id": f"chatcmpl-{digest[:29]}", "object": "chat.completion", "created": int(time.time()),
                       "model": body["model"], "system_fingerprint": "fp_lares_local",
                       "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                       "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done,
                                 # the prompt's beginning llama.cpp kept from the last request and did not read again
                                 "prompt_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)}}})


def _respond(request: Any) -> Any:
    status, headers, body = handle_local(request.method, request.url.path, request.content)
    return httpx.Response(status, headers=headers, content=body, request=request)


class LocalTransport(httpx.BaseTransport):
    """Sync transport: ``httpx.Client(transport=LocalTransport())`` answers with the local model."""

    def handle_request(self, request: Any) -> Any:
        request.read()
        return _respond(request)


class AsyncLocalTransport(httpx.AsyncBaseTransport):
    """Async twin of :class:`LocalTransport`: the model runs in a worker thread."""

    async def handle_async_request(self, request: Any) -> Any:
        await request.aread()
        return await asyncio.to_thread(_respond, request)


def _check_installed(model: str) -> None:
    reason = local_available(model)
    if reason:
        raise LocalModelMissing(reason)


def local_client(max_retries: int = 0, timeout: float = 600.0, model: str = CONSTRAINED, **kw: Any) -> openai.OpenAI:
    """An ``openai.OpenAI`` answered by the local models (``make_client("local")`` calls this).

    Raises :class:`~lares_kit.models.local.llama.LocalModelMissing` at once, before
    any request, without the ``[local]`` extra. Retries are off by default: a
    local failure does not go away by asking again.

    Args:
        max_retries: how many times the SDK retries a failed request (0: none).
        timeout: seconds the SDK waits for each reply; a small CPU model may take minutes on a long prompt.
        model: the name it is made for, checked to be installed now; each request's ``model`` picks its weights.
        **kw: passed on to ``openai.OpenAI``.
    """
    _check_installed(model)
    http = httpx.Client(transport=LocalTransport(), base_url=LOCAL_BASE_URL, timeout=timeout)
    return openai.OpenAI(api_key="local", base_url=LOCAL_BASE_URL, http_client=http, max_retries=max_retries,
                         timeout=timeout, **kw)


def local_async_client(max_retries: int = 0, timeout: float = 600.0, model: str = CONSTRAINED,
                       **kw: Any) -> openai.AsyncOpenAI:
    """The async twin of :func:`local_client`.

    Args:
        max_retries: how many times the SDK retries a failed request (0: none).
        timeout: seconds the SDK waits for each reply; a small CPU model may take minutes on a long prompt.
        model: the name it is made for, checked to be installed now; each request's ``model`` picks its weights.
        **kw: passed on to ``openai.AsyncOpenAI``.
    """
    _check_installed(model)
    http = httpx.AsyncClient(transport=AsyncLocalTransport(), base_url=LOCAL_BASE_URL, timeout=timeout)
    return openai.AsyncOpenAI(api_key="local", base_url=LOCAL_BASE_URL, http_client=http, max_retries=max_retries,
                              timeout=timeout, **kw)
