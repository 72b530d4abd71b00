"""zigbee2mqtt's JSON both ways, for a world device bound to a real device: commands out, checked reports in.

Part of the MQTT door of ``lares serve-home`` (:mod:`.mqtt`; taught in
``notebooks/18_a_real_home.ipynb``). A world device with ``mqtt: {command_topic,
state_topic, format: zigbee2mqtt}`` is bound to a real one: a tool's change is
sent as zigbee2mqtt's JSON (:func:`to_zigbee2mqtt`, 0-254 brightness), and the
state the device reports comes back in lares terms (:func:`from_zigbee2mqtt`)
-- but only when it fits the world device as the tools know it (its
attributes' types, ranges and choices, :mod:`lares_kit.home.devices`): anyone can
publish on a broker, and a retained message may be left from another device,
so a report that says ``{"locked": "maybe"}`` is logged and dropped, not taken
as the state of a lock. :class:`Zigbee2MqttLink` is the binding.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from typing import Any

from ..errors import ToolError, brief
from ..ha.domains import domain_of
from ..home.devices import Attribute, attributes_of, check_value
from ..home.graph import Device
from ..sentences.wording import capitalise
from .mqtt_payloads import POLL, _dim_key, _scale, _words

__all__ = ["BadReport", "Zigbee2MqttLink", "from_zigbee2mqtt", "to_zigbee2mqtt"]

log = logging.getLogger(__name__)


def to_zigbee2mqtt(device: Device, changes: dict[str, Any]) -> dict[str, Any]:
    """The zigbee2mqtt command (JSON on the device's ``/set`` topic) for changes in lares terms.

    Args:
        device: The world device bound to the outside one (its type and scales say how to write the change).
        changes: Attribute -> new value, as the tools set them: ``{"on": True}``, ``{"brightness": 50}``.

    Examples:
        >>> from lares_kit.home.graph import Device
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
    """A zigbee2mqtt state report in lares terms, checked against the world device; what it lacks is left.

    zigbee2mqtt's words (``state``, ``lock_state``, ``brightness`` on 0-254,
    ``occupied_heating_setpoint``...) become the device's attributes where
    its state has them; what the world does not model (``linkquality``, the
    brightness of a light the world does not dim) is left. Every value that
    comes in must fit the device as the tools know it
    (:func:`lares_kit.home.devices.attributes_of` and :func:`~lares_kit.home.devices.check_value`:
    its type, range or choices; a reading without a spec keeps the kind of its
    value), and no key may be new to its state. One value that does not fit
    and the whole report is refused: a report is one look at the device, and
    the rest of a garbled or spoofed one is no truer than the bad part.

    Args:
        device: The world device bound to the outside one.
        report: The JSON object the device published on its state topic.

    Raises:
        BadReport: something in it does not fit the device; the message says what, in words.

    Examples:
        >>> from lares_kit.home.graph import Device
        >>> lamp = Device("lamp", "Lamp", "light", "kitchen", {"on": False, "brightness": 0})
        >>> from_zigbee2mqtt(lamp, {"state": "ON", "brightness": 127, "linkquality": 96})
        {'on': True, 'brightness': 50}
        >>> door = Device("door", "Front door", "lock", "hall", {"locked": True})
        >>> from_zigbee2mqtt(door, {"lock_state": "unlocked"}), from_zigbee2mqtt(door, {"state": "LOCK"})
        ({'locked': False}, {'locked': True})
        >>> from_zigbee2mqtt(door, {"locked": "maybe"})
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt_zigbee2mqtt.BadReport: locked 'maybe' is not true or false
        >>> from_zigbee2mqtt(lamp, {"state": "ON", "brightness": 900})
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt_zigbee2mqtt.BadReport: brightness 900 is not a number from 0 to 254
    """
    attrs = attributes_of(device.type, device.capabilities)
    has = set(device.state)  # zigbee2mqtt's words are taken only for what the world device has
    dim = _dim_key(device)  # a light the world does not dim takes no brightness (Home Assistant sees none)
    said: list[tuple[str, Any]] = []  # (attribute, value), every one checked; the first of an attribute counts
    problems: list[str] = []
    for key, value in report.items():
        if key in _Z2M_WORDS:
            word = _from_z2m_word(device, key, value, has, dim, problems)
            said += [word] if word is not None else []
        elif key in has or key in attrs:  # in the device's own terms: meant for it, so it must fit
            said.append((key, value))
    problems += [p for p in (_misfit(device, attrs.get(k), k, v) for k, v in said) if p]
    if problems:
        raise BadReport("; ".join(problems))
    out: dict[str, Any] = {}
    for key, value in said:
        out.setdefault(key, _fitted(attrs.get(key), value))
    return out


class BadReport(ValueError):
    """A bound device's state report that does not fit the world device; the message says what does not."""

    said = ""  # the report, briefly (set by Zigbee2MqttLink.read, with `why`: what did not fit)
    why = ""


# zigbee2mqtt's words -> the lares attributes each may speak of (the first one the world device has)
_Z2M_WORDS: dict[str, tuple[str, ...]] = {
    "state": ("locked", "open", "on"), "lock_state": ("locked",), "brightness": (),  # brightness: the dim key
    "occupied_heating_setpoint": ("target",), "current_heating_setpoint": ("target",),
    "local_temperature": ("temperature",), "system_mode": ("mode",), "fan_mode": ("fan_speed", "speed"),
}
# (word, attribute) -> what each value means; a word without meanings is taken as it is, and checked as such
_MEANINGS: dict[tuple[str, str], dict[Any, Any]] = {
    ("state", "locked"): {"LOCK": True, "UNLOCK": False},
    ("state", "open"): {"OPEN": True, "CLOSE": False, "ON": True, "OFF": False},  # a valve says ON and OFF
    ("state", "on"): {"ON": True, "OFF": False},
    ("lock_state", "locked"): {"locked": True, "unlocked": False, "not_fully_locked": False},
    ("fan_mode", "speed"): {"off": 0, "low": 1, "medium": 2, "high": 3, "on": 3, "auto": 3, "smart": 3},
}


def _from_z2m_word(device: Device, key: str, value: Any, has: set[str], dim: str | None,
                   problems: list[str]) -> tuple[str, Any] | None:
    # One of zigbee2mqtt's words as (lares attribute, value); None when the world device has no such attribute
    # or the value means nothing (then `problems` says why).
    if key == "brightness":
        if dim is None or dim not in has:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 254:
            problems.append(f"brightness {brief(value)} is not a number from 0 to 254")
            return None
        return dim, _scale(value, device, dim, 254, to_device=True)
    target = next((t for t in _Z2M_WORDS[key] if t in has), None)
    if target is None:
        return None
    meanings = _MEANINGS.get((key, target))
    if meanings is None:
        if key == "system_mode" and value == "fan_only":  # Home Assistant's and zigbee2mqtt's name of "fan"
            value = "fan"
        return target, value
    said = value.upper() if key == "state" and isinstance(value, str) else value
    if isinstance(said, (str, int, float)) and said in meanings:
        return target, meanings[said]
    problems.append(f"{key} {brief(value)} is not {_or(list(meanings))}")
    return None


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _misfit(device: Device, attr: Attribute | None, key: str, value: Any) -> str | None:
    # Why `value` cannot be the device's `key` now, or None when it can.
    if key not in device.state:
        return f"{key} is not in its state (the world device has no such attribute)"
    if attr is None:  # a reading with no spec (a sensor's battery): the kind of value the world gave it
        if _kind(value) != _kind(device.state[key]):
            return f"{key} {brief(value)} is not {_KIND_WORDS.get(_kind(device.state[key]), 'like its value')}"
        return None
    kind = {"bool": "bool", "number": "number", "choice": "text"}.get(attr.kind)
    try:
        fits = _kind(value) == kind and check_value(attr, value)[1] is None
    except (OverflowError, ValueError):  # a number too big for a float
        fits = False
    return None if fits else f"{key} {brief(value)} is not {attr.describe()}"


def _fitted(attr: Attribute | None, value: Any) -> Any:
    # The value as the tools would set it (a choice in lower case, 21.0 as 21); checked before.
    return value if attr is None else check_value(attr, value)[0]


_KIND_WORDS = {"bool": "true or false", "number": "a number", "text": "text"}


def _kind(value: Any) -> str:
    # A JSON value's kind: a NaN or an infinity is no number (json.loads takes them).
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else "not a number"
    return "text" if isinstance(value, str) else type(value).__name__


class Zigbee2MqttLink:
    """A world device bound to a zigbee2mqtt device: :meth:`send` is the :class:`~.service.DeviceLink`."""

    def __init__(self, bridge: Any, device: Device) -> None:  # bridge: the mqtt.MqttBridge that made it
        self.bridge, self.device = bridge, device
        self.command_topic = device.mqtt["command_topic"]
        self.state_topic = device.mqtt["state_topic"]
        self.timeout = float(device.mqtt.get("timeout", 2))
        self._lock = threading.Lock()
        self._answers: list[bytes] | None = None  # a list while send() waits for the device's answer, oldest first

    def read(self, payload: bytes, device: Device | None = None) -> dict[str, Any]:
        """A message of the state topic in lares terms, checked (:func:`from_zigbee2mqtt`).

        Args:
            payload: The message as it came.
            device: The world device as it is now; default the bound one.

        Raises:
            BadReport: not a JSON object, or something in it does not fit the device; the message is the
                sentence for the log, which says the report is dropped.
        """
        device = device or self.device
        report = _json_object(payload)
        try:
            if report is None:
                raise BadReport("it is not a zigbee2mqtt state, a JSON object")
            return from_zigbee2mqtt(device, report)
        except BadReport as exc:
            words = capitalise(_words(device, self.bridge.service.home))
            said = brief(payload.decode("utf-8", "replace"))
            sentence = BadReport(f"{words} ({device.id}) sent {said} on {self.state_topic}, which does not fit it "
                                 f"({exc}): the report is dropped.")
            sentence.said, sentence.why = said, str(exc)
            raise sentence from None

    def send(self, device: Device, changes: dict[str, Any]) -> dict[str, Any]:
        """Publish the change as zigbee2mqtt takes it; return the state the device answers, in lares terms.

        Only an answer that fits the device counts (:meth:`read`): one that does not is logged and the wait
        goes on.

        Args:
            device: The world device, as it was before the change.
            changes: Attribute -> new value, as the tool set them.

        Raises:
            ToolError: no fitting answer within the timeout, with a sentence for the model: "The light in the
                Kitchen did not answer within 2 s."
        """
        home = self.bridge.service.home
        words = capitalise(_words(device, home))
        if self.bridge.closed:
            raise ToolError(f"{words} cannot be reached: the MQTT bridge is stopped.")
        with self._lock:
            self._answers = []
        refused: BadReport | None = None  # the last answer that did not fit
        try:
            self.bridge.client.publish(self.command_topic, json.dumps(to_zigbee2mqtt(device, changes)), qos=1)
            deadline = time.monotonic() + self.timeout
            while time.monotonic() < deadline and not self.bridge.closed:
                with self._lock:
                    heard, self._answers = self._answers or [], []
                for payload in heard:
                    try:
                        return self.read(payload, device)
                    except BadReport as exc:
                        log.warning("%s", exc)
                        refused = exc
                time.sleep(POLL)
        finally:
            with self._lock:
                self._answers = None
        if refused is not None:
            raise ToolError(f"{words} did not answer within {self.timeout:g} s with a state that fits it (it sent "
                            f"{refused.said}: {refused.why}).")
        raise ToolError(f"{words} did not answer within {self.timeout:g} s.")

    def heard(self, payload: bytes, retained: bool = False) -> bool:
        """Give a message of the state topic to the waiting :meth:`send`; False when nobody waits for one.

        Args:
            payload: The message.
            retained: The broker kept it from before (sent at subscribing): never the answer to a command.
        """
        with self._lock:
            if self._answers is None or retained:
                return False
            self._answers.append(payload)
            return True


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None

