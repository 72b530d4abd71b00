"""The offline model's rules for the react design's prompts: ReAct text (Thought / Action / Final Answer).

Reads the prompts :mod:`lares_kit.agents.react` writes (Prompt A, the
planner's Thought; Prompt B, the executor's Action, as text or as JSON for a
``response_format``), and any other request whose system prompt asks for the
ReAct format. Registered as the ``react`` rules in :mod:`.designs`; the
react agents' :class:`~lares_kit.agents.registry.AgentSpec` names them.

**ReAct.** Chosen when a request offers no tools (or ``tool_choice`` is
``none``) and a ``system`` message asks for ``Thought:`` and ``Action:`` or
``Final Answer:``. The tools are the toolkit's tool names the system prompt
mentions (``set_light``, ``move_robot``... any spelling). The instruction is
the last ``user`` message not starting with ``Observation:``; if it carries
its own scratchpad (``Question: ...`` then ``Thought:`` lines), the part
before the first ``Thought:`` is the instruction. The scratchpad -- in that
message, in later ``assistant`` messages, and in messages starting with
``Observation:`` -- is read as history: each ``Action:`` is one JSON object
``{"tool": NAME, "arguments": {...}}`` and the ``Observation:`` after it is
its result. The reply is one step::

    Thought: The Kitchen is dark and the user wants its light on.
    Action: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}

or, when done (or asking, if ``ask_user`` is not among the tools)::

    Thought: Every change the user asked for is made, so I report back.
    Final Answer: The light in the Kitchen is now on.

With a ``response_format`` of ``json_object`` or ``json_schema`` the same
step is written as JSON (:func:`~lares_kit.models.offline.formats.json_reply`).

**The teaching fault** (model name ``offline-multi``): the ReAct text reply
carries one ``Action:`` line per independent change after one Thought.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....sentences.markers import without_done_hint
from ..calls import CONTRACT_TOOLS, fake_tools, render
from ..formats import independent, json_reply
from ..planning import HA_TOOLS, Intention, plan
from ..reading import Beliefs, Call, norm, text_of
from ..request import read as read_request

__all__ = ["FAULTY_MODEL", "parse_react", "react_beliefs", "react_reply", "reply", "wants_react"]

FAULTY_MODEL = "offline-multi"  # writes several Actions after one Thought (see the module docstring)
_LABEL = re.compile(r"^\s*(?:Question|New input|Input|Instruction|User)\s*:\s*", re.IGNORECASE)


def reply(request: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]] | None:
    """(text, no calls) for a ReAct request, as text or as the JSON its ``response_format`` asks; else None.

    Args:
        request: a Chat Completions request body, already checked by :func:`.wire.validate`.

    Examples:
        >>> system = {"role": "system", "content": "Tools: halt. Answer with Thought: then Action: or Final Answer:"}
        >>> print(reply({"messages": [system, {"role": "user", "content": "hello"}]})[0].splitlines()[0][:8])
        Thought:
        >>> reply({"messages": [{"role": "user", "content": "hello"}]}) is None
        True
    """
    messages = request.get("messages") or []
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("function")]
    if (tools and request.get("tool_choice") != "none") or not wants_react(messages):
        return None  # calls are asked for, or no ReAct prompt: not this design's request
    b, named = react_beliefs(messages)
    # Asking and finishing are always possible in ReAct: a Final Answer can carry either.
    intentions = plan(b, set(named) | {"askuser", "halt"})
    fmt = request.get("response_format") or {}
    if fmt.get("type") in ("json_object", "json_schema"):  # the Action as JSON (the react agent's Prompt B)
        return json_reply(b, fmt, intentions, named), []
    return react_reply(b, intentions, named, several=request.get("model") == FAULTY_MODEL), []


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
