"""One Home Assistant home (a ``_fixtures.yaml``) as a lares_kit world file's data.

Taught in ``notebooks/17_home_assistant.ipynb``; the format is in ``docs/ha_datasets.md``.
Home Assistant's evaluation datasets describe a home by its areas, devices and entities;
:func:`fixtures_world` turns them into the mapping a world file holds
(:func:`lares_kit.home.worlds.parse_world` reads it):

* **areas -> rooms.** Ids slugified (``bedroom_1`` stays ``bedroom_1``, ``Living Room`` becomes
  ``living-room``), names kept. HA has no layout, and a lares_kit world needs its rooms connected,
  so the rooms are **chained in the file's order** (each room's exits are the one before and the
  one after): no made-up hallway appears among the areas a model is told about, and the robot's
  routes -- irrelevant to these tasks -- are merely long. Entities with no area (a weather
  service, often) go to one more room at the end of the chain, ``No area``.
* **floors.** An area's ``floor`` (a name, or the id of a top-level ``floors:`` entry) becomes a
  numbered floor of the world, in the order floors first appear.
* **entities -> devices**, with their ``entity_id`` kept; type and state through
  :func:`lares_kit.ha.domains.from_ha`. A domain lares_kit cannot model is a sentence naming the
  file, the entity and the domains it can. An entity's area may come from its device.
* **capabilities** where HA says more than a type's defaults: a climate's ``min_temp`` /
  ``max_temp`` (or a Fahrenheit home's range) and ``hvac_modes``; a fan's percentage; a cover
  without a position (open or closed only); a valve with one.
* **the robot** the world format needs stands in the first room; nothing here asks for it.

The public datasets' fixtures are written for HA's synthetic-home integration, whose attribute
names differ a little from the states HA reports (``native_value``, ``target_temperature``,
``hvac_mode``, device classes as ``sensor.SensorDeviceClass.BATTERY``...): :func:`ha_attributes`
reads those too. Unknown keys in a fixture are left alone (a fixture may carry notes for HA's
tools); a missing or malformed required key is an error naming the file and the key path.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ...errors import DataFileError, brief
from ...ha.domains import COLORS, from_ha
from ..judging.ha_diff import state_text
from .validate import Validator

__all__ = ["HADatasetError", "NO_AREA", "fixtures_world", "ha_attributes", "slug", "unique_id"]

NO_AREA = ("no-area", "No area")  # the room of entities without an area
ENTITY_ID = re.compile(r"^[a-z0-9_]+\.\w+$")
# HA's bookkeeping, never a state: left out of what lares_kit keeps
_NOISE = frozenset({"supported_features", "supported_color_modes", "color_mode", "state_class", "friendly_name",
                    "icon", "hvac_action", "entity_picture", "assumed_state"})
# synthetic-home's constructor arguments -> the attributes HA reports
_RENAMED = {"native_unit_of_measurement": "unit_of_measurement", "target_temperature": "temperature",
            "native_temperature": "temperature", "native_temperature_unit": "temperature_unit", "todo_items": "items"}
# the state HA reports when a fixture gives none (synthetic-home's own defaults, where it has them)
_DEFAULT_STATE = {"cover": "closed", "valve": "closed", "lock": "unlocked", "vacuum": "docked", "todo": "0",
                  "media_player": "off", "climate": "off", "sensor": "unknown", "weather": "unknown"}


class HADatasetError(DataFileError):
    """A file of a Home Assistant dataset cannot be used. ``str()`` names the file, the key path and what was wrong."""


def slug(text: Any, sep: str = "-") -> str:
    """Lowercase letters and digits joined by ``sep``, as lares_kit ids are written.

    Args:
        text: Any name, e.g. ``"Bedroom 1"`` or ``"light.kitchen_light"``.
        sep: What joins the words.

    Examples:
        >>> slug("Bedroom 1"), slug("light.Kitchen_Light"), slug("Küche")
        ('bedroom-1', 'light-kitchen-light', 'kuche')
    """
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", sep, ascii_text).strip(sep) or "x"


def unique_id(base: str, taken: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3``... the first not in ``taken``; it is added to ``taken``.

    Args:
        base: The id wanted.
        taken: The ids given so far (changed: the new one is added).

    Examples:
        >>> taken = {"kitchen"}
        >>> unique_id("kitchen", taken), unique_id("kitchen", taken)
        ('kitchen-2', 'kitchen-3')
    """
    found, n = base, 1
    while found in taken:
        n += 1
        found = f"{base}-{n}"
    taken.add(found)
    return found


def ha_attributes(domain: str, state: Any, attributes: dict[str, Any],
                  default: bool = True) -> tuple[str | None, dict[str, Any]]:
    """An entity's state and attributes as HA reports them, from a fixture's (synthetic-home's names read too).

    Args:
        domain: The entity's domain.
        state: Its ``state`` as the fixture gives it (text, true/false, a number, ``{in, out}``), or None.
        attributes: Its ``attributes`` as the fixture gives them.
        default: With no state given (nor one in the attributes), HA's default for the domain; False: None.

    Examples:
        >>> ha_attributes("sensor", None, {"native_value": 45, "device_class": "sensor.SensorDeviceClass.HUMIDITY"})
        ('45', {'device_class': 'humidity'})
        >>> ha_attributes("light", None, {"brightness": 100, "color_mode": "brightness"})
        ('on', {'brightness': 100})
    """
    attrs = {k: v for k, v in attributes.items() if k not in _NOISE}
    for old, new in _RENAMED.items():
        if old in attrs:
            value = attrs.pop(old)
            attrs.setdefault(new, value)
    if isinstance(attrs.get("device_class"), str):  # "sensor.SensorDeviceClass.BATTERY" -> "battery"
        attrs["device_class"] = attrs["device_class"].rsplit(".", 1)[-1].lower()
    for source in ("native_value", "hvac_mode", "condition"):  # synthetic-home's way of giving the state
        if source in attrs:
            value = attrs.pop(source)
            state = value if state is None else state
    if state is None and not default:
        return None, attrs
    if state is None:
        lit = domain == "light" and isinstance(attrs.get("brightness"), (int, float)) and attrs["brightness"] > 0
        state = "on" if lit else _DEFAULT_STATE.get(domain, "off")
    return state_text(domain, state), attrs


def _features(attributes: dict[str, Any], feature: str) -> bool:
    # Does a fixture's supported_features name the feature ("fan.FanEntityFeature.SET_SPEED", or "set_speed")?
    named = attributes.get("supported_features")
    named = named if isinstance(named, list) else [named]
    return any(isinstance(f, str) and f.rsplit(".", 1)[-1].upper() == feature for f in named)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _capabilities(domain: str, state: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
    caps: dict[str, Any] = {}
    if domain == "climate":
        low, high = _number(attrs.get("min_temp")), _number(attrs.get("max_temp"))
        unit = str(attrs.get("temperature_unit") or attrs.get("unit_of_measurement") or "°C")
        if low is None and high is None and "F" in unit:
            low, high = 45, 95  # a Fahrenheit home without a range: what thermostats offer
        if low is not None or high is not None:
            caps["target"] = {"kind": "number", "low": low if low is not None else 5,
                              "high": high if high is not None else 30, "unit": unit}
        modes = attrs.get("hvac_modes")
        modes = [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else []
        if modes or state.get("mode") not in ("heat", "cool", "auto", "off"):
            caps["mode"] = {"kind": "choice", "choices": list(dict.fromkeys([*modes, str(state.get("mode"))]))}
    if domain == "fan" and "percentage" in state:
        caps["percentage"] = {"kind": "number", "low": 0, "high": 100, "unit": "%"}
        caps["speed"] = {"kind": "number", "low": 0, "high": 3, "read_only": True}  # HA reports the percentage
    if domain == "cover" and "position" not in state:  # open or closed only: no position to set
        caps["open"] = {"kind": "bool"}
        caps["position"] = {"kind": "number", "low": 0, "high": 100, "read_only": True}
    if domain == "valve" and "position" in state:  # its position is what HA reports
        caps["position"] = {"kind": "number", "low": 0, "high": 100, "unit": "% open"}
        caps["open"] = {"kind": "bool", "read_only": True}
    return caps


def _text(v: Validator, entry: dict[str, Any], name: str, key: str, default: Any = ...) -> str:
    # HA's ids and names are text; a number written bare (an id of 1) is read as its text
    if isinstance(entry.get(name), (int, float)) and not isinstance(entry.get(name), bool):
        return str(entry[name])
    return v.text(entry, name, key, default)


def _floors(v: Validator, top: dict[str, Any]) -> dict[str, str]:
    # top-level floors: [{id, name}] -> floor id -> name (areas may name a floor by its id)
    names = {}
    for n, raw in enumerate(v.list(top.get("floors") or [], "floors")):
        entry = v.mapping(raw, f"floors[{n}]")
        floor_id = _text(v, entry, "id", f"floors[{n}]")
        names[floor_id] = _text(v, entry, "name", f"floors[{n}]", floor_id)
    return names


def fixtures_world(data: Any, source: str, world_id: str, name: str) -> dict[str, Any]:
    """A world file's data from a ``_fixtures.yaml``'s (see the module docstring for the choices made).

    Args:
        data: The fixture as YAML read it: ``areas``, ``devices``, ``entities`` (and ``floors``, ``language``).
        source: The fixture's file, for errors.
        world_id: The world's id (lowercase letters, digits and hyphens).
        name: The world's name.

    Examples:
        >>> world = fixtures_world({"areas": [{"name": "Bedroom 1", "id": "bedroom_1"}],
        ...     "entities": [{"name": "Lamp", "id": "light.lamp", "area": "bedroom_1", "state": "on"}]}, "f", "w", "w")
        >>> world["rooms"][0]["name"], world["devices"][0]["entity_id"], world["devices"][0]["state"]
        ('Bedroom 1', 'light.lamp', {'on': True, 'color': 'white'})
        >>> fixtures_world({"entities": [{"id": "camera.porch"}]}, "_fixtures.yaml", "w", "w")
        Traceback (most recent call last):
        ...
        lares_kit.bench.suites.ha_fixtures.HADatasetError: _fixtures.yaml: entities[0].id: camera.porch: \
lares_kit cannot \
model the Home Assistant domain 'camera'; it models ...
    """
    v = Validator(source, HADatasetError)
    top = v.mapping(data, "")
    taken: set[str] = set()
    floor_names, floors = _floors(v, top), {}  # floor name -> number
    rooms, room_of = [], {}  # HA area id -> room id
    for n, raw in enumerate(v.list(top.get("areas") or [], "areas")):
        key = f"areas[{n}]"
        area = v.mapping(raw, key)
        area_id = _text(v, area, "id", key)
        v.expect(area_id not in room_of, f"{key}.id", f"area {brief(area_id)} is listed twice")
        room_of[area_id] = unique_id(slug(area_id), taken)
        room: dict[str, Any] = {"id": room_of[area_id], "name": _text(v, area, "name", key, area_id)}
        aliases = v.list(area.get("aliases") or [], f"{key}.aliases")
        if aliases:
            room["aliases"] = [str(a) for a in aliases]
        if area.get("floor") is not None:
            floor = floor_names.get(str(area["floor"]), str(area["floor"]))
            room["floor"] = floors.setdefault(floor, len(floors))
        rooms.append(room)
    known = ", ".join(room_of) or "none"
    area_of_device = {}
    for n, raw in enumerate(v.list(top.get("devices") or [], "devices")):
        key = f"devices[{n}]"
        dev = v.mapping(raw, key)
        area = dev.get("area")
        v.expect(area is None or str(area) in room_of, f"{key}.area", f"unknown area {brief(area)}; areas are: {known}")
        area_of_device[_text(v, dev, "id", key)] = None if area is None else str(area)
    devices, seen, homeless = [], set(), False
    for n, raw in enumerate(v.list(top.get("entities") or [], "entities")):
        key = f"entities[{n}]"
        ent = v.mapping(raw, key)
        eid = _text(v, ent, "id", key)
        v.expect(bool(ENTITY_ID.match(eid)), f"{key}.id", f"expected an entity id <domain>.<object_id> such as "
                 f"light.kitchen, got {brief(eid)}")
        v.expect(eid not in seen, f"{key}.id", f"entity {brief(eid)} is listed twice")
        seen.add(eid)
        device = ent.get("device")
        v.expect(device is None or str(device) in area_of_device, f"{key}.device", f"unknown device {brief(device)}; "
                 f"devices are: {', '.join(area_of_device) or 'none'}")
        area = ent.get("area") if ent.get("area") is not None else area_of_device.get(str(device))
        v.expect(area is None or str(area) in room_of, f"{key}.area", f"unknown area {brief(area)}; areas are: {known}")
        domain = eid.split(".", 1)[0]
        raw = dict(v.mapping(ent.get("attributes") or {}, f"{key}.attributes"))
        state, attrs = ha_attributes(domain, ent.get("state"), raw)
        if domain == "fan" and "percentage" not in attrs and _features(raw, "SET_SPEED"):
            attrs["percentage"] = 100 if state == "on" else 0  # a fan with speeds reports one (0 when off)
        try:
            kind, lares_state = from_ha(domain, state, attrs)
        except ValueError as exc:
            v.fail(f"{key}.id", f"{eid}: {exc}")
        default_name = eid.split(".", 1)[1].replace("_", " ").title()
        entry = {"id": "", "name": _text(v, ent, "name", key, default_name), "type": kind,
                 "room": room_of[str(area)] if area is not None else None, "state": lares_state,
                 "entity_id": eid}
        homeless |= area is None
        caps = _capabilities(domain, lares_state, attrs)
        if domain == "media_player" and ("track" in lares_state or _features(raw, "NEXT_TRACK")):
            caps["track"] = {"kind": "number", "low": 0, "high": 100000}  # HA's media_track: skipping adds one
        if domain == "light":  # HA's datasets set a colour on any light (their synthetic home's lights take one)
            caps["color"] = {"kind": "choice", "choices": list(COLORS)}
            lares_state.setdefault("color", "white")
            entry["state"] = lares_state
        if caps:
            entry["capabilities"] = caps
        devices.append(entry)
    if homeless or not rooms:
        rooms.append({"id": unique_id(NO_AREA[0], taken), "name": NO_AREA[1]})
        for entry in devices:
            entry["room"] = entry["room"] or rooms[-1]["id"]
    for entry in devices:  # device ids after the room ids, so a room keeps its own id
        entry["id"] = unique_id(slug(entry["entity_id"]), taken)
    for n, room in enumerate(rooms):  # HA has no layout: a chain, in the file's order
        room["exits"] = [r["id"] for r in (rooms[n - 1] if n else None, rooms[n + 1] if n + 1 < len(rooms) else None)
                         if r is not None]
    world: dict[str, Any] = {"id": world_id, "name": name,
                             "description": f"A Home Assistant home ({name}), imported from its fixtures."}
    if isinstance(top.get("language"), str):
        world["language"] = top["language"]
    placed = {dev: room_of[area] for dev, area in area_of_device.items() if area is not None}
    if placed:  # a test's context_device (the satellite that heard it) says which room the person is in
        world["ha_devices"] = placed
    if floors:
        world["floors"] = [{"id": number, "name": floor} for floor, number in floors.items()]
    world.update(rooms=rooms, devices=devices, robot={"id": unique_id("robot", taken), "name": "Robot",
                                                      "room": rooms[0]["id"]})
    return world
