"""MQTT payloads both ways: Home Assistant's commands into lares changes, and zigbee2mqtt's JSON, for the bridge.

Part of the MQTT door of ``lares serve-home`` (:mod:`.mqtt`; taught in
``notebooks/18_a_real_home.ipynb``). Home Assistant sends plain payloads
(``ON``, ``LOCK``, ``OPEN``, ``21.5``) or a light's JSON, on 0-255 scales;
zigbee2mqtt devices take and report JSON on 0-254 scales. Each is turned
into the device's own attributes and scale here; a payload that says nothing
a device can do raises :class:`BadCommand` with the sentence. A world device
bound to a zigbee2mqtt device talks to it through :class:`Zigbee2MqttLink`.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from ..devices import attributes_of
from ..errors import ToolError, brief
from ..ha_domains import domain_of
from ..home import Device, Home
from ..wording import capitalise, in_sentence

__all__ = ["BadCommand", "Zigbee2MqttLink", "from_zigbee2mqtt", "to_zigbee2mqtt"]

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


# ---------------------------------------------------------------- zigbee2mqtt
def to_zigbee2mqtt(device: Device, changes: dict[str, Any]) -> dict[str, Any]:
    """The zigbee2mqtt command (JSON on the device's ``/set`` topic) for changes in lares terms.

    Args:
        device: The world device bound to the outside one (its type and scales say how to write the change).
        changes: Attribute -> new value, as the tools set them: ``{"on": True}``, ``{"brightness": 50}``.

    Examples:
        >>> from lares_kit.home import Device
        >>> lamp = Device("lamp", "Lamp", "light", "kitchen", {"on": False, "brightness": 0})
        >>> to_zigbee2mqtt(lamp, {"on": True, "brightness": 100})
        {'state': 'ON', 'brightness': 254}
        >>> to_zigbee2mqtt(Device("door", "Front door", "lock", "hall", {"locked": True}), {"locked": False})
        {'state': 'UNLOCK'}
    """
    out: dict[str, Any] = {}
    dim = _dim_key(device) or "brightness"
    for key, value in changes.items():
        if key == "on":
            out["state"] = "ON" if value else "OFF"
        elif key == dim and device.type == "light":
            out["brightness"] = _scale(value, device, key, 254, to_device=False)
        elif key == "locked":
            out["state"] = "LOCK" if value else "UNLOCK"
        elif key == "open":
            out["state"] = ("ON" if value else "OFF") if device.type == "valve" else ("OPEN" if value else "CLOSE")
        elif key == "target":
            out["occupied_heating_setpoint"] = value
        elif key == "mode" and domain_of(device.type) == "climate":
            out["system_mode"] = value
        elif key == "speed" and device.type == "fan":
            out["fan_mode"] = {0: "off", 1: "low", 2: "medium", 3: "high"}.get(int(value), "on")
        elif key == "fan_speed":
            out["fan_mode"] = value
        else:
            out[key] = value
    return out


def from_zigbee2mqtt(device: Device, report: dict[str, Any]) -> dict[str, Any]:
    """A zigbee2mqtt state report in lares terms: only what the world device has; the rest (linkquality) is left.

    Args:
        device: The world device bound to the outside one.
        report: The JSON object the device published on its state topic.

    Examples:
        >>> from lares_kit.home import Device
        >>> lamp = Device("lamp", "Lamp", "light", "kitchen", {"on": False, "brightness": 0})
        >>> from_zigbee2mqtt(lamp, {"state": "ON", "brightness": 127, "linkquality": 96})
        {'on': True, 'brightness': 50}
        >>> door = Device("door", "Front door", "lock", "hall", {"locked": True})
        >>> from_zigbee2mqtt(door, {"lock_state": "unlocked"}), from_zigbee2mqtt(door, {"state": "LOCK"})
        ({'locked': False}, {'locked': True})
    """
    known = set(device.state) | set(attributes_of(device.type, device.capabilities))
    dim = _dim_key(device)  # a light the world does not dim takes no brightness (Home Assistant sees none)
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key == "state" and isinstance(value, str):
            said = value.upper()
            if "locked" in known and said in ("LOCK", "UNLOCK"):
                out["locked"] = said == "LOCK"
            elif "open" in known and said in ("OPEN", "CLOSE", "ON", "OFF"):
                out["open"] = said in ("OPEN", "ON")
            elif "on" in known and said in ("ON", "OFF"):
                out["on"] = said == "ON"
        elif key == "lock_state" and "locked" in known and value in ("locked", "unlocked"):
            out["locked"] = value == "locked"
        elif key == "brightness" and dim is not None and isinstance(value, (int, float)):
            out[dim] = _scale(value, device, dim, 254, to_device=True)
        elif key in ("occupied_heating_setpoint", "current_heating_setpoint") and "target" in known:
            out["target"] = value
        elif key == "local_temperature" and "temperature" in known:
            out["temperature"] = value
        elif key == "system_mode" and "mode" in known:
            out["mode"] = value
        elif key == "fan_mode" and "speed" in known and device.type == "fan":
            out["speed"] = {"off": 0, "low": 1, "medium": 2, "high": 3}.get(str(value), 3)
        elif key == "fan_mode" and "fan_speed" in known:
            out["fan_speed"] = value
        elif key in known and key not in out and key != "brightness":
            out[key] = value
    return out


class Zigbee2MqttLink:
    """A world device bound to a zigbee2mqtt device: :meth:`send` is the :class:`~.service.DeviceLink`."""

    def __init__(self, bridge: Any, device: Device) -> None:  # bridge: the mqtt.MqttBridge that made it
        self.bridge, self.device = bridge, device
        self.command_topic = device.mqtt["command_topic"]
        self.state_topic = device.mqtt["state_topic"]
        self.timeout = float(device.mqtt.get("timeout", 2))
        self._lock = threading.Lock()
        self._answers: list[bytes] | None = None  # a list while send() waits for the device's answer

    def send(self, device: Device, changes: dict[str, Any]) -> dict[str, Any]:
        """Publish the change as zigbee2mqtt takes it; return the state the device answers, in lares terms.

        Raises:
            ToolError: no answer within the timeout (or an answer that is not zigbee2mqtt's JSON), with a
                sentence for the model: "The light in the Kitchen did not answer within 2 s."
        """
        home = self.bridge.service.home
        words = capitalise(_words(device, home))
        if self.bridge.closed:
            raise ToolError(f"{words} cannot be reached: the MQTT bridge is stopped.")
        with self._lock:
            self._answers = []
        try:
            self.bridge.client.publish(self.command_topic, json.dumps(to_zigbee2mqtt(device, changes)), qos=1)
            deadline = time.monotonic() + self.timeout
            answer = None
            while answer is None and time.monotonic() < deadline and not self.bridge.closed:
                with self._lock:
                    answer = self._answers[0] if self._answers else None
                if answer is None:
                    time.sleep(POLL)
        finally:
            with self._lock:
                self._answers = None
        if answer is None:
            raise ToolError(f"{words} did not answer within {self.timeout:g} s.")
        report = _json_object(answer)
        if report is None:
            raise ToolError(f"{words} answered {brief(answer.decode('utf-8', 'replace'))}, "
                            "which is not a zigbee2mqtt state (a JSON object).")
        return from_zigbee2mqtt(device, report)

    def heard(self, payload: bytes) -> bool:
        """Give a message of the state topic to the waiting :meth:`send`; False when nobody waits for one."""
        with self._lock:
            if self._answers is None:
                return False
            self._answers.append(payload)
            return True


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None

