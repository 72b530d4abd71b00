"""The offline model's reply to one request: pick the mode, plan, and answer in it.

Part of the offline model (the prompt contract is in :mod:`lares_kit.models.offline`).
SAGE's prompts go to :mod:`~lares_kit.models.offline.sage.rules`; everything else is read into
beliefs (:mod:`.reading`), planned (:mod:`.planning`), and written as the
request asks: a forced function, an intent tool's choice, tool calls
(several at once when ``parallel_tool_calls`` allows), JSON for a
``response_format``, a ReAct step, or a plain sentence.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .calls import CONTRACT_TOOLS, fake_tools, fit, props, render
from .formats import json_reply, react_beliefs, react_reply, wants_react
from .planning import Intention, plan
from .reading import Beliefs, norm
from .request import read as read_request
from .sage.rules import sage_reply

__all__ = ["MODEL_NAME", "FAULTY_MODEL", "CALL_MARK", "Reply", "respond", "stated_call"]

MODEL_NAME = "offline"
CALL_MARK = "Call:"  # ends a decision's reasoning: "Call: set_light {...}", the call it means
_STATED = re.compile(r"Call: (\S+) (\{.*\})\s*$", re.DOTALL)
FAULTY_MODEL = "offline-multi"  # writes several Actions after one Thought (see the module docstring)


@dataclass
class Reply:
    """What the model says: text, or tool calls as (name, arguments) pairs."""

    content: str | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _repeat_of_failure(b: Beliefs, name: str, args: dict[str, Any]) -> str | None:
    # The same call already failed and nothing has succeeded since: doing it again would loop.
    for call in reversed(b.calls):
        if call.ok:
            return None
        if call.result is not None and call.name == name and call.args == args:
            return call.result
    return None


def _calls_for(b: Beliefs, intentions: list[Intention], tools: dict[str, dict[str, Any]],
               parallel: bool) -> Reply:
    calls = []
    for intention in intentions if parallel else intentions[:1]:
        call = render(intention, tools)
        if call is None:
            break
        error = _repeat_of_failure(b, *call)
        if error is not None:
            message = (f"I tried {call[0]} with {json.dumps(call[1])} and it failed ({error.removeprefix('Error: ')}). "
                       "I cannot finish this task.")
            halt = render(Intention("halt", {"message_to_user": message}), tools)
            return Reply(calls=[halt]) if halt else Reply(content=message)
        calls.append(call)
    if calls:
        return Reply(calls=calls)
    first = intentions[0]
    return Reply(content=first.args.get("message_to_user") or first.why)


def _intent_fields(tool: dict[str, Any]) -> tuple[str, str] | None:
    # (choice parameter, reasoning parameter) if this is an intent tool like decide_best_function.
    params = props(tool)
    choice = next((p for p, s in params.items() if (s or {}).get("enum") and ("function" in p.lower()
                   or "tool" in p.lower())), None)
    if choice is None or "decide" not in norm(tool["function"]["name"]) and len(params) != 2:
        return None
    reason = next((p for p in params if p != choice), "reasoning")
    return choice, reason


def _intent(b: Beliefs, tool: dict[str, Any], choice: str, reason: str) -> Reply:
    options = [str(v) for v in props(tool)[choice]["enum"]]
    fake = fake_tools(options)
    intentions = plan(b, set(fake))
    call = render(intentions[0], fake)
    picked = call[0] if call else options[0]
    why = intentions[0].why
    if call is not None:  # the reasoning ends with the call it means, when that fits (a model told the limit)
        stated = f"{why} {CALL_MARK} {call[0]} {json.dumps(call[1], ensure_ascii=False)}"
        limit = (props(tool).get(reason) or {}).get("maxLength")
        why = stated if not isinstance(limit, int) or len(stated) <= limit else why
    return Reply(calls=[(tool["function"]["name"], {reason: _within(why, props(tool).get(reason)), choice: picked})])


def stated_call(messages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The call the last decision in a conversation states (``... Call: NAME {arguments}``), or None.

    The decision is the last assistant message with text, after which only system messages came (the action
    call of an intent-action step, in either prompt layout).

    Args:
        messages: A request's messages, oldest first.

    Examples:
        >>> stated_call([{"role": "assistant", "content": 'I have decided to call move_robot because: The dog may '
        ...              'be in the Office. Call: move_robot {"destination_room_id": "office"}'},
        ...              {"role": "system", "content": "WORLD KNOWLEDGE (latest)"}])
        ('move_robot', {'destination_room_id': 'office'})
        >>> stated_call([{"role": "assistant", "content": "I will look around."}]) is None
        True
    """
    for m in reversed(messages):
        if m.get("role") == "system":
            continue
        if m.get("role") != "assistant" or not isinstance(m.get("content"), str):
            return None
        found = _STATED.search(m["content"])
        if found is None:
            return None
        try:
            args = json.loads(found.group(2))
        except json.JSONDecodeError:
            return None
        return (found.group(1), args) if isinstance(args, dict) else None
    return None


def _within(text: str, spec: dict[str, Any] | None) -> str:
    # A reasoning as long as the schema's maxLength allows, cut at a word (as a model told the limit writes less).
    limit = (spec or {}).get("maxLength")
    if not isinstance(limit, int) or len(text) <= limit:
        return text
    return text[:limit - 3].rsplit(" ", 1)[0] + "..."


def _forced(b: Beliefs, tool: dict[str, Any], stated: tuple[str, dict[str, Any]] | None = None) -> Reply:
    if stated is not None and norm(stated[0]) == norm(tool["function"]["name"]):
        return Reply(calls=[(tool["function"]["name"], fit(stated[1], tool))])  # what the decision said to do
    only = {norm(tool["function"]["name"]): tool}
    for can in (CONTRACT_TOOLS | set(only), set(only)):
        intentions = plan(b, can)
        for intention in intentions:
            call = render(intention, only)
            if call is not None:
                return Reply(calls=[call])
    return Reply(calls=[(tool["function"]["name"], _fallback(b, tool))])


def _fallback(b: Beliefs, tool: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a forced function the plan does not need now: valid, and as harmless as possible."""
    first = plan(b, CONTRACT_TOOLS)[0]
    name = norm(tool["function"]["name"])
    if name == "askuser":
        args: dict[str, Any] = {
            "question": f"Before I go on, is there anything I should know? Next I would: {first.why}"}
    else:
        args = {"message_to_user": first.args.get("message_to_user")
                or f"I have not finished. Next I would: {first.why}"}
    if name == "moverobot" and b.robot in b.rooms and b.neighbours(b.robot):
        args = {"destination_room_id": b.neighbours(b.robot)[0]}  # a legal move, at least
    lights = b.lights_in(b.robot or "") or [d for d in b.devices.values() if d.type == "light"]
    if name in ("togglelight", "setlight", "readdevice") and lights:
        # set_light to the state it already has changes nothing
        args = {"light_id": lights[0].id, "device_id": lights[0].id, "on": lights[0].state.get("on", True)}
    return fit(args, tool)


def respond(request: dict[str, Any]) -> Reply:
    """The model's reply to a (validated) Chat Completions request body.

    Args:
        request: a Chat Completions request body, already checked by :func:`.wire.validate` (``messages``, ``tools``,
            ``tool_choice``, ``response_format``, ``model``).

    Examples:
        >>> knowledge = ('WORLD KNOWLEDGE (latest): {"robot": {"room": "hall"}, "rooms": [{"id": "hall", '
        ...   '"name": "Hall", "exits": [], "devices": [{"id": "hall-light", "name": "Light", "type": "light", '
        ...   '"state": {"on": false}}]}]}')
        >>> tool = {"type": "function", "function": {"name": "set_light", "parameters": {"type": "object",
        ...         "properties": {"light_id": {"type": "string"}, "on": {"type": "boolean"}}}}}
        >>> respond({"messages": [{"role": "system", "content": knowledge},
        ...          {"role": "user", "content": "Turn on the hall light"}], "tools": [tool]}).calls
        [('set_light', {'light_id': 'hall-light', 'on': True})]
    """
    messages = request.get("messages") or []
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("function")]
    choice = request.get("tool_choice")
    sage = sage_reply(request)  # SAGE's tree of prompts has its own rules (lares_kit.models.offline.sage.rules)
    if sage is not None:
        return Reply(*sage)
    if tools and choice != "none":
        b = read_request(messages, tools)
        by_norm = {norm(t["function"]["name"]): t for t in tools}
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            forced = next(t for t in tools if t["function"]["name"] == name)
            fields = _intent_fields(forced)
            return _intent(b, forced, *fields) if fields else _forced(b, forced, stated_call(messages))
        if len(tools) == 1 and (fields := _intent_fields(tools[0])):
            return _intent(b, tools[0], *fields)
        reply = _calls_for(b, plan(b, set(by_norm)), by_norm, request.get("parallel_tool_calls") is not False)
        if reply.calls or choice != "required":
            return reply
        # "required" but the plan would answer in text: halt if offered, else the most harmless call.
        if "halt" in by_norm:
            return Reply(calls=[(by_norm["halt"]["function"]["name"], fit({"message_to_user": reply.content},
                                                                             by_norm["halt"]))])
        return Reply(calls=[(tools[0]["function"]["name"], _fallback(b, tools[0]))])
    fmt = request.get("response_format") or {}
    if fmt.get("type") in ("json_object", "json_schema"):
        if wants_react(messages):  # a ReAct scratchpad asking for the Action as JSON (the react agent's Prompt B)
            b, named = react_beliefs(messages)
            return Reply(content=json_reply(b, fmt, plan(b, set(named) | {"askuser", "halt"}), named))
        b = read_request(messages, tools)
        return Reply(content=json_reply(b, fmt, plan(b, CONTRACT_TOOLS)))
    if wants_react(messages):
        b, named = react_beliefs(messages)
        # Asking and finishing are always possible in ReAct: a Final Answer can carry either.
        return Reply(content=react_reply(b, plan(b, set(named) | {"askuser", "halt"}), named,
                                         several=request.get("model") == FAULTY_MODEL))
    b = read_request(messages, tools)
    first = plan(b, CONTRACT_TOOLS if tools else {"halt"})[0]
    if first.action == "halt":
        return Reply(content=first.args["message_to_user"])
    return Reply(content=f"{first.why} (tool_choice is 'none', so I call no tool in this reply.)")
