"""What each kind of device can do: settable attributes, their types and ranges.

Taught in ``notebooks/02_agent_facing_tools.ipynb``. A light only has ``on``;
a thermostat has a target temperature between 5 and 30 degrees; an oven's
temperature stops at 250. The generic tools ``set_device`` / ``read_device``
in :mod:`lares_kit.tools.toolbox` check every change against these specs, so a
model's mistake gets a sentence saying what is allowed.

A world file may add or override attributes per device with a
``capabilities`` key (see ``worlds/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Attribute", "DEVICE_TYPES", "attributes_of", "check_value"]


@dataclass(frozen=True)
class Attribute:
    """One settable attribute: ``kind`` is bool, number or choice."""

    kind: str
    low: float | None = None
    high: float | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    read_only: bool = False

    def describe(self) -> str:
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        unit = f" {self.unit}" if self.unit else ""
        return f"a number from {self.low:g} to {self.high:g}{unit}"


_B = Attribute("bool")


def _num(low: float, high: float, unit: str = "", read_only: bool = False) -> Attribute:
    return Attribute("number", low, high, unit, read_only=read_only)


# type -> attribute -> spec. Attributes a device's state has but that are not
# listed here are read-only (sensors, for instance).
DEVICE_TYPES: dict[str, dict[str, Attribute]] = {
    "light": {"on": _B, "brightness": _num(0, 100, "%")},
    "thermostat": {"target": _num(5, 30, "°C"), "mode": Attribute("choice", choices=("heat", "cool", "auto", "off")),
                   "temperature": _num(-40, 60, "°C", read_only=True)},
    "heater": {"on": _B, "target": _num(5, 30, "°C")},
    "oven": {"on": _B, "temperature": _num(0, 250, "°C")},
    "stove": {"on": _B, "level": _num(0, 9)},
    "lock": {"locked": _B},
    "door": {"open": _B},
    "window": {"open": _B},
    "blinds": {"position": _num(0, 100, "% open")},
    "fan": {"on": _B, "speed": _num(0, 3)},
    "tv": {"on": _B, "channel": _num(1, 999), "volume": _num(0, 100)},
    "speaker": {"on": _B, "volume": _num(0, 100)},
    "kettle": {"on": _B},
    "alarm": {"armed": _B},
    "smoke-alarm": {"on": _B},
    # Readings a sensor may report (read-only); a sensor's other state keys are read-only too.
    "sensor": {"temperature": _num(-40, 60, "°C", read_only=True), "humidity": _num(0, 100, "%", read_only=True),
               "co2": _num(0, 5000, "ppm", read_only=True)},
    # A building's air conditioner (the smart-building paper's HVAC): on/off, mode, target, fan speed.
    "hvac": {"on": _B, "mode": Attribute("choice", choices=("cool", "heat", "fan", "dry", "auto")),
             "target": _num(16, 30, "°C"), "fan_speed": Attribute("choice", choices=("auto", "low", "medium", "high"))},
    # SAGE's fridge: a door contact (a sensor: people open it, agents read it) and two compartments.
    "fridge": {"door": Attribute("choice", choices=("open", "closed"), read_only=True),
               "temperature": _num(-5, 15, "°C", read_only=True), "setpoint": _num(1, 7, "°C"),
               "freezer_temperature": _num(-30, 0, "°C", read_only=True), "freezer_setpoint": _num(-24, -15, "°C")},
    # Home Assistant's other domains (lares_kit.ha.domains maps them): what its intents can change.
    "switch": {"on": _B},
    "cover": {"position": _num(0, 100, "% open")},
    "valve": {"open": _B},
    "media_player": {"on": _B, "playing": _B, "volume": _num(0, 100), "muted": _B},
    "vacuum": {"status": Attribute("choice", choices=("docked", "cleaning", "returning", "idle", "paused"))},
    "binary_sensor": {"on": Attribute("bool", read_only=True)},
}


def attributes_of(device_type: str, overrides: dict[str, Any] | None = None) -> dict[str, Attribute]:
    """The settable attributes of a device type, with a world file's overrides.

    Args:
        device_type: A key of ``DEVICE_TYPES`` such as ``"thermostat"``; an unknown type has no attributes
            of its own, only its overrides.
        overrides: A device's ``attributes:`` from the world file, by attribute name: an ``Attribute`` or a
            dict with ``kind``, ``low``, ``high``, ``unit``, ``choices``, ``read_only``; None for none.

    Examples:
        >>> attributes_of("thermostat")["target"].describe()
        'a number from 5 to 30 °C'
        >>> sorted(attributes_of("lock"))
        ['locked']
    """
    attrs = dict(DEVICE_TYPES.get(device_type, {}))
    for name, spec in (overrides or {}).items():
        if isinstance(spec, Attribute):
            attrs[name] = spec
        elif isinstance(spec, dict):
            attrs[name] = Attribute(spec.get("kind", "number"), spec.get("low"), spec.get("high"),
                                    spec.get("unit", ""), tuple(spec.get("choices", ())), spec.get("read_only", False))
    return attrs


def check_value(attr: Attribute, value: Any) -> tuple[Any, str | None]:
    """Coerce a value for an attribute; returns (value, None) or (None, what is allowed).

    Args:
        attr: The attribute being set, e.g. ``attributes_of("thermostat")["target"]``.
        value: What the caller asked for, as a model sends it: a bool, a number, or a string such as
            ``"on"``, ``"21"`` or ``"cool"``.

    Examples:
        >>> check_value(attributes_of("thermostat")["target"], 21)
        (21, None)
        >>> check_value(attributes_of("thermostat")["target"], 45)
        (None, 'a number from 5 to 30 °C')
        >>> check_value(attributes_of("lock")["locked"], "true")
        (True, None)
    """
    if attr.kind == "bool":
        if isinstance(value, bool):
            return value, None
        if isinstance(value, str) and value.strip().lower() in ("true", "on", "yes", "false", "off", "no"):
            return value.strip().lower() in ("true", "on", "yes"), None
        return None, attr.describe()
    if attr.kind == "choice":
        if isinstance(value, str) and value.strip().lower() in attr.choices:
            return value.strip().lower(), None
        return None, attr.describe()
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None, attr.describe()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, attr.describe()
    if (attr.low is not None and value < attr.low) or (attr.high is not None and value > attr.high):
        return None, attr.describe()
    return (int(value) if float(value).is_integer() else value), None
