"""The offline model's JSON replies, for any request with a ``response_format``.

Part of the offline model (:mod:`lares_kit.models.offline`); shared by every
design. ``response_format`` ``json_object`` gives
``{"thought", "tool", "arguments"}``; ``json_schema`` gives an object valid
for the schema, its fields filled by name: reasoning/thought -> the reason,
tool/function/action -> the tool (from an enum when there is one),
arguments/args -> the arguments, message/answer -> the final message; an
array whose items have a tool field (``{"actions": [...]}``) gets one entry
per independent device change -- parallel calls in one reply. The ReAct
scratchpad's Action as JSON (the react agent's Prompt B) is read by the react
design's rules (:mod:`.designs.react`), which answer with :func:`json_reply`.
"""

from __future__ import annotations

import json
from typing import Any

from .calls import CARRIERS, fake_tools, render
from .planning import Intention
from .reading import Beliefs, norm

__all__ = ["independent", "json_reply"]

SNAKE = {"togglelight": "toggle_light", "setlight": "set_light", "moverobot": "move_robot",
         "lookwithrobot": "look_with_robot", "setdevice": "set_device", "readdevice": "read_device",
         "askuser": "ask_user", "halt": "halt", "recall": "recall", "rememberpreference": "remember_preference"}


def independent(intentions: list[Intention]) -> list[Intention]:
    """The leading intentions that can run side by side: device changes (the planner returns
    several only for independent changes); anything else stands alone.

    Args:
        intentions: what the planner wants done next, first to act first (from :func:`.planning.plan`).
    """
    if intentions and intentions[0].action in ("light", "device"):
        return [it for it in intentions if it.action in ("light", "device")]
    return intentions[:1]


def _contract_call(first: Intention, named: dict[str, dict[str, Any]] | None = None) -> tuple[str, dict[str, Any]]:
    # The call as the prompt named its tools (Home Assistant's intent tools, say), else in the contract's names.
    if named and (call := render(first, named)) is not None:
        return call
    tools = fake_tools([SNAKE.get(c, c) for c in CARRIERS[first.action][:1]])
    return render(first, tools) or ("halt", first.args)


def _fill(schema: dict[str, Any], key: str, ctx: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    for combo in ("anyOf", "oneOf", "allOf"):
        if schema.get(combo):
            return _fill(schema[combo][0], key, ctx, defs)
    k = norm(key)
    kind = schema.get("type")
    kind = next((t for t in kind if t != "null"), "string") if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        if not schema.get("properties") and k in ("arguments", "args", "parameters", "input", "actioninput"):
            return ctx["arguments"]
        return {p: _fill(s or {}, p, ctx, defs) for p, s in (schema.get("properties") or {}).items()}
    if k in ctx["by_arg"]:
        value = ctx["by_arg"][k]
    elif any(w in k for w in ("reason", "thought", "explanation", "why", "plan")):
        value = ctx["why"]
    elif any(w in k for w in ("tool", "function", "action", "name")):
        value = ctx["tool"]
    else:
        value = ctx["message"]
    if schema.get("enum"):
        options = schema["enum"]
        return next((o for o in options if norm(str(o)) == norm(str(value))), options[0])
    if kind == "boolean":
        return value if isinstance(value, bool) else False
    if kind in ("integer", "number"):
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    if kind == "array":
        items = schema.get("items") or {}
        if "$ref" in items:
            items = defs.get(items["$ref"].rsplit("/", 1)[-1], {})
        if ctx.get("each") and any(norm(p) in ("tool", "function", "name", "action")
                                   for p in items.get("properties") or {}):
            # a list of actions (parallel calls): one entry per independent change
            return [_fill(items, key, one, defs) for one in ctx["each"]]
        return [_fill(items, key, ctx, defs)] if schema.get("minItems") else []
    return value if isinstance(value, str) else json.dumps(value)


def _context(intention: Intention) -> dict[str, Any]:
    name, args = _contract_call(intention)
    return {"why": intention.why, "tool": name, "arguments": args, "by_arg": {norm(a): v for a, v in args.items()},
            "message": intention.args.get("message_to_user") or intention.why}


def json_reply(b: Beliefs, fmt: dict[str, Any], intentions: list[Intention],
               named: dict[str, dict[str, Any]] | None = None) -> str:
    """The reply as JSON: ``{"thought", "tool", "arguments"}`` or an object for ``fmt``'s schema.

    Args:
        b: what the model read from the request (the reply is made from the intentions alone; may be None).
        fmt: the request's ``response_format``: ``{"type": "json_object"}`` or ``{"type": "json_schema", "json_schema":
            {"schema": ...}}``.
        intentions: what the planner wants done next, first to act first (from :func:`.planning.plan`).
        named: the tools the system prompt names (see :func:`.calls.fake_tools`), so a call uses their names
            (Home Assistant's intent tools); None writes the contract's own names.

    Examples:
        >>> from lares_kit.models.offline.planning import Intention
        >>> it = [Intention("look", {}, "Look around.")]
        >>> fmt = {"type": "json_schema", "json_schema": {"name": "step", "schema": {"type": "object",
        ...        "properties": {"reasoning": {"type": "string"}, "tool": {"type": "string"}}}}}
        >>> json_reply(None, fmt, it)
        '{"reasoning": "Look around.", "tool": "look_with_robot"}'
    """
    first = intentions[0]
    name, args = _contract_call(first, named)
    message = first.args.get("message_to_user") or first.args.get("question") or first.why
    if fmt.get("type") != "json_schema":
        return json.dumps({"thought": first.why, "tool": name, "arguments": args})
    schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object", "properties": {}}
    ctx = {"why": first.why, "tool": name, "arguments": args, "message": message,
           "by_arg": {norm(a): v for a, v in args.items()}}
    ctx["each"] = [ctx] + [_context(it) for it in independent(intentions)[1:]]
    return json.dumps(_fill(schema, "", ctx, schema.get("$defs") or schema.get("definitions") or {}))
