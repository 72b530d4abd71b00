"""World files: find, load and validate them; list what is there.

Taught in ``notebooks/01_the_home_as_a_graph.ipynb``; the format is documented
in ``worlds/README.md``. A world file is YAML with ``id``, ``name``, ``rooms``
(each with ``exits``), ``devices``, ``robot`` and ``items``. A bad file raises
:class:`WorldError`, whose message names the file, the key path and what was
expected -- the CLI prints it without a traceback. Reading the file (its
size, encoding, YAML aliases, nesting) is :mod:`lares_kit.files.reading`; a
message quotes at most a few dozen characters of what the file says. This
module builds :class:`~lares_kit.home.graph.Home` objects; it does not run them.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx

from ..errors import LIST_AT_MOST, DataFileError, brief
from ..files.lookup import WORLD_DIRS, FileKind, files_by_id, read_by_id_or_path
from ..files.reading import parse_data
from .clock import Clock
from .during import Schedule, parse_during
from .graph import Device, Home, Item

__all__ = ["WorldError", "load_world", "read_yaml", "parse_world", "check_home", "world_paths", "WORLD_DIRS"]

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
KNOWN_KEYS = {"id", "name", "description", "rooms", "devices", "robot", "items", "language", "floors"}
# Keys each entry may have; anything else is a typo (or a description with an unquoted comma inside {...}).
ENTRY_KEYS = {
    "rooms": {"id", "name", "description", "exits", "aliases", "floor"},
    "devices": {"id", "name", "type", "room", "state", "aliases", "description", "capabilities", "docs", "near",
                "expose", "entity_id", "mqtt"},
    "floors": {"id", "name", "aliases"},
    "items": {"id", "name", "type", "room", "aliases", "description"},
    "robot": {"id", "name", "room"},
    "mqtt": {"command_topic", "state_topic", "format", "timeout"},
}
# Device keys the Home's Device does not hold; kept per device in Home.extra["device_extras"] = {device id: {key:
# value}} for the features that read them (lares_kit.device_apis.documents: capability documents, what is near it).
DEVICE_EXTRA_KEYS = ("docs", "near")
# The formats of outside MQTT devices a world device may be bound to (``mqtt: {format: ...}``, lares_kit.serve.mqtt).
MQTT_FORMATS = ("zigbee2mqtt",)


def read_yaml(text: str, source: str = "<text>") -> Any:
    """Parse YAML the way world files mean it: ``on: false`` is the key "on"; bad text is a :class:`WorldError`.

    Args:
        text: The YAML (or JSON) text.
        source: Where the text comes from, e.g. a file name: errors start with it.

    Examples:
        >>> read_yaml("state: {on: false}")
        {'state': {'on': False}}
        >>> read_yaml('{"state": {"on": false}}')  # JSON is YAML too, and reads much faster
        {'state': {'on': False}}
        >>> read_yaml("rooms: [a, b", "mine.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.home.worlds.WorldError: mine.yaml: not valid YAML at line 2, column 1: did not find \
expected ',' or ']'
    """
    return parse_data(text, source, WorldError)


class WorldError(DataFileError):
    """A world file (or Home) is not valid.

    ``str()`` is a sentence for people: ``file: key.path: what was expected``.
    """


# World files are looked up by id in $LARES_WORLDS, then WORLD_DIRS (lares_kit.files.lookup), first match wins.
WORLD_FILES = FileKind("world file", "worlds", "", WorldError)


def world_paths() -> dict[str, Path]:
    """World id -> file, for every world file found (``lares worlds`` lists these).

    Examples:
        >>> "lares-home" in world_paths()
        True
    """
    return files_by_id(WORLD_FILES)


def load_world(name_or_path: str | os.PathLike, *, seed: int | None = None) -> Home:
    """Load a world by id (``"lares-home"``) or by path to a YAML file.

    Args:
        name_or_path: A world id such as ``"lares-home"`` (``lares worlds`` lists them), or a path to a YAML file.
        seed: None: the items are where the file puts them; a number places them at random, the same number in the same
            rooms (:meth:`Home.reset`).

    Examples:
        >>> home = load_world("lares-home")
        >>> home.graph.number_of_nodes(), len(home.devices)
        (5, 5)
        >>> load_world("no-such-home")
        Traceback (most recent call last):
        ...
        lares_kit.home.worlds.WorldError: no-such-home: no world file with this id or path; known worlds: ...
    """
    path, data = read_by_id_or_path(name_or_path, WORLD_FILES)
    home = parse_world(data, source=str(path))
    return home.reset(seed=seed) if seed is not None else home


def _expect(cond: bool, source: str, key: str, message: str) -> None:
    if not cond:
        raise WorldError(source, key, message)


# The checks below build their message only when they fail: a 5,000-device world runs them 10,000s of times.
def _mapping(value: Any, source: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WorldError(source, key, f"expected a mapping, got {_kind(value)}")
    return value


def _list(value: Any, source: str, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise WorldError(source, key, f"expected a list, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {type(None): "nothing", str: "a string", int: "a number", float: "a number",
            bool: "true/false", list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


def _known_keys(entry: dict[str, Any], kind: str, source: str, key: str) -> None:
    for name in entry:
        if name not in ENTRY_KEYS[kind]:
            hint = (" (a description with a comma inside {...} must be quoted)"
                    if isinstance(name, str) and " " in name else "")
            raise WorldError(source, f"{key}", f"unknown key {brief(name)}{hint}; allowed keys: "
                             + ", ".join(sorted(ENTRY_KEYS[kind])))


def _ident(entry: dict[str, Any], source: str, key: str, seen: dict[str, str]) -> str:
    _expect("id" in entry, source, key, "missing required key 'id'")
    ident = entry["id"]
    if not (isinstance(ident, str) and ID_PATTERN.match(ident)):
        raise WorldError(source, f"{key}.id", "expected an id of lowercase letters, digits and hyphens "
                                              f"(like 'kitchen-light'), got {brief(ident)}")
    if ident in seen:
        raise WorldError(source, f"{key}.id", f"duplicate id {brief(ident)} (already used at {seen.get(ident)})")
    seen[ident] = key
    return ident


def _text(entry: dict[str, Any], name: str, source: str, key: str, default: str | None = None) -> str:
    value = entry.get(name, default)
    if not isinstance(value, str):
        raise WorldError(source, f"{key}.{name}" if key else name,
                         f"expected a string, got {_kind(value)}" if name in entry
                         else f"missing required key '{name}'")
    return value


def _aliases(entry: dict[str, Any], source: str, key: str) -> list[str]:
    if "aliases" not in entry:
        return []
    aliases = _list(entry["aliases"], source, f"{key}.aliases")
    for n, alias in enumerate(aliases):
        if not isinstance(alias, str):
            raise WorldError(source, f"{key}.aliases[{n}]", f"expected a string, got {_kind(alias)}")
    return aliases


class _RoomList:
    """The room ids joined by commas, built only if an error message needs it (at most the first 30)."""

    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph

    def __str__(self) -> str:
        rooms = list(self.graph.nodes)
        more = len(rooms) - LIST_AT_MOST
        return ", ".join(rooms[:LIST_AT_MOST]) + (f" and {more:,} more" if more > 0 else "")


def parse_world(data: Any, source: str = "<world>") -> Home:
    """Build a Home from already-parsed YAML/JSON data, validating every key.

    Args:
        data: The world as YAML or JSON reads it: a mapping with ``id``, ``rooms``, ``devices``...
        source: Where the data comes from, e.g. a file name: errors start with it.

    Examples:
        >>> parse_world({"id": "tiny", "rooms": [{"id": "a", "exits": ["b"]}]}, "tiny.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.home.worlds.WorldError: tiny.yaml: rooms[0].exits[0]: unknown room 'b'; rooms are: a
    """
    top = _mapping(data, source, "")
    ids: dict[str, str] = {}  # every id in the file -> where it was defined
    _expect("id" in top, source, "id", "missing required key 'id' (the world's id, like 'lares-home')")
    world_id = top["id"]
    _expect(isinstance(world_id, str) and bool(ID_PATTERN.match(world_id)), source, "id",
            f"expected an id of lowercase letters, digits and hyphens, got {brief(world_id)}")
    _expect("rooms" in top, source, "rooms", "missing required key 'rooms' (a list of rooms with exits)")
    rooms = _list(top["rooms"], source, "rooms")
    _expect(len(rooms) > 0, source, "rooms", "expected at least one room")

    graph = nx.Graph()
    exits: dict[str, list[str]] = {}
    for n, raw in enumerate(rooms):
        key = f"rooms[{n}]"
        room = _mapping(raw, source, key)
        _known_keys(room, "rooms", source, key)
        room_id = _ident(room, source, key, ids)
        attrs = {"name": _text(room, "name", source, key, room_id.replace("-", " ").title()),
                 "description": _text(room, "description", source, key, ""),
                 "aliases": _aliases(room, source, key)}
        if "floor" in room:
            _expect(isinstance(room["floor"], int), source, f"{key}.floor",
                    f"expected a whole number, got {_kind(room['floor'])}")
            attrs["floor"] = room["floor"]
        graph.add_node(room_id, **attrs)
        exits[room_id] = [e for e in _list(room.get("exits", []), source, f"{key}.exits")]
    room_list = _RoomList(graph)
    exit_sets = {room_id: {t for t in targets if isinstance(t, str)} for room_id, targets in exits.items()}
    for n, (room_id, targets) in enumerate(exits.items()):
        for m, target in enumerate(targets):
            if isinstance(target, str) and target in graph and target != room_id and room_id in exit_sets[target]:
                graph.add_edge(room_id, target)
                continue  # the usual case; the checks below say what is wrong otherwise
            key = f"rooms[{n}].exits[{m}]"
            _expect(isinstance(target, str), source, key, f"expected a room id, got {_kind(target)}")
            _expect(target in graph, source, key, f"unknown room {brief(target)}; rooms are: {room_list}")
            _expect(target != room_id, source, key, f"room {brief(room_id)} has an exit to itself")
            _expect(room_id in exits[target], source, key, f"exit {brief(room_id)} -> {brief(target)} is not "
                    f"symmetric: add {brief(room_id)} to the exits of {brief(target)}")
    if not nx.is_connected(graph):
        parts = sorted(sorted(c) for c in nx.connected_components(graph))
        groups = "; ".join(", ".join(p[:LIST_AT_MOST]) + (" ..." if len(p) > LIST_AT_MOST else "")
                           for p in parts[:LIST_AT_MOST])
        raise WorldError(source, "rooms", f"the rooms are not all connected by exits; separate groups: {groups}"
                         + (f" and {len(parts) - LIST_AT_MOST:,} more groups" if len(parts) > LIST_AT_MOST else ""))

    devices = []
    device_extras: dict[str, dict[str, Any]] = {}
    for n, raw in enumerate(_list(top.get("devices", []), source, "devices")):
        key = f"devices[{n}]"
        dev = _mapping(raw, source, key)
        _known_keys(dev, "devices", source, key)
        dev_id = _ident(dev, source, key, ids)
        room = _text(dev, "room", source, key)
        if room not in graph:
            raise WorldError(source, f"{key}.room", f"unknown room {brief(room)}; rooms are: {room_list}")
        dtype = _text(dev, "type", source, key)
        state = _mapping(dev.get("state", {}), source, f"{key}.state")
        if dtype == "light" and not isinstance(state.get("on"), bool):
            raise WorldError(source, f"{key}.state.on",
                             f"a light needs state 'on: true' or 'on: false', got {brief(state.get('on'))}")
        caps = _mapping(dev.get("capabilities", {}), source, f"{key}.capabilities")
        for attr, spec in caps.items():
            _mapping(spec, source, f"{key}.capabilities.{attr}")
        for name in DEVICE_EXTRA_KEYS:
            if name in dev:
                for m, word in enumerate(_list(dev[name], source, f"{key}.{name}")):
                    _expect(isinstance(word, str), source, f"{key}.{name}[{m}]",
                            f"expected a string, got {_kind(word)}")
                device_extras.setdefault(dev_id, {})[name] = list(dev[name])
        exposed = dev.get("expose", True)
        _expect(isinstance(exposed, bool), source, f"{key}.expose",
                f"expected true or false (false hides the device from the agent), got {_kind(exposed)}")
        devices.append(Device(dev_id, _text(dev, "name", source, key, dtype.title()), dtype, room, dict(state),
                              _aliases(dev, source, key), _text(dev, "description", source, key, ""), dict(caps),
                              exposed=exposed, entity_id=_text(dev, "entity_id", source, key, ""),
                              mqtt=_device_mqtt(dev, source, key)))

    _expect("robot" in top, source, "robot", "missing required key 'robot' (like {id: robot, room: hallway})")
    bot = _mapping(top["robot"], source, "robot")
    _known_keys(bot, "robot", source, "robot")
    robot_id = _ident(bot, source, "robot", ids)
    robot_room = _text(bot, "room", source, "robot")
    _expect(robot_room in graph, source, "robot.room", f"unknown room {brief(robot_room)}; rooms are: {room_list}")
    robot = Item(robot_id, _text(bot, "name", source, "robot", "Robot"), "robot", robot_room)

    items = []
    for n, raw in enumerate(_list(top.get("items", []), source, "items")):
        key = f"items[{n}]"
        it = _mapping(raw, source, key)
        _known_keys(it, "items", source, key)
        item_id = _ident(it, source, key, ids)
        room = _text(it, "room", source, key)
        if room not in graph:
            raise WorldError(source, f"{key}.room", f"unknown room {brief(room)}; rooms are: {room_list}")
        items.append(Item(item_id, _text(it, "name", source, key, item_id.title()), _text(it, "type", source, key),
                          room, _aliases(it, source, key), _text(it, "description", source, key, "")))

    if "policy" in top:  # checked at load, so a typo in the safety policy names this file (lares_kit.safety.gate)
        from ..safety.gate import PolicyError, parse_policy

        try:
            parse_policy(top["policy"])
        except PolicyError as exc:
            raise WorldError(source, *str(exc).split(": ", 1)) from None
    extra = {k: v for k, v in top.items() if k not in KNOWN_KEYS}
    when = extra.pop("time_of_day", None)  # where the home's clock starts, as a task's setup.time_of_day
    during = extra.pop("during", None)  # what happens while an agent works, for every task (lares_kit.home.during)
    if device_extras:
        extra["device_extras"] = device_extras
    home = Home(world_id, _text(top, "name", source, "", world_id), graph, devices, items, robot,
                description=_text(top, "description", source, "", ""), extra=extra,
                language=_language(top, source), floors=_floors(top, source, graph),
                clock=None if when is None else Clock.simulated(start=when))
    if during is not None:  # checked against the home itself: its items, rooms, devices and their settings
        home.during = Schedule(parse_during(during, home, source, "during", WorldError))
    return home


def _device_mqtt(dev: dict[str, Any], source: str, key: str) -> dict[str, Any]:
    """A device's ``mqtt:`` key, checked: the outside MQTT device ``lares serve-home --mqtt`` binds it to.

    Returns ``{command_topic, state_topic, format}`` (and ``timeout`` in seconds when the file gives one), or ``{}``.

    Args:
        dev: The device's entry in the world file.
        source: Where the file comes from: errors start with it.
        key: The entry's key path, e.g. ``devices[3]``.

    Examples:
        >>> link = {"command_topic": "zigbee2mqtt/lamp/set", "state_topic": "zigbee2mqtt/lamp", "format": "zigbee2mqtt"}
        >>> _device_mqtt({"mqtt": link}, "mine.yaml", "devices[0]") == link
        True
        >>> _device_mqtt({"mqtt": {**link, "format": "tasmota"}}, "mine.yaml", "devices[0]")
        Traceback (most recent call last):
        ...
        lares_kit.home.worlds.WorldError: mine.yaml: devices[0].mqtt.format: expected zigbee2mqtt (the format lares \
serve-home speaks to outside devices), got 'tasmota'
        >>> _device_mqtt({"mqtt": {"command_topic": "zigbee2mqtt/lamp/set", "format": "zigbee2mqtt"}}, "mine.yaml",
        ...              "devices[0]")
        Traceback (most recent call last):
        ...
        lares_kit.home.worlds.WorldError: mine.yaml: devices[0].mqtt: missing required key 'state_topic' \
(the topic the outside device reports its state on, like zigbee2mqtt/kitchen-lamp)
    """
    if "mqtt" not in dev:
        return {}
    where = f"{key}.mqtt"
    link = _mapping(dev["mqtt"], source, where)
    _known_keys(link, "mqtt", source, where)
    examples = {"command_topic": "the topic its commands go to, like zigbee2mqtt/kitchen-lamp/set",
                "state_topic": "the topic the outside device reports its state on, like zigbee2mqtt/kitchen-lamp"}
    for name, meaning in examples.items():
        _expect(name in link, source, where, f"missing required key '{name}' ({meaning})")
        topic = link[name]
        _expect(isinstance(topic, str) and topic.strip() != "", source, f"{where}.{name}",
                f"expected a topic ({meaning}), got {brief(topic)}")
        _expect("+" not in topic and "#" not in topic, source, f"{where}.{name}",
                f"a device's topic cannot hold the wildcards + or #, got {brief(topic)}")
    _expect("format" in link, source, where, "missing required key 'format' (the outside device's payloads: "
            + ", ".join(MQTT_FORMATS) + ")")
    _expect(link["format"] in MQTT_FORMATS, source, f"{where}.format",
            f"expected {' or '.join(MQTT_FORMATS)} (the format lares serve-home speaks to outside devices), "
            f"got {brief(link['format'])}")
    if "timeout" in link:
        timeout = link["timeout"]
        _expect(isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 60, source,
                f"{where}.timeout", f"expected the seconds to wait for the device's answer, more than 0 and at most "
                f"60, got {brief(timeout)}")
    return dict(link)


def _language(top: dict[str, Any], source: str) -> str:
    # The language the home's names are in and its people speak: a code home-assistant-intents knows.
    if "language" not in top:
        return "en"
    code = top["language"]
    _expect(isinstance(code, str) and code != "", source, "language",
            f"expected a language code such as en, de or fr, got {brief(code)}")
    from ..sentences.languages import LanguageError, check_language

    try:
        return check_language(code)
    except LanguageError as exc:
        raise WorldError(source, "language", str(exc)) from None


def _floors(top: dict[str, Any], source: str, graph: nx.Graph) -> dict[int, dict[str, Any]]:
    # floor number -> {"name", "aliases"}: what people call the floors that rooms' `floor:` numbers.
    floors: dict[int, dict[str, Any]] = {}
    for n, raw in enumerate(_list(top.get("floors", []), source, "floors")):
        key = f"floors[{n}]"
        entry = _mapping(raw, source, key)
        _known_keys(entry, "floors", source, key)
        _expect(isinstance(entry.get("id"), int) and not isinstance(entry.get("id"), bool), source, f"{key}.id",
                f"expected the floor's whole number (as rooms' floor: say), got {brief(entry.get('id'))}")
        _expect(entry["id"] not in floors, source, f"{key}.id", f"floor {entry['id']} is named twice")
        floors[entry["id"]] = {"name": _text(entry, "name", source, key), "aliases": _aliases(entry, source, key)}
    used = {a.get("floor") for _, a in graph.nodes(data=True) if "floor" in a}
    for number in sorted(set(floors) - used):
        raise WorldError(source, "floors", f"floor {number} is named but no room is on it (rooms say floor: N)")
    return floors


def check_home(home: Home | str | os.PathLike) -> list[str]:
    """Problems with a Home (or a world file), as sentences; ``[]`` means fine.

    Run it on a home you built or edited yourself before giving it to an agent.

    Args:
        home: A Home, or a world id or path to load one from.

    Examples:
        >>> check_home("lares-home")
        []
        >>> home = load_world("lares-home")
        >>> home.graph.add_node("attic")
        >>> check_home(home)
        ["room 'attic' has no name", "room 'attic' cannot be reached from the robot's room 'hallway'"]
    """
    if not isinstance(home, Home):
        try:
            home = load_world(home)
        except WorldError as exc:
            return [str(exc)]
    problems = []
    for room_id, attrs in home.graph.nodes(data=True):
        if not isinstance(room_id, str):
            problems.append(f"room {room_id!r} should have a string id")
        if not attrs.get("name"):
            problems.append(f"room {room_id!r} has no name")
    for dev in home.devices.values():
        if dev.room not in home.graph:
            problems.append(f"device {dev.id!r} is in {dev.room!r}, which is not a room")
        if dev.type == "light" and not isinstance(dev.state.get("on"), bool):
            problems.append(f"light {dev.id!r} needs a true/false 'on' state")
    for item in [*home.items.values(), home.robot]:
        if item.room not in home.graph:
            problems.append(f"{item.type} {item.id!r} is in {item.room!r}, which is not a room")
    if home.robot.room in home.graph:
        reachable = nx.node_connected_component(home.graph, home.robot.room)
        for room_id in home.graph.nodes:
            if room_id not in reachable:
                problems.append(f"room {room_id!r} cannot be reached from the robot's room {home.robot.room!r}")
    ids = [*home.graph.nodes, *home.devices, *home.items, home.robot.id]
    for dup in sorted(i for i, n in Counter(ids).items() if n > 1):
        problems.append(f"id {dup!r} is used more than once")
    return problems
