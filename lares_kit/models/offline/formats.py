"""The offline model's text formats: ReAct (Thought / Action / Final Answer) and JSON.

Part of the offline model (:mod:`lares_kit.models.offline`); used when a
request offers no tools.

**ReAct.** Chosen when a ``system`` message asks for ``Thought:`` and
``Action:`` or ``Final Answer:``. The tools are the toolkit's tool names the
system prompt mentions (``set_light``, ``move_robot``... any spelling). The
instruction is the last ``user`` message not starting with ``Observation:``;
if it carries its own scratchpad (``Question: ...`` then ``Thought:`` lines),
the part before the first ``Thought:`` is the instruction. The scratchpad --
in that message, in later ``assistant`` messages, and in messages starting
with ``Observation:`` -- is read as history: each ``Action:`` is one JSON
object ``{"tool": NAME, "arguments": {...}}`` and the ``Observation:`` after
it is its result. The reply is one step::

    Thought: The Kitchen is dark and the user wants its light on.
    Action: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}

or, when done (or asking, if ``ask_user`` is not among the tools)::

    Thought: Every change the user asked for is made, so I report back.
    Final Answer: The light in the Kitchen is now on.

**JSON.** ``response_format`` ``json_object`` gives
``{"thought", "tool", "arguments"}``; ``json_schema`` gives an object valid
for the schema, its fields filled by name: reasoning/thought -> the reason,
tool/function/action -> the tool (from an enum when there is one),
arguments/args -> the arguments, message/answer -> the final message; an
array whose items have a tool field (``{"actions": [...]}``) gets one entry
per independent device change -- parallel calls in one reply. With a ReAct
system prompt the JSON answers the ReAct scratchpad (an Action as JSON).

**The teaching fault** (model name ``offline-multi``): the ReAct text reply
carries one ``Action:`` line per independent change after one Thought.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...sentences.markers import without_done_hint
from .calls import CARRIERS, CONTRACT_TOOLS, fake_tools, render
from .planning import HA_TOOLS, Intention
from .reading import Beliefs, Call, norm, text_of
from .request import read as read_request

__all__ = ["independent", "json_reply", "parse_react", "react_beliefs", "react_reply", "wants_react"]

_LABEL = re.compile(r"^\s*(?:Question|New input|Input|Instruction|User)\s*:\s*", re.IGNORECASE)
SNAKE = {"togglelight": "toggle_light", "setlight": "set_light", "moverobot": "move_robot",
         "lookwithrobot": "look_with_robot", "setdevice": "set_device", "readdevice": "read_device",
         "askuser": "ask_user", "halt": "halt", "recall": "recall", "rememberpreference": "remember_preference"}


def wants_react(messages: list[dict[str, Any]]) -> bool:
    """True when a system message asks for the ReAct format.

    Args:
        messages: the request's ``messages`` in Chat Completions shape, oldest first.

    Examples:
        >>> wants_react([{"role": "system", "content": "Answer with Thought: then Action: or Final Answer:"}])
        True
    """
    system = " ".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
    return "Thought:" in system and ("Action:" in system or "Final Answer:" in system)


def parse_react(text: str) -> list[Call]:
    """The Action/Observation pairs in a ReAct scratchpad, as calls.

    Args:
        text: the scratchpad: Thought, Action and Observation lines, as the agent sends them back.

    Examples:
        >>> pad = 'Thought: go\\nAction: {"tool": "move_robot", "arguments": {"destination_room_id": "lounge"}}\\n'
        >>> parse_react(pad + "Observation: The robot moved.")
        [Call(name='move_robot', args={'destination_room_id': 'lounge'}, result='The robot moved.')]
    """
    calls: list[Call] = []
    decoder = json.JSONDecoder()
    for m in re.finditer(r"Action:\s*", text):
        try:
            value, end = decoder.raw_decode(text, m.end())
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        name = value.get("tool") or value.get("name") or value.get("action") or ""
        args = value.get("arguments") or value.get("args") or value.get("action_input") or {}
        obs = re.match(r"\s*Observation:\s*(.*?)(?=\n\s*(?:Thought|Action|Final Answer):|\Z)", text[end:], re.DOTALL)
        said = without_done_hint(obs.group(1).strip()) if obs else None  # the hint is for real models
        calls.append(Call(str(name), args if isinstance(args, dict) else {}, said))
    return calls


def react_beliefs(messages: list[dict[str, Any]]) -> tuple[Beliefs, dict[str, dict[str, Any]]]:
    """Beliefs from a ReAct conversation, and the tools its system prompt names.

    Args:
        messages: a ReAct conversation: a system prompt naming the tools, the user's instruction, then the scratchpad.
    """
    system = " ".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
    names = {}
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", system):
        if norm(word) in CONTRACT_TOOLS | HA_TOOLS | {"getlivecontext"} and norm(word) not in names:
            names[norm(word)] = word
    at = max((i for i, m in enumerate(messages) if m.get("role") == "user"
              and not text_of(m.get("content")).lstrip().startswith("Observation:")), default=-1)
    first = text_of(messages[at].get("content")) if at >= 0 else ""
    instruction, _, pad = first.partition("Thought:")
    instruction = _LABEL.sub("", instruction.strip().splitlines()[-1] if instruction.strip() else "")
    pad = ("Thought:" + pad if pad else "") + "\n" + "\n".join(text_of(m.get("content")) for m in messages[at + 1:])
    beliefs = read_request(messages, None, calls=parse_react(pad), instruction=instruction)
    return beliefs, fake_tools(list(names.values()))


def react_reply(b: Beliefs, intentions: list[Intention], tools: dict[str, dict[str, Any]],
                several: bool = False) -> str:
    """One ReAct step for the first intention; with ``several`` (the ``offline-multi`` teaching
    fault), one Action line for each independent change after the one Thought.

    Args:
        b: what the model read from the request (the reply is made from the intentions alone; may be None).
        intentions: what the planner wants done next, first to act first (from :func:`.planning.plan`).
        tools: the tools the system prompt names, keyed by normalised name (see :func:`.calls.fake_tools`).
        several: True writes one Action line per independent change (the ``offline-multi`` fault); False, one.

    Examples:
        >>> from lares_kit.models.offline.planning import Intention
        >>> its = [Intention("light", {"light_id": f"{r}-light", "on": True}, "Lights on.") for r in ("a", "b")]
        >>> print(react_reply(None, its, fake_tools(["set_light"]), several=True))
        Thought: Lights on.
        Action: {"tool": "set_light", "arguments": {"light_id": "a-light", "on": true}}
        Action: {"tool": "set_light", "arguments": {"light_id": "b-light", "on": true}}
    """
    first = intentions[0]
    call = render(first, tools) if first.action != "halt" else None
    if call is None:
        answer = first.args.get("message_to_user") or first.args.get("question") or first.why
        return f"Thought: {first.why}\nFinal Answer: {answer}"
    calls = [call]
    if several:
        calls += [c for it in independent(intentions)[1:] if (c := render(it, tools)) is not None]
    return f"Thought: {first.why}\n" + "\n".join("Action: " + json.dumps({"tool": name, "arguments": args})
                                                  for name, args in calls)


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
