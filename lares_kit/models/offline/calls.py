"""Turning the planner's intentions into calls of the tools actually offered.

Part of the offline model (:mod:`lares_kit.models.offline`). The planner
thinks in the toolkit's vocabulary ("switch this light on"); a request may
offer ``set_light``, only ``toggle_light``, only ``set_device``, or the same
tools under other spellings (``toggleLight``) and parameter names
(``lightId``). This module picks the best offered tool for an intention and
renames the arguments to that tool's own parameters.
"""

from __future__ import annotations

from typing import Any

from .planning import Intention
from .reading import norm

__all__ = ["CARRIERS", "CONTRACT_TOOLS", "default", "fake_tools", "fit", "props", "render"]

CONTRACT_TOOLS = {"togglelight", "setlight", "moverobot", "lookwithrobot", "setdevice", "readdevice", "askuser",
                  "halt", "recall", "rememberpreference", "addtolist"}
# intention action -> the tools that can carry it, best first
CARRIERS = {"light": ("setlight", "togglelight", "setdevice"), "device": ("setdevice",), "move": ("moverobot",),
            "look": ("lookwithrobot",), "ask": ("askuser",), "halt": ("halt",), "read": ("readdevice",),
            "recall": ("recall",), "remember": ("rememberpreference",), "live": ("getlivecontext",),
            "list": ("addtolist",)}


def props(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters, ``{name: JSON schema}``; {} for a tool without any.

    Args:
        tool: one offered tool in Chat Completions shape, ``{"type": "function", "function": {...}}``.

    Examples:
        >>> props({"function": {"name": "halt", "parameters": {"properties": {"message_to_user": {"type": "string"}}}}})
        {'message_to_user': {'type': 'string'}}
        >>> props({"function": {"name": "look_with_robot"}})
        {}
    """
    return ((tool.get("function") or {}).get("parameters") or {}).get("properties") or {}


def default(spec: dict[str, Any]) -> Any:
    """A schema-valid placeholder: the first allowed value, else an empty value of the parameter's type.

    Used for required arguments the plan has no value for.

    Args:
        spec: one parameter's JSON schema (its ``enum`` and ``type`` are read).

    Examples:
        >>> default({"type": "string", "enum": ["kitchen", "office"]}), default({"type": ["boolean", "null"]})
        ('kitchen', False)
    """
    if spec.get("enum"):
        return spec["enum"][0]
    kind = spec.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}.get(kind, "")


def _allowed(value: Any, spec: dict[str, Any]) -> bool:
    # Does the value fit the parameter's enum and basic type? (A sentence is no room id.)
    if spec.get("enum") and value not in spec["enum"]:
        return False
    kinds = spec.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    python = {"string": str, "boolean": bool, "integer": int, "number": (int, float), "object": dict, "array": list}
    return not kinds or any(isinstance(value, python.get(k, object)) for k in kinds)


def fit(args: dict[str, Any], tool: dict[str, Any]) -> dict[str, Any]:
    """Contract arguments renamed to the tool's own parameter names; missing required ones defaulted.

    A value the parameter's enum or type does not allow is dropped (a sentence is no room id).

    Args:
        args: the arguments in the toolkit's own names, e.g. ``{"light_id": "kitchen-light", "on": True}``.
        tool: the offered tool to call, whose parameter names may be spelled differently (``lightId``).

    Examples:
        >>> tool = {"function": {"name": "setLight", "parameters": {"properties": {
        ...     "lightId": {"type": "string"}, "on": {"type": "boolean"}}, "required": ["lightId", "on"]}}}
        >>> fit({"light_id": "kitchen-light"}, tool)
        {'lightId': 'kitchen-light', 'on': False}
    """
    params = props(tool)
    if "properties" not in ((tool.get("function") or {}).get("parameters") or {}):
        return dict(args)  # a stub with no schema (intent enum, ReAct prompt): keep the contract names
    by_norm = {norm(p): p for p in params}
    fitted: dict[str, Any] = {}
    for key, value in args.items():
        target = by_norm.get(norm(key))
        if target is None and len(params) == 1:
            target = next(iter(params))
        if target is not None and target not in fitted and _allowed(value, params[target] or {}):
            fitted[target] = value
    required = ((tool.get("function") or {}).get("parameters") or {}).get("required") or []
    for name in required:
        if name not in fitted and name in params:
            fitted[name] = default(params[name] or {})
    return fitted


def render(intention: Intention, tools: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The intention as a call of one of ``tools`` ({normalised name: tool}), or None.

    Args:
        intention: what the planner wants done: an action (``light``, ``move``, ``halt``, ...) and its arguments.
        tools: the offered tools, keyed by normalised name (see :func:`.reading.norm`).

    Examples:
        >>> t = {"togglelight": {"function": {"name": "toggleLight", "parameters": {"properties": {"lightId": {}}}}}}
        >>> render(Intention("light", {"light_id": "kitchen-light", "on": True}), t)
        ('toggleLight', {'lightId': 'kitchen-light'})
    """
    if intention.ha is not None and (tool := tools.get(norm(intention.ha[0]))) is not None:
        return tool["function"]["name"], fit(intention.ha[1], tool)  # Home Assistant's dialect (.ha_reading)
    for carrier in CARRIERS.get(intention.action, ()):
        tool = tools.get(carrier)
        if tool is None:
            continue
        args = dict(intention.args)
        if carrier == "setdevice" and intention.action == "light":
            args = {"device_id": args["light_id"], "attribute": "on", "value": args["on"]}
        if carrier == "togglelight":
            args.pop("on", None)
        return tool["function"]["name"], fit(args, tool)
    return None


def fake_tools(names: list[str]) -> dict[str, dict[str, Any]]:
    """Tool stubs for names only (an intent enum, a ReAct prompt): {normalised name: tool}.

    Args:
        names: tool names as offered, in any spelling (``set_light``, ``toggleLight``).

    Examples:
        >>> list(fake_tools(["set_light", "halt"]))
        ['setlight', 'halt']
    """
    return {norm(n): {"function": {"name": n, "parameters": {}}} for n in names}
