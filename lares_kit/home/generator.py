"""Generated worlds: a seeded house or office building of any size.

Taught in ``notebooks/16_scaling_up.ipynb``; ``lares worlds generate`` is the
command. :func:`generate_world` returns world-file data (the format of
``worlds/README.md``), so a generated world goes through the same
validation as a hand-written one: :func:`generate_home` parses it with
:func:`lares_kit.home.worlds.parse_world`, and every generated world passes
:func:`lares_kit.home.worlds.check_home`.

* A few rooms make a **house**: a hallway with rooms around it.
* More make a **building**: floors joined by stairs, each floor a landing with
  corridors, and along the corridors numbered offices and meeting rooms
  ("Office 312" is room 12 on floor 3), kitchens, toilets, a print room;
  the ground floor has a lobby. A few neighbouring offices share a door, so
  the graph has cycles, as real floors do.
* Devices come from :data:`lares_kit.home.devices.DEVICE_TYPES`, by what suits the
  room (a kitchen gets a kettle and a fridge, a meeting room a TV and air
  conditioning); every room gets a light first.
* Hidden items (a visiting dog, a parcel, a colleague) are placed by the seed.

The same seed always gives the same world. Tasks for a generated home are
:func:`lares_kit.bench.suites.generated.generate_tasks`, on the benchmark's side.

This module builds worlds; it does not run agents or know the benchmark.
"""

from __future__ import annotations

import math
import random
from typing import Any

from .graph import Home
from .worlds import parse_world

__all__ = ["HOUSE_ROOMS", "generate_world", "generate_home", "world_size"]

# Up to this many rooms, a world is a house; beyond it, a building.
HOUSE_ROOMS = 12
ROOMS_PER_FLOOR = 100  # a building has about this many rooms per floor
ROOMS_PER_CORRIDOR = 20

_HOUSE = [("lounge", "Lounge", ["living room"]), ("kitchen", "Kitchen", []), ("bedroom", "Bedroom", []),
          ("bathroom", "Bathroom", []), ("office", "Study", ["office"]), ("dining-room", "Dining room", []),
          ("guest-room", "Guest room", ["spare room"]), ("utility", "Utility room", ["laundry"]),
          ("nursery", "Nursery", []), ("garage", "Garage", []), ("conservatory", "Conservatory", [])]
_WINGS = ["North", "East", "South", "West"]
_MEETING_NAMES = ["Oak", "Ash", "Elm", "Birch", "Cedar", "Maple", "Willow", "Rowan", "Hazel", "Alder", "Holly", "Larch",
                  "Pine", "Yew", "Beech", "Lime", "Poplar", "Aspen", "Juniper", "Spruce"]
# room kind -> device types after its light, in the order they are handed out
_KIT = {"office": ["thermostat", "window", "blinds", "sensor", "fan", "speaker"],
        "meeting": ["hvac", "tv", "sensor", "blinds", "window", "door", "speaker"],
        "kitchen": ["kettle", "fridge", "smoke-alarm", "oven", "fan", "window"],
        "toilets": ["fan", "window"], "corridor": ["smoke-alarm", "door", "sensor"],
        "stairs": ["smoke-alarm", "window"], "lobby": ["door", "lock", "hvac", "sensor", "tv"],
        "print": ["fan", "sensor"], "server": ["hvac", "sensor", "lock"],
        "home": ["thermostat", "window", "blinds", "speaker", "tv", "fan", "heater", "lock", "door"]}
_DEVICE_NAMES = {"light": "Ceiling light", "thermostat": "Thermostat", "window": "Window", "blinds": "Blinds",
                 "sensor": "Air sensor", "fan": "Fan", "speaker": "Speaker", "hvac": "Air conditioner", "tv": "TV",
                 "door": "Door", "kettle": "Kettle", "fridge": "Fridge", "smoke-alarm": "Smoke alarm", "oven": "Oven",
                 "lock": "Door lock", "heater": "Heater", "stove": "Stove", "alarm": "Alarm"}
_ITEMS = [("biscuit", "Biscuit", "dog"), ("parcel", "Parcel", "parcel"), ("ana", "Ana", "person"),
          ("umbrella", "Umbrella", "umbrella"), ("whiskers", "Whiskers", "cat"), ("ben", "Ben", "person"),
          ("laptop", "Laptop", "laptop"), ("keys", "Keys", "keys")]


def world_size(devices: int) -> int:
    """How many rooms :func:`generate_world` gives a world of ``devices`` devices when not told.

    About five devices a room, so 5,000 devices make a 1,000-room building.

    Args:
        devices: How many devices the world will have.

    Examples:
        >>> world_size(10), world_size(100), world_size(5000)
        (3, 20, 1000)
    """
    return max(2, round(devices / 5)) if devices >= 15 else max(2, math.ceil(devices / 4))


def _state(kind: str, room_kind: str, rng: random.Random) -> dict[str, Any]:
    # A plausible start state, valid for the type's attributes in lares_kit.home.devices.
    if kind == "light":
        lit = {"corridor": 0.9, "stairs": 0.9, "lobby": 1.0, "toilets": 0.3}.get(room_kind, 0.25)
        return {"on": rng.random() < lit}
    if kind == "thermostat":
        return {"target": rng.choice([19, 20, 21, 22]), "mode": "heat", "temperature": round(rng.uniform(18, 23), 1)}
    if kind == "sensor":
        return {"temperature": round(rng.uniform(19, 25), 1), "humidity": rng.randint(35, 60),
                "co2": rng.randint(450, 900)}
    if kind == "hvac":
        return {"on": rng.random() < 0.5, "mode": "auto", "target": 21, "fan_speed": "auto"}
    if kind == "fridge":
        return {"door": "closed", "temperature": 4, "setpoint": 4, "freezer_temperature": -18, "freezer_setpoint": -18}
    if kind in ("window", "door"):
        return {"open": rng.random() < 0.2}
    if kind == "blinds":
        return {"position": rng.choice([0, 50, 100])}
    if kind == "fan":
        return {"on": False, "speed": 1}
    if kind in ("tv", "speaker"):
        return {"on": False, "volume": 20} if kind == "speaker" else {"on": False, "channel": 1, "volume": 20}
    if kind == "oven":
        return {"on": False, "temperature": 0}
    if kind == "heater":
        return {"on": False, "target": 20}
    if kind == "lock":
        return {"locked": True}
    if kind in ("smoke-alarm", "kettle"):
        return {"on": kind == "smoke-alarm"}
    return {}


def _house(n_rooms: int) -> list[dict[str, Any]]:
    # A hallway with every other room off it (the Lares home's shape).
    others = _HOUSE[: n_rooms - 1]
    rooms = [{"id": "hallway", "name": "Hallway", "exits": [r for r, _, _ in others], "kind": "corridor"}]
    for rid, name, aliases in others:
        room = {"id": rid, "name": name, "exits": ["hallway"], "kind": "home"}
        if aliases:
            room["aliases"] = list(aliases)
        rooms.append(room)
    return rooms


def _floor_name(floor: int) -> str:
    return "ground floor" if floor == 0 else f"floor {floor}"


def _building(n_rooms: int, floors: int, rng: random.Random) -> list[dict[str, Any]]:
    """Rooms of a building: per floor a landing, corridors, and numbered rooms along them."""
    rooms: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}

    def add(rid: str, name: str, floor: int, kind: str, aliases: list[str] | None = None) -> str:
        room = {"id": rid, "name": name, "floor": floor, "exits": [], "kind": kind}
        if aliases:
            room["aliases"] = aliases
        rooms.append(room)
        by_id[rid] = room
        return rid

    def link(a: str, b: str) -> None:
        if b not in by_id[a]["exits"]:
            by_id[a]["exits"].append(b)
            by_id[b]["exits"].append(a)

    share = [n_rooms // floors + (1 if f < n_rooms % floors else 0) for f in range(floors)]
    meeting_names = iter(_MEETING_NAMES * (1 + n_rooms // len(_MEETING_NAMES)))
    for floor, count in enumerate(share):
        fname = _floor_name(floor)
        landing = add(f"stairs-{floor}", f"Stairs, {fname}", floor, "stairs", [f"{fname} landing"])
        if floor > 0:
            link(f"stairs-{floor - 1}", landing)
        left = count - 1
        if floor == 0 and left > 0:
            link(landing, add("lobby", "Lobby", 0, "lobby", ["reception", "entrance hall"]))
            left -= 1
        n_corr = max(1, min(left, math.ceil(left / (ROOMS_PER_CORRIDOR + 2))))
        corridors = []
        for c in range(n_corr if left > 0 else 0):
            wing = _WINGS[c % 4] + ("" if c < 4 else f" {c // 4 + 1}")
            rid = add(f"corridor-{floor}-{wing.lower().replace(' ', '-')}", f"Corridor {floor} {wing}", floor,
                      "corridor", [f"{wing.lower()} corridor on the {fname}"])
            link(landing, rid)
            if corridors:
                link(corridors[-1], rid)
            corridors.append(rid)
        left -= len(corridors)
        # The floor's rooms, in the order they go along the corridors.
        kinds = (["kitchen"] * min(left, 1 + len(corridors) // 4)
                 + ["toilets"] * min(max(0, left - 1), max(1, len(corridors) // 2)))
        if left - len(kinds) > 12:
            kinds.append("print")
        if floor == 1 or (floors == 1 and left - len(kinds) > 20):
            kinds.append("server")
        rest = max(0, left - len(kinds))
        kinds = (kinds + ["meeting" if i % 5 == 2 else "office" for i in range(rest)])[:left]
        rng.shuffle(kinds)
        number, previous = 0, None
        for i, kind in enumerate(kinds):
            corridor = corridors[i * len(corridors) // max(1, len(kinds))] if corridors else landing
            wing = by_id[corridor]["name"].split(" ", 2)[-1] if corridors else ""
            if kind in ("office", "meeting"):
                number += 1
                code = f"{floor * 100 + number}"
                if kind == "office":
                    rid = add(f"office-{code}", f"Office {code}", floor, kind)
                else:
                    tree = next(meeting_names)
                    rid = add(f"meeting-room-{code}", f"Meeting room {code}", floor, kind, [f"{tree} room"])
            else:
                label = {"kitchen": "Kitchen", "toilets": "Toilets", "print": "Print room",
                         "server": "Server room"}[kind]
                base = f"{kind if kind != 'print' else 'print-room'}-{floor}-{wing.lower().replace(' ', '-')}"
                rid = base if base not in by_id else f"{base}-{i}"
                name = f"{label} {floor} {wing}" if rid == base else f"{label} {floor} {wing} {i}"
                rid = add(rid, name, floor, kind, [f"{label.lower()} on the {fname}"] if kind == "kitchen" else None)
            link(corridor, rid)
            # Some neighbouring offices share a door: the graph gets cycles, as real floors do.
            if previous and kind == "office" and by_id[previous]["kind"] == "office" and rng.random() < 0.15:
                link(previous, rid)
            previous = rid
    return rooms


def generate_world(rooms: int | None = None, devices: int | None = None, seed: int = 0, *,
                   floors: int | None = None, items: int | None = None, world_id: str | None = None) -> dict[str, Any]:
    """World-file data for a seeded house or building (:func:`generate_home` parses it).

    Args:
        rooms: How many rooms (at least 2; up to 12 make a house, more a building); None -> from ``devices``
            (:func:`world_size`), or 8 when neither is given.
        devices: How many devices; None -> four a room.
        seed: Chooses the devices' places and states and the items' rooms: the same seed, the same world.
        floors: A building's floors; None -> one per 100 rooms (a house has one).
        items: How many hidden things (a dog, a parcel, a person...); None -> two, plus one per 200 rooms.
        world_id: The world's id; None -> one that says its size and seed, e.g. ``generated-house-4-10-s1``.

    Examples:
        >>> data = generate_world(rooms=4, devices=10, seed=1)
        >>> [r["id"] for r in data["rooms"]], len(data["devices"]), data["robot"]
        (['hallway', 'lounge', 'kitchen', 'bedroom'], 10, {'id': 'robot', 'room': 'hallway'})
        >>> big = generate_world(rooms=1000, devices=5000, seed=1)
        >>> len(big["rooms"]), len(big["devices"]), max(r["floor"] for r in big["rooms"]) + 1
        (1000, 5000, 10)
    """
    if rooms is None:
        rooms = world_size(devices if devices is not None else 40)
    if rooms < 2:
        raise ValueError(f"a world needs at least 2 rooms, got {rooms}")
    devices = rooms * 4 if devices is None else devices
    rng = random.Random(seed)
    if rooms <= HOUSE_ROOMS:
        layout, kind = _house(rooms), "house"
    else:
        n_floors = floors or max(1, round(rooms / ROOMS_PER_FLOOR))
        layout, kind = _building(rooms, min(n_floors, rooms // 3 or 1), rng), "building"
    # Devices: a light in every room first (in room order), then each room's kit round-robin.
    placed: list[tuple[dict[str, Any], str]] = [(r, "light") for r in layout][:devices]
    kits = {r["id"]: list(_KIT[r["kind"]]) for r in layout}
    order = list(layout)
    rng.shuffle(order)
    while len(placed) < devices and any(kits.values()):
        for room in order:
            if len(placed) >= devices:
                break
            if kits[room["id"]]:
                placed.append((room, kits[room["id"]].pop(0)))
    if len(placed) < devices:  # more devices than kits hold: extra lights
        extra = (devices - len(placed))
        placed += [(order[i % len(order)], "light") for i in range(extra)]
    taken: set[str] = set()
    device_list = []
    for room, dtype in placed:
        base = f"{room['id']}-{dtype}"
        did, n = base, 2
        while did in taken:
            did, n = f"{base}-{n}", n + 1
        taken.add(did)
        name = _DEVICE_NAMES.get(dtype, dtype.title()) + ("" if did == base else f" {n - 1}")
        device_list.append({"id": did, "name": name, "type": dtype, "room": room["id"],
                            "state": _state(dtype, room["kind"], rng)})
    n_items = items if items is not None else 2 + rooms // 200
    ids = [r["id"] for r in layout]
    item_list = []
    for n in range(n_items):
        iid, name, itype = _ITEMS[n % len(_ITEMS)]
        if n >= len(_ITEMS):
            iid, name = f"{iid}-{n // len(_ITEMS) + 1}", f"{name} {n // len(_ITEMS) + 1}"
        item_list.append({"id": iid, "name": name, "type": itype, "room": rng.choice(ids[1:])})
    start = "lobby" if "lobby" in ids else ids[0]
    for room in layout:
        room.pop("kind")
    size = f"{len(layout)} rooms" + (f" on {layout[-1]['floor'] + 1} floors" if kind == "building" else "")
    return {"id": world_id or f"generated-{kind}-{rooms}-{devices}-s{seed}",
            "name": f"A generated {kind} ({size}, {len(device_list)} devices, seed {seed})",
            "description": f"Generated by lares_kit.home.generator with seed {seed}.",
            "rooms": layout, "devices": device_list, "robot": {"id": "robot", "room": start}, "items": item_list}


def generate_home(rooms: int | None = None, devices: int | None = None, seed: int = 0, **options: Any) -> Home:
    """A Home built from :func:`generate_world` through the world-file validator.

    Args:
        rooms: How many rooms, as :func:`generate_world` takes it.
        devices: How many devices, as :func:`generate_world` takes it.
        seed: The same seed gives the same home.
        **options: More of :func:`generate_world`'s settings: ``floors``, ``items``, ``world_id``.

    Examples:
        >>> from lares_kit.home.worlds import check_home
        >>> home = generate_home(rooms=200, devices=1000, seed=3)
        >>> home.graph.number_of_nodes(), len(home.devices), check_home(home)
        (200, 1000, [])
    """
    data = generate_world(rooms, devices, seed, **options)
    return parse_world(data, source=f"<{data['id']}>")
