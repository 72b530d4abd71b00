"""A loopback HTTP proxy that behaves like a real server the tests cannot run: one quirk per setting.

It sits in front of the offline model's own server
(:class:`lares_kit.models.serving.server.ModelServer`) and forwards every request,
except where its :class:`Quirks` say a real server would do something else.
Each quirk copies a behaviour measured on, or reported for, a real server
(the messages are the servers' own):

* ``ignore_forced_choice`` -- Ollama's OpenAI API: a forced ``tool_choice``
  (a named function, or ``"required"``) is dropped, and the reply comes back
  as text; ``text_reply="json"`` writes the call the model made as JSON in
  the text (what many models do), ``"prose"`` a sentence with no call in it;
* ``text_only`` -- a model that never makes a tool call (small models behind
  a server with no tool parser): every reply is text, as ``text_reply`` says;
* ``refuse_json_schema`` -- llama-cpp-python's server: ``response_format``
  ``json_schema`` is a request validation error, answered with **500**
  (measured with 0.3.36; it knows ``text`` and ``json_object``);
* ``refuse_null_content`` -- llama.cpp's server: an assistant message with
  ``"content": null`` is a 500 with seven validation errors and a file path;
* ``fail_marker`` -- a 500 ``internal_server_error`` for requests whose first
  system message starts with this text (``"You are SAGE's device agent"``:
  one sub-agent), ``fail_times`` times;
* ``context`` -- a context window: a request whose messages and tools count
  as many tokens or more (:func:`lares_kit.knowledge.tokens.count_request`) is
  refused with llama-cpp-python's 400 ``context_length_exceeded``.

An unreachable server needs no proxy: :func:`closed_port_url` is a loopback
URL nothing listens on. Every answer the proxy gives is logged in
:attr:`QuirkProxy.log` as ``(status, what)`` -- the tests' access log.

This is a test helper, not part of the toolkit: nothing in ``lares_kit``
imports it.

Examples:
    >>> import openai
    >>> with QuirkProxy(Quirks(refuse_json_schema=True)) as proxy:
    ...     client = openai.OpenAI(base_url=proxy.base_url, api_key="unused", max_retries=0)
    ...     try:
    ...         client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}],
    ...                                        response_format={"type": "json_schema", "json_schema": {
    ...                                            "name": "x", "schema": {"type": "object"}}})
    ...     except openai.InternalServerError as exc:
    ...         print(exc.status_code, "json_object" in str(exc))
    ...     proxy.log
    500 True
    [(500, 'refused json_schema')]
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lares_kit.knowledge.tokens import count_request
from lares_kit.models.serving.server import ModelServer

__all__ = ["Quirks", "QuirkProxy", "closed_port_url", "NULL_CONTENT_ERROR", "JSON_SCHEMA_ERROR"]

# llama-cpp-python 0.3.36's answers, as measured (its pydantic errors; the file path shortened).
NULL_CONTENT_ERROR = (
    "7 validation errors:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestSystemMessage', 'role'), "
    "'msg': \"Input should be 'system'\", 'input': 'assistant'}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestUserMessage', 'role'), "
    "'msg': \"Input should be 'user'\", 'input': 'assistant'}\n"
    "  {'type': 'string_type', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestAssistantMessage', "
    "'content'), 'msg': 'Input should be a valid string', 'input': None}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestToolMessage', 'role'), "
    "'msg': \"Input should be 'tool'\", 'input': 'assistant'}\n"
    "  {'type': 'missing', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestToolMessage', 'tool_call_id'), "
    "'msg': 'Field required'}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestFunctionMessage', "
    "'role'), 'msg': \"Input should be 'function'\", 'input': 'assistant'}\n"
    "  {'type': 'missing', 'loc': ('body', 'messages', %(i)d, 'ChatCompletionRequestFunctionMessage', 'name'), "
    "'msg': 'Field required'}\n\n"
    '  File "site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "    POST /v1/chat/completions")
JSON_SCHEMA_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
    '  File "site-packages/llama_cpp/server/app.py", line 376, in create_chat_completion\n'
    "    POST /v1/chat/completions")
CONTEXT_ERROR = ("This model's maximum context length is {n_ctx} tokens. However, you requested {total} tokens "
                 "({prompt} in the messages, {completion} in the completion). Please reduce the length of the "
                 "messages or completion.")
PROSE_REPLY = "Sure! I can help with that. Let me know if there is anything else you need."


@dataclass(frozen=True)
class Quirks:
    """Which real-server behaviours the proxy copies; the default forwards everything unchanged.

    Examples:
        >>> Quirks().active(), Quirks(context=2048, refuse_null_content=True).active()
        ([], ['refuse_null_content', 'context'])
    """

    ignore_forced_choice: bool = False  # Ollama: a forced tool_choice is dropped, the reply is text
    text_only: bool = False  # every reply is text, forced or not: the model never makes a tool call
    text_reply: str = "json"  # how a call comes back as text: "json" (the call as JSON text) or "prose" (no call)
    refuse_json_schema: bool = False  # llama-cpp-python: response_format json_schema -> 500
    refuse_null_content: bool = False  # llama.cpp: assistant "content": null -> 500
    fail_marker: str = ""  # a 500 for requests whose first system message starts with this
    fail_times: int = 1  # how many of those fail (the SDK's retries count too)
    context: int | None = None  # a context window in tokens: bigger requests get a 400
    # Like llama.cpp's server (one model, any name), every model name reaches the offline model: a test can
    # run `lares run --model smollm2` through the proxy. "offline-multi" keeps its own name.
    upstream_model: str = "offline"

    def active(self) -> list[str]:
        """The names of the quirks switched on, in declaration order."""
        on = {"ignore_forced_choice": self.ignore_forced_choice, "text_only": self.text_only,
              "refuse_json_schema": self.refuse_json_schema,
              "refuse_null_content": self.refuse_null_content, "fail_marker": bool(self.fail_marker),
              "context": self.context is not None}
        return [name for name, value in on.items() if value]


def closed_port_url() -> str:
    """A loopback base URL where nothing listens (the port was free a moment ago): an unreachable server.

    Examples:
        >>> closed_port_url().startswith("http://127.0.0.1:")
        True
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _error(status: int, message: str, kind: str, code: str | None = None, param: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status)


def _forced(tool_choice: Any) -> bool:
    return tool_choice == "required" or isinstance(tool_choice, dict)


def _as_text(reply: dict[str, Any], how: str) -> dict[str, Any]:
    # What Ollama hands back for a forced choice: the message as text, no tool_calls.
    reply = copy.deepcopy(reply)
    for choice in reply.get("choices") or []:
        message = choice.get("message") or {}
        calls = message.pop("tool_calls", None) or []
        if how == "json" and calls:
            fn = calls[0]["function"]
            args = json.loads(fn.get("arguments") or "{}")
            message["content"] = json.dumps({"name": fn["name"], "arguments": args})
        else:
            message["content"] = message.get("content") or PROSE_REPLY
        choice["finish_reason"] = "stop"
    return reply


class QuirkProxy:
    """The proxy and the offline model's server behind it, both on free loopback ports; use ``with``.

    ``base_url`` is the proxy's ``.../v1``; ``log`` lists ``(status, what)`` for
    every chat completion it answered, oldest first; ``upstream`` is the
    :class:`~lares_kit.models.serving.server.ModelServer`.
    """

    def __init__(self, quirks: Quirks = Quirks()) -> None:
        self.quirks = quirks
        self.log: list[tuple[int, str]] = []  # (HTTP status, what the proxy did), oldest first
        self.upstream = ModelServer(port=0)
        self._failed = 0
        self._lock = threading.Lock()  # the log is read by the test thread while the proxy writes it
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"]),
                                Route("/v1/{rest:path}", self._forward, methods=["GET", "POST"])])
        config = uvicorn.Config(app, lifespan="off", log_config=None, access_log=False, ws="none")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._http = httpx.Client(timeout=60)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def counts(self) -> dict[int, int]:
        """How many answers had each HTTP status."""
        with self._lock:
            statuses = [status for status, _ in self.log]
        return {status: statuses.count(status) for status in sorted(set(statuses))}

    def _note(self, status: int, what: str) -> None:
        with self._lock:
            self.log.append((status, what))

    # ------------------------------------------------------------ serving
    def start(self) -> QuirkProxy:
        self.upstream.start()
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True,
                                        name="quirk-proxy")
        self._thread.start()
        for _ in range(200):  # polled, not Event.wait(timeout): timed waits never end under faketime
            if self._server.started:
                break
            time.sleep(0.05)
        return self

    def close(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sock.close()
        self._http.close()
        self.upstream.close()

    def __enter__(self) -> QuirkProxy:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ requests
    async def _forward(self, request: Request) -> Response:
        # Anything but a chat completion (GET /v1/models) goes through unchanged.
        body = await request.body()
        answer = self._http.request(request.method, f"{self.upstream.base_url}/{request.path_params['rest']}",
                                    content=body, headers={"content-type": "application/json"})
        return Response(answer.content, answer.status_code, media_type="application/json")

    async def _chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        if body.get("model") != "offline-multi":
            body["model"] = self.quirks.upstream_model
        refusal = self._refusal(body)
        if refusal is not None:
            return refusal
        q = self.quirks
        forced = q.ignore_forced_choice and _forced(body.get("tool_choice"))
        if forced:
            body.pop("tool_choice")  # what Ollama does with it: nothing
        answer = self._http.post(f"{self.upstream.base_url}/chat/completions", json=body)
        if answer.status_code != 200 or not (forced or q.text_only):
            self._note(answer.status_code, "forwarded")
            return Response(answer.content, answer.status_code, media_type="application/json")
        self._note(200, f"{'ignored the forced choice' if forced else 'answered in text'} ({q.text_reply})")
        return JSONResponse(_as_text(answer.json(), q.text_reply))

    def _refusal(self, body: dict[str, Any]) -> Response | None:
        # The first quirk that refuses this request, as the real server words it; None: forward it.
        q = self.quirks
        messages = body.get("messages") or []
        if q.refuse_json_schema and (body.get("response_format") or {}).get("type") == "json_schema":
            self._note(500, "refused json_schema")
            return _error(500, JSON_SCHEMA_ERROR, "internal_server_error")
        nulls = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and m.get("content", "") is None]
        if q.refuse_null_content and nulls:
            self._note(500, "refused null content")
            return _error(500, NULL_CONTENT_ERROR % {"i": nulls[0]}, "internal_server_error")
        systems = [m.get("content") or "" for m in messages if m.get("role") == "system"]
        if q.fail_marker and systems and str(systems[0]).startswith(q.fail_marker):
            with self._lock:
                fail, self._failed = self._failed < q.fail_times, self._failed + 1
            if fail:
                self._note(500, f"failed {q.fail_marker!r}")
                return _error(500, "Internal Server Error", "internal_server_error")
        if q.context is not None:
            # llama-cpp-python refuses a prompt that fills the window; a max_tokens that overflows it is cut
            # short instead (finish_reason "length"), but its message adds it to what was "requested".
            prompt = count_request(messages, body.get("tools"))
            completion = body.get("max_tokens")
            total = prompt + (completion or 0)
            if prompt >= q.context:
                self._note(400, "context window exceeded")
                text = CONTEXT_ERROR.format(n_ctx=q.context, total=total, prompt=prompt, completion=completion)
                return _error(400, text, "invalid_request_error", "context_length_exceeded", "messages")
        return None
