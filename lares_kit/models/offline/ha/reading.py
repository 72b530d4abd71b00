"""Reading a request in Home Assistant's tool dialect: its static context, its intent calls, its live context.

Part of the offline model (see :mod:`lares_kit.models.offline` for the
prompt contract); taught in ``notebooks/17_home_assistant.ipynb``. With
``tool_set="ha"`` an agent offers Home Assistant's LLM API tools
(``HassTurnOn``, ``HassLightSet``, ``GetLiveContext``...) and its prompt
carries a *static context* instead of the world knowledge::

    Static Context: An overview of the areas and the devices in this smart home:
    - names: Kitchen Light
      domain: light
      areas: Kitchen

-- names, domains and areas, no states. This module reads that into the same
:class:`~.reading.Beliefs` as the Lares knowledge (rooms are the areas,
devices the entities, with unknown states), and reads the history back into
the calls the planner knows: ``HassTurnOn(name="Kitchen Light")`` that
succeeded is ``set_device(<that light>, "on", true)`` that succeeded; an
error result (``{"success": false, "error": ...}``) is an ``Error: ...``;
a ``GetLiveContext`` result's YAML fills in the states, converted from Home
Assistant's units (:mod:`lares_kit.ha.domains`). So every rule of the planner
works in either dialect, and :func:`ha_call` writes its intentions back as
intent calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ....ha.domains import HA_DOMAINS, domain_of, from_ha, object_id
from ..reading import Beliefs, Call, Dev, Room, norm
from .recognizer import switch_change

__all__ = ["STATIC_TAG", "LIVE_TAG", "ha_intent", "read_static_context", "translate_calls"]

STATIC_TAG = "Static Context:"
LIVE_TAG = "Live Context:"
_HEADER = re.compile(r"^(?:Static|Live) Context:[^\n]*\n", re.M)
# an intent call's verb for a device setting: (attribute, value) -> the intent, for values that say it all
_SWITCHES = {("on", True): "HassTurnOn", ("on", False): "HassTurnOff", ("locked", True): "HassTurnOn",
             ("locked", False): "HassTurnOff", ("open", True): "HassTurnOn", ("open", False): "HassTurnOff",
             ("armed", True): "HassTurnOn", ("armed", False): "HassTurnOff", ("mode", "heat"): "HassTurnOn",
             ("mode", "off"): "HassTurnOff", ("playing", True): "HassMediaUnpause",
             ("playing", False): "HassMediaPause", ("status", "cleaning"): "HassVacuumStart",
             ("status", "returning"): "HassVacuumReturnToBase"}
_VALUES = {"brightness": ("HassLightSet", "brightness"), "color": ("HassLightSet", "color"),
           "position": ("HassSetPosition", "position"),
           "target": ("HassClimateSetTemperature", "temperature"), "volume": ("HassSetVolume", "volume_level")}


def _entries(text: str, tag: str) -> list[dict[str, Any]]:
    # The YAML list after a "Static Context:" / "Live Context:" header line; [] if there is none or it is broken.
    at = text.find(tag)
    if at < 0:
        return []
    body = _HEADER.sub("", text[at:], count=1)
    try:
        import yaml

        parsed = yaml.safe_load(body)
    except Exception:  # a model-facing text that does not parse is no context
        return []
    return [e for e in parsed if isinstance(e, dict) and e.get("names")] if isinstance(parsed, list) else []


def _names(entry: dict[str, Any]) -> list[str]:
    return [n.strip() for n in str(entry.get("names", "")).split(",") if n.strip()]


def read_static_context(text: str) -> tuple[dict[str, Room], dict[str, Dev], dict[int, list[str]]] | None:
    """Rooms, devices (states unknown) and floors from a system prompt holding Home Assistant's static context.

    Floors are numbered in the order the context first names them; None when there is no static context.

    Args:
        text: a system message's text; the context starts at its ``Static Context:`` line.

    Examples:
        >>> text = ("Static Context: An overview...\\n- names: Kitchen Light, Spots\\n  domain: light\\n"
        ...         "  areas: Kitchen\\n")
        >>> rooms, devices, floors = read_static_context(text)
        >>> list(rooms), devices["kitchen_light"].aliases, devices["kitchen_light"].type
        (['kitchen'], ['Spots'], 'light')
    """
    entries = _entries(text, STATIC_TAG)
    if not entries:
        return None
    rooms: dict[str, Room] = {}
    devices: dict[str, Dev] = {}
    counts: dict[str, int] = {}
    for e in entries:
        counts[object_id(_names(e)[0])] = counts.get(object_id(_names(e)[0]), 0) + 1
    floors: dict[str, int] = {}  # floor name -> its number, in the order the context first names them
    for e in entries:
        names, area = _names(e), str(e.get("areas") or "").split(",")[0].strip()
        room = object_id(area) if area else None
        floor = str(e["floor"]).strip() if e.get("floor") is not None else None
        if floor is not None:
            floors.setdefault(floor, len(floors))
        if room and room not in rooms:
            rooms[room] = Room(room, area, floor=floors.get(floor) if floor is not None else None)
        base = object_id(names[0])
        dev_id = base if counts[base] == 1 else f"{base}@{room}"
        domain = str(e.get("domain", ""))
        if dev_id in devices:  # one device's entities share its name: the lock and its sensor, "Smart Lock"
            dev_id = f"{dev_id}:{domain}"
        devices[dev_id] = Dev(dev_id, names[0], HA_DOMAINS.get(domain, domain), room, names[1:], {})
    return rooms, devices, {number: [name] for name, number in floors.items()}


def _find(b: Beliefs, name: Any, area: Any) -> list[Dev]:
    wanted = str(name or "").strip().lower()
    place = str(area or "").strip().lower()
    found = [d for d in b.devices.values() if wanted in (n.lower() for n in (d.name, *d.aliases))]
    if place:
        found = [d for d in found if d.room in b.rooms and place in (b.rooms[d.room].name.lower(), d.room)]
    return found


def _targets(b: Beliefs, call: Call) -> list[Dev]:
    """The devices an intent call named: by name (and area), else every device of its domain in its area."""
    name, area = call.arg("name"), call.arg("area")
    if name:
        return _find(b, name, area)
    domains = call.arg("domain")
    domains = {str(d) for d in (domains if isinstance(domains, list) else [domains] if domains else [])}
    place = str(area or "").strip().lower()
    return [d for d in b.devices.values() if (not domains or domain_of(d.type, d.state) in domains)
            and (not place or (d.room in b.rooms and place in (b.rooms[d.room].name.lower(), d.room)))]


def _failed(result: str) -> str | None:
    # The error sentence of an intent's result, or None when it succeeded.
    try:
        data = json.loads(result)
    except (json.JSONDecodeError, TypeError):
        return None if not result.lstrip().startswith("Error") else result
    if isinstance(data, dict) and (data.get("success") is False or data.get("response_type") == "error"
                                   or "error" in data):
        return str(data.get("error") or data.get("error_text") or (data.get("speech") or {}) or "failed")
    return None


def _setting(intent: str, call: Call, dev: Dev) -> tuple[str, Any] | None:
    # What an intent call set on one device, as the planner's (attribute, value).
    if intent in ("hassturnon", "hassturnoff"):
        change = switch_change(dev, intent == "hassturnon", call.arg("domain"))
        return (change.attribute, change.value) if change else None
    for attribute, (tool, arg) in _VALUES.items():
        if intent == norm(tool) and call.arg(arg) is not None:
            return attribute, call.arg(arg)
    for (attribute, value), tool in _SWITCHES.items():
        if intent == norm(tool) and attribute in ("playing", "status"):
            return attribute, value
    if intent == "hasslistadditem" and call.arg("item"):
        return "items", {"add": str(call.arg("item"))}
    if intent == "hassmedianext" and isinstance(dev.state.get("track"), int):
        return "track", dev.state["track"] + 1  # the track it was on, as the live context said, and one more
    return None


def translate_calls(b: Beliefs) -> None:
    """Rewrite this task's intent calls as the planner's own calls (``set_device``, ``get_live_context``), in place.

    Args:
        b: the beliefs whose ``calls`` are rewritten; a ``GetLiveContext`` result also fills in device states.
    """
    out: list[Call] = []
    for call in b.calls:
        intent = norm(call.name)
        ha_live = intent == "getlivecontext" and (call.name == "GetLiveContext" or LIVE_TAG in (call.result or ""))
        if not intent.startswith("hass") and not ha_live:
            out.append(call)  # the Lares tools (get_live_context(room) included) are read as they are
            continue
        if intent == "getlivecontext":
            if call.result is not None:
                _merge_live(b, call.result)
            out.append(Call("get_live_context", {"room": _room_id(b, call.arg("area"))}, "Live context read."))
            continue
        error = _failed(call.result) if call.result is not None else None
        for dev in _targets(b, call) or [Dev("?", str(call.arg("name")), "", None)]:
            setting = _setting(intent, call, dev) if dev.id != "?" else None
            attribute, value = setting or ("on", None)
            result = None if call.result is None else (error if error.startswith("Error") else f"Error: {error}") \
                if error else f"({dev.id}) changed."
            out.append(Call("set_device", {"device_id": dev.id, "attribute": attribute, "value": value}, result))
    b.calls = out


def _room_id(b: Beliefs, area: Any) -> str:
    place = str(area or "").strip().lower()
    return next((r.id for r in b.rooms.values() if place in (r.name.lower(), r.id)), place)


def _merge_live(b: Beliefs, text: str) -> None:
    # GetLiveContext's entities -> states (in lares units) of the devices whose states are still unknown.
    try:
        data = json.loads(text)
        text = str(data.get("result", "")) if isinstance(data, dict) else text
    except (json.JSONDecodeError, TypeError):
        pass
    for e in _entries(text, LIVE_TAG):
        names, area = _names(e), str(e.get("areas") or "").split(",")[0].strip()
        for dev in _find(b, names[0], area or None)[:1]:
            try:
                _, state = from_ha(str(e.get("domain", "")), str(e.get("state", "")), e.get("attributes") or {})
            except ValueError:
                continue
            for key, value in state.items():
                dev.state.setdefault(key, value)


def ha_intent(b: Beliefs, action: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A planner intention (a device change) as a call of Home Assistant's intent tools, or None.

    Args:
        b: what the model read from the request: the device's name, type and area.
        action: the intention's action: ``light`` or ``device`` (anything else: None).
        args: its arguments (``light_id``/``on``, or ``device_id``/``attribute``/``value``).

    Returns:
        (the intent tool's name, its arguments), or None when no intent tool does it.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("", "latest", {"den": Room("den", "Den")}, {"l": Dev("l", "Lamp", "light", "den")}, None,
        ...             {}, [])
        >>> ha_intent(b, "device", {"device_id": "l", "attribute": "brightness", "value": 40})
        ('HassLightSet', {'name': 'Lamp', 'brightness': 40})
        >>> ha_intent(b, "light", {"light_id": "l", "on": False})
        ('HassTurnOff', {'name': 'Lamp', 'domain': ['light']})
    """
    if action == "light":
        device, attribute, value = str(args.get("light_id")), "on", bool(args.get("on"))
    elif action == "device":
        device, attribute, value = str(args.get("device_id")), str(args.get("attribute")), args.get("value")
    else:
        return None
    dev = b.devices.get(device)
    if dev is None:
        return None
    target: dict[str, Any] = {"name": dev.name}
    if len(_find(b, dev.name, None)) > 1 and dev.room in b.rooms:
        target["area"] = b.rooms[dev.room].name
    switch = _SWITCHES.get((attribute, value)) if isinstance(value, (bool, int, float, str)) else None
    if switch is not None:
        tool, extra = switch, {}
        if tool in ("HassTurnOn", "HassTurnOff"):
            extra = {"domain": [domain_of(dev.type, dev.state)]}
    elif attribute in _VALUES:
        tool, arg = _VALUES[attribute]
        extra = {arg: value}
    elif attribute == "items" and isinstance(value, dict) and "add" in value:
        tool, extra = "HassListAddItem", {"item": value["add"]}
    elif attribute == "track" and value == (dev.state.get("track") or 0) + 1:
        tool, extra = "HassMediaNext", {}
    else:
        return None
    return tool, {**target, **extra}
