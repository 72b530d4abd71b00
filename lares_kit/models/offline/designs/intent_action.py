"""The offline model's rules for the intent-action design's prompts: the intent tool, and the call it states.

Reads the requests :mod:`lares_kit.agents.intent_action` sends. Registered
as the ``intent-action`` rules in :mod:`.designs`; the design's
:class:`~lares_kit.agents.registry.AgentSpec` names them.

* **The intent step**: a forced intent tool such as
  ``decide_best_function(reasoning, best_function)`` (the design's
  ``decide_schema``; any tool whose enum parameter names a function or tool,
  with "decide" in its name or two parameters). The model names the
  function it would call next, from the enum, with a one-sentence reasoning
  that ends with the call it means, ``Call: NAME {arguments}``, when that
  fits the reasoning's ``maxLength`` (:data:`CALL_MARK`).
* **The action step**: a forced function after that decision gets the
  arguments the decision stated for it (:func:`stated_call`) -- the lean
  action call carries little else. A forced function with no stated call
  for it is the shared rules' (:mod:`.replying`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..calls import fake_tools, fit, props, render
from ..planning import plan
from ..reading import Beliefs, norm
from ..request import read as read_request

__all__ = ["CALL_MARK", "intent_fields", "reply", "stated_call"]

CALL_MARK = "Call:"  # ends a decision's reasoning: "Call: set_light {...}", the call it means
_STATED = re.compile(r"Call: (\S+) (\{.*\})\s*$", re.DOTALL)


def reply(request: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]] | None:
    """(no text, the call) for an intent step or an action step that follows a stated decision; else None.

    Args:
        request: a Chat Completions request body, already checked by :func:`.wire.validate`.

    Examples:
        >>> knowledge = ('WORLD KNOWLEDGE (latest): {"robot": {"room": "hall"}, "rooms": [{"id": "hall", '
        ...   '"name": "Hall", "exits": [], "devices": [{"id": "hall-light", "name": "Light", "type": "light", '
        ...   '"state": {"on": false}}]}]}')
        >>> decide = {"type": "function", "function": {"name": "decide_best_function", "parameters": {
        ...     "type": "object", "properties": {"reasoning": {"type": "string"},
        ...     "best_function": {"type": "string", "enum": ["set_light", "halt"]}}}}}
        >>> asked = {"messages": [{"role": "system", "content": knowledge},
        ...                       {"role": "user", "content": "Turn on the hall light"}], "tools": [decide],
        ...          "tool_choice": {"type": "function", "function": {"name": "decide_best_function"}}}
        >>> text, calls = reply(asked)
        >>> calls[0][1]["best_function"], calls[0][1]["reasoning"].split(CALL_MARK)[1]
        ('set_light', ' set_light {"light_id": "hall-light", "on": true}')
        >>> reply({**asked, "tool_choice": "none"}) is None
        True
    """
    messages = request.get("messages") or []
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("function")]
    choice = request.get("tool_choice")
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        forced = next(t for t in tools if t["function"]["name"] == name)
        if (fields := intent_fields(forced)) is not None:
            return _intent(read_request(messages, tools), forced, *fields)
        stated = stated_call(messages)
        if stated is not None and norm(stated[0]) == norm(forced["function"]["name"]):
            return None, [(forced["function"]["name"], fit(stated[1], forced))]  # what the decision said to do
        return None
    if len(tools) == 1 and (fields := intent_fields(tools[0])) is not None:
        return _intent(read_request(messages, tools), tools[0], *fields)
    return None


def intent_fields(tool: dict[str, Any]) -> tuple[str, str] | None:
    """(choice parameter, reasoning parameter) when ``tool`` is an intent tool like ``decide_best_function``.

    Args:
        tool: one entry of a request's ``tools``.
    """
    params = props(tool)
    choice = next((p for p, s in params.items() if (s or {}).get("enum") and ("function" in p.lower()
                   or "tool" in p.lower())), None)
    if choice is None or "decide" not in norm(tool["function"]["name"]) and len(params) != 2:
        return None
    reason = next((p for p in params if p != choice), "reasoning")
    return choice, reason


def _intent(b: Beliefs, tool: dict[str, Any], choice: str,
            reason: str) -> tuple[None, list[tuple[str, dict[str, Any]]]]:
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
    return None, [(tool["function"]["name"], {reason: _within(why, props(tool).get(reason)), choice: picked})]


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
