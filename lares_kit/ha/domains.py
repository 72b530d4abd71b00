"""Home Assistant's view of a device: its domain, its entity id, its state and attributes.

Taught in ``notebooks/17_home_assistant.ipynb``. Home Assistant names every
device by an entity id, ``<domain>.<object_id>`` (``light.kitchen_light``),
and reports it as a state string (``"on"``, ``"locked"``, ``"21.5"``) plus
attributes in its own units (a light's ``brightness`` is 0-255, a cover's
``current_position`` 0-100, a media player's ``volume_level`` 0-1). A
lares_kit device is a type and a state mapping in the units of
:mod:`lares_kit.home.devices` (brightness in percent). This module is the one
translation between the two, both ways, for everything that speaks Home
Assistant: the HA tool dialect, the importer of HA evaluation datasets, the
offline model's recognizer (its ``domain`` slots) and the home's servers.

It is a leaf: plain data in, plain data out; it imports nothing of the home,
the tools or the models, so both sides may use it.

Examples:
    >>> domain_of("blinds"), domain_of("thermostat"), domain_of("tv")
    ('cover', 'climate', 'media_player')
    >>> entity_id("light", "Kitchen Light")
    'light.kitchen_light'
    >>> to_ha("light", {"on": True, "brightness": 50})
    ('on', {'brightness': 128})
    >>> from_ha("light", "on", {"brightness": 128})
    ('light', {'on': True, 'brightness': 50})
    >>> to_ha("lock", {"locked": False})
    ('unlocked', {})
    >>> to_ha("light", {"on": True, "color": "red"}), from_ha("light", "on", {"rgb_color": [255, 0, 0]})
    (('on', {'rgb_color': [255, 0, 0]}), ('light', {'on': True, 'color': 'red'}))
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["COLORS", "DOMAINS", "HA_DOMAINS", "domain_of", "entity_id", "from_ha", "object_id", "to_ha", "type_for"]

# The colour names Home Assistant's sentences use, as the RGB it sets (the CSS colours of those names).
COLORS: dict[str, tuple[int, int, int]] = {
    "white": (255, 255, 255), "black": (0, 0, 0), "red": (255, 0, 0), "orange": (255, 165, 0),
    "yellow": (255, 255, 0), "green": (0, 128, 0), "blue": (0, 0, 255), "purple": (128, 0, 128),
    "brown": (165, 42, 42), "pink": (255, 192, 203), "turquoise": (64, 224, 208)}

# lares_kit device type -> Home Assistant domain. A type not listed is a switch when it can be switched on.
DOMAINS: dict[str, str] = {
    "light": "light", "switch": "switch", "fan": "fan", "lock": "lock", "valve": "valve",
    "cover": "cover", "blinds": "cover", "door": "cover", "window": "cover",
    "thermostat": "climate", "hvac": "climate", "heater": "climate",
    "tv": "media_player", "speaker": "media_player", "media_player": "media_player",
    "vacuum": "vacuum", "todo": "todo", "sensor": "sensor", "binary_sensor": "binary_sensor",
    "weather": "weather", "calendar": "calendar", "alarm": "alarm_control_panel",
    "kettle": "switch", "oven": "switch", "stove": "switch", "smoke-alarm": "switch", "fridge": "sensor",
}

# Home Assistant domain -> the lares_kit type an imported entity becomes.
HA_DOMAINS: dict[str, str] = {
    "light": "light", "switch": "switch", "fan": "fan", "lock": "lock", "valve": "valve", "cover": "cover",
    "climate": "thermostat", "media_player": "media_player", "vacuum": "vacuum", "todo": "todo",
    "sensor": "sensor", "binary_sensor": "binary_sensor", "weather": "weather", "calendar": "calendar",
    "alarm_control_panel": "alarm", "input_boolean": "switch",
}

# device classes HA gives covers and media players; a lares type that is one of them says so
_DEVICE_CLASSES = {"blinds": "blind", "door": "door", "window": "window", "tv": "tv", "speaker": "speaker"}
_CLIMATE_MODES = ("heat", "cool", "auto", "off", "heat_cool", "dry", "fan_only")
_VACUUM = ("docked", "cleaning", "returning", "idle", "paused", "error")


def domain_of(device_type: str, state: dict[str, Any] | None = None) -> str:
    """The Home Assistant domain of a lares_kit device type.

    Args:
        device_type: A lares_kit type such as ``"light"`` or ``"blinds"``.
        state: The device's state; decides for a type this module does not know (``on`` makes it a switch,
            anything else a sensor). None for the type alone.

    Examples:
        >>> domain_of("kettle"), domain_of("robot-mower", {"on": False}), domain_of("barometer", {"hpa": 1013})
        ('switch', 'switch', 'sensor')
    """
    if device_type in DOMAINS:
        return DOMAINS[device_type]
    return "switch" if "on" in (state or {}) else "sensor"


def device_class_of(device_type: str) -> str | None:
    """HA's ``device_class`` for a cover or media player type (``blinds`` -> ``blind``), else None.

    Args:
        device_type: A lares_kit type.
    """
    return _DEVICE_CLASSES.get(device_type)


def type_for(domain: str, device_class: str | None = None) -> str:
    """The lares_kit type an entity of a Home Assistant domain becomes on import.

    Args:
        domain: The part of an entity id before the dot, e.g. ``"cover"``.
        device_class: HA's device class, when the entity has one; a window cover stays a cover (its position
            is what HA reports), so the class only names what it is.

    Raises:
        ValueError: a domain lares_kit cannot model, naming the ones it can.

    Examples:
        >>> type_for("climate"), type_for("input_boolean")
        ('thermostat', 'switch')
        >>> type_for("camera")
        Traceback (most recent call last):
        ...
        ValueError: lares_kit cannot model the Home Assistant domain 'camera'; it models alarm_control_panel, \
binary_sensor, calendar, climate, cover, fan, input_boolean, light, lock, media_player, sensor, switch, todo, \
vacuum, valve, weather
    """
    if domain not in HA_DOMAINS:
        raise ValueError(f"lares_kit cannot model the Home Assistant domain {domain!r}; it models "
                         + ", ".join(sorted(HA_DOMAINS)))
    return HA_DOMAINS[domain]


def object_id(name: str) -> str:
    """A name as Home Assistant slugifies it for an entity id: ``"Küche Licht"`` -> ``"kuche_licht"``.

    Args:
        name: A device's name, in any language.

    Examples:
        >>> object_id("Kitchen Light"), object_id("Küche: Deckenlampe 2")
        ('kitchen_light', 'kuche_deckenlampe_2')
    """
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "_", text).strip("_")
    return slug or "device"


def entity_id(device_type: str, name: str, state: dict[str, Any] | None = None, taken: set[str] | None = None) -> str:
    """A device's Home Assistant entity id, ``<domain>.<object_id>``, unique among ``taken``.

    Args:
        device_type: Its lares_kit type.
        name: Its full name, the room's name included where that is how people say it ("Kitchen Light").
        state: Its state (see :func:`domain_of`); None for the type alone.
        taken: Entity ids already given; a clash gets ``_2``, ``_3``... as Home Assistant does. The new id
            is added to it. None to check nothing.

    Examples:
        >>> taken = set()
        >>> entity_id("light", "Lamp", taken=taken), entity_id("light", "Lamp", taken=taken)
        ('light.lamp', 'light.lamp_2')
    """
    base = f"{domain_of(device_type, state)}.{object_id(name)}"
    found, n = base, 1
    while taken is not None and found in taken:
        n += 1
        found = f"{base}_{n}"
    if taken is not None:
        taken.add(found)
    return found


def _rgb(color: Any) -> list[int]:
    # a colour name (or "r,g,b") as HA's rgb_color
    if str(color).lower() in COLORS:
        return list(COLORS[str(color).lower()])
    return [int(float(c)) for c in str(color).split(",")[:3]]


def _pct_to_255(value: Any) -> int:
    return int(round(float(value) * 255 / 100 + 1e-9))


def _255_to_pct(value: Any) -> int:
    return int(round(float(value) * 100 / 255 + 1e-9))


def _open(flag: Any) -> str:
    return "open" if flag else "closed"


def to_ha(device_type: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A lares_kit state as Home Assistant reports it: ``(state string, attributes)``.

    Only what this module models is reported; a light that is off has no brightness, as in HA.

    Args:
        device_type: The device's lares_kit type.
        state: Its state mapping (``{"on": True, "brightness": 50}``).

    Examples:
        >>> to_ha("blinds", {"position": 30})
        ('open', {'current_position': 30})
        >>> to_ha("thermostat", {"target": 21, "mode": "heat", "temperature": 19.5})
        ('heat', {'temperature': 21, 'current_temperature': 19.5})
        >>> to_ha("tv", {"on": True, "volume": 40})
        ('on', {'volume_level': 0.4})
        >>> to_ha("sensor", {"temperature": 21.5})
        ('21.5', {'unit_of_measurement': '°C', 'device_class': 'temperature'})
        >>> to_ha("todo", {"items": [{"summary": "milk", "status": "needs_action"}]})
        ('1', {})
    """
    domain, attrs = domain_of(device_type, state), {}
    if domain in ("light", "switch", "fan", "input_boolean"):
        text = "on" if state.get("on") else "off"
        if domain == "light" and state.get("on") and "brightness" in state:
            attrs["brightness"] = _pct_to_255(state["brightness"])
        if domain == "light" and state.get("on") and state.get("color"):
            attrs["rgb_color"] = _rgb(state["color"])
        if domain == "fan" and "percentage" in state:
            # HA: a fan with speeds is on exactly when its percentage is above 0; switched on with no speed set,
            # it runs at full speed. lares_kit keeps the speed setting while the fan is off, as a dial does.
            attrs["percentage"] = (state["percentage"] or 100) if state.get("on") else 0
        elif domain == "fan" and "speed" in state:
            attrs["percentage"] = int(round(float(state["speed"]) * 100 / 3))
        return text, attrs
    if domain in ("cover", "valve"):
        out = {"current_position": state["position"]} if "position" in state else {}
        if domain == "cover" and state.get("device_class"):
            out["device_class"] = state["device_class"]  # curtain, garage...
        # One that only opens and closes says so, whatever position it was once given; else its position decides.
        opened = state.get("open") if "open" in state or "position" not in state else float(state["position"]) > 0
        return _open(opened), out
    if domain == "lock":
        return ("locked" if state.get("locked") else "unlocked"), {}
    if domain == "climate":
        mode = state.get("mode") or ("heat" if state.get("on", True) else "off")
        if "on" in state and not state["on"]:
            mode = "off"
        if "target" in state:
            attrs["temperature"] = state["target"]
        if "temperature" in state:
            attrs["current_temperature"] = state["temperature"]
        return str(mode), attrs
    if domain == "media_player":
        if not state.get("on", True):
            text = "off"
        elif "playing" in state:
            text = "playing" if state["playing"] else "paused"
        else:
            text = "on"
        if "volume" in state:
            attrs["volume_level"] = round(float(state["volume"]) / 100, 2)
        if "muted" in state:
            attrs["is_volume_muted"] = bool(state["muted"])
        if "track" in state:
            attrs["media_track"] = state["track"]
        return text, attrs
    if domain == "vacuum":
        return str(state.get("status", "docked")), {}
    if domain == "todo":
        items = state.get("items") or []
        open_items = sum(1 for i in items if not isinstance(i, dict) or i.get("status") != "completed")
        return str(open_items + int(state.get("unlisted", 0))), {}
    if domain == "binary_sensor":
        return ("on" if state.get("on") else "off"), ({"device_class": state["device_class"]}
                                                       if state.get("device_class") else {})
    if domain == "alarm_control_panel":
        return ("armed_away" if state.get("armed") else "disarmed"), {}
    if domain in ("weather", "calendar"):
        text = str(state.get("condition" if domain == "weather" else "event", "unknown"))
        return text, {k: v for k, v in state.items() if k not in ("condition", "event")}
    # sensor: the first reading is the state, its unit and class the attributes
    return _sensor_to_ha(state)


_UNITS = {"temperature": "°C", "humidity": "%", "co2": "ppm", "battery": "%", "power": "W", "energy": "kWh"}


def _sensor_to_ha(state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    readings = [k for k in state if k not in ("unit", "device_class")]
    if not readings:
        return "unknown", {}
    key = readings[0]
    attrs: dict[str, Any] = {}
    unit = state.get("unit") or _UNITS.get(key)
    if unit:
        attrs["unit_of_measurement"] = unit
    device_class = state.get("device_class") or (key if key in _UNITS else None)
    if device_class:
        attrs["device_class"] = device_class
    return str(state[key]), attrs


def _number(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return int(number) if number.is_integer() else number


def from_ha(domain: str, state: str, attributes: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """An entity as Home Assistant reports it, as a lares_kit ``(type, state)`` -- :func:`to_ha` backwards.

    Args:
        domain: The entity's domain (the part of its id before the dot).
        state: Its state string, e.g. ``"on"``, ``"locked"``, ``"21.5"``.
        attributes: Its attributes (``brightness`` 0-255, ``current_position``, ``temperature``...); None for
            none.

    Raises:
        ValueError: a domain lares_kit cannot model (see :func:`type_for`).

    Examples:
        >>> from_ha("cover", "closed", {"current_position": 0, "device_class": "blind"})
        ('cover', {'position': 0, 'device_class': 'blind'})
        >>> from_ha("cover", "open", {"current_position": 0})  # opened over an old position: all the way
        ('cover', {'position': 100})
        >>> from_ha("climate", "heat", {"temperature": 21, "current_temperature": 19})
        ('thermostat', {'mode': 'heat', 'target': 21, 'temperature': 19})
        >>> from_ha("media_player", "paused", {"volume_level": 0.3})
        ('media_player', {'on': True, 'playing': False, 'volume': 30})
        >>> from_ha("sensor", "21.5", {"unit_of_measurement": "°C", "device_class": "temperature"})
        ('sensor', {'temperature': 21.5, 'unit': '°C', 'device_class': 'temperature'})
    """
    attrs = dict(attributes or {})
    kind = type_for(domain, attrs.get("device_class"))
    text = str(state).strip().lower()
    out: dict[str, Any] = {}
    if domain in ("light", "switch", "fan", "input_boolean"):
        out["on"] = text == "on"
        if domain == "light" and attrs.get("brightness") is not None:
            out["brightness"] = _255_to_pct(attrs["brightness"])
        if domain == "light" and isinstance(attrs.get("rgb_color"), (list, tuple)) and len(attrs["rgb_color"]) == 3:
            rgb = tuple(int(c) for c in attrs["rgb_color"])
            out["color"] = next((n for n, c in COLORS.items() if c == rgb), ",".join(map(str, rgb)))
        if domain == "fan" and attrs.get("percentage") is not None:
            out["percentage"] = _number(attrs["percentage"])
    elif domain in ("cover", "valve"):
        if attrs.get("current_position") is not None:
            out["position"] = _number(attrs["current_position"])
            # "open" at 0, or "closed" above it: a new state over an old position (HA's harness merges a change's
            # attributes into the old ones). HA derives the state from the position, so the state is the news.
            if text == "open" and out["position"] == 0 or text == "closed" and out["position"] != 0:
                out["position"] = 100 if text == "open" else 0
        else:
            out["open"] = text in ("open", "opening")
        if domain == "cover" and attrs.get("device_class"):
            out["device_class"] = str(attrs["device_class"])  # "the curtains", "the garage door": what it is
    elif domain == "lock":
        out["locked"] = text in ("locked", "locking", "jammed")
    elif domain == "climate":
        out["mode"] = text if text in _CLIMATE_MODES else "heat"
        if attrs.get("temperature") is not None:
            out["target"] = _number(attrs["temperature"])
        if attrs.get("current_temperature") is not None:
            out["temperature"] = _number(attrs["current_temperature"])
    elif domain == "media_player":
        out["on"] = text not in ("off", "standby", "unavailable")
        if text in ("playing", "paused", "idle", "buffering"):
            out["playing"] = text in ("playing", "buffering")
        if attrs.get("volume_level") is not None:
            out["volume"] = int(round(float(attrs["volume_level"]) * 100))
        if attrs.get("is_volume_muted") is not None:
            out["muted"] = bool(attrs["is_volume_muted"])
        if isinstance(attrs.get("media_track"), int) and not isinstance(attrs["media_track"], bool):
            out["track"] = attrs["media_track"]
    elif domain == "vacuum":
        out["status"] = text if text in _VACUUM else "idle"
    elif domain == "todo":
        out["items"] = [dict(i) if isinstance(i, dict) else {"summary": str(i), "status": "needs_action"}
                        for i in attrs.get("items", [])]
        listed = sum(1 for i in out["items"] if i.get("status") != "completed")
        if text.isdigit() and int(text) > listed:  # HA's state counts items the fixture does not list
            out["unlisted"] = int(text) - listed
    elif domain == "binary_sensor":
        out["on"] = text == "on"
        if attrs.get("device_class"):
            out["device_class"] = attrs["device_class"]
    elif domain == "alarm_control_panel":
        out["armed"] = text.startswith("armed")
    elif domain in ("weather", "calendar"):
        out["condition" if domain == "weather" else "event"] = str(state)
        out.update({k: v for k, v in attrs.items() if k not in ("friendly_name",)})
    else:  # sensor
        key = str(attrs.get("device_class") or "value")
        out[key] = _number(state)
        if attrs.get("unit_of_measurement"):
            out["unit"] = attrs["unit_of_measurement"]
        if attrs.get("device_class"):
            out["device_class"] = attrs["device_class"]
    return kind, out
