"""Typed Python functions -> OpenAI tool schemas, and argument checking.

Taught in ``notebooks/02_agent_facing_tools.ipynb``. A tool is a plain typed
function: its docstring summary becomes the description, its ``Args:``
entries the parameter descriptions. ``str``, ``int``, ``float``, ``bool``,
``Literal[...]``, ``list[X]``, ``X | None``, ``list[X] | X`` and the id types below map to
exact JSON schema. A missing type hint or an undocumented argument is a
:class:`SchemaError` when the schema is built -- never a silent ``"string"``.

Parameters named in :data:`INJECTED` (``home``, ``user``, ``memory``,
``monitor``, ``source``) are supplied by the toolkit when the tool runs and
are not shown to the model (``source``: who gave the instruction).
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from typing import Any, Callable, Literal, NewType, Union

__all__ = ["parse_arguments", "RoomId", "LightId", "DeviceId", "ListId", "ToolName", "ID_TYPES", "id_enums", "INJECTED",
           "SchemaError", "tool_schema", "short_schema", "parse_docstring", "check_arguments"]

# Id types: plain strings to Python, enums of valid ids in the schema when the
# caller knows them (a Toolbox passes the home's rooms, lights, devices).
RoomId = NewType("RoomId", str)
LightId = NewType("LightId", str)
DeviceId = NewType("DeviceId", str)
ListId = NewType("ListId", str)  # a to-do or shopping list's device id
ToolName = NewType("ToolName", str)
ID_TYPES = (DeviceId, LightId, ListId)  # the id types that name a device


def id_enums(home: Any, tool_names: list[str], ids: bool = True) -> dict[Any, list[str]]:
    """Each id type's valid values in a home, for the enums of its tools' schemas (devices: only exposed ones).

    Args:
        home: The home (a :class:`lares_kit.home.graph.Home`): its rooms and devices.
        tool_names: The names of the tools offered, the values of :data:`ToolName`.
        ids: False: only the tool names (a home too big to list its ids).
    """
    if not ids:
        return {ToolName: tool_names}
    shown = [d for d in home.devices.values() if d.exposed]
    return {RoomId: list(home.graph.nodes), LightId: [d.id for d in shown if d.type == "light"],
            DeviceId: [d.id for d in shown], ListId: [d.id for d in shown if d.type == "todo"], ToolName: tool_names}

INJECTED = ("home", "user", "memory", "monitor", "source")


class SchemaError(TypeError):
    """A tool function cannot be described to a model (missing hint or doc)."""


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description}).

    The description is the text before the argument section (or before a
    Returns or Examples header), joined into one line.

    Args:
        doc: A function's ``__doc__``; None (no docstring) gives ``("", {})``.

    Examples:
        >>> parse_docstring('''Move the robot.
        ...
        ... Longer words.
        ...
        ... Args:
        ...     room_id: Where to go,
        ...         an adjacent room.
        ... ''')
        ('Move the robot. Longer words.', {'room_id': 'Where to go, an adjacent room.'})
    """
    text = inspect.cleandoc(doc or "")
    body, _, rest = text.partition("\nArgs:")
    args: dict[str, str] = {}
    current, args_indent = None, 0
    for line in rest.splitlines():
        if not line.strip():
            continue
        if re.match(r"^\S", line):  # next section (Returns:, Examples:) ends Args
            break
        m = re.match(r"^\s{2,8}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if m and (current is None or len(line) - len(line.lstrip()) <= args_indent):
            current, args_indent = m.group(1), len(line) - len(line.lstrip())
            args[current] = m.group(2).strip()
        elif current:
            args[current] = (args[current] + " " + line.strip()).strip()
    # The description stops at the first section header (Examples:, Returns:).
    body = re.split(r"\n\s*(?:Returns|Raises|Examples|Example|Note|Notes):", body)[0]
    description = " ".join(line.strip() for line in body.splitlines() if line.strip())
    return description, args


def _type_schema(hint: Any, enums: dict[Any, list[str]], where: str) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if hint in enums:
        return {"type": "string", "enum": list(enums[hint])}
    if getattr(hint, "__supertype__", None) is not None:  # a NewType id with no known values
        return _type_schema(hint.__supertype__, enums, where)
    if hint is str:
        return {"type": "string"}
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if origin is Literal:
        values = list(typing.get_args(hint))
        kind = {str: "string", int: "integer", bool: "boolean"}.get(type(values[0]), "string")
        return {"type": kind, "enum": values}
    if origin in (list, typing.List) or hint is list:
        (item,) = typing.get_args(hint) or (None,)
        if item is None:
            raise SchemaError(f"{where}: say what the list holds, e.g. list[str]")
        return {"type": "array", "items": _type_schema(item, enums, where)}
    if origin in (dict, typing.Dict) or hint is dict:
        return {"type": "object"}
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return _type_schema(args[0], enums, where)
        kinds = [_type_schema(a, enums, where) for a in args]
        if all(set(k) == {"type"} and isinstance(k["type"], str) for k in kinds):
            return {"type": [k["type"] for k in kinds]}  # bool | float | str -> ["boolean", "number", "string"]
        plain = [k for k in kinds if set(k) == {"type"} and isinstance(k["type"], str)]
        lists = [k for k in kinds if k.get("type") == "array"]
        if len(lists) == 1 and len(plain) + 1 == len(kinds):  # list[str] | str -> one string or a list of them
            return {"type": ["array", *(k["type"] for k in plain)], "items": lists[0]["items"]}
    raise SchemaError(f"{where}: type {hint!r} has no JSON schema here; use str, int, float, bool, "
                      "Literal[...], list[...], or X | None")


def tool_schema(fn: Callable[..., Any], enums: dict[Any, list[str]] | None = None) -> dict[str, Any]:
    """The OpenAI ``tools`` entry for a typed, documented function.

    Args:
        fn: A tool function: type hints on every parameter, a docstring whose first lines are the
            description and whose ``Args:`` describe every parameter but the injected ones (:data:`INJECTED`).
        enums: Maps id types (e.g. :data:`RoomId`) to their valid values, which the schema lists as an
            ``enum``; None lists none.

    Examples:
        >>> def move_robot(home, destination_room_id: RoomId) -> str:
        ...     '''Move the robot to an adjacent room.
        ...
        ...     Args:
        ...         destination_room_id: ID of the adjacent room.
        ...     '''
        >>> s = tool_schema(move_robot, {RoomId: ["hallway", "kitchen"]})
        >>> s["function"]["parameters"]["properties"]["destination_room_id"]
        {'type': 'string', 'enum': ['hallway', 'kitchen'], 'description': 'ID of the adjacent room.'}
        >>> def bad(x) -> str:
        ...     '''No hint on x.
        ...
        ...     Args:
        ...         x: something.
        ...     '''
        >>> tool_schema(bad)
        Traceback (most recent call last):
        ...
        lares_kit.tools.schema.SchemaError: bad(x): add a type hint, e.g. x: str
    """
    name = fn.__name__
    description, arg_docs = parse_docstring(fn.__doc__)
    if not description:
        raise SchemaError(f"{name}: add a docstring; its first line is what the model reads")
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required = []
    for param in inspect.signature(fn).parameters.values():
        if param.name in INJECTED:
            continue
        where = f"{name}({param.name})"
        if param.name not in hints:
            raise SchemaError(f"{where}: add a type hint, e.g. {param.name}: str")
        if param.name not in arg_docs:
            raise SchemaError(f"{where}: describe it under 'Args:' in the docstring")
        prop = _type_schema(hints[param.name], enums or {}, where)
        prop["description"] = arg_docs[param.name]
        properties[param.name] = prop
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    for extra in sorted(set(arg_docs) - set(properties) - set(INJECTED)):
        raise SchemaError(f"{name}: the docstring documents {extra!r}, which is not a parameter")
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


_JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
               "array": list, "object": dict}


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Check arguments against a tool schema; a sentence saying what is wrong, or None.

    Enum membership is left to the tool, which can say which values are valid
    in a more helpful way (and suggest the nearest one).

    Args:
        schema: A tool's schema, as :func:`tool_schema` builds it.
        arguments: The arguments the model sent, already parsed from JSON, by name.

    Examples:
        >>> s = {"function": {"name": "set_light", "parameters": {"type": "object",
        ...      "properties": {"light_id": {"type": "string"}, "on": {"type": "boolean"}},
        ...      "required": ["light_id", "on"]}}}
        >>> check_arguments(s, {"light_id": "kitchen-light"})
        "set_light needs the argument 'on' (boolean)."
        >>> check_arguments(s, {"light_id": "kitchen-light", "on": "yes"})
        "set_light: 'on' must be a boolean, got the string 'yes'."
    """
    fn = schema["function"]
    params = fn["parameters"]
    props = params.get("properties", {})
    for req in params.get("required", []):
        if req not in arguments:
            return f"{fn['name']} needs the argument {req!r} ({props[req].get('type', 'value')})."
    for key, value in arguments.items():
        if key not in props:
            allowed = ", ".join(props) or "no arguments"
            return f"{fn['name']} has no argument {key!r}; it takes: {allowed}."
        expected = props[key].get("type")
        kinds = expected if isinstance(expected, list) else [expected]
        if all(k in _JSON_TYPES for k in kinds) and not any(_is(value, k) for k in kinds):
            return f"{fn['name']}: {key!r} must be a {' or '.join(kinds)}, got {_describe(value)}."
        if expected == "array" and "items" in props[key]:
            inner = props[key]["items"].get("type")
            if inner in _JSON_TYPES and not all(isinstance(v, _JSON_TYPES[inner]) for v in value):
                return f"{fn['name']}: every entry of {key!r} must be a {inner}."
    return None


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {value!r}"
    if value is None:
        return "null"
    return f"{type(value).__name__} {value!r}"


def parse_arguments(arguments: str | dict[str, Any] | None) -> dict[str, Any] | str:
    """A tool call's arguments as the model sent them, read into a dict -- or a short reason they are unreadable.

    Args:
        arguments: The call's ``arguments``: a JSON object as text (what the API sends), a dict, or nothing.

    Examples:
        >>> parse_arguments('{"light_id": "kitchen-light"}'), parse_arguments(""), parse_arguments(None)
        ({'light_id': 'kitchen-light'}, {}, {})
        >>> parse_arguments('{"light_id": '), parse_arguments("[1]")
        ('Expecting value at character 13', 'got a JSON list, expected an object')
    """
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str):
        return f"got {type(arguments).__name__}, expected a JSON object"
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return f"{exc.msg} at character {exc.pos}"
    if not isinstance(value, dict):
        return f"got a JSON {type(value).__name__}, expected an object"
    return value


def _first_sentence(text: str) -> str:
    # "ID of the light, e.g. \"kitchen-light\"." -> "ID of the light."; "Stop. Then report." -> "Stop."
    text = re.split(r",? e\.g\. ", text, maxsplit=1)[0].rstrip(". ")
    return re.split(r"(?<=[a-z0-9)])\. ", text, maxsplit=1)[0].rstrip(".") + "."


def short_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool schema described in as few words as the model needs to choose it and fill it in.

    The description keeps its first sentence; a parameter keeps the first
    sentence of its description without the example, and none at all when an
    enum or the type (a boolean) already says it. Names, types, enums and
    required parameters are unchanged, so the same calls are valid.

    Args:
        schema: A tool schema as :func:`tool_schema` makes it; it is not changed.

    Examples:
        >>> def set_light(light_id: LightId, on: bool) -> str:
        ...     '''Switch a light on or off. Safe to repeat: it says so if the light is already that way.
        ...
        ...     Args:
        ...         light_id: ID of the light, e.g. "kitchen-light".
        ...         on: true to switch it on, false to switch it off.
        ...     '''
        >>> fn = short_schema(tool_schema(set_light))["function"]
        >>> fn["description"]
        'Switch a light on or off.'
        >>> fn["parameters"]["properties"]
        {'light_id': {'type': 'string', 'description': 'ID of the light.'}, 'on': {'type': 'boolean'}}
    """
    fn = dict(schema["function"])
    if fn.get("description"):
        fn["description"] = _first_sentence(fn["description"])
    params = dict(fn.get("parameters") or {})
    props = {}
    for name, spec in (params.get("properties") or {}).items():
        spec = dict(spec)
        text = spec.pop("description", "")
        if text and "enum" not in spec and spec.get("type") != "boolean":
            spec["description"] = _first_sentence(text)
        props[name] = spec
    if "properties" in params:
        params["properties"] = props
        fn["parameters"] = params
    return {**schema, "function": fn}
