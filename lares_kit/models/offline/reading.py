"""Reading a chat request: the instruction, the map, and what the history showed.

Part of the offline model (see :mod:`lares_kit.models.offline` for the
prompt contract). This module turns the messages of one request into
:class:`Beliefs`: the rooms, exits and devices from the ``WORLD KNOWLEDGE``
message (or only the ids in the tool schemas when there is none), updated
with the facts the tool results in the history establish. It reads text
only; it never sees a :class:`~lares_kit.home.graph.Home`.

Facts are idempotent, so the same beliefs come out whether the knowledge is
the latest or the state at the start of the task: a light said to be "now on"
is on, a successful move puts the robot in its destination, a look lists what
is in the robot's room.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ...knowledge.formats import parse_outline
from ...sentences.markers import (
    HouseRules,
    answer_in,
    house_rules_in,
    light_to_switch,
    relayed_in,
    room_in,
    speaker_in,
    without_done_hint,
)

__all__ = ["KNOWLEDGE_TAG", "Beliefs", "Call", "Dev", "Room", "apply_facts", "merge_live_context", "norm", "note_lit",
           "read_request", "text_of"]

KNOWLEDGE_TAG = "WORLD KNOWLEDGE"
_NOW = re.compile(r"\(([\w.:-]+)\) (?:is|are) (?:now|already) (on|off)\b")  # "are": "Spotlights"
_CAN_GO = re.compile(r"from the .*?\(([\w.:-]+)\) the robot can go to: ([^.]*)\.")
_LOOK_ROOM = re.compile(r"looks around the .*?\(([\w.:-]+)\)")
# "Bruno, a dog (bruno)", "Ollie, an owl (ollie)", "Twins, people (twins)", "Keys (keys)": the type may be left out
_THING = re.compile(r"([^;:,]+?)(?:, (?:an? )?([\w -]+?))? \(([\w.:-]+)\)")
# "The robot moved from the Hall to the Kitchen (kitchen). It is dark there." (get_live_context's overview)
_MOVED_TO = re.compile(r"robot moved from .*? to the .*?\(([\w.:-]+)\)\. It is (lit|dark) there")


def text_of(content: Any) -> str:
    """A message's content as text (strings, or lists of text parts).

    Args:
        content: a message's ``content``: a string, None, or a list of parts like ``{"type": "text", "text": ...}``.

    Examples:
        >>> text_of([{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}])
        'hi there'
    """
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def norm(name: str) -> str:
    """A tool name reduced for matching: ``toggleLight`` and ``toggle_light`` agree.

    Args:
        name: a tool or parameter name in any spelling (``toggleLight``, ``toggle_light``, ``TOGGLE-LIGHT``).

    Examples:
        >>> norm("toggleLight") == norm("toggle_light")
        True
    """
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass
class Call:
    """One tool call from the history and its result (None: no result seen)."""

    name: str  # as the model wrote it; compare with norm()
    args: dict[str, Any]
    result: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.lstrip().startswith("Error")

    def arg(self, *names: str) -> Any:
        # the value of the first argument whose normalised name is one of names
        wanted = {norm(n) for n in names}
        return next((v for k, v in self.args.items() if norm(k) in wanted), None)


@dataclass
class Room:
    id: str
    name: str
    aliases: list[str] = field(default_factory=list)
    exits: list[str] = field(default_factory=list)
    floor: int | None = None  # 0 = ground floor, when the world says


@dataclass
class Dev:
    id: str
    name: str
    type: str
    room: str | None
    aliases: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)  # missing key: unknown


@dataclass
class Beliefs:
    """What the model believes about the home after reading one request."""

    instruction: str
    mode: str  # "latest" | "initial" | "none": where the map came from
    rooms: dict[str, Room]
    devices: dict[str, Dev]
    robot: str | None
    # item id -> {"name", "type", "room"}: sightings the knowledge reported (may be stale)
    prior_seen: dict[str, dict[str, Any]]
    calls: list[Call]  # this task's tool calls, oldest first
    # room id -> [(name, type, id)] from the latest successful look there in this task
    looked: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    answers: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)
    blocked: set[tuple[str, str]] = field(default_factory=set)  # exits a move proved wrong
    # who gives the instruction: lares_kit.sentences.markers.speaker_in of a system message ("" unknown)
    speaker: str = ""
    language: str = "en"  # the home's language (the knowledge's "language"; English when it says none)
    floors: dict[int, list[str]] = field(default_factory=dict)  # floor number -> its name and aliases, when named
    # the room the person speaks from: lares_kit.sentences.markers.room_in of a system message ("" unknown)
    place: str = ""
    dialect: str = "lares"  # "ha" when the request is in Home Assistant's dialect (its static context)
    # what the home's policy forbids this (untrusted) instruction: lares_kit.sentences.markers.house_rules_in
    # (None: nothing)
    house_rules: HouseRules | None = None

    def lights_in(self, room: str) -> list[Dev]:
        return [d for d in self.devices.values() if d.room == room and d.type == "light"]

    def is_lit(self, room: str) -> bool | None:
        states = [d.state.get("on") for d in self.lights_in(room)]
        if any(s is True for s in states):
            return True
        return None if any(s is None for s in states) else False

    def neighbours(self, room: str) -> list[str]:
        exits = self.rooms[room].exits if room in self.rooms else []
        return [r for r in exits if (room, r) not in self.blocked and r in self.rooms]

    def value_set(self, device: str, attribute: str) -> Any:
        """The value this task's last successful ``set_device`` gave ``attribute`` of ``device``, or None.

        A relative request ("warmer", "a bit lower") is one step: once a change
        of it has been made, the value set *is* the goal. Recomputing "current
        + 2" every turn from a state the change already moved would climb
        without end.

        Examples:
            >>> call = Call("set_device", {"device_id": "t", "attribute": "target", "value": 21}, "... now 21.")
            >>> b = Beliefs("", "latest", {}, {}, None, {}, [call])
            >>> b.value_set("t", "target"), b.value_set("t", "mode")
            (21, None)
        """
        done = [c for c in self.calls if c.ok and norm(c.name) == "setdevice" and str(c.arg("device_id")) == device
                and str(c.arg("attribute")) == attribute]
        return done[-1].arg("value") if done else None


def _parse_knowledge(text: str) -> dict[str, Any] | None:
    outline = parse_outline(text)  # the outline and retrieval formats: lines, not JSON
    if outline is not None:
        return outline
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _from_knowledge(k: dict[str, Any]) -> tuple[dict[str, Room], dict[str, Dev], str | None, dict]:
    rooms: dict[str, Room] = {}
    devices: dict[str, Dev] = {}
    for r in k.get("rooms") or []:
        if not isinstance(r, dict) or "id" not in r:
            continue
        rid = str(r["id"])
        rooms[rid] = Room(rid, str(r.get("name", rid)), [str(a) for a in r.get("aliases") or []],
                          [str(e) for e in r.get("exits") or []],
                          r["floor"] if isinstance(r.get("floor"), int) and not isinstance(r["floor"], bool) else None)
        for d in r.get("devices") or []:
            if isinstance(d, dict) and "id" in d:
                devices[str(d["id"])] = Dev(str(d["id"]), str(d.get("name", d["id"])), str(d.get("type", "")), rid,
                                            [str(a) for a in d.get("aliases") or []], dict(d.get("state") or {}))
    robot = (k.get("robot") or {}).get("room") if isinstance(k.get("robot"), dict) else None
    seen = {str(i): dict(v) for i, v in (k.get("seen") or {}).items() if isinstance(v, dict)}
    return rooms, devices, robot, seen


def _from_schemas(tools: list[dict[str, Any]]) -> tuple[dict[str, Room], dict[str, Dev]]:
    # Knowledge "none": the only ids the model has are the enums in the tool schemas.
    room_ids: list[str] = []
    light_ids: list[str] = []
    device_ids: list[str] = []
    for tool in tools:
        props = ((tool.get("function") or {}).get("parameters") or {}).get("properties") or {}
        for key, spec in props.items():
            values = [str(v) for v in (spec or {}).get("enum") or []]
            key = norm(key)
            if "room" in key:
                room_ids += [v for v in values if v not in room_ids]
            elif "light" in key:
                light_ids += [v for v in values if v not in light_ids]
            elif "device" in key:
                device_ids += [v for v in values if v not in device_ids]
    if not room_ids:  # no room enum: guess rooms from ids like "kitchen-light" -> "kitchen"
        room_ids = list(dict.fromkeys(d.rsplit("-", 1)[0] for d in device_ids + light_ids if "-" in d))
    rooms = {r: Room(r, r.replace("-", " ").replace("_", " ").capitalize()) for r in room_ids}
    devices = {}
    for d in device_ids + [x for x in light_ids if x not in device_ids]:
        room = max((r for r in room_ids if d.startswith(r)), key=len, default=None)
        kind = "light" if d in light_ids else ""
        devices[d] = Dev(d, d.replace("-", " "), kind, room)
    return rooms, devices


def _history(messages: list[dict[str, Any]], after: int) -> list[Call]:
    calls: list[Call] = []
    by_id: dict[str, Call] = {}
    for m in messages[after + 1:]:
        role = m.get("role")
        if role == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except (json.JSONDecodeError, TypeError):
                    args = {}
                call = Call(str(fn.get("name", "")), args if isinstance(args, dict) else {})
                calls.append(call)
                by_id[str(tc.get("id"))] = call
        elif role == "tool":
            call = by_id.get(str(m.get("tool_call_id")))
            if call is not None:
                call.result = without_done_hint(text_of(m.get("content")))  # a hint for real models, not a fact
    return calls


def apply_facts(b: Beliefs) -> None:
    """Update beliefs with what each call in the history established, in order.

    Args:
        b: the beliefs to update, in place. Its ``calls`` (oldest first) are read; devices, robot, sightings and answers
            change.

    Examples:
        >>> light = Dev("k", "Light", "light", "kitchen", state={"on": False})
        >>> calls = [Call("toggle_light", {"light_id": "k"}, "The Light in the Kitchen (k) is now on."),
        ...          Call("move_robot", {"destination_room_id": "kitchen"},
        ...               "The robot moved to the Kitchen (kitchen).")]
        >>> b = Beliefs("", "latest", {}, {"k": light}, "hall", {}, calls)
        >>> apply_facts(b)
        >>> b.devices["k"].state, b.robot
        ({'on': True}, 'kitchen')
    """
    for call in b.calls:
        name, text = norm(call.name), call.result or ""
        if call.result is None:
            continue
        if name == "askuser":
            b.answers.append((str(call.arg("question") or ""), answer_in(text)))
            continue
        for dev_id, state in _NOW.findall(text):  # "(kitchen-light) is now on." -- true whatever the call
            if dev_id in b.devices:
                b.devices[dev_id].state["on"] = state == "on"
        if not call.ok:
            if name == "moverobot" and (m := _CAN_GO.search(text)):
                b.robot = m.group(1)
                dest = str(call.arg("destination_room_id", "room_id", "room"))
                b.blocked |= {(b.robot, dest), (dest, b.robot)}
            elif name == "lookwithrobot" and b.robot:
                for d in b.lights_in(b.robot):  # it said too dark: none of its lights is on
                    d.state["on"] = False
                if named := light_to_switch(text):  # ...and which light to switch on: believe the sentence
                    light = b.devices.get(named) or Dev(named, named.replace("-", " "), "light", b.robot)
                    light.type, light.room, light.state["on"] = "light", b.robot, False
                    b.devices[light.id] = light
                b.looked.pop(b.robot, None)
            continue
        if name == "setlight" and str(call.arg("light_id")) in b.devices:
            b.devices[str(call.arg("light_id"))].state["on"] = call.arg("on") in (True, 1, "true", "True", "on")
        elif name == "setdevice" and str(call.arg("device_id")) in b.devices:
            b.devices[str(call.arg("device_id"))].state[str(call.arg("attribute"))] = call.arg("value")
        elif name == "moverobot":
            b.robot = str(call.arg("destination_room_id", "room_id", "room"))
            if "It is " in text:  # "It is lit/dark there": settles lights the knowledge gave no state (overview)
                note_lit(b, text)
        elif name == "getlivecontext":  # the overview format's live states (lares_kit.knowledge.modes)
            merge_live_context(b, text)
        elif name == "lookwithrobot":
            if m := _LOOK_ROOM.search(text):
                b.robot = m.group(1)
            if b.robot is not None:
                also = text.split("Also here:", 1)[1] if "Also here:" in text else ""
                b.looked[b.robot] = [(n.strip(), t.strip(), i) for n, t, i in _THING.findall(also)]


def merge_live_context(b: Beliefs, text: str) -> None:
    """Fill unknown device states from a ``get_live_context`` result.

    Args:
        b: the beliefs to update, in place. Only states not already known are filled in.
        text: what ``get_live_context`` said: a sentence, then the states as JSON ``{device id: {attribute: value}}``.

    Examples:
        >>> b = Beliefs("", "latest", {}, {"k": Dev("k", "Light", "light", "kitchen")}, None, {}, [])
        >>> merge_live_context(b, 'Current state of 1 device(s): {"k":{"on":false}}')
        >>> b.devices["k"].state
        {'on': False}
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return
    try:
        states = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        return
    for dev_id, state in states.items() if isinstance(states, dict) else ():
        dev = b.devices.get(str(dev_id))
        if dev is not None and isinstance(state, dict):
            for key, value in state.items():
                dev.state.setdefault(key, value)


def note_lit(b: Beliefs, text: str) -> None:
    """A move's "It is lit/dark there." settles the room's lights when their states are unknown.

    Args:
        b: the beliefs to update, in place.
        text: what ``move_robot`` said, e.g. "The robot moved ... to the Kitchen (kitchen). It is dark there."

    Examples:
        >>> b = Beliefs("", "latest", {}, {"k": Dev("k", "Light", "light", "kitchen")}, None, {}, [])
        >>> note_lit(b, "The robot moved from the Hall to the Kitchen (kitchen). It is dark there.")
        >>> b.devices["k"].state
        {'on': False}
    """
    m = _MOVED_TO.search(text)
    if m is None:
        return
    lights = [d for d in b.lights_in(m.group(1)) if "on" not in d.state]
    if m.group(2) == "dark":
        for d in lights:
            d.state["on"] = False
    elif len(lights) == 1 and len(b.lights_in(m.group(1))) == 1:  # lit, and only one light could be why
        lights[0].state["on"] = True


def _instruction_index(messages: list[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not text_of(messages[i].get("content")).startswith("Observation:"):
            return i
    return -1


def read_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 calls: list[Call] | None = None, instruction: str | None = None, facts: bool = True) -> Beliefs:
    """Beliefs from a request's messages (and tool schemas, for knowledge "none").

    ``calls``/``instruction`` override what is read from the messages (the
    ReAct text mode parses its own scratchpad).

    Args:
        messages: the request's ``messages``, oldest first; the world knowledge is read from a system message.
        tools: the request's ``tools``; their enums name the rooms and devices when the prompt has no map.
        calls: the tool calls so far, oldest first; None reads them from the messages.
        instruction: the user's instruction; None reads it from the messages.
        facts: False leaves the history's facts unapplied (:mod:`.request` first reads Home Assistant's dialect).

    Examples:
        >>> msgs = [{"role": "system", "content": 'WORLD KNOWLEDGE (latest): {"robot": {"room": "hall"}, '
        ...          '"rooms": [{"id": "hall", "name": "Hall", "exits": [], "devices": '
        ...          '[{"id": "hall-light", "name": "Light", "type": "light", "state": {"on": false}}]}]}'},
        ...         {"role": "user", "content": "turn on the light in the hall"}]
        >>> b = read_request(msgs)
        >>> b.instruction, b.mode, b.robot, b.devices["hall-light"].state
        ('turn on the light in the hall', 'latest', 'hall', {'on': False})
    """
    at = _instruction_index(messages)
    text = instruction if instruction is not None else (text_of(messages[at].get("content")) if at >= 0 else "")
    text, relayed_answer = relayed_in(text)  # a task handed back with the person's answer (SAGE's coordinator)
    knowledge, mode = None, "none"
    for m in messages:
        body = text_of(m.get("content")).lstrip()
        if m.get("role") == "system" and body.startswith(KNOWLEDGE_TAG):
            parsed = _parse_knowledge(body)
            if parsed is not None:
                knowledge = parsed
                mode = "initial" if "(initial" in body[:200] else "latest"
    if knowledge is not None:
        rooms, devices, robot, seen = _from_knowledge(knowledge)
    else:
        (rooms, devices), robot, seen = _from_schemas(tools or []), None, {}
    beliefs = Beliefs(text.strip(), mode, rooms, devices, robot, seen,
                      calls if calls is not None else _history(messages, at))
    if knowledge is not None:
        beliefs.language = str(knowledge.get("language") or "en")
        floors = [f for f in knowledge.get("floors") or [] if isinstance(f, dict) and isinstance(f.get("id"), int)]
        beliefs.floors = {f["id"]: [str(f.get("name", "")), *map(str, f.get("aliases") or [])] for f in floors}
    for m in messages:  # the agent may say who is speaking (memory: "my office", "my usual")
        if m.get("role") == "system" and (who := speaker_in(text_of(m.get("content")))):
            beliefs.speaker = who
        if m.get("role") == "system" and (where := room_in(text_of(m.get("content")))):
            beliefs.place = where
        if m.get("role") == "system" and (rules := house_rules_in(text_of(m.get("content")))):
            beliefs.house_rules = rules
    if relayed_answer is not None:  # asked before this agent's own questions
        beliefs.answers.append(relayed_answer)
    if facts:
        apply_facts(beliefs)
    return beliefs
