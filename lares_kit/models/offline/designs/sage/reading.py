"""Reading a SAGE request: the task, the calls so far, and the documents the tools returned.

Part of the offline model's SAGE rules (:mod:`lares_kit.models.offline.designs.sage.rules`).
Each agent in SAGE's tree sends its own request; this module turns one into
a :class:`Talk` -- the task (the last ``user`` message), the person (from
"You are talking to NAME.", read with :func:`lares_kit.sentences.markers.speaker_in`),
the tools offered and the history of calls with their results -- and parses
the result shapes of :mod:`lares_kit.device_apis.documents` (capability documents) back
into data. Like the rest of the offline model it reads only the request,
never the home.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .....sentences.markers import HouseRules, house_rules_in, speaker_in, without_done_hint

__all__ = ["Call", "Talk", "Doc", "read_talk", "read_doc", "stem_words"]


@dataclass
class Call:
    """One earlier call and its result (None while unanswered)."""

    name: str
    args: dict[str, Any]
    result: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.startswith("Error:")


@dataclass
class Talk:
    """What one request says: the task, who is talking, the tools, the calls so far (oldest first)."""

    task: str
    person: str
    tools: set[str]
    calls: list[Call] = field(default_factory=list)
    house_rules: HouseRules | None = None  # what the home's policy forbids this instruction (untrusted)

    def results(self, name: str) -> list[Call]:
        """The answered calls of one tool, oldest first."""
        return [c for c in self.calls if c.name == name and c.result is not None]

    def last(self, name: str) -> Call | None:
        found = self.results(name)
        return found[-1] if found else None


def read_talk(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Talk:
    """The :class:`Talk` of a Chat Completions request.

    Args:
        messages: the request's ``messages``, oldest first: the task is the last user message.
        tools: the request's ``tools``; only their names are kept.

    Examples:
        >>> t = read_talk([{"role": "system", "content": "Go. You are talking to amal."},
        ...                {"role": "user", "content": "dim the lights"}], [{"function": {"name": "halt"}}])
        >>> t.task, t.person, t.tools
        ('dim the lights', 'amal', {'halt'})
    """
    task = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")
    person, rules = "", None
    for m in messages:
        if m.get("role") == "system":
            person = speaker_in(str(m.get("content") or "")) or person
            rules = house_rules_in(str(m.get("content") or "")) or rules
    calls: dict[str, Call] = {}
    order: list[Call] = []
    for m in messages:
        if m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = {}
                call = Call(str(fn.get("name")), args if isinstance(args, dict) else {})
                calls[tc.get("id", "")] = call
                order.append(call)
        elif m.get("role") == "tool" and m.get("tool_call_id") in calls:
            calls[m["tool_call_id"]].result = without_done_hint(str(m.get("content") or ""))
    names = {(t.get("function") or {}).get("name", "") for t in tools}
    return Talk(task.strip(), person, names, order, rules)


@dataclass
class Doc:
    """A capability document as data: attributes (range words, current value, choice uses) and commands."""

    device: str
    capability: str
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"meaning", "range", "now", "uses"}
    commands: dict[str, list[str]] = field(default_factory=dict)  # name -> argument names

    def choices(self, attribute: str) -> list[str]:
        rng = self.attributes.get(attribute, {}).get("range", "")
        return [c.strip() for c in rng[len("one of "):].split(",")] if rng.startswith("one of ") else []

    def bounds(self, attribute: str) -> tuple[float, float] | None:
        found = re.match(r"a number from (-?[\d.]+) to (-?[\d.]+)", self.attributes.get(attribute, {}).get("range", ""))
        return (float(found.group(1)), float(found.group(2))) if found else None


def read_doc(text: str) -> Doc | None:
    """Parse the text of ``get_capability_docs`` (see :func:`lares_kit.device_apis.documents.capability_doc`).

    Args:
        text: what ``get_capability_docs`` said about one capability of one device.

    Examples:
        >>> d = read_doc("lamp / switchLevel: brightness level.\\nAttributes:\\n- level: brightness; a number from 0 "
        ...              "to 100 % (now 90)\\nCommands:\\n- setLevel(level: a number from 0 to 100 %): Set it.")
        >>> d.attributes["level"]["now"], d.commands, d.bounds("level")
        ('90', {'setLevel': ['level']}, (0.0, 100.0))
    """
    head = re.match(r"([\w-]+) / (\w+):", text)
    if head is None:
        return None
    doc = Doc(head.group(1), head.group(2))
    current = None
    for line in text.splitlines():
        attr = re.match(r"- (\w+): (.*); (.*) \(now (.*)\)$", line)
        cmd = re.match(r"- (\w+)\((.*)\): ", line)
        use = re.match(r"    (\w[\w-]*): (.*)$", line)
        if attr and not cmd:
            current = attr.group(1)
            doc.attributes[current] = {"meaning": attr.group(2), "range": attr.group(3), "now": attr.group(4),
                                       "uses": {}}
        elif use and current:
            doc.attributes[current]["uses"][use.group(1)] = use.group(2)
        elif cmd:
            doc.commands[cmd.group(1)] = re.findall(r"(\w+): ", cmd.group(2))
    return doc


def stem_words(text: str) -> set[str]:
    """Lowercase words with a plural s dropped, for overlap scores.

    Args:
        text: any text.

    Examples:
        >>> sorted(stem_words("Greasy pots and pans"))
        ['and', 'greasy', 'pan', 'pot']
    """
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in re.findall(r"[a-z]+", text.lower())}
