"""The ReAct output parser: a Thought, a Final Answer, or the Action(s) to run.

Taught in ``notebooks/09_react_two_models.ipynb``. The smart-building paper's
parser looks for a Final Answer; if there is none, a tool is needed. Its
agent failed on multi-task instructions because the model wrote *several*
Actions after one Thought, although the prompt said "only one JSON" -- and
the parser broke on them. This module makes that case deliberate. A reply
is read under one of three policies:

``"naive"``
    The paper's parser, kept to show the failure: the text after
    ``Action:`` must be exactly one JSON object. Two Actions are "Extra data"
    -- an error, no call runs, and the round is lost.
``"one"`` (the default; *stricter parsing*)
    Run the first Action, ignore the others, and say so: the Observation of
    the first call ends with :func:`ignored_note` ("your reply had 3
    Actions; only the first was run ... send one Action at a time"), so the
    model can carry on with the next task in the next round. Nothing the
    model asked for is silently lost, and nothing it did not check runs.
``"all"``
    Run every Action in the reply -- for parallel function calls, where the
    executor was asked for a list of independent actions
    (``{"actions": [...]}``).

An Action is a JSON object ``{"tool": NAME, "arguments": {...}}``; ``name``
/ ``args`` / ``action`` / ``action_input`` are read too, and a ```json
fence is allowed. A whole reply that is JSON (from ``response_format``) is
read the same way. This module only reads text; running calls is the
agent's job (:mod:`lares_kit.agents.react`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["POLICIES", "ParsedAction", "Parsed", "parse_thought", "parse_actions", "ignored_note"]

POLICIES = ("naive", "one", "all")
_FINAL = re.compile(r"Final Answer\s*:\s*", re.IGNORECASE)
_ACTION = re.compile(r"Action\s*:\s*", re.IGNORECASE)
_THOUGHT = re.compile(r"Thought\s*:\s*", re.IGNORECASE)


@dataclass
class ParsedAction:
    """One Action: the tool's name and its arguments."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"tool": self.tool, "arguments": self.arguments})


@dataclass
class Parsed:
    """What one reply said. ``error`` is set when nothing in it can be used."""

    thought: str = ""
    final_answer: str | None = None
    actions: list[ParsedAction] = field(default_factory=list)
    ignored: int = 0  # Actions the policy did not run
    error: str = ""


def _thought_of(text: str) -> str:
    # The Thought runs from "Thought:" to the next label (or the end).
    m = _THOUGHT.search(text)
    body = text[m.end():] if m else text
    end = re.search(r"\n\s*(?:Action|Final Answer|Observation)\s*:", body, re.IGNORECASE)
    return (body[:end.start()] if end else body).strip()


def parse_thought(text: str) -> Parsed:
    """Read the planner's reply: its Thought, and a Final Answer if it gave one.

    An Action the planner wrote anyway is not used: in this framework the
    executor writes the Actions, from the Thought.

    Args:
        text: The planner's reply, e.g. ``"Thought: ..."`` or ``"Thought: ...\\nFinal Answer: ..."``.

    Examples:
        >>> parse_thought("Thought: The room is stuffy; I read its sensor first.")  # doctest: +NORMALIZE_WHITESPACE
        Parsed(thought='The room is stuffy; I read its sensor first.',
               final_answer=None, actions=[], ignored=0, error='')
        >>> parse_thought("Thought: Done.\\nFinal Answer: The window is open.").final_answer
        'The window is open.'
        >>> parse_thought("").error
        'The reply was empty: write a Thought, or a Final Answer when you are done.'
    """
    if not text.strip():
        return Parsed(error="The reply was empty: write a Thought, or a Final Answer when you are done.")
    final = _FINAL.search(text)
    answer = text[final.end():].strip() if final else None
    thought = _thought_of(text[:final.start()] if final else text)
    return Parsed(thought=thought, final_answer=answer)


def _action(value: Any) -> ParsedAction | None:
    if not isinstance(value, dict):
        return None
    name = value.get("tool") or value.get("name") or value.get("action") or value.get("function")
    args = value.get("arguments", value.get("args", value.get("action_input", value.get("parameters", {}))))
    if isinstance(args, str):  # some models send the arguments as a JSON string
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return None
    if not isinstance(name, str) or not name or not isinstance(args, dict):
        return None
    return ParsedAction(name, args)


def _objects(text: str) -> list[Any]:
    # Every JSON value that starts right after an "Action:" label, or the reply itself if it is JSON.
    text = re.sub(r"```(?:json)?", "", text)
    decoder = json.JSONDecoder()
    starts = [m.end() for m in _ACTION.finditer(text)] or ([text.find("{")] if "{" in text else [])
    found = []
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found.extend(value["actions"] if isinstance(value, dict) and isinstance(value.get("actions"), list)
                     else value if isinstance(value, list) else [value])
    return found


def parse_actions(text: str, policy: str = "one") -> Parsed:
    """Read the executor's reply under a policy (``"naive"``, ``"one"`` or ``"all"``).

    Args:
        text: The executor's reply: ``Action: {...}`` lines, or JSON from ``response_format``.
        policy: ``"one"`` runs the first Action and counts the rest as ignored, ``"naive"`` needs exactly one JSON
            object (the paper's parser), ``"all"`` runs every Action (parallel calls).

    Examples:
        >>> two = ('Thought: both lights.\\n'
        ...        'Action: {"tool": "set_light", "arguments": {"light_id": "a", "on": true}}\\n'
        ...        'Action: {"tool": "set_light", "arguments": {"light_id": "b", "on": true}}')
        >>> p = parse_actions(two, "one")
        >>> [a.arguments["light_id"] for a in p.actions], p.ignored
        (['a'], 1)
        >>> print(parse_actions(two, "naive").error)
        The Action is not one JSON object (Extra data at character 66). Write exactly one Action as one JSON object.
        >>> len(parse_actions(two, "all").actions)
        2
        >>> parse_actions('{"actions": [{"tool": "halt", "arguments": {"message_to_user": "ok"}}]}', "all").actions
        [ParsedAction(tool='halt', arguments={'message_to_user': 'ok'})]
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown parser policy {policy!r}; policies: {', '.join(POLICIES)}")
    thought = _thought_of(text) if _THOUGHT.search(text) else ""
    final = _FINAL.search(text)
    if final and not _ACTION.search(text[:final.start()]):
        return Parsed(thought=thought, final_answer=text[final.end():].strip())
    if policy == "naive":
        return _naive(text, thought)
    values = _objects(text)
    actions = [a for v in values if (a := _action(v)) is not None]
    if not actions:
        why = "it has no Action" if not values else "its JSON has no tool name and arguments object"
        return Parsed(thought=thought, error=f"The reply could not be used: {why}. Write the Action as one JSON object "
                                             '{"tool": NAME, "arguments": {...}}.')
    if policy == "one":
        return Parsed(thought=thought, actions=actions[:1], ignored=len(actions) - 1)
    return Parsed(thought=thought, actions=actions)


def _naive(text: str, thought: str) -> Parsed:
    # Everything after the first "Action:" (or the whole reply) must be one JSON object.
    m = _ACTION.search(text)
    body = (text[m.end():] if m else text).strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return Parsed(thought=thought, error=f"The Action is not one JSON object ({exc.msg} at character {exc.pos}). "
                                             "Write exactly one Action as one JSON object.")
    action = _action(value)
    if action is None:
        return Parsed(thought=thought, error='The Action must be {"tool": NAME, "arguments": {...}}.')
    return Parsed(thought=thought, actions=[action])


def ignored_note(total: int) -> str:
    """What the model is told when only the first of ``total`` Actions ran.

    Args:
        total: How many Actions the reply had (2 or more).

    Examples:
        >>> print(ignored_note(3))  # doctest: +NORMALIZE_WHITESPACE
        Note: your reply had 3 Actions; only the first was run and the other 2 were ignored.
        Send one Action at a time: the next round can do the next task.
    """
    others = total - 1
    return (f"Note: your reply had {total} Actions; only the first was run and the other {others} "
            f"{'was' if others == 1 else 'were'} ignored. "
            "Send one Action at a time: the next round can do the next task.")
