"""The offline model's reply to one request: pick the mode, plan, and answer in it.

Part of the offline model (the prompt contract is in :mod:`lares_kit.models.offline`).
A design whose prompts have a shape of their own is answered by its rules
(:mod:`.designs`: SAGE's tree, intent-action's intent tool and stated call,
ReAct). Everything else -- what every design shares -- is read into beliefs
(:mod:`.reading`), planned (:mod:`.planning`), and written as the request
asks: a forced function, tool calls (several at once when
``parallel_tool_calls`` allows), JSON for a ``response_format``, or a plain
sentence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .calls import CONTRACT_TOOLS, fit, render
from .designs import design_reply
from .designs.react import FAULTY_MODEL
from .formats import json_reply
from .planning import Intention, plan
from .reading import Beliefs, norm
from .request import read as read_request

__all__ = ["MODEL_NAME", "FAULTY_MODEL", "Reply", "respond"]

MODEL_NAME = "offline"


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


def _forced(b: Beliefs, tool: dict[str, Any]) -> Reply:
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
    own = design_reply(request)  # a design whose prompts have a shape of their own (lares_kit.models.offline.designs)
    if own is not None:
        return Reply(*own[1])
    if tools and choice != "none":
        b = read_request(messages, tools)
        by_norm = {norm(t["function"]["name"]): t for t in tools}
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            return _forced(b, next(t for t in tools if t["function"]["name"] == name))
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
        b = read_request(messages, tools)
        return Reply(content=json_reply(b, fmt, plan(b, CONTRACT_TOOLS)))
    b = read_request(messages, tools)
    first = plan(b, CONTRACT_TOOLS if tools else {"halt"})[0]
    if first.action == "halt":
        return Reply(content=first.args["message_to_user"])
    return Reply(content=f"{first.why} (tool_choice is 'none', so I call no tool in this reply.)")
