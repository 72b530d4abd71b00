"""The Chat Completions wire protocol around the offline model: requests in, JSON out.

Part of the offline model. :func:`handle` takes an HTTP method, path and raw
body and returns a status, headers and body, exactly as an OpenAI-compatible
server would; the in-process transport (:mod:`.transport`) and the HTTP
server (:mod:`.server`) both call it, so the SDK sees the same bytes either
way. It validates requests the way OpenAI does (400 with an error body
``{"error": {"message", "type", "param", "code"}}``), applies ``stop``,
``max_tokens``/``max_completion_tokens`` and ``n``, counts ``usage`` with
:mod:`.tokens`, and streams (``stream: true``) as server-sent events.

Deterministic: the completion id and tool-call ids are hashes of the request,
so the same request gets the same reply (only ``created`` differs). Any model
name is accepted and echoed back, so tools that insist on a name work.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any

from .offline import MODEL_NAME, Reply, respond
from .tokens import count_reply, count_request, count_tokens

__all__ = ["WireError", "completion", "error_body", "handle", "validate"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
FINGERPRINT = "fp_lares_offline"
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class WireError(Exception):
    """A bad request: becomes an OpenAI-style error body with ``status``."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None, status: int = 400,
                 type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message, self.param, self.code, self.status, self.type = message, param, code, status, type


def error_body(err: WireError) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``.

    Examples:
        >>> error_body(WireError("Missing required parameter: 'messages'.", "messages", "missing_required_parameter"))
        {'error': {'message': "Missing required parameter: 'messages'.", 'type': 'invalid_request_error', 'param': 'messages', 'code': 'missing_required_parameter'}}
    """
    return {"error": {"message": err.message, "type": err.type, "param": err.param, "code": err.code}}


def _check_messages(messages: Any) -> None:
    if messages is None:
        raise WireError("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    if not isinstance(messages, list):
        raise WireError("Invalid type for 'messages': expected an array.", "messages", "invalid_type")
    if not messages:
        raise WireError("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                        "empty array instead.", "messages", "empty_array")
    open_calls: dict[str, int] = {}  # tool_call_id -> index of the assistant message still waiting for it
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise WireError(f"Invalid type for 'messages[{i}]': expected an object.", f"messages[{i}]", "invalid_type")
        role = m.get("role")
        if role not in ROLES:
            raise WireError(f"Invalid value: {role!r}. Supported values are: {', '.join(map(repr, ROLES))}.",
                            f"messages[{i}].role", "invalid_value")
        if role != "tool" and open_calls:
            raise WireError("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                            "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                            + ", ".join(open_calls), f"messages.[{min(open_calls.values())}].role")
        if role == "assistant":
            for j, call in enumerate(m.get("tool_calls") or []):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not call.get("id") or not isinstance(fn.get("name"), str):
                    raise WireError(f"Invalid 'messages[{i}].tool_calls[{j}]': expected an object with 'id', 'type' "
                                    "and 'function' with a 'name' and 'arguments'.", f"messages[{i}].tool_calls[{j}]",
                                    "invalid_value")
                open_calls[str(call["id"])] = i
        elif role == "tool":
            if not m.get("tool_call_id"):
                raise WireError(f"Missing required parameter: 'messages[{i}].tool_call_id'.",
                                f"messages[{i}].tool_call_id", "missing_required_parameter")
            if open_calls.pop(str(m["tool_call_id"]), None) is None:
                raise WireError("Invalid parameter: messages with role 'tool' must be a response to a preceding "
                                "message with 'tool_calls'.", f"messages.[{i}].role")
        elif "content" not in m and role in ("system", "developer", "user"):
            raise WireError(f"Missing required parameter: 'messages[{i}].content'.", f"messages[{i}].content",
                            "missing_required_parameter")


def _check_tools(body: dict[str, Any]) -> None:
    tools, choice = body.get("tools"), body.get("tool_choice")
    if tools is not None:
        if not isinstance(tools, list):
            raise WireError("Invalid type for 'tools': expected an array.", "tools", "invalid_type")
        for i, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or tool.get("type", "function") != "function":
                raise WireError(f"Invalid 'tools[{i}]': expected {{\"type\": \"function\", \"function\": {{\"name\": "
                                "...}}.", f"tools[{i}]", "invalid_value")
            if not _NAME.match(fn["name"]):
                raise WireError(f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a "
                                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.", f"tools[{i}].function.name",
                                "invalid_value")
    if choice is None:
        return
    if not tools:
        raise WireError("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                        "tool_choice")
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            raise WireError(f"Invalid value: {choice!r}. Supported values are: 'none', 'auto', and 'required'.",
                            "tool_choice", "invalid_value")
        return
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    if not isinstance(name, str) or choice.get("type", "function") != "function":
        raise WireError("Invalid 'tool_choice': expected 'none', 'auto', 'required' or {\"type\": \"function\", "
                        "\"function\": {\"name\": ...}}.", "tool_choice", "invalid_value")
    if name not in [t["function"]["name"] for t in tools]:
        raise WireError(f"Invalid value for 'tool_choice': function {name!r} was not found in 'tools'.",
                        "tool_choice", "invalid_value")


def validate(body: Any) -> dict[str, Any]:
    """Check a request body; return it, or raise :class:`WireError` as OpenAI would.

    Examples:
        >>> validate({"model": "offline", "messages": []})
        Traceback (most recent call last):
        ...
        lares_kit.models.wire.WireError: Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.
    """
    if not isinstance(body, dict):
        raise WireError("We could not parse the JSON body of your request: expected a JSON object.", None, None)
    if not body.get("model") or not isinstance(body["model"], str):
        raise WireError("You must provide a model parameter.", "model", "missing_required_parameter")
    _check_messages(body.get("messages"))
    _check_tools(body)
    if "parallel_tool_calls" in body and not isinstance(body["parallel_tool_calls"], bool):
        raise WireError("Invalid type for 'parallel_tool_calls': expected a boolean.", "parallel_tool_calls", "invalid_type")
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or (isinstance(stop, list) and len(stop) <= 4
                                                           and all(isinstance(s, str) for s in stop))):
        raise WireError("Invalid 'stop': expected a string or an array of at most 4 strings.", "stop", "invalid_value")
    n = body.get("n", 1)
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128):
        raise WireError("Invalid 'n': expected an integer from 1 to 128.", "n", "invalid_value")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise WireError(f"Invalid '{key}': expected a positive integer.", key, "invalid_value")
    fmt = body.get("response_format")
    if fmt is not None:
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind not in ("text", "json_object", "json_schema"):
            raise WireError("Invalid 'response_format.type': expected 'text', 'json_object' or 'json_schema'.",
                            "response_format.type", "invalid_value")
        spec = fmt.get("json_schema")
        if kind == "json_schema" and (not isinstance(spec, dict) or not spec.get("name")):
            raise WireError("Missing required parameter: 'response_format.json_schema.name'.",
                            "response_format.json_schema.name", "missing_required_parameter")
        if kind == "json_object" and "json" not in json.dumps(body["messages"]).lower():
            raise WireError("'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                            "'json_object'.", "messages")
    return body


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
        words, kept = content.split(" "), []
        while words and count_tokens(" ".join(kept + words[:1])) <= limit:
            kept.append(words.pop(0))
        return " ".join(kept), "length"
    return content, "stop"


def completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The ``chat.completion`` object for a validated request and the model's reply."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    content, finish = _limit(reply.content, body)
    tool_calls = [{"id": f"call_{hashlib.sha256(f'{digest}:{i}'.encode()).hexdigest()[:24]}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(reply.calls)]
    message: dict[str, Any] = {"role": "assistant", "content": content if not tool_calls else None, "refusal": None}
    if tool_calls:
        message["tool_calls"], finish = tool_calls, "tool_calls"
    n = body.get("n") or 1
    prompt = count_request(body["messages"], body.get("tools"))
    done = count_reply(message["content"], tool_calls) * n
    return {"id": f"chatcmpl-{digest[:29]}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "system_fingerprint": FINGERPRINT,
            "choices": [{"index": i, "message": message, "logprobs": None, "finish_reason": finish} for i in range(n)],
            "usage": {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}}


def _sse(result: dict[str, Any], include_usage: bool) -> bytes:
    # One completion as server-sent events: role, content, each tool call, finish, [usage], [DONE].
    head = {k: result[k] for k in ("id", "created", "model", "system_fingerprint")} | {"object": "chat.completion.chunk"}
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
        return _json(200, _model(path.rsplit("/", 1)[-1]))
    if not path.endswith("/chat/completions"):
        err = WireError(f"Unknown request URL: {method} {path}. Please check the URL for typos.", None, "unknown_url", 404)
        return _json(404, error_body(err))
    if method != "POST":
        return _json(405, error_body(WireError(f"Method {method} is not allowed for {path}; use POST.", None, None, 405)))
    try:
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise WireError(f"We could not parse the JSON body of your request. ({exc})") from None
        body = validate(body)
    except WireError as err:
        return _json(err.status, error_body(err))
    try:
        result = completion(body, respond(body))
    except Exception as exc:  # noqa: BLE001 -- a bug in the rules must reach the caller as a 500, like any server's
        err = WireError(f"The offline model failed on this request ({type(exc).__name__}: {exc}).", None,
                        "server_error", 500, "server_error")
        return _json(500, error_body(err))
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return 200, {"content-type": "text/event-stream"}, _sse(result, usage)
    return _json(200, result)


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "lares_kit"}
