"""Knowledge in the prompt: how much of the home goes in, and in what form.

Taught in ``notebooks/16_scaling_up.ipynb``. Lares re-sends the whole world
as pretty-printed JSON on every call; in a 1,000-room building that is
hundreds of thousands of tokens. The knowledge **formats**
(:data:`KNOWLEDGE_FORMATS`) are the alternatives an agent can
switch between (``run_agent(..., knowledge_format=...)``):

* ``full`` -- the whole :meth:`~lares_kit.home.Home.knowledge` as pretty
  JSON, exactly what Lares sends (the default);
* ``compact`` -- the same JSON on one line, without indentation;
* ``overview`` -- Home Assistant's approach: the layout and the devices
  *without their states* (a static overview), plus the tool
  :func:`get_live_context` that reports current states filtered by room,
  floor or device type;
* ``retrieval`` -- only the rooms the instruction mentions (word overlap
  with room and device names, aliases and types), the rooms around the
  robot, and the rooms on the way between them. It needs no downloaded
  model: words and the graph are enough in a home whose rooms have names.

The knowledge **mode** (:data:`KNOWLEDGE_MODES`: ``latest``, ``initial``,
``none``) says *when* the knowledge is taken. The vocabulary and the
renderers of the formats that need only a knowledge dict live in
:mod:`lares_kit.knowledge_formats`; this module adds retrieval, and
:func:`knowledge_prompt` writes the whole knowledge message of a prompt --
the one path every agent's knowledge goes through.

Every format keeps the knowledge message's contract (``WORLD KNOWLEDGE
(latest)`` or ``(initial: ...)``, then the JSON of ``Home.knowledge()`` or a
part of it), so the offline model reads all of them. Enums of ids in the
tool schemas grow with the home too; :func:`use_id_enums` turns them off for
big homes in every format but ``full``. A knowledge text bigger than any
model's prompt (:data:`PROMPT_TOKENS_AT_MOST`) is refused with
:class:`PromptTooBig` before anything is sent (:func:`check_prompt_size`).

This module renders knowledge and offers one tool; it does not run agents.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections import defaultdict
from typing import Any, Iterable

import networkx as nx

from .errors import LaresError, ToolError
from .home import Home
from .knowledge_formats import (
    KNOWLEDGE_FORMATS,
    KNOWLEDGE_MODES,
    check_format,
    format_note,
    knowledge_header,
    render,
    render_compact,
)
from .schema import RoomId
from .tools import check_room

__all__ = ["KNOWLEDGE_MODES", "KNOWLEDGE_FORMATS", "ENUM_LIMIT", "LIVE_LIMIT", "PROMPT_TOKENS_AT_MOST",
           "PromptTooBig", "check_prompt_size", "knowledge_header", "format_note", "knowledge_text",
           "knowledge_prompt", "render_retrieval", "relevant_rooms", "use_id_enums", "get_live_context"]

# No model's prompt holds more (the largest hold about a million tokens, most 128,000). A 5,000-device
# building is about 330,000 tokens as "full", which notebook 16 still sends to the offline model to show the cost.
PROMPT_TOKENS_AT_MOST = 1_000_000
ENUM_LIMIT = 60  # more room and device ids than this, and the schemas carry no id enums
LIVE_LIMIT = 120  # get_live_context answers at most this many devices; more asks for a narrower filter
NEIGHBOURS = 12  # rooms around the robot that retrieval shows (nearest first)
# Words that make an instruction about the whole home ("turn off all the lights", "which rooms are
# there?"), unless it names a room.
GLOBAL_WORDS = frozenset("all every everything everywhere whole house home building rooms lights devices which "
                         "many".split())
_ORDINALS = {"ground": 0, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10}
STOP_WORDS = frozenset("a an the in on of to and or for at by my our your please could would you can turn switch "
                       "set make it is are be with from into off up down all any some this that there here me i "
                       "find where look".split())


def use_id_enums(home: Home, fmt: str) -> bool:
    """Whether tool schemas should list the home's ids as enums under a knowledge format.

    An enum of 5,000 device ids costs about 25,000 tokens on every call;
    beyond :data:`ENUM_LIMIT` ids only ``full`` (the Lares baseline) keeps them.

    Args:
        home: The home whose room and device ids would fill the enums.
        fmt: A knowledge format of :data:`KNOWLEDGE_FORMATS`; an unknown one raises LaresError.

    Examples:
        >>> from lares_kit import load_world
        >>> use_id_enums(load_world("lares-home"), "retrieval")
        True
        >>> from lares_kit.generate import generate_home
        >>> use_id_enums(generate_home(rooms=100, devices=400), "retrieval")
        False
    """
    check_format(fmt)
    return fmt == "full" or home.graph.number_of_nodes() + len(home.devices) <= ENUM_LIMIT


# ----------------------------------------------------------------- retrieval
def _tokens(text: str) -> list[str]:
    # "Meeting room 304 (Oak)" -> ["meeting", "room", "304", "oak"]
    return re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))


class _Index:
    """Word -> rooms, for one home's layout (built once: rooms and devices never move)."""

    def __init__(self, home: Home) -> None:
        self.rooms = list(home.graph.nodes)
        self.room_words: dict[str, set[str]] = defaultdict(set)  # word -> rooms whose id/name/alias has it
        self.device_words: dict[str, set[str]] = defaultdict(set)  # word -> rooms with a device that has it
        self.phrases: dict[str, str] = {}  # a whole room name or alias, as words -> room
        for room, attrs in home.graph.nodes(data=True):
            names = [room.replace("-", " "), attrs.get("name", ""), *attrs.get("aliases", [])]
            for name in names:
                words = _tokens(name)
                self.phrases.setdefault(" ".join(words), room)
                for w in words:
                    self.room_words[w].add(room)
            for dev in home.devices_in(room):
                if not dev.exposed:  # a device hidden from the assistant must not lead it to a room
                    continue
                for w in _tokens(" ".join([dev.name, dev.type, *dev.aliases])):
                    self.device_words[w].add(room)

    def scores(self, instruction: str) -> dict[str, float]:
        words = [w for w in _tokens(instruction) if w not in STOP_WORDS]
        n = len(self.rooms)
        score: dict[str, float] = defaultdict(float)
        for w in set(words):
            # rare words count most: "304" names one room, "office" hundreds
            for table, weight in ((self.room_words, 1.0), (self.device_words, 0.5)):
                rooms = table.get(w, ())
                if rooms:
                    idf = math.log(1 + n / len(rooms))
                    for room in rooms:
                        score[room] += weight * idf
        text = f" {' '.join(_tokens(instruction))} "
        for phrase, room in self.phrases.items():
            if phrase and (f" {phrase} " in text or f" {phrase}s " in text):
                score[room] += 100.0  # the room's whole name: the strongest evidence there is
        return score


_INDEXES: "weakref.WeakKeyDictionary[nx.Graph, _Index]" = weakref.WeakKeyDictionary()


def _index(home: Home) -> _Index:
    # Keyed by the graph: copies of a home (bench.scene.copy_home) share it, and its layout.
    index = _INDEXES.get(home.graph)
    if index is None:
        index = _INDEXES[home.graph] = _Index(home)
    return index


def relevant_rooms(home: Home, instruction: str, robot_room: str | None = None, seen: Iterable[str] = (),
                   visited: Iterable[str] = (), limit: int = 6) -> tuple[list[str], set[str]]:
    """Rooms for the retrieval format: ``(rooms in home order, rooms shown with all their devices)``.

    The second set holds the rooms the instruction points to (the best word
    overlap, at most ``limit``) and the robot's room; the others -- around
    the robot, on the way, where things were seen, where the robot has
    been in this task (``visited``) -- are shown with their lights only,
    enough to move through them and to see in them. A home of at most
    :data:`NEIGHBOURS` rooms is small enough to show whole; an instruction
    about all of it (:data:`GLOBAL_WORDS`, and no room named) gets all of
    it, and one that names a floor gets every room on that floor.

    Args:
        home: The home to choose rooms from.
        instruction: The user's request, e.g. ``"Set the thermostat in Office 112 to 22 degrees."``.
        robot_room: The room id the robot is in; None leaves out the rooms around the robot.
        seen: Room ids where things were seen; the way to each is shown.
        visited: Room ids the robot has been in during this task; they stay shown.
        limit: At most this many rooms the instruction points to are shown with all their devices.

    Examples:
        >>> from lares_kit.generate import generate_home
        >>> home = generate_home(rooms=200, devices=1000, seed=1)
        >>> rooms, full = relevant_rooms(home, "Set the thermostat in Office 112 to 22 degrees.", "lobby")
        >>> sorted(full)
        ['lobby', 'office-112']
        >>> len(rooms) < 20
        True
    """
    index = _index(home)
    scores = index.scores(instruction)
    best = max(scores.values(), default=0.0)
    words = set(_tokens(instruction))
    if len(index.rooms) <= NEIGHBOURS or (words & GLOBAL_WORDS and best < 100):
        return list(index.rooms), set(index.rooms)  # small enough to show whole, or about all of it
    chosen = sorted((r for r, s in scores.items() if s >= 0.5 * best and s > 0), key=lambda r: -scores[r])[:limit]
    floor = _floor_named(instruction)
    if floor is not None and best < 100:  # "the lights on floor 3": every room of that floor
        chosen = [r for r in index.rooms if home.graph.nodes[r].get("floor") == floor]
    full = set(chosen)
    shown = set(chosen)
    if robot_room in home.graph:
        full.add(robot_room)
        lengths = nx.single_source_shortest_path_length(home.graph, robot_room, cutoff=1)
        shown |= set(sorted(lengths, key=lambda r: (lengths[r], r))[:NEIGHBOURS + 1])
        paths = nx.single_source_shortest_path(home.graph, robot_room)
        for target in [*chosen, *(s for s in seen if s in home.graph)]:
            shown |= set(paths.get(target, [target]))
    shown |= {r for r in visited if r in home.graph}
    order = {r: i for i, r in enumerate(index.rooms)}
    return sorted(shown, key=order.__getitem__), full


def _floor_named(instruction: str) -> int | None:
    # "floor 3", "the third floor", "ground floor" -> the floor number; None if no floor is named
    text = " ".join(_tokens(instruction))
    if m := re.search(r"\bfloor (\d+)\b", text):
        return int(m.group(1))
    if m := re.search(r"\b(\w+) floor\b", text):
        return _ORDINALS.get(m.group(1))
    return None


def _retrieved(home: Home, k: dict[str, Any], instruction: str, visited: Iterable[str]) -> tuple[dict[str, Any], int]:
    seen_rooms = [s.get("room") for s in k.get("seen", {}).values()]
    rooms, full = relevant_rooms(home, instruction, k.get("robot", {}).get("room"), seen_rooms, visited)
    keep = set(rooms)
    by_id = {r["id"]: r for r in k["rooms"]}
    out = []
    for room_id in rooms:
        r = dict(by_id[room_id])
        r["exits"] = [e for e in r["exits"] if e in keep]
        if room_id not in full:
            r["devices"] = [d for d in r["devices"] if d["type"] == "light"]
        out.append(r)
    return {**k, "rooms": out}, len(rooms)


# --------------------------------------------------------------- rendering
def render_retrieval(home: Home, instruction: str, knowledge: dict[str, Any] | None = None,
                     visited: Iterable[str] = ()) -> tuple[str, str]:
    """``retrieval``: ``(note, compact JSON of the rooms that matter)`` -- the one renderer of this format.

    The rooms are :func:`relevant_rooms`; the others are left out, and so are
    the exits to them.

    Args:
        home: The home to render.
        instruction: The user's request; its words choose the rooms.
        knowledge: A :meth:`Home.knowledge` dict to render instead of the home as it is now; None for now.
        visited: Room ids the robot has been in during this task; they stay shown.

    Examples:
        >>> from lares_kit.generate import generate_home
        >>> building = generate_home(rooms=200, devices=1000, seed=1)
        >>> note, text = render_retrieval(building, "Set the thermostat in Office 112 to 22 degrees.")
        >>> note.split(" --")[0], len(text) < 5000
        ('Retrieved: 5 of 200 rooms', True)
    """
    if knowledge is None and home.graph.number_of_nodes() > NEIGHBOURS:
        # Only the rooms retrieved are built at all: the whole knowledge of a building is the slow part.
        visited = list(visited)
        rooms, _ = relevant_rooms(home, instruction, home.robot.room, [s["room"] for s in home.seen.values()],
                                  visited)
        knowledge = home.knowledge(rooms=rooms)
    k = knowledge if knowledge is not None else home.knowledge()
    part, shown = _retrieved(home, k, instruction, visited)
    return format_note("retrieval", shown, home.graph.number_of_nodes()), render_compact(part)


def knowledge_text(home: Home, fmt: str = "full", instruction: str = "",
                   knowledge: dict[str, Any] | None = None, visited: Iterable[str] = ()) -> tuple[str, str]:
    """``(note, json text)`` of the knowledge in a format of :data:`KNOWLEDGE_FORMATS`.

    ``knowledge`` is a :meth:`Home.knowledge` dict to render (the episode's
    initial knowledge); None renders the home as it is now. ``note`` is
    :func:`format_note`, to go under the message's header line.
    ``visited``: rooms the robot has been in during the task, which
    retrieval keeps showing (a search must remember where it looked).

    Args:
        home: The home to render.
        fmt: A format of :data:`KNOWLEDGE_FORMATS`: "full", "compact", "overview" or "retrieval".
        instruction: The user's request; only ``retrieval`` reads it, to choose the rooms.
        knowledge: A :meth:`Home.knowledge` dict to render; None renders the home as it is now.
        visited: Room ids the robot has been in during the task; only ``retrieval`` reads it.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> knowledge_text(home, "full")[1] == home.render_knowledge("full")
        True
        >>> knowledge_text(home, "compact")[1][:41]
        '{"home":"lares-home","name":"The Lares ho'
        >>> note, text = knowledge_text(home, "overview")
        >>> '"state"' in text, "get_live_context" in note
        (False, True)
        >>> note, text = knowledge_text(home, "retrieval", "turn on the light in the kitchen")
        >>> note.split(" --")[0], [r["id"] for r in json.loads(text)["rooms"]]
        ('Retrieved: 5 of 5 rooms', ['lounge', 'hallway', 'kitchen', 'bedroom', 'office'])
    """
    check_format(fmt)
    if fmt == "retrieval":
        return render_retrieval(home, instruction, knowledge, visited)
    return format_note(fmt), render(knowledge if knowledge is not None else home.knowledge(), fmt)


def knowledge_prompt(home: Home | None, mode: str = "latest", fmt: str = "full", instruction: str = "", *,
                     initial: dict[str, Any] | None = None, visited: Iterable[str] = (),
                     home_id: str | None = None) -> str | None:
    """The world-knowledge message of a prompt: its header, the format's note, the knowledge. None in mode ``none``.

    Mode ``latest`` renders ``home`` as it is now (as Lares does, every
    turn); ``initial`` renders ``initial``, the :meth:`Home.knowledge` taken
    at the start. ``home_id`` names the home if the text is too big for any
    prompt (:func:`check_prompt_size`). :meth:`lares_kit.episode.Episode.messages`
    calls this for every agent.

    Args:
        home: The home as it is now, rendered in mode ``latest``; None when only ``initial`` is rendered
            (not with ``retrieval``, which reads the home's graph).
        mode: When the knowledge is taken: "latest", "initial" or "none" (:data:`KNOWLEDGE_MODES`).
        fmt: The knowledge format: "full", "compact", "overview" or "retrieval".
        instruction: The user's request; the ``retrieval`` format chooses rooms by its words.
        initial: The :meth:`Home.knowledge` dict taken at the start, rendered in mode ``initial``.
        visited: Room ids the robot has been in during the task; ``retrieval`` keeps showing them.
        home_id: The home's id for the too-big error; None uses ``home.id``.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> for line in knowledge_prompt(home, "latest", "overview").splitlines():
        ...     print(line[:50])
        WORLD KNOWLEDGE (latest)
        Overview: the layout and devices without their sta
        {"home":"lares-home","name":"The Lares home","time
        >>> knowledge_prompt(home, "none") is None
        True
    """
    if mode == "none":
        return None
    note, text = knowledge_text(home, fmt, instruction,  # type: ignore[arg-type]
                                None if mode == "latest" else initial, visited)
    check_prompt_size(text, fmt, home_id if home_id is not None else getattr(home, "id", ""))
    header = knowledge_header(mode) + (f"\n{note}" if note else "")
    return f"{header}\n{text}"


class PromptTooBig(LaresError):
    """The home's knowledge is bigger than any model's prompt; nothing was sent."""


def check_prompt_size(text: str, fmt: str, home_id: str) -> str:
    """``text`` if it fits in a prompt, else :class:`PromptTooBig` saying what to use instead.

    Tokens are estimated as characters / 4 (JSON runs about 3.8), so the
    check costs nothing on every turn.

    Args:
        text: The rendered knowledge, as it would go into the prompt.
        fmt: The knowledge format it was rendered in; the error suggests the fix for that format.
        home_id: The home's id, named in the error (cut to 60 characters).

    Examples:
        >>> check_prompt_size("{}", "full", "lares-home")
        '{}'
        >>> check_prompt_size("x" * 22_400_000, "full", "huge-home")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.knowledge.PromptTooBig: The knowledge of home 'huge-home' is about 5,600,000 tokens
        in the 'full' format, more than the 1,000,000 a model's prompt can hold, so nothing was sent.
        Use the 'retrieval' format (lares run --knowledge-format retrieval;
        run_agent(..., knowledge_format="retrieval")): it sends only the rooms the instruction is about.
    """
    tokens = len(text) // 4
    if tokens <= PROMPT_TOKENS_AT_MOST:
        return text
    name = home_id if len(home_id) <= 60 else home_id[:60] + "..."
    fix = ("Name fewer rooms in the instruction, or split the home into smaller world files."
           if fmt == "retrieval" else "Use the 'retrieval' format (lares run --knowledge-format retrieval; "
           'run_agent(..., knowledge_format="retrieval")): it sends only the rooms the instruction is about.')
    raise PromptTooBig(f"The knowledge of home {name!r} is about {tokens:,} tokens in the {fmt!r} format, more "
                       f"than the {PROMPT_TOKENS_AT_MOST:,} a model's prompt can hold, so nothing was sent. {fix}")


# -------------------------------------------------------------------- tool
def get_live_context(home: Home, room: RoomId | None = None, floor: int | None = None,
                     type: str | None = None) -> str:
    """Report the current state of devices, filtered by room, floor or device type.
    Use it before acting when the knowledge lists devices without their states.

    Args:
        home: The home whose devices are reported; supplied by the toolkit, never shown to the model.
        room: Only devices in this room (a room ID), e.g. "office-312".
        floor: Only devices on this floor, e.g. 3 (0 is the ground floor).
        type: Only devices of this type, e.g. "light", "thermostat", "window".
    """
    rooms = [check_room(home, room)] if room else list(home.graph.nodes)
    if floor is not None:
        rooms = [r for r in rooms if home.graph.nodes[r].get("floor") == floor]
        if not rooms:
            floors = sorted({a["floor"] for _, a in home.graph.nodes(data=True) if "floor" in a})
            raise ToolError(f"No rooms on floor {floor}." + (f" Floors: {', '.join(map(str, floors))}." if floors
                                                                else " This home has no floors."))
    devices = [d for r in rooms for d in home.devices_in(r, type) if d.exposed]
    if len(devices) > LIVE_LIMIT:
        raise ToolError(f"{len(devices)} devices match; ask for at most {LIVE_LIMIT} by giving a room, a floor "
                        "or a type.")
    where = f" in the {home.room_name(room)}" if room else ""
    where += f" on floor {floor}" if floor is not None else ""
    kind = f" {type}" if type else ""
    states = {d.id: d.state for d in devices}
    return (f"Current state of {len(devices)}{kind} device(s){where}, robot in {home.robot.room}: "
            + json.dumps(states, separators=(",", ":")))
