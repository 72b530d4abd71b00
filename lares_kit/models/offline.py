"""The offline model: a deterministic, rule-based stand-in for an LLM with tools.

Introduced in ``notebooks/00_start_here.ipynb``; every notebook runs on it,
and each says what a real LLM would do differently. It is *not* a language
model: it matches words against the home described in the prompt
and follows fixed rules. It exists so that every notebook and test runs with
no API key and no network, through the real ``openai`` SDK (see
:mod:`lares_kit.models.transport` and :mod:`lares_kit.models.server`). A real
LLM would handle far more phrasings, and also make mistakes this one cannot.

It decides only from the request -- the instruction, the tools offered, the
knowledge the agent put in the prompt, the tool results so far -- never from
the home itself. This package imports nothing from ``lares_kit.home``,
``lares_kit.worlds`` or ``lares_kit.tools``; a test checks that.

The prompt contract (what an agent must send for it to work)
-----------------------------------------------------------
* **Instruction**: the content of the *last* message with role ``user``
  (a user message starting with ``Observation:`` does not count). Agent
  control text ("I have decided to call X because...", "now call X") goes in
  ``assistant`` or ``system`` messages, never ``user``.
* **World knowledge**: a ``system`` message whose content starts with
  ``WORLD KNOWLEDGE`` and holds the JSON of ``Home.knowledge()`` between its
  first ``{`` and last ``}`` (pretty or compact). Its header says
  ``(latest)`` or ``(initial: ...)``. Without one (knowledge "none") the model
  knows only the ids in the tool schemas' enums: it can still switch
  ``kitchen-light`` for "the kitchen", but for a search it asks the user (if
  ``ask_user`` is offered) or halts saying it has no map.
* **History**: assistant messages with ``tool_calls`` and the ``tool``
  messages answering them, read through the result contract of
  :mod:`lares_kit.tools` (``Error: ...``; ``(<light-id>) is now on.`` or
  ``are now on.``; ``Also here: Name, a <type> (<id>); ...``, where the
  article may be ``an`` or none and ``, a <type>`` may be left out;
  ``The user answered: ...``).
  Beliefs are rebuilt every turn from the knowledge plus these facts, so the
  same history works with latest or initial knowledge.
* **Tools** it uses: ``toggle_light(light_id)``, ``set_light(light_id, on)``
  (preferred when offered), ``move_robot(destination_room_id)``,
  ``look_with_robot()``, ``set_device(device_id, attribute, value)``,
  ``read_device(device_id)``, ``ask_user(question)``,
  ``halt(message_to_user)``. Names match loosely (``toggleLight`` works).
* **Modes**: with ``tool_choice`` naming a function, that function is always
  called. If it is the intent tool ``decide_best_function(reasoning,
  best_function)``, the model names the function it would call next (from
  the enum) with a one-sentence reasoning. Any other forced function gets the
  arguments for what the model intends. With ``auto``/``required`` and
  several tools it calls the next one -- or, when ``parallel_tool_calls`` is
  not false and the instruction asks for several independent device changes,
  all of them at once (as OpenAI models do; omitted means true).
* **Text modes**: no tools and a system prompt asking for ``Thought:`` /
  ``Action:`` / ``Final Answer:`` -- the ReAct format of
  :mod:`lares_kit.models.formats`; ``response_format`` json_object or
  json_schema -- JSON valid for the schema; otherwise a plain sentence.

**A teaching fault**: under the model name ``offline-multi`` (``FAULTY_MODEL``)
the same rules answer, except in the ReAct text mode: when the next step is
several independent device changes, it writes *one Action per change* after
a single Thought -- the failure the smart-building paper reports (its
multi-task score fell to 30% because the model wrote several Actions despite
"only one JSON" in the prompt). ``response_format`` json_schema constrains it
back to one object, as it does a real model. ``notebooks/09_react_two_models``
shows the failure and three fixes.

What it can do: direct control by room, name or alias; searches with the
robot (the nearest unsearched room next, by a shortest route over exits;
lights on where it is dark -- or where a look says "too dark", switching the
light that sentence names -- look, go on until found, then act); asking about facts it cannot observe (is it
daytime?) and acting on the answer; refusing rooms and devices the home does
not have, or a device the named room does not have (naming the nearest one);
refusing a clear request for what no device or tool here can do -- "make me
a coffee", "call the fire brigade", "carry this upstairs" -- with what is
missing and what the tools do (:mod:`lares_kit.models.infeasible`);
answering simple questions from the knowledge; asking about a
request that defeats itself and doing what the answer says, once
(:mod:`lares_kit.models.contradiction`). Anything else -- text that asks for
nothing it can read -- it halts and says it is a rule-based stand-in that
could not understand.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .calls import CONTRACT_TOOLS, fake_tools, fit, props, render
from .formats import json_reply, react_beliefs, react_reply, wants_react
from .planning import Intention, plan
from .reading import Beliefs, norm, read_request
from .sage_rules import sage_reply

__all__ = ["MODEL_NAME", "FAULTY_MODEL", "Reply", "respond"]

MODEL_NAME = "offline"
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
    return Reply(calls=[(tool["function"]["name"], {reason: intentions[0].why, choice: picked})])


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
        args: dict[str, Any] = {"question": f"Before I go on, is there anything I should know? Next I would: {first.why}"}
    else:
        args = {"message_to_user": first.args.get("message_to_user") or f"I have not finished. Next I would: {first.why}"}
    if name == "moverobot" and b.robot in b.rooms and b.neighbours(b.robot):
        args = {"destination_room_id": b.neighbours(b.robot)[0]}  # a legal move, at least
    lights = b.lights_in(b.robot or "") or [d for d in b.devices.values() if d.type == "light"]
    if name in ("togglelight", "setlight", "readdevice") and lights:
        # set_light to the state it already has changes nothing
        args = {"light_id": lights[0].id, "device_id": lights[0].id, "on": lights[0].state.get("on", True)}
    return fit(args, tool)


def respond(request: dict[str, Any]) -> Reply:
    """The model's reply to a (validated) Chat Completions request body.

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
    sage = sage_reply(request)  # SAGE's tree of prompts has its own rules (lares_kit.models.sage_rules)
    if sage is not None:
        return Reply(*sage)
    if tools and choice != "none":
        b = read_request(messages, tools)
        by_norm = {norm(t["function"]["name"]): t for t in tools}
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            forced = next(t for t in tools if t["function"]["name"] == name)
            fields = _intent_fields(forced)
            return _intent(b, forced, *fields) if fields else _forced(b, forced)
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
            return Reply(content=json_reply(b, fmt, plan(b, set(named) | {"askuser", "halt"})))
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
