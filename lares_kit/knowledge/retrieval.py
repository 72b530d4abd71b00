"""Retrieval: which rooms of a home an instruction is about, from words and the graph alone.

Taught in ``notebooks/16_scaling_up.ipynb``; the ``retrieval`` knowledge format
(:func:`lares_kit.knowledge.modes.render_retrieval`) shows only these rooms. An
index per home maps words to rooms: the words of room names, ids and aliases
(weighed fully) and of the names, types and aliases of their devices (half).
Rare words count most ("304" names one room, "office" hundreds), a room's whole
name beats any number of words, and the rooms around the robot and on the way
to the chosen ones are shown too, with their lights only. No model and no
download: a home whose rooms have names needs none.
"""

from __future__ import annotations

import math
import re
import weakref
from collections import defaultdict
from typing import Any, Iterable

import networkx as nx

from ..home.graph import Home

__all__ = ["NEIGHBOURS", "EVIDENCE", "GLOBAL_WORDS", "STOP_WORDS", "relevant_rooms", "retrieved_part"]

NEIGHBOURS = 12  # rooms around the robot that retrieval shows (nearest first)
EVIDENCE = 1.0  # the least word weight that points to a room besides one named in full (_Index.also_meant)
# Words that make an instruction about the whole home ("turn off all the lights", "which rooms are
# there?"), unless it names a room.
GLOBAL_WORDS = frozenset("all every everything everywhere whole house home building rooms lights devices which "
                         "many".split())
_ORDINALS = {"ground": 0, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
             "eighth": 8, "ninth": 9, "tenth": 10}
# A question about the assistant itself ("what can you do?"): its answer names what the whole home has
_ABOUT_ME = re.compile(r"\bwhat (?:can|could) you (?:do|control)\b|\bwhat are you able\b|^\s*help\b|"
                       r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings)(?: there)?\W*$")
# Words that leave out what follows them: "every light except the lobby", "all but the kitchen"
_EXCEPTING = re.compile(r"\b(?:except|but|apart from|other than|excluding|aside from|save for)\b")
STOP_WORDS = frozenset("a an the in on of to and or for at by my our your please could would you can turn switch "
                       "set make it is are be with from into off up down all any some this that there here me i "
                       "find where look".split())


def _tokens(text: str) -> list[str]:
    # "Meeting room 304 (Oak)" -> ["meeting", "room", "304", "oak"]
    return re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))


class _Index:
    """Word -> rooms, for one home's layout (built once: rooms and devices never move)."""

    def __init__(self, home: Home) -> None:
        self.rooms = list(home.graph.nodes)
        self.order = {r: i for i, r in enumerate(self.rooms)}  # the home's order: ties are broken by it
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

    def scores(self, instruction: str, phrases: bool = True, rooms: bool = True) -> dict[str, float]:
        words = [w for w in _tokens(instruction) if w not in STOP_WORDS]
        n = len(self.rooms)
        score: dict[str, float] = defaultdict(float)
        tables = ((self.room_words, 1.0), (self.device_words, 0.5)) if rooms else ((self.device_words, 0.5),)
        for w in set(words):
            # rare words count most: "304" names one room, "office" hundreds
            for table, weight in tables:
                rooms = table.get(w, ())
                if rooms:
                    idf = math.log(1 + n / len(rooms))
                    for room in rooms:
                        score[room] += weight * idf
        text = f" {' '.join(_tokens(instruction))} " if phrases else ""
        for phrase, room in self.phrases.items():
            if phrase and (f" {phrase} " in text or f" {phrase}s " in text):
                score[room] += 100.0  # the room's whole name: the strongest evidence there is
        return score

    def nearest_holders(self, home: Home, instruction: str, around: list[str | None]) -> list[str]:
        """For each kind of device the instruction asks for that no room in ``around`` has, the nearest room with one.

        "Switch on the fan in the lobby": the lobby has no fan, and the agent must be able to say where the
        nearest one is rather than that the home has none.
        """
        sources = [r for r in around if r in home.graph]
        wanted = [w for w in dict.fromkeys(_tokens(instruction)) if w not in STOP_WORDS and w in self.device_words]
        missing = [w for w in wanted if not self.device_words[w] & set(sources)]
        if not missing or not sources:
            return []
        hops = nx.multi_source_dijkstra_path_length(home.graph, sources)
        found = [min(self.device_words[w], key=lambda r: (hops.get(r, math.inf), r)) for w in missing]
        return [r for r in dict.fromkeys(found) if r not in sources]

    def also_meant(self, instruction: str) -> list[str]:
        """Rooms the rest of an instruction points to, once the rooms it names in full are taken out of it.

        "Open the landing window and turn on the light in the server room": without "server room", the words
        "landing window" still point to the stairs. Only device words count here (a number left over is a value,
        "to 22 degrees", not office 22). A room counts when they weigh at least half the best and at least
        :data:`EVIDENCE` (one word shared by a few rooms; "light", in every room, is not enough).
        """
        text = f" {' '.join(_tokens(instruction))} "
        named = [p for p in self.phrases if p and (f" {p} " in text or f" {p}s " in text)]  # a few, not all
        for phrase in sorted(named, key=len, reverse=True):
            text = re.sub(rf" {re.escape(phrase)}s? ", " ", text)
        rest = self.scores(text, phrases=False, rooms=False)
        bar = max(EVIDENCE, 0.5 * max(rest.values(), default=0.0))
        return sorted((r for r, s in rest.items() if s >= bar), key=lambda r: (-rest[r], self.order[r]))


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
    about all of it (:data:`GLOBAL_WORDS`, and no room named, or rooms named
    only to be left out: "every light except the lobby") gets all of it, and
    one that names a floor gets every room on that floor.

    Args:
        home: The home to choose rooms from.
        instruction: The user's request, e.g. ``"Set the thermostat in Office 112 to 22 degrees."``.
        robot_room: The room id the robot is in; None leaves out the rooms around the robot.
        seen: Room ids where things were seen; the way to each is shown.
        visited: Room ids the robot has been in during this task; they stay shown.
        limit: At most this many rooms the instruction points to are shown with all their devices.

    Examples:
        >>> from lares_kit.home.generator import generate_home
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
    # "all the lights except the lobby": a room named after an exception is left out, so the rest is meant
    if _ABOUT_ME.search(instruction.lower()):
        return list(index.rooms), set(index.rooms)  # "what can you do?": the answer is about the whole home
    if len(index.rooms) <= NEIGHBOURS or (words & GLOBAL_WORDS and (best < 100 or _EXCEPTING.search(
            " ".join(_tokens(instruction))))):
        return list(index.rooms), set(index.rooms)  # small enough to show whole, or about all of it
    chosen = sorted((r for r, s in scores.items() if s >= 0.5 * best and s > 0),
                    key=lambda r: (-scores[r], index.order[r]))[:limit]  # ties in the home's order, any hash seed
    if best >= 100:  # a room named in full must not hide another the same instruction points to by its words
        chosen += [r for r in index.also_meant(instruction) if r not in chosen][:max(0, limit - len(chosen))]
    floor = _floor_named(instruction)
    if floor is not None:  # "the lights on floor 3": every room of that floor (and any room named besides)
        on_floor = [r for r in index.rooms if home.graph.nodes[r].get("floor") == floor]
        chosen = on_floor + [r for r in chosen if r not in on_floor] if best >= 100 else on_floor
    chosen += index.nearest_holders(home, instruction, chosen or [robot_room])
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
    return sorted(shown, key=index.order.__getitem__), full


def _floor_named(instruction: str) -> int | None:
    # "floor 3", "the third floor", "ground floor" -> the floor number; None if no floor is named
    text = " ".join(_tokens(instruction))
    if m := re.search(r"\bfloor (\d+)\b", text):
        return int(m.group(1))
    if m := re.search(r"\b(\w+) floor\b", text):
        return _ORDINALS.get(m.group(1))
    return None


def retrieved_part(home: Home, k: dict[str, Any], instruction: str,
                   visited: Iterable[str]) -> tuple[dict[str, Any], int]:
    """The part of a knowledge dict retrieval shows, and how many rooms it has (exits only to rooms shown).

    Args:
        home: The home the knowledge is of.
        k: A :meth:`Home.knowledge` dict holding at least the rooms :func:`relevant_rooms` picks.
        instruction: The user's request.
        visited: Room ids the robot has been in during the task.
    """
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
