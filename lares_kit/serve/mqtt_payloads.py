"""Home Assistant's MQTT command payloads as lares changes, and the scales they share with zigbee2mqtt's.

Part of the MQTT door of ``lares serve-home`` (:mod:`.mqtt`; taught in
``notebooks/18_a_real_home.ipynb``). Home Assistant sends plain payloads
(``ON``, ``LOCK``, ``OPEN``, ``21.5``) or a light's JSON, on 0-255 scales;
each is turned into the device's own attributes and scale here, and a
payload that says nothing a device can do raises :class:`BadCommand` with
the sentence. zigbee2mqtt's JSON, for world devices bound to real ones, is
:mod:`.mqtt_zigbee2mqtt`'s.
"""

from __future__ import annotations

import json
from typing import Any

from ..home.devices import attributes_of
from ..home.graph import Device, Home
from ..sentences.wording import in_sentence

__all__ = ["BadCommand"]

POLL = 0.005  # seconds between looks while waiting (a timed Event.wait never ends under faketime)


class BadCommand(ValueError):
    """A payload on a command topic that says nothing a device can do; the message is the sentence."""


# ---------------------------------------------------------------- payloads
def _number(text: str) -> int | float:
    number = float(text)  # ValueError for text that is no number
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(text)
    return int(number) if number.is_integer() else number


def _plain(value: Any) -> str:
    # A value as a plain payload: numbers as numbers (21, 18.5), text as it is.
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return value if isinstance(value, str) else json.dumps(value)


def _dim_key(device: Device) -> str | None:
    # The attribute a light dims with, when the world says it has one (its state or capabilities name it).
    for key in ("brightness", "level"):
        if key in device.state or key in device.capabilities:
            return key
    return None


def _range(device: Device, key: str, low: float = 0, high: float = 100) -> tuple[float, float]:
    attr = attributes_of(device.type, device.capabilities).get(key)
    if attr is None or attr.low is None or attr.high is None or attr.high <= attr.low:
        return low, high
    return attr.low, attr.high


def _scale(value: Any, device: Device, key: str, top: int, *, to_device: bool) -> int | float:
    # Between the device's own scale of `key` (0-100 %) and a 0-top one (Home Assistant's 255, zigbee2mqtt's 254).
    low, high = _range(device, key)
    if to_device:
        scaled, least, most = low + float(value) * (high - low) / top, low, high
    else:
        scaled, least, most = (float(value) - low) * top / (high - low), 0, top
    return int(round(min(most, max(least, scaled)) + 1e-9))


def _words(device: Device, home: Home) -> str:
    return f"the {in_sentence(device.name)} in the {home.room_name(device.room)}"


def _open(flag: Any) -> str:
    return "open" if flag else "closed"


def _ha_mode(mode: str) -> str:
    return "fan_only" if mode == "fan" else mode


def _choice(payload: str, meanings: dict[str, Any], words: str) -> Any:
    text = payload.strip()
    for said, meaning in meanings.items():
        if text == said or text.upper() == said.upper():
            return meaning
    raise BadCommand(f"expected {words}")


def _numeric(payload: str, what: str) -> int | float:
    try:
        return _number(payload.strip())
    except ValueError:
        raise BadCommand(f"expected {what}, a number") from None


def _cover_command(payload: str, key: str) -> dict[str, Any]:
    # OPEN / CLOSE / STOP, or a position; `key` is what the device has: "position" (0-100) or "open".
    text = payload.strip().upper()
    if text == "STOP":  # the simulated blinds move at once: there is nothing to stop
        return {}
    if text in ("OPEN", "CLOSE"):
        opened = text == "OPEN"
        return {"position": 100 if opened else 0} if key == "position" else {"open": opened}
    if key != "position":
        raise BadCommand("expected OPEN or CLOSE")
    try:
        return {"position": _number(text)}
    except ValueError:
        raise BadCommand("expected OPEN, CLOSE or a position from 0 to 100") from None


def _light_command(payload: str, device: Device, dim: str | None) -> dict[str, Any]:
    # Home Assistant's JSON schema: {"state": "ON", "brightness": 128}; a plain ON or OFF is taken too.
    text = payload.strip()
    if text.upper() in ("ON", "OFF"):
        return {"on": text.upper() == "ON"}
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or ("state" not in data and "brightness" not in data):
        raise BadCommand('expected JSON like {"state": "ON", "brightness": 128}, or ON or OFF')
    update: dict[str, Any] = {}
    if "state" in data:
        update["on"] = _choice(str(data["state"]), {"ON": True, "OFF": False}, 'a "state" of ON or OFF')
    if data.get("brightness") is not None and update.get("on", True):
        if dim is None:
            raise BadCommand(f"this {in_sentence(device.name)} cannot be dimmed: send ON or OFF")
        if isinstance(data["brightness"], bool) or not isinstance(data["brightness"], (int, float)) \
                or not 0 <= data["brightness"] <= 255:
            raise BadCommand('expected a "brightness" from 0 to 255')
        update["on"] = True
        update[dim] = _scale(data["brightness"], device, dim, 255, to_device=True)
    return update
