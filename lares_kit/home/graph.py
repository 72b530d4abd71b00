"""The home: rooms and exits as a networkx graph, devices, movable items.

Taught in ``notebooks/01_the_home_as_a_graph.ipynb``.

A :class:`Home` holds two views of the same house:

* the **truth** (:meth:`Home.truth`): every device state and where every
  movable thing really is -- the dog, the people, the robot;
* the **knowledge** (:meth:`Home.knowledge`): what an agent may know -- the
  layout, the devices and their current states, the robot's room, and the
  movable things the robot has *seen*, with where and when. A sighting is
  knowledge, not truth: if the dog wanders off, the sighting goes stale until
  the robot sees it again.

A home may also hold ``during`` events (:mod:`lares_kit.home.during`): changes to
its truth while an agent works -- Ana switches a light off, the dog moves --
that no knowledge records until it is taken again.

This module knows nothing about agents, models or tools; it is the world
(how its knowledge is written as text is :mod:`lares_kit.knowledge.formats`).
Loading and validating world files lives in :mod:`lares_kit.home.worlds`.
"""

from __future__ import annotations

import copy
import random
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..knowledge.formats import render
from .clock import Clock
from .marks import Marks

__all__ = ["Device", "Item", "Home"]


@dataclass
class Device:
    """A networked device in a room. ``state`` is a plain mapping (a light has ``on``)."""

    id: str
    name: str
    type: str
    room: str
    state: dict[str, Any] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    # attribute -> spec overriding lares_kit.home.devices.DEVICE_TYPES for this device
    capabilities: dict[str, Any] = field(default_factory=dict)
    # False: not exposed to the assistant (Home Assistant's idea): in the truth, never in the knowledge or the tools
    exposed: bool = True
    # Its Home Assistant entity id when the world gives one (an imported HA home); else derived from type and name
    entity_id: str = ""
    # Bound to an outside MQTT device (world file `mqtt: {command_topic, state_topic, format}`): lares serve-home
    # sends its changes there and takes its state from there (lares_kit.serve.mqtt); {} when not bound
    mqtt: dict[str, Any] = field(default_factory=dict)


@dataclass
class Item:
    """A movable thing (a dog, a person, the robot). Hidden from the agent until seen."""

    id: str
    name: str
    type: str
    room: str
    aliases: list[str] = field(default_factory=list)
    description: str = ""


@dataclass
class _Start:
    # What reset() returns to: the file's placements and device states.
    devices: dict[str, dict[str, Any]]
    items: dict[str, str]
    robot: str


class Home:
    """A simulated home.

    ``graph`` is a :class:`networkx.Graph`: rooms are nodes (string ids, with
    ``name`` and ``description`` attributes), exits are undirected edges.
    ``devices`` and ``items`` map ids to :class:`Device` and :class:`Item`;
    ``clock`` is the home's :class:`~lares_kit.home.clock.Clock` (the time of day
    and the steps taken; ``time`` is its step count).

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> sorted(home.graph.neighbors("hallway"))
        ['bedroom', 'kitchen', 'lounge']
        >>> home.robot.room
        'hallway'
        >>> home.is_lit("hallway"), home.is_lit("bedroom")
        (True, False)
        >>> "bruno" in home.knowledge()["seen"]
        False
    """

    def __init__(self, id: str, name: str, graph: nx.Graph, devices: list[Device], items: list[Item], robot: Item, *,
                 description: str = "", extra: dict[str, Any] | None = None, language: str = "en",
                 floors: dict[int, dict[str, Any]] | None = None, clock: Clock | None = None) -> None:
        self.id = id
        # the language its names are in and its people speak (a home-assistant-intents code: en, de, fr...)
        self.language = language
        # floor number -> {"name", "aliases"}, where the world file names its floors
        self.floors: dict[int, dict[str, Any]] = dict(floors or {})
        self.name = name
        self.description = description
        self.graph = graph
        self.devices: dict[str, Device] = {d.id: d for d in devices}
        # room id -> the ids of its devices, in file order (devices never change rooms; copies share it)
        self._by_room: dict[str, list[str]] = {room: [] for room in graph.nodes}
        for d in devices:
            self._by_room.setdefault(d.room, []).append(d.id)
        self.items: dict[str, Item] = {i.id: i for i in items}
        self.robot = robot
        # Keys of the world file this module does not interpret (users, policy...).
        self.extra: dict[str, Any] = dict(extra or {})
        # The time of day and the steps taken (lares_kit.home.clock): simulated from 08:00 unless given.
        self.clock = clock if clock is not None else Clock.simulated()
        # version: bumped on every change to the truth; lets a caller tell
        # "nothing changed since" without comparing whole states.
        self.version = 0
        # seen: item id -> {"room": room id, "time": tick} -- the robot's sightings.
        self.seen: dict[str, dict[str, Any]] = {}
        # What changed since the open marks (lares_kit.home.marks): each call of an agent, a sub-agent's inside it.
        self._marks = Marks()
        # What happens while an agent works (lares_kit.home.during.Schedule: a world's or a task's `during:` events);
        # None: nothing does, and nothing here moves the clock or records anything.
        self.during: Any = None
        self._start = _Start(
            devices={d.id: copy.deepcopy(d.state) for d in devices},
            items={i.id: i.room for i in items},
            robot=robot.room,
        )

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, *, placements: dict[str, str] | None = None,
              states: dict[str, dict[str, Any]] | None = None) -> "Home":
        """Put the home back to its start, its clock too (no steps, the time it started at); return it.

        With no ``seed`` the movable items go where the world file puts them.
        With a seed, each item (not the robot) is placed in a random room;
        the same seed always gives the same placement. ``placements``
        (item id -> room id) and ``states`` (device id -> state updates) are
        applied last, for benchmark set-ups.

        Examples:
            >>> from lares_kit import load_world
            >>> home = load_world("lares-home")
            >>> a = home.reset(seed=7).items["bruno"].room
            >>> b = home.reset(seed=7).items["bruno"].room
            >>> a == b
            True
            >>> home.reset().items["bruno"].room
            'bedroom'
        """
        for dev_id, state in self._start.devices.items():
            self.devices[dev_id].state = _copy_state(state)
        rooms = sorted(self.graph.nodes)
        rng = random.Random(seed)
        for item_id, room in sorted(self._start.items.items()):
            self.items[item_id].room = rng.choice(rooms) if seed is not None else room
        self.robot.room = self._start.robot
        for item_id, room in (placements or {}).items():
            self.move_item(item_id, room)
        for dev_id, update in (states or {}).items():
            self.update_device(dev_id, update)
        self.clock.reset()
        self.version = 0
        self.seen = {}
        if self.during is not None:  # every event waits to happen again
            self.during.restart()
        return self

    # --------------------------------------------------------------- queries
    def room_name(self, room_id: str) -> str:
        return self.graph.nodes[room_id]["name"]

    def devices_in(self, room_id: str, type: str | None = None) -> list[Device]:
        """Devices in a room, in file order, optionally of one type."""
        devices = self.devices
        return [d for d in map(devices.__getitem__, self._by_room.get(room_id, ())) if type is None or d.type == type]

    def items_in(self, room_id: str) -> list[Item]:
        """Movable items truly in a room (truth: agents must not call this)."""
        return [i for i in self.items.values() if i.room == room_id]

    def lights(self) -> list[Device]:
        return [d for d in self.devices.values() if d.type == "light"]

    def is_lit(self, room_id: str) -> bool:
        """A room is lit when any light in it is on."""
        return any(d.state.get("on") for d in self.devices_in(room_id, "light"))

    def route(self, source: str, target: str) -> list[str]:
        """Rooms from ``source`` to ``target`` along exits, both included.

        Examples:
            >>> from lares_kit import load_world
            >>> load_world("lares-home").route("kitchen", "office")
            ['kitchen', 'hallway', 'lounge', 'office']
        """
        return nx.shortest_path(self.graph, source, target)

    # ------------------------------------------------------------- changes
    def update_device(self, device_id: str, update: dict[str, Any]) -> None:
        """Change some of a device's settings: ``update`` maps attributes to their new values.

        The device gets a new state dict; the old one is never written into
        again (copy-on-write). So what a snapshot holds stays as it was --
        :meth:`device_states` with ``shared=True``, :meth:`changes_since_mark`,
        a copy made by :meth:`copy` -- without anything being copied up front.

        Args:
            device_id: The device's id.
            update: Attribute -> new value; the other attributes keep theirs.

        Examples:
            >>> from lares_kit import load_world
            >>> home = load_world("lares-home")
            >>> before = home.device_states(shared=True)
            >>> home.update_device("kitchen-light", {"on": True})
            >>> before["kitchen-light"], home.devices["kitchen-light"].state
            ({'on': False}, {'on': True})
        """
        dev = self.devices[device_id]
        self._marks.note(device_id, dev.state)
        state = _copy_state(dev.state)
        state.update(copy.deepcopy(update))
        dev.state = state
        self.version += 1

    def mark_changes(self) -> None:
        """Start noting which devices change; :meth:`changes_since_mark` says which, and how they were (:mod:`.marks`).

        Examples:
            >>> from lares_kit import load_world
            >>> home = load_world("lares-home")
            >>> home.mark_changes()
            >>> home.update_device("kitchen-light", {"on": True})
            >>> home.changes_since_mark()
            {'kitchen-light': {'on': False}}
        """
        self._marks.renew()

    def changes_since_mark(self) -> dict[str, dict[str, Any]]:
        """``{device id: state before its first change}`` since :meth:`mark_changes` (``{}`` if never marked)."""
        return self._marks.since()

    def nested_marks(self) -> AbstractContextManager[None]:
        """Inside (a sub-agent's run), :meth:`mark_changes` marks anew; the mark outside still notes every change."""
        return self._marks.nested()

    def move_item(self, item_id: str, room_id: str) -> None:
        """Move a hidden item (the dog wanders). The robot moves with :meth:`move_robot`."""
        if room_id not in self.graph:
            raise KeyError(f"no room {room_id!r}")
        self.items[item_id].room = room_id
        self.version += 1

    def move_robot(self, room_id: str) -> None:
        self.robot.room = room_id
        self.version += 1

    @property
    def time(self) -> int:
        """The steps taken in the home, one per action (``clock.steps``): the knowledge's ``"time"``."""
        return self.clock.steps

    @time.setter
    def time(self, steps: int) -> None:
        self.clock.steps = steps

    def tick(self) -> int:
        """Count one more action on the home's clock; return the new step count."""
        return self.clock.tick()

    def record_sighting(self, item_id: str, room_id: str) -> None:
        self.seen[item_id] = {"room": room_id, "time": self.time}

    # ------------------------------------------------------ truth/knowledge
    def device_states(self, shared: bool = False) -> dict[str, dict[str, Any]]:
        """Current state of every device, ``{device_id: state}``: copies, yours to change.

        ``shared=True`` gives the home's own state dicts instead, copying
        nothing (a benchmark scene's start state in a 5,000-device building).
        They stay as they are now however the home changes -- the home never
        writes into a state dict, :meth:`update_device` and :meth:`reset` give
        the device a new one -- so never write into them either.

        Args:
            shared: False: a copy of each state; True: the states themselves, read-only.
        """
        if shared:
            return {d.id: d.state for d in self.devices.values()}
        return {d.id: _copy_state(d.state) for d in self.devices.values()}

    def truth(self) -> dict[str, Any]:
        """Everything, hidden things included. For judges and debug views, never prompts."""
        adj = self.graph.adj
        return {
            "home": self.id,
            "time": self.time,
            "rooms": {r: {"name": a["name"], "exits": sorted(adj[r])} for r, a in self.graph.nodes(data=True)},
            "devices": self.device_states(),
            "robot": self.robot.room,
            "items": {i.id: {"name": i.name, "type": i.type, "room": i.room} for i in self.items.values()},
        }

    def knowledge(self, rooms: list[str] | None = None) -> dict[str, Any]:
        """What the agent may know: layout, devices and states, the robot, and sightings.

        ``seen`` maps item ids to where and when the robot last saw them; it
        is *not* updated when an item moves out of sight. ``rooms`` (ids, in
        the order wanted) limits the rooms described, for prompts that show
        only part of a big home (:mod:`lares_kit.knowledge.modes`).
        """
        rooms_out = []
        nodes, adj, devices, by_room = self.graph.nodes, self.graph.adj, self.devices, self._by_room
        for room_id, attrs in (nodes(data=True) if rooms is None else ((r, nodes[r]) for r in rooms)):
            room = {"id": room_id, "name": attrs["name"]}
            if attrs.get("aliases"):
                room["aliases"] = list(attrs["aliases"])
            if "floor" in attrs:  # buildings: "downstairs" needs the floor to mean anything
                room["floor"] = attrs["floor"]
            room["exits"] = list(adj[room_id])
            room["devices"] = listed = []
            for d in map(devices.__getitem__, by_room.get(room_id, ())):
                if d.exposed:
                    dev = {"id": d.id, "name": d.name, "type": d.type, "state": _copy_state(d.state)}
                    if d.aliases:
                        dev["aliases"] = list(d.aliases)
                    listed.append(dev)
            rooms_out.append(room)
        seen = {
            item_id: {"name": self.items[item_id].name, "type": self.items[item_id].type, **where}
            for item_id, where in self.seen.items()
        }
        known = {
            "home": self.id,
            "name": self.name,
            "time": self.time,
            "robot": {"id": self.robot.id, "room": self.robot.room},
            "rooms": rooms_out,
            "seen": seen,
        }
        if self.language != "en":  # English is the default: its prompts stay as they were
            known["language"] = self.language
        if self.floors:
            known["floors"] = [{"id": n, "name": f["name"], **({"aliases": list(f["aliases"])} if f["aliases"] else {})}
                               for n, f in sorted(self.floors.items())]
        return known

    def render_knowledge(self, fmt: str = "full", knowledge: dict[str, Any] | None = None) -> str:
        """The knowledge (default: :meth:`knowledge` now) as text, in a format of :mod:`lares_kit.knowledge.formats`.

        ``"full"`` is pretty JSON, as Lares sends it (``"json"`` is its old
        name), ``"compact"`` one-line JSON, ``"overview"`` the JSON without
        device states, ``"text"`` short lines for people. The agents' prompts
        use the same renderers (:func:`lares_kit.knowledge.modes.knowledge_text`).

        Examples:
            >>> from lares_kit import load_world
            >>> print(load_world("lares-home").render_knowledge("text").splitlines()[2])
            - Lounge (lounge): exits hallway, office; devices: lounge-light (light, off)
        """
        return render(knowledge if knowledge is not None else self.knowledge(), fmt)

    def __deepcopy__(self, memo: dict[int, Any]) -> "Home":
        # Same result as the generic deepcopy, several times faster for big homes: devices
        # are many and shallow, so they are copied field by field. The start record is
        # shared -- nothing writes to it (reset copies from it). Home.copy shares more.
        new = Home.__new__(Home)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            if key not in ("devices", "_by_room", "_start"):
                new.__dict__[key] = copy.deepcopy(value, memo)
        new._start, new._by_room = self._start, self._by_room  # the room lists hold ids: the same in every copy
        new.devices = {dev_id: _copy_device(d, memo) for dev_id, d in self.devices.items()}
        return new

    def copy(self) -> "Home":
        """A copy for another episode, cheap however big the home (a benchmark copies one per task).

        For everything done through the home's methods it is as independent
        as a deep copy, but it copies only what they change: the room graph
        (episodes never change the layout) and each device's description and
        state dict are shared. The home never writes into a state dict --
        :meth:`update_device` and :meth:`reset` give the device a new one --
        so a change in either home stays in that home (each has its own clock
        too, at the same time and step). Change devices through
        ``update_device``, as every tool does: writing into ``device.state``
        directly would change both homes (``copy.deepcopy`` makes a copy
        that shares nothing but the start record).

        Examples:
            >>> from lares_kit import load_world
            >>> home = load_world("lares-home")
            >>> twin = home.copy()
            >>> twin.update_device("kitchen-light", {"on": True})
            >>> home.devices["kitchen-light"].state, twin.devices["kitchen-light"].state, twin.graph is home.graph
            ({'on': False}, {'on': True}, True)
        """
        new = Home.__new__(Home)
        memo = {id(self): new, id(self.graph): self.graph}
        for key, value in self.__dict__.items():
            if key not in ("devices", "_by_room", "_start"):
                new.__dict__[key] = copy.deepcopy(value, memo)
        new._start, new._by_room = self._start, self._by_room
        new.devices = {dev_id: _share_device(d) for dev_id, d in self.devices.items()}
        return new

    def __repr__(self) -> str:
        return (f"<Home {self.id!r}: {self.graph.number_of_nodes()} rooms, "
                f"{len(self.devices)} devices, {len(self.items)} hidden items>")


_ATOMIC = frozenset({bool, int, float, str, type(None)})


def _copy_device(d: Device, memo: dict[int, Any]) -> Device:
    # The strings are immutable and shared; only the mutable fields are copied.
    return Device(d.id, d.name, d.type, d.room, _copy_state(d.state), list(d.aliases), d.description,
                  copy.deepcopy(d.capabilities, memo) if d.capabilities else {}, d.exposed, d.entity_id,
                  dict(d.mqtt))


def _share_device(d: Device) -> Device:
    # A Device of its own (update_device gives it new states) sharing every field's value with ``d``. Built by
    # the constructor, it keeps its fields without a __dict__ object: half the objects for the garbage collector.
    if type(d) is not Device:
        return copy.copy(d)
    return Device(d.id, d.name, d.type, d.room, d.state, d.aliases, d.description, d.capabilities, d.exposed,
                  d.entity_id, d.mqtt)


def _copy_state(state: dict[str, Any]) -> dict[str, Any]:
    # A deep copy; states are almost always flat mappings of plain values, which dict() copies fully.
    for value in state.values():
        if type(value) not in _ATOMIC:
            return copy.deepcopy(state)
    return dict(state)
