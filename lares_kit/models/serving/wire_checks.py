"""Checking a Chat Completions request the way OpenAI does: a 400 (or 404) with a readable reason.

Part of the offline model's wire protocol (:mod:`.wire`). :func:`parse`
turns a raw body into JSON -- a number with thousands of digits or arrays
nested 100,000 deep are a 400, not a crash. :func:`validate` checks the
parsed body before any rule reads it: every field the offline model reads
has the type it expects, so a malformed request is the caller's error
(``{"error": {"message", "type", "param", "code"}}``), never the model's
500. The messages follow OpenAI's own where we know them.

This module does not answer requests; :func:`.wire.handle` does.

Examples:
    >>> validate(parse(b'{"model": "offline", "messages": [{"role": "user", "content": {"a": 1}}]}'))
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    lares_kit.models.serving.wire_checks.WireError: Invalid type for 'messages[0].content': expected one of a string
    or array of objects, but got an object instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "WireError", "error_body", "parse", "validate"]

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
MAX_DEPTH = 64  # JSON nesting a request may have: deeper would only reach the rules to overflow their stack
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "an integer",
               float: "a number", type(None): "null"}
# JSON Schema keywords whose value is a schema, an object of schemas, or an array of schemas
_ONE_SCHEMA = ("items", "not", "additionalProperties", "if", "then", "else", "contains", "propertyNames")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


class WireError(Exception):
    """A bad request: becomes an OpenAI-style error body with ``status``."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None, status: int = 400,
                 type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message, self.param, self.code, self.status, self.type = message, param, code, status, type


def error_body(err: WireError) -> dict[str, Any]:
    """``{"error": {"message", "type", "param", "code"}}``.

    Args:
        err: the bad request, with its message, ``param``, ``code`` and ``type``.

    Examples:
        >>> error_body(WireError("Missing required parameter: 'messages'.", "messages",
        ...                      "missing_required_parameter"))  # doctest: +NORMALIZE_WHITESPACE
        {'error': {'message': "Missing required parameter: 'messages'.", 'type': 'invalid_request_error',
                   'param': 'messages', 'code': 'missing_required_parameter'}}
    """
    return {"error": {"message": err.message, "type": err.type, "param": err.param, "code": err.code}}


def _kind(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _wrong_type(param: str, expected: str, value: Any) -> WireError:
    return WireError(f"Invalid type for '{param}': expected {expected}, but got {_kind(value)} instead.", param,
                     "invalid_type")


def _too_deep(value: Any) -> bool:
    # Iterative, so the check itself cannot overflow: (value, depth) pairs still to look at.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    return True
                stack.append((child, depth + 1))
    return False


def parse(raw: bytes) -> Any:
    """The JSON in a request body, or :class:`WireError` (400) saying why it is not.

    Args:
        raw: the request body as received; empty reads as JSON ``null``.

    Examples:
        >>> parse(b'{"n": 1}')
        {'n': 1}
        >>> parse(b"[" * 100_000)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.models.serving.wire_checks.WireError: We could not parse the JSON body of your request:
        it is nested too deeply (more than 64 levels).
    """
    try:
        value = json.loads(raw or b"null")
    except RecursionError:
        value, deep = None, True
    except json.JSONDecodeError as exc:
        raise WireError(f"We could not parse the JSON body of your request ({exc}).") from None
    except UnicodeDecodeError:
        raise WireError("We could not parse the JSON body of your request: it is not UTF-8 text.") from None
    except ValueError:  # json.loads' only other complaint: an integer too long to convert
        raise WireError("We could not parse the JSON body of your request: a number in it has more than 4,300 "
                        "digits.") from None
    else:
        deep = _too_deep(value)
    if deep:
        raise WireError(f"We could not parse the JSON body of your request: it is nested too deeply (more than "
                        f"{MAX_DEPTH} levels).")
    return value


def _check_content(content: Any, role: str, where: str) -> None:
    # A string, an array of content parts, or null (assistant and tool messages; it always was accepted for tool).
    if isinstance(content, str) or (content is None and role in ("assistant", "tool")):
        return
    if not isinstance(content, list):
        raise _wrong_type(where, "one of a string or array of objects", content)
    for k, part in enumerate(content):
        at = f"{where}[{k}]"
        if not isinstance(part, dict):
            raise _wrong_type(at, "an object", part)
        if not isinstance(part.get("type"), str):
            raise WireError(f"Missing required parameter: '{at}.type'.", f"{at}.type", "missing_required_parameter")
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise _wrong_type(f"{at}.text", "a string", part.get("text"))


def _check_tool_calls(calls: Any, where: str) -> list[str]:
    # An assistant message's tool_calls -> their ids, in order.
    if not isinstance(calls, list):
        raise _wrong_type(where, "an array", calls)
    ids = []
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not call.get("id") or not isinstance(fn.get("name"), str):
            raise WireError(f"Invalid '{where}[{j}]': expected an object with 'id', 'type' and 'function' with a "
                            "'name' and 'arguments'.", f"{where}[{j}]", "invalid_value")
        if not isinstance(call["id"], str):
            raise _wrong_type(f"{where}[{j}].id", "a string", call["id"])
        if "arguments" in fn and not isinstance(fn["arguments"], str):
            raise _wrong_type(f"{where}[{j}].function.arguments", "a string", fn["arguments"])
        ids.append(call["id"])
    return ids


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
        if not isinstance(role, str) or role not in ROLES:
            raise WireError(f"Invalid value: {role!r}. Supported values are: {', '.join(map(repr, ROLES))}.",
                            f"messages[{i}].role", "invalid_value")
        if role != "tool" and open_calls:
            raise WireError("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                            "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                            + ", ".join(open_calls), f"messages.[{min(open_calls.values())}].role")
        if "name" in m and not isinstance(m["name"], str):
            raise _wrong_type(f"messages[{i}].name", "a string", m["name"])
        if "content" not in m and role in ("system", "developer", "user"):
            raise WireError(f"Missing required parameter: 'messages[{i}].content'.", f"messages[{i}].content",
                            "missing_required_parameter")
        _check_content(m.get("content"), role, f"messages[{i}].content")
        if role == "assistant" and m.get("tool_calls") is not None:
            for call_id in _check_tool_calls(m["tool_calls"], f"messages[{i}].tool_calls"):
                open_calls[call_id] = i
        elif role == "tool":
            if not m.get("tool_call_id"):
                raise WireError(f"Missing required parameter: 'messages[{i}].tool_call_id'.",
                                f"messages[{i}].tool_call_id", "missing_required_parameter")
            if not isinstance(m["tool_call_id"], str):
                raise _wrong_type(f"messages[{i}].tool_call_id", "a string", m["tool_call_id"])
            if open_calls.pop(m["tool_call_id"], None) is None:
                raise WireError("Invalid parameter: messages with role 'tool' must be a response to a preceding "
                                "message with 'tool_calls'.", f"messages.[{i}].role")


def _check_schema(schema: Any, where: str) -> None:
    # The shape of a JSON Schema (what the rules walk): subschemas are objects, 'type' a name or names,
    # 'required' names, 'enum' an array. Iterative: (schema, where) pairs still to check.
    stack = [(schema, where)]
    while stack:
        node, at = stack.pop()
        if not isinstance(node, dict):
            raise WireError(f"Invalid schema for '{at}': expected a JSON Schema object, but got {_kind(node)}.",
                            at, "invalid_schema")
        kind = node.get("type")
        if kind is not None and not (isinstance(kind, str) or (isinstance(kind, list)
                                                                and all(isinstance(k, str) for k in kind))):
            raise WireError(f"Invalid schema for '{at}.type': expected a type name or an array of them.",
                            f"{at}.type", "invalid_schema")
        if "required" in node and not (isinstance(node["required"], list)
                                       and all(isinstance(r, str) for r in node["required"])):
            raise WireError(f"Invalid schema for '{at}.required': expected an array of strings.", f"{at}.required",
                            "invalid_schema")
        if "enum" in node and not isinstance(node["enum"], list):
            raise WireError(f"Invalid schema for '{at}.enum': expected an array.", f"{at}.enum", "invalid_schema")
        if "$ref" in node and not isinstance(node["$ref"], str):
            raise WireError(f"Invalid schema for '{at}.$ref': expected a string.", f"{at}.$ref", "invalid_schema")
        for key in _ONE_SCHEMA:
            if key in node and not (key == "additionalProperties" and isinstance(node[key], bool)):
                stack.append((node[key], f"{at}.{key}"))
        for key in _SCHEMA_MAPS:
            if key in node:
                if not isinstance(node[key], dict):
                    raise WireError(f"Invalid schema for '{at}.{key}': expected an object.", f"{at}.{key}",
                                    "invalid_schema")
                stack.extend((sub, f"{at}.{key}.{name}") for name, sub in node[key].items())
        for key in _SCHEMA_LISTS:
            if key in node:
                if not isinstance(node[key], list):
                    raise WireError(f"Invalid schema for '{at}.{key}': expected an array.", f"{at}.{key}",
                                    "invalid_schema")
                stack.extend((sub, f"{at}.{key}[{k}]") for k, sub in enumerate(node[key]))


def _check_tools(body: dict[str, Any]) -> None:
    tools, choice = body.get("tools"), body.get("tool_choice")
    if tools is not None:
        if not isinstance(tools, list):
            raise WireError("Invalid type for 'tools': expected an array.", "tools", "invalid_type")
        for i, tool in enumerate(tools):
            fn = tool.get("function") if isinstance(tool, dict) else None
            if (not isinstance(fn, dict) or not isinstance(fn.get("name"), str)
                    or tool.get("type", "function") != "function"):
                raise WireError(f"Invalid 'tools[{i}]': expected {{\"type\": \"function\", \"function\": {{\"name\": "
                                "...}}.", f"tools[{i}]", "invalid_value")
            if not _NAME.match(fn["name"]):
                raise WireError(f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a "
                                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.", f"tools[{i}].function.name",
                                "invalid_value")
            if fn.get("description") is not None and not isinstance(fn["description"], str):
                raise _wrong_type(f"tools[{i}].function.description", "a string", fn["description"])
            if fn.get("parameters") is not None:
                _check_schema(fn["parameters"], f"tools[{i}].function.parameters")
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
    fn = choice.get("function") if isinstance(choice, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or choice.get("type", "function") != "function":
        raise WireError("Invalid 'tool_choice': expected 'none', 'auto', 'required' or {\"type\": \"function\", "
                        "\"function\": {\"name\": ...}}.", "tool_choice", "invalid_value")
    if name not in [t["function"]["name"] for t in tools]:
        raise WireError(f"Invalid value for 'tool_choice': function {name!r} was not found in 'tools'.",
                        "tool_choice", "invalid_value")


def _check_model(body: dict[str, Any], models: tuple[str, ...] | None) -> None:
    if not body.get("model") or not isinstance(body["model"], str):
        raise WireError("You must provide a model parameter.", "model", "missing_required_parameter")
    name = body["model"]
    # "chaos:offline@0.2" and "chaos-0.2" (lares_kit.models.faults.chaos) are a served model with some replies broken on
    # the client's side
    inner = name[len("chaos:"):].rsplit("@", 1)[0] if name.startswith("chaos:") else name
    inner = "offline" if re.fullmatch(r"chaos-[0-9.]+", inner) else inner
    if models is not None and inner not in models:
        raise WireError(f"The model `{name}` does not exist or you do not have access to it. This server serves "
                        f"{' and '.join(repr(m) for m in models)}.", "model", "model_not_found", 404)


def _check_options(body: dict[str, Any]) -> None:
    for key in ("stream", "parallel_tool_calls"):
        if body.get(key) is not None and not isinstance(body[key], bool):
            raise _wrong_type(key, "a boolean", body[key])
    options = body.get("stream_options")
    if options is not None:
        if not isinstance(options, dict):
            raise _wrong_type("stream_options", "an object", options)
        if options.get("include_usage") is not None and not isinstance(options["include_usage"], bool):
            raise _wrong_type("stream_options.include_usage", "a boolean", options["include_usage"])
    stop = body.get("stop")
    if stop is not None and not (isinstance(stop, str) or (isinstance(stop, list) and len(stop) <= 4
                                                           and all(isinstance(s, str) for s in stop))):
        raise WireError("Invalid 'stop': expected a string or an array of at most 4 strings.", "stop", "invalid_value")
    key = body.get("prompt_cache_key")
    if key is not None and not isinstance(key, str):
        raise _wrong_type("prompt_cache_key", "a string", key)
    n = body.get("n", 1)
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128):
        raise WireError("Invalid 'n': expected an integer from 1 to 128.", "n", "invalid_value")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise WireError(f"Invalid '{key}': expected a positive integer.", key, "invalid_value")


def _check_format(body: dict[str, Any]) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind not in ("text", "json_object", "json_schema"):
        raise WireError("Invalid 'response_format.type': expected 'text', 'json_object' or 'json_schema'.",
                        "response_format.type", "invalid_value")
    spec = fmt.get("json_schema")
    if kind == "json_schema" and (not isinstance(spec, dict) or not spec.get("name")):
        raise WireError("Missing required parameter: 'response_format.json_schema.name'.",
                        "response_format.json_schema.name", "missing_required_parameter")
    if kind == "json_schema" and spec.get("schema") is not None:
        _check_schema(spec["schema"], "response_format.json_schema.schema")
    if kind == "json_object" and "json" not in json.dumps(body["messages"]).lower():
        raise WireError("'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                        "'json_object'.", "messages")


def validate(body: Any, models: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Check a request body; return it, or raise :class:`WireError` as OpenAI would.

    ``models``: the names served (another name is a 404 ``model_not_found``);
    None accepts any name.

    Args:
        body: the parsed request body (any JSON value: anything but an object is a 400).
        models: the model names served (another name is a 404 ``model_not_found``); None accepts any name.

    Examples:
        >>> validate({"model": "offline", "messages": []})  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.models.serving.wire_checks.WireError: Invalid 'messages': empty array. Expected an array with minimum
        length 1, but got an empty array instead.
        >>> validate({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}, ("offline",))
        ... # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.models.serving.wire_checks.WireError: The model `gpt-5` does not exist or you do not have \
access to it.
        This server serves 'offline'.
    """
    if not isinstance(body, dict):
        raise WireError("We could not parse the JSON body of your request: expected a JSON object.", None, None)
    _check_model(body, models)
    _check_messages(body.get("messages"))
    _check_tools(body)
    _check_options(body)
    _check_format(body)
    return body
