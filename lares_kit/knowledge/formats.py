"""The knowledge vocabulary: *when* the home's knowledge is taken, *how* it is written, one renderer per format.

Taught in ``notebooks/05_world_knowledge.ipynb`` (modes) and
``notebooks/16_scaling_up.ipynb`` (formats). The knowledge is :meth:`lares_kit.home.graph.Home.knowledge`, a plain
dict; two questions decide what an agent's prompt holds of it:

* the knowledge **mode** -- *when* it is taken: :data:`KNOWLEDGE_MODES`,
  ``latest`` (read again every turn, as Lares does), ``initial`` (as it was
  at the start; changes since are only in the history) or ``none``. It is
  ``run_agent(knowledge=...)``, ``lares run --knowledge`` and
  ``Episode.knowledge``;
* the knowledge **format** -- *how* it is written into the prompt:
  :data:`KNOWLEDGE_FORMATS`, ``full`` (Lares's pretty JSON), ``compact``
  (the same JSON on one line), ``overview`` (no device states) or
  ``retrieval`` (only the rooms that matter). It is
  ``run_agent(knowledge_format=...)``, ``lares run --knowledge-format`` and
  ``Episode.knowledge_format``. Beside them, :data:`TEXT` is short lines for
  people (notebooks print it); no agent is sent it.

Each format has exactly one renderer. Those that need only the knowledge
dict are here (:data:`RENDERERS`); ``retrieval``, which picks rooms with the
home's graph and the instruction, is rendered by
:func:`lares_kit.knowledge.modes.knowledge_text`. :meth:`Home.render_knowledge
<lares_kit.home.graph.Home.render_knowledge>` and every agent's prompt call these
same functions, so "full" reads the same wherever it is written.

This module imports nothing of lares_kit, so the home and the prompt side
can both use it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable

__all__ = ["KNOWLEDGE_MODES", "KNOWLEDGE_FORMATS", "NEEDS", "TEXT", "RENDERERS", "OUTLINE_NOTE", "knowledge_header",
           "format_note", "check_mode", "check_format", "render", "render_full", "render_compact", "render_outline",
           "parse_outline", "render_overview", "render_text", "slice_knowledge"]

KNOWLEDGE_MODES = ("latest", "initial", "none")  # when: the first is the default
# How, in a prompt. "auto" is no rendering: a run resolves it for its home (lares_kit.knowledge.modes.resolve_format).
KNOWLEDGE_FORMATS = ("auto", "full", "compact", "outline", "overview", "retrieval")
NEEDS = ("rooms", "lights", "devices")  # what a part of the knowledge can be about (slice_knowledge)
TEXT = "text"  # short lines for people, never sent to a model
# The name "full" had before one vocabulary: Home.render_knowledge("json") still works.
_OLD_NAMES = {"json": "full"}


def check_mode(mode: str) -> str:
    """``mode`` if it is a knowledge mode, else a ValueError naming the modes.

    Args:
        mode: The mode to check; one of "latest", "initial", "none".

    Examples:
        >>> check_mode("initial")
        'initial'
        >>> check_mode("yesterday")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge mode 'yesterday'; modes: latest, initial, none
    """
    if mode not in KNOWLEDGE_MODES:
        raise ValueError(f"unknown knowledge mode {mode!r}; modes: {', '.join(KNOWLEDGE_MODES)}")
    return mode


def check_format(fmt: str) -> str:
    """``fmt`` if it is a knowledge format for prompts, else a ValueError naming the formats.

    Args:
        fmt: The format to check; one of :data:`KNOWLEDGE_FORMATS` ("auto", "full", "compact", "outline"...).

    Examples:
        >>> check_format("telepathy")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge format 'telepathy'; formats: auto, full, compact, outline, overview, retrieval
    """
    if fmt not in KNOWLEDGE_FORMATS:
        raise ValueError(f"unknown knowledge format {fmt!r}; formats: {', '.join(KNOWLEDGE_FORMATS)}")
    return fmt


def knowledge_header(mode: str) -> str:
    """The first line of the world-knowledge message for a knowledge mode.

    Args:
        mode: "latest" or "initial"; "none" has no message, so it raises ValueError like an unknown mode.

    Examples:
        >>> knowledge_header("latest")
        'WORLD KNOWLEDGE (latest)'
        >>> knowledge_header("initial").startswith("WORLD KNOWLEDGE (initial: ")
        True
    """
    if mode == "latest":
        return "WORLD KNOWLEDGE (latest)"
    if mode == "initial":
        return "WORLD KNOWLEDGE (initial: the state at the start of the task; changes since are only in the history)"
    raise ValueError(f"knowledge mode {mode!r} has no header; modes: {', '.join(KNOWLEDGE_MODES)}")


def format_note(fmt: str, shown: int | None = None, total: int | None = None) -> str:
    """The line under the header that says what a format leaves out ('' for full and compact).

    Args:
        fmt: A knowledge format of :data:`KNOWLEDGE_FORMATS`.
        shown: How many rooms the ``retrieval`` format shows; unused by the others.
        total: How many rooms the home has, for ``retrieval``; unused by the others.

    Examples:
        >>> format_note("overview")
        'Overview: the layout and devices without their states; call get_live_context for current states.'
        >>> format_note("full")
        ''
    """
    if fmt == "overview":
        return "Overview: the layout and devices without their states; call get_live_context for current states."
    if fmt == "outline":
        return OUTLINE_NOTE
    if fmt == "retrieval":
        return (f"Retrieved: {shown} of {total} rooms -- those the instruction names, around the robot and on "
                f"the way; exits lead only to rooms shown.\n{OUTLINE_NOTE}")
    return ""


# ------------------------------------------------------------- renderers
def render_full(knowledge: dict[str, Any]) -> str:
    """``full``: the knowledge as pretty JSON, exactly what Lares sends.

    Args:
        knowledge: A :meth:`Home.knowledge` dict, or a part of one (any JSON-able dict renders).

    Examples:
        >>> print(render_full({"home": "h", "rooms": []}))
        {
          "home": "h",
          "rooms": []
        }
    """
    return json.dumps(knowledge, indent=2)


def render_compact(knowledge: dict[str, Any]) -> str:
    """``compact``: the same JSON on one line, without indentation.

    Args:
        knowledge: A :meth:`Home.knowledge` dict, or a part of one (any JSON-able dict renders).

    Examples:
        >>> render_compact({"home": "h", "rooms": []})
        '{"home":"h","rooms":[]}'
    """
    return json.dumps(knowledge, separators=(",", ":"))


def render_overview(knowledge: dict[str, Any]) -> str:
    """``overview``: the layout and the devices without their states, as compact JSON.

    Args:
        knowledge: A :meth:`Home.knowledge` dict; each room's ``devices`` lose their ``state``.

    Examples:
        >>> render_overview({"rooms": [{"id": "hall", "devices": [{"id": "hall-light", "state": {"on": True}}]}]})
        '{"rooms":[{"id":"hall","devices":[{"id":"hall-light"}]}]}'
    """
    rooms = [{**r, "devices": [{key: v for key, v in d.items() if key != "state"} for d in r["devices"]]}
             for r in knowledge["rooms"]]
    return render_compact({**knowledge, "rooms": rooms})


def render_text(knowledge: dict[str, Any]) -> str:
    """``text``: short lines for people -- the home, the robot, a line per room, what was seen.

    Args:
        knowledge: A :meth:`Home.knowledge` dict: ``home``, ``name``, ``time``, ``robot``, ``rooms``, ``seen``.

    Examples:
        >>> print(render_text({"home": "h", "name": "A flat", "time": 0, "robot": {"room": "hall"}, "seen": {},
        ...                    "rooms": [{"id": "hall", "name": "Hall", "exits": [], "devices": []}]}))
        Home: A flat (h), time 0
        Robot: in Hall (hall)
        - Hall (hall): exits ; devices: none
    """
    robot_room = knowledge["robot"]["room"]
    names = {r["id"]: r["name"] for r in knowledge["rooms"]}
    lines = [f"Home: {knowledge['name']} ({knowledge['home']}), time {knowledge['time']}",
             f"Robot: in {names.get(robot_room, robot_room)} ({robot_room})"]
    for r in knowledge["rooms"]:
        devs = ", ".join(f"{d['id']} ({d['type']}, {_state_words(d['state'])})" for d in r["devices"])
        lines.append(f"- {r['name']} ({r['id']}): exits {', '.join(r['exits'])}; devices: {devs or 'none'}")
    for item_id, s in knowledge["seen"].items():
        lines.append(f"Seen: {s['name']} ({item_id}, {s['type']}) in {s['room']} at time {s['time']}")
    return "\n".join(lines)


def _state_words(state: dict[str, Any]) -> str:
    # {"on": False} -> "off"; other keys as key=value
    parts = []
    for key, value in state.items():
        if key == "on" and isinstance(value, bool):
            parts.append("on" if value else "off")
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts) or "no state"


# --------------------------------------------------------------- outline
OUTLINE_NOTE = 'A line per room (id "name", exits), then its devices (id "name" type: state).'
_PLAIN = r'[^\s",:=]+'  # an id, a type or a state key as it is: no spaces, quotes, commas, colons or "="
_QUOTED = r'"(?:[^"\\]|\\.)*"'  # a JSON string: names, and the ids, types and keys that are not plain
_WORD = rf"(?:{_QUOTED}|{_PLAIN})"
_AKA = rf"(?: aka ({_QUOTED}(?:, {_QUOTED})*))?"
_HOME_LINE = re.compile(rf"^home ({_WORD}) ({_QUOTED}):(.*)$")
_FLOOR_LINE = re.compile(rf"^floor (-?\d+) ({_QUOTED}){_AKA}$")
_ROOM_LINE = re.compile(rf"^({_WORD}) ({_QUOTED}){_AKA}(?: floor (-?\d+))?, (?:exits (.+)|no exits)$")
_DEVICE_LINE = re.compile(rf"^  ({_WORD}) ({_QUOTED}) ({_WORD}){_AKA}:(.*)$")
_SEEN_LINE = re.compile(rf"^seen ({_WORD}) ({_QUOTED}) ({_WORD}):(.*)$")
_PAIR = re.compile(rf",? ({_WORD})=")


def _q(text: Any) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def _w(text: Any) -> str:
    # an id, type or key: as it is when it is plain, else quoted ("ceiling fan")
    text = str(text)
    return text if re.fullmatch(_PLAIN, text) else _q(text)


def _unw(token: str) -> str:
    return json.loads(token) if token.startswith('"') else token


def _aka(aliases: list[Any] | None) -> str:
    return " aka " + ", ".join(_q(a) for a in aliases) if aliases else ""


def _pairs(values: dict[str, Any]) -> str:
    # {"on": False, "mode": "heat"} -> " on=false, mode=\"heat\"": each value as JSON
    return "".join(f"{',' if i else ''} {_w(key)}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
                   for i, (key, v) in enumerate(values.items()))


def render_outline(knowledge: dict[str, Any]) -> str:
    """``outline``: the knowledge as short lines -- the home, each room, its devices, what was seen.

    Everything :meth:`Home.knowledge` holds is there (:func:`parse_outline` reads it back exactly), in about half
    the tokens of compact JSON: no key is repeated per device, and a state is ``key=value`` with the value as JSON.

    Args:
        knowledge: A :meth:`Home.knowledge` dict, or one with only some of its rooms.

    Examples:
        >>> print(render_outline({"home": "h", "name": "A flat", "time": 0, "robot": {"id": "robot", "room": "hall"},
        ...     "rooms": [{"id": "hall", "name": "Hall", "exits": ["den"], "devices": [{"id": "hall-light",
        ...     "name": "Light", "type": "light", "state": {"on": False}}]}], "seen": {}}))
        home h "A flat": time=0, robot={"id":"robot","room":"hall"}
        hall "Hall", exits den
          hall-light "Light" light: on=false
    """
    top = {key: v for key, v in knowledge.items() if key not in ("home", "name", "rooms", "seen", "floors")}
    lines = [f"home {_w(knowledge.get('home', ''))} {_q(knowledge.get('name', ''))}:{_pairs(top)}"]
    for floor in knowledge.get("floors") or []:
        lines.append(f"floor {floor['id']} {_q(floor['name'])}{_aka(floor.get('aliases'))}")
    for room in knowledge.get("rooms") or []:
        floor = f" floor {room['floor']}" if "floor" in room else ""
        exits = f"exits {', '.join(map(_w, room['exits']))}" if room.get("exits") else "no exits"
        lines.append(f"{_w(room['id'])} {_q(room['name'])}{_aka(room.get('aliases'))}{floor}, {exits}")
        for d in room.get("devices") or []:
            lines.append(f"  {_w(d['id'])} {_q(d['name'])} {_w(d['type'])}{_aka(d.get('aliases'))}:"
                         f"{_pairs(d['state'])}")
    for item, where in (knowledge.get("seen") or {}).items():
        rest = {key: v for key, v in where.items() if key not in ("name", "type")}
        lines.append(f"seen {_w(item)} {_q(where.get('name', ''))} {_w(where.get('type', ''))}:{_pairs(rest)}")
    return "\n".join(lines)


def _read_pairs(text: str) -> dict[str, Any]:
    # " on=false, mode=\"heat\"" -> {"on": False, "mode": "heat"}; a ValueError if it is not that shape
    out: dict[str, Any] = {}
    decoder, at = json.JSONDecoder(), 0
    while at < len(text):
        m = _PAIR.match(text, at)
        if m is None:
            raise ValueError(f"expected key=value at {text[at:at + 20]!r}")
        value, at = decoder.raw_decode(text, m.end())
        out[_unw(m.group(1))] = value
    return out


def _read_aka(text: str | None) -> list[str]:
    return [json.loads(q) for q in re.findall(_QUOTED, text)] if text else []


def parse_outline(text: str) -> dict[str, Any] | None:
    """The knowledge dict an :func:`render_outline` text holds; None if ``text`` is not an outline.

    Lines it does not know (a header, a note) are skipped; a line that starts like an outline line but is
    broken makes the whole text unreadable (None), rather than half a home.

    Args:
        text: The outline, alone or inside a knowledge message (after its header and note lines).

    Examples:
        >>> k = {"home": "h", "name": "A flat", "time": 2, "robot": {"id": "robot", "room": "hall"},
        ...      "rooms": [{"id": "hall", "name": "Hall", "aliases": ["entrance"], "exits": [], "devices": [
        ...      {"id": "lamp", "name": "Lamp \\"big\\"", "type": "light", "state": {"on": True}}]}],
        ...      "seen": {"cat": {"name": "Tom", "type": "cat", "room": "hall", "time": 1}}}
        >>> parse_outline(render_outline(k)) == k
        True
        >>> parse_outline('{"home": "h"}') is None
        True
    """
    home: dict[str, Any] | None = None
    room: dict[str, Any] | None = None
    try:
        for line in text.split("\n"):  # not splitlines(): a name may hold a line separator (U+2028)
            if home is None:
                if m := _HOME_LINE.match(line):
                    home = {"home": _unw(m.group(1)), "name": json.loads(m.group(2)), **_read_pairs(m.group(3)),
                            "rooms": [], "seen": {}}
                continue
            if m := _DEVICE_LINE.match(line):
                if room is None:
                    return None
                dev = {"id": _unw(m.group(1)), "name": json.loads(m.group(2)), "type": _unw(m.group(3)),
                       "state": _read_pairs(m.group(5))}
                if m.group(4):
                    dev["aliases"] = _read_aka(m.group(4))
                room["devices"].append(dev)
            elif m := _SEEN_LINE.match(line):
                home["seen"][_unw(m.group(1))] = {"name": json.loads(m.group(2)), "type": _unw(m.group(3)),
                                            **_read_pairs(m.group(4))}
            elif m := _FLOOR_LINE.match(line):
                floor = {"id": int(m.group(1)), "name": json.loads(m.group(2))}
                if m.group(3):
                    floor["aliases"] = _read_aka(m.group(3))
                home.setdefault("floors", []).append(floor)
            elif m := _ROOM_LINE.match(line):
                room = {"id": _unw(m.group(1)), "name": json.loads(m.group(2))}
                if m.group(3):
                    room["aliases"] = _read_aka(m.group(3))
                if m.group(4) is not None:
                    room["floor"] = int(m.group(4))
                exits = m.group(5) or ""
                room["exits"] = [_unw(e) for e in re.findall(_WORD, exits)]
                if ", ".join(_w(e) for e in room["exits"]) != exits:
                    return None  # not a list of ids
                room["devices"] = []
                home["rooms"].append(room)
            elif line.strip():
                return None
    except ValueError:  # json.JSONDecodeError too
        return None
    if home is not None and "floors" in home:  # the order Home.knowledge writes its keys in
        home["floors"] = home.pop("floors")
    return home


def slice_knowledge(knowledge: dict[str, Any], needs: Iterable[str]) -> dict[str, Any]:
    """The part of the knowledge a call's arguments can name: the home's header and, per room, what ``needs`` says.

    ``rooms``: each room with its exits; ``lights``: each room's lights; ``devices``: each room's devices. A
    room keeps its id, name, aliases and floor; what was seen is left out (the decision says what matters).

    Args:
        knowledge: A :meth:`Home.knowledge` dict (or a part of one).
        needs: Some of :data:`NEEDS`; an empty one leaves only the header and the room names.

    Examples:
        >>> k = {"home": "h", "time": 0, "robot": {"id": "robot", "room": "hall"}, "seen": {"cat": {"room": "hall"}},
        ...      "rooms": [{"id": "hall", "name": "Hall", "exits": ["den"], "devices": [
        ...      {"id": "lamp", "type": "light", "state": {}}, {"id": "tv", "type": "tv", "state": {}}]}]}
        >>> slice_knowledge(k, ["lights"])["rooms"]
        [{'id': 'hall', 'name': 'Hall', 'exits': [], 'devices': [{'id': 'lamp', 'type': 'light', 'state': {}}]}]
        >>> slice_knowledge(k, ["rooms"])["rooms"][0]["exits"], slice_knowledge(k, ["rooms"])["seen"]
        (['den'], {})
    """
    needs = set(needs)
    unknown = needs - set(NEEDS)
    if unknown:
        raise ValueError(f"unknown part of the knowledge {sorted(unknown)}; parts: {', '.join(NEEDS)}")
    rooms = []
    for room in knowledge.get("rooms") or []:
        devices = room.get("devices") or []
        if "devices" not in needs:
            devices = [d for d in devices if "lights" in needs and d.get("type") == "light"]
        rooms.append({**room, "exits": list(room.get("exits") or []) if "rooms" in needs else [], "devices": devices})
    return {**knowledge, "rooms": rooms, "seen": {}}


# The formats a knowledge dict alone can be rendered in; "retrieval" also needs the home and the instruction.
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "full": render_full, "compact": render_compact, "outline": render_outline, "overview": render_overview,
    TEXT: render_text}


def render(knowledge: dict[str, Any], fmt: str) -> str:
    """The knowledge dict in a format of :data:`RENDERERS` (``"json"``, the old name of ``full``, works too).

    Args:
        knowledge: A :meth:`Home.knowledge` dict; ``full`` and ``compact`` render any part of one too.
        fmt: "full", "compact", "overview" or "text"; "retrieval" needs the home, so it raises ValueError.

    Examples:
        >>> render({"home": "h"}, "compact")
        '{"home":"h"}'
        >>> render({"home": "h"}, "retrieval")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: the 'retrieval' format picks rooms for an instruction:
        use lares_kit.knowledge.modes.knowledge_text(home, 'retrieval', instruction)
        >>> render({"home": "h"}, "xml")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge format 'xml'; a knowledge dict renders as: full, compact, outline, overview, text
    """
    fmt = _OLD_NAMES.get(fmt, fmt)
    if fmt == "retrieval":
        raise ValueError("the 'retrieval' format picks rooms for an instruction: use "
                         "lares_kit.knowledge.modes.knowledge_text(home, 'retrieval', instruction)")
    if fmt not in RENDERERS:
        raise ValueError(f"unknown knowledge format {fmt!r}; a knowledge dict renders as: {', '.join(RENDERERS)}")
    return RENDERERS[fmt](knowledge)
