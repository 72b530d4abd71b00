"""The served home on an MQTT broker: Home Assistant discovery, states, commands, and bound outside devices.

Taught in ``notebooks/18_a_real_home.ipynb``; ``lares serve-home WORLD --mqtt HOST:PORT`` starts it
(:mod:`.app`). :class:`MqttBridge` is the third door of :class:`~lares_kit.serve.service.HomeService`,
beside MCP and the HTTP simulator API, with the ``paho-mqtt`` client:

* **Discovery.** Every *exposed* device becomes a Home Assistant entity through MQTT discovery: a
  retained JSON config on ``homeassistant/<component>/<node_id>/<object_id>/config`` (the node id is
  ``lares_`` and the home's id, ``lares_lares_home``; the object id is the device's id,
  ``kitchen_light``). The component comes from :func:`lares_kit.ha_domains.domain_of`: light (the JSON
  schema, with ``brightness`` when the device dims), switch, fan, cover, lock, valve, climate,
  alarm_control_panel, vacuum, and one sensor or binary_sensor per reading of a sensor. Home Assistant's
  MQTT discovery has no media player, to-do list, weather or calendar entity: those devices are skipped,
  and :meth:`MqttBridge.describe` names them.
* **States.** Each device's state is published, retained, at start and on every change
  (:meth:`HomeService.listen`): under ``lares/<home id>/<device id>/`` -- ``state`` (``ON``/``OFF``,
  ``LOCKED``, ``open``... or the JSON of a JSON-schema light), ``position``, ``mode``, ``target``... as the
  entity needs, and ``attributes``, the whole lares state as JSON. ``lares/<home id>/availability`` says
  ``online``, and ``offline`` when the bridge stops or its connection dies (the broker's last will).
* **Commands.** What Home Assistant sends on a command topic (``.../set``: ``ON``, ``LOCK``, ``OPEN``,
  ``{"state": "ON", "brightness": 128}``, ``21.5``...) goes through
  :meth:`HomeService.command` with source ``mqtt``: the Lares tools and the home's safety policy judge it
  like any call. A refused or unreadable command changes nothing; its sentence goes to
  ``lares/<home id>/<device id>/error`` and to the log.
* **Birth.** When Home Assistant (re)starts it says ``online`` on ``homeassistant/status``: every config
  and state is published again.
* **Bound devices.** A world device with ``mqtt: {command_topic, state_topic, format: zigbee2mqtt}``
  (``worlds/README.md``) is bound to an outside device (:meth:`HomeService.bind`): a tool's change to it
  is sent to ``command_topic`` in zigbee2mqtt's JSON, and the home takes the state the device answers on
  ``state_topic`` -- or the tool fails with "The light in the Kitchen did not answer within 2 s.". What
  the device reports on its own (someone pressed its switch) comes into the home too.

Messages arrive on paho's network thread, which only sorts them: the commands and the bound devices'
reports run one at a time on the bridge's own thread, since a command to a bound device waits for that
device's answer, which the network thread brings. Timed waits are polled with short sleeps (a timed
``Event.wait`` never ends under faketime, ``tests/conftest.py``).

Examples:
    >>> from lares_kit import load_world
    >>> configs = discovery_configs(load_world("lares-home"))
    >>> topic = "homeassistant/light/lares_lares_home/kitchen_light/config"
    >>> configs[topic]["schema"], configs[topic]["command_topic"], configs[topic]["device"]["suggested_area"]
    ('json', 'lares/lares-home/kitchen-light/set', 'Kitchen')
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from paho.mqtt.client import CallbackAPIVersion, Client

from ..devices import Attribute, attributes_of
from ..errors import LaresError, ToolError, brief
from ..ha_domains import device_class_of, domain_of, object_id
from ..home import Device, Home
from ..wording import capitalise, in_sentence
from .service import HomeService

__all__ = ["MqttBridge", "MqttError", "Zigbee2MqttLink", "discovery_configs", "from_zigbee2mqtt", "parse_address",
           "to_zigbee2mqtt"]

log = logging.getLogger(__name__)

DISCOVERY_PREFIX = "homeassistant"
CONNECT_TIMEOUT = 3.0  # seconds to reach the broker and hear its CONNACK
CLOSE_WITHIN = 0.8  # seconds close() waits for the broker to take the cleared configs and "offline"
POLL = 0.005  # seconds between looks while waiting (polled: see the module's docstring)
ONLINE, OFFLINE = "online", "offline"
# Home Assistant domains its MQTT discovery has no entity for: their devices are skipped, and said so.
NO_MQTT_ENTITY = ("media_player", "todo", "weather", "calendar")
_CLIMATE_MODES = ("auto", "off", "cool", "heat", "dry", "fan_only")
_SENSOR_CLASSES = {"temperature": "temperature", "humidity": "humidity", "co2": "carbon_dioxide",
                   "battery": "battery", "power": "power", "energy": "energy"}
_SENSOR_UNITS = {"co2": "ppm", "battery": "%", "power": "W", "energy": "kWh"}
_READING_WORDS = {"co2": "CO2"}  # a reading's name in its entity's name, where its key does not say it


class MqttError(LaresError):
    """The MQTT broker cannot be used: a malformed address, nobody listening, or a refused connection."""


class _BadCommand(ValueError):
    """A payload on a command topic that says nothing a device can do; the message is the sentence."""


def parse_address(address: str) -> tuple[str, int]:
    """A broker's ``HOST:PORT`` as ``(host, port)``; an IPv6 host is written in brackets.

    Args:
        address: What ``--mqtt`` was given, e.g. ``"127.0.0.1:1883"`` or ``"[::1]:1883"``.

    Raises:
        MqttError: not ``HOST:PORT``, or a port that is not a whole number from 1 to 65535.

    Examples:
        >>> parse_address("127.0.0.1:1883"), parse_address("[::1]:8883")
        (('127.0.0.1', 1883), ('::1', 8883))
        >>> parse_address("nohost")
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt.MqttError: The MQTT broker's address 'nohost' is not HOST:PORT (like 127.0.0.1:1883).
    """
    text = str(address).strip()
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text or (":" in host and not text.startswith("[")):
        raise MqttError(f"The MQTT broker's address {brief(address)} is not HOST:PORT (like 127.0.0.1:1883).")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise MqttError(f"The MQTT broker's address {brief(address)} has a bad port: after the colon comes a whole "
                        "number from 1 to 65535 (like 127.0.0.1:1883).")
    return host, int(port_text)


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


# ---------------------------------------------------------------- entities
@dataclass
class _Entity:
    """One Home Assistant entity of a device: its discovery config, what is published, what it takes."""

    component: str
    object_id: str
    device: Device
    config: dict[str, Any]
    # topic -> the payload a lares state publishes there (None: nothing to say)
    outputs: dict[str, Callable[[dict[str, Any]], str | None]] = field(default_factory=dict)
    # command topic -> the lares update a payload asks for (raises _BadCommand with a sentence)
    inputs: dict[str, Callable[[str], dict[str, Any]]] = field(default_factory=dict)


class _Skip(Exception):
    """A device Home Assistant's MQTT discovery cannot express; the message says why."""


class _Discovery:
    """The entities of one home's exposed devices, on topics under ``base`` and the discovery prefix."""

    def __init__(self, home: Home, *, base: str, node_id: str, prefix: str = DISCOVERY_PREFIX) -> None:
        self.home, self.base, self.node_id, self.prefix = home, base, node_id, prefix
        self.availability = f"{base}/availability"
        self.entities: list[_Entity] = []
        self.skipped: dict[str, str] = {}  # device id -> why it has no entity
        for device in home.devices.values():
            if not device.exposed:
                continue
            try:
                self.entities += self._entities(device)
            except _Skip as why:
                self.skipped[device.id] = str(why)
        self.commands = {topic: (e.device, parse) for e in self.entities for topic, parse in e.inputs.items()}
        self.by_device: dict[str, list[_Entity]] = {}  # device id -> its entities, in file order
        for entity in self.entities:
            self.by_device.setdefault(entity.device.id, []).append(entity)
        self.devices = list(self.by_device)

    def topic(self, device: Device, *parts: str) -> str:
        return "/".join([self.base, device.id, *parts])

    def config_topic(self, entity: _Entity) -> str:
        return f"{self.prefix}/{entity.component}/{self.node_id}/{entity.object_id}/config"

    # ------------------------------------------------------------ one device
    def _entities(self, device: Device) -> list[_Entity]:
        domain = domain_of(device.type, device.state)
        if domain in NO_MQTT_ENTITY:
            raise _Skip(f"{device.type}: Home Assistant's MQTT discovery has no {domain.replace('_', ' ')} entity")
        if domain == "sensor":
            return self._sensors(device)
        build = {"light": self._light, "switch": self._switch, "fan": self._fan, "cover": self._cover,
                 "lock": self._lock, "valve": self._valve, "climate": self._climate, "vacuum": self._vacuum,
                 "binary_sensor": self._binary_sensor, "alarm_control_panel": self._alarm}.get(domain)
        if build is None:  # pragma: no cover - every domain of ha_domains is handled above
            raise _Skip(f"{device.type}: no MQTT entity for the Home Assistant domain {domain}")
        entity = build(device)
        entity.config.update(self._common(device, entity.object_id, device.name))
        entity.config["json_attributes_topic"] = self.topic(device, "attributes")
        return [entity]

    def _common(self, device: Device, oid: str, name: str) -> dict[str, Any]:
        return {"name": name, "unique_id": f"{self.node_id}_{oid}",
                "device": {"identifiers": [f"{self.node_id}_{object_id(device.id)}"], "name": self.home.name,
                           "manufacturer": "lares_kit", "model": f"simulated {device.type}",
                           "suggested_area": self.home.room_name(device.room)},
                "availability_topic": self.availability, "payload_available": ONLINE,
                "payload_not_available": OFFLINE, "origin": {"name": "lares_kit"}}

    def _entity(self, component: str, device: Device, config: dict[str, Any]) -> _Entity:
        return _Entity(component, object_id(device.id), device, config)

    def _on_off(self, device: Device, entity: _Entity, words: str) -> None:
        # command_topic ON/OFF -> {"on": ...}; state_topic ON/OFF
        entity.config.update(command_topic=self.topic(device, "set"), state_topic=self.topic(device, "state"))
        entity.outputs[self.topic(device, "state")] = lambda s: "ON" if s.get("on") else "OFF"
        entity.inputs[self.topic(device, "set")] = lambda p: {"on": _choice(p, {"ON": True, "OFF": False}, words)}

    def _light(self, device: Device) -> _Entity:
        dim = _dim_key(device)
        entity = self._entity("light", device, {
            "schema": "json", "command_topic": self.topic(device, "set"), "state_topic": self.topic(device, "state"),
            "brightness": dim is not None, "supported_color_modes": ["brightness" if dim else "onoff"]})
        if dim:
            entity.config["brightness_scale"] = 255

        def state(s: dict[str, Any]) -> str:
            out: dict[str, Any] = {"state": "ON" if s.get("on") else "OFF"}
            if s.get("on"):
                out["color_mode"] = "brightness" if dim else "onoff"
                if dim and s.get(dim) is not None:
                    out["brightness"] = _scale(s[dim], device, dim, 255, to_device=False)
            return json.dumps(out)

        entity.outputs[self.topic(device, "state")] = state
        entity.inputs[self.topic(device, "set")] = lambda p: _light_command(p, device, dim)
        return entity

    def _switch(self, device: Device) -> _Entity:
        entity = self._entity("switch", device, {})
        self._on_off(device, entity, "ON or OFF")
        return entity

    def _fan(self, device: Device) -> _Entity:
        entity = self._entity("fan", device, {})
        self._on_off(device, entity, "ON or OFF")
        if "speed" in attributes_of(device.type, device.capabilities) or "speed" in device.state:
            low, high = _range(device, "speed", 0, 3)
            entity.config.update(percentage_command_topic=self.topic(device, "speed", "set"),
                                 percentage_state_topic=self.topic(device, "speed"),
                                 speed_range_min=max(1, int(low)), speed_range_max=int(high))
            entity.outputs[self.topic(device, "speed")] = lambda s: _plain(s["speed"]) if "speed" in s else None
            entity.inputs[self.topic(device, "speed", "set")] = lambda p: {"speed": _numeric(p, "a speed")}
        return entity

    def _cover(self, device: Device) -> _Entity:
        entity = self._entity("cover", device, {"command_topic": self.topic(device, "set"),
                                                "state_topic": self.topic(device, "state"), "payload_stop": None})
        if device_class_of(device.type):
            entity.config["device_class"] = device_class_of(device.type)
        if "position" in device.state:
            entity.config.update(position_topic=self.topic(device, "position"),
                                 set_position_topic=self.topic(device, "position", "set"))
            entity.outputs[self.topic(device, "state")] = lambda s: _open(float(s.get("position", 0)) > 0)
            entity.outputs[self.topic(device, "position")] = lambda s: _plain(s.get("position", 0))
            entity.inputs[self.topic(device, "set")] = lambda p: _cover_command(p, "position")
            entity.inputs[self.topic(device, "position", "set")] = lambda p: {"position": _numeric(p, "a position")}
        else:
            entity.outputs[self.topic(device, "state")] = lambda s: _open(s.get("open"))
            entity.inputs[self.topic(device, "set")] = lambda p: _cover_command(p, "open")
        return entity

    def _lock(self, device: Device) -> _Entity:
        entity = self._entity("lock", device, {"command_topic": self.topic(device, "set"),
                                               "state_topic": self.topic(device, "state")})
        entity.outputs[self.topic(device, "state")] = lambda s: "LOCKED" if s.get("locked") else "UNLOCKED"
        entity.inputs[self.topic(device, "set")] = lambda p: {
            "locked": _choice(p, {"LOCK": True, "UNLOCK": False}, "LOCK or UNLOCK")}
        return entity

    def _valve(self, device: Device) -> _Entity:
        entity = self._entity("valve", device, {"command_topic": self.topic(device, "set"),
                                                "state_topic": self.topic(device, "state"), "payload_stop": None,
                                                "reports_position": "position" in device.state})
        if "position" in device.state:
            entity.outputs[self.topic(device, "state")] = lambda s: _plain(s.get("position", 0))
            entity.inputs[self.topic(device, "set")] = lambda p: _cover_command(p, "position")
        else:
            entity.outputs[self.topic(device, "state")] = lambda s: _open(s.get("open"))
            entity.inputs[self.topic(device, "set")] = lambda p: _cover_command(p, "open")
        return entity

    def _climate(self, device: Device) -> _Entity:
        attrs = attributes_of(device.type, device.capabilities)
        has_on = "on" in attrs or "on" in device.state
        lares_modes = attrs["mode"].choices if "mode" in attrs else ("heat",)
        modes = [m for m in _CLIMATE_MODES if m in {_ha_mode(x) for x in lares_modes} or (m == "off" and has_on)]
        low, high = _range(device, "target", 5, 30)
        entity = self._entity("climate", device, {
            "modes": modes, "mode_state_topic": self.topic(device, "mode"),
            "mode_command_topic": self.topic(device, "mode", "set"),
            "temperature_state_topic": self.topic(device, "target"),
            "temperature_command_topic": self.topic(device, "target", "set"),
            "min_temp": low, "max_temp": high, "temp_step": 0.5, "temperature_unit": "C"})

        def mode(s: dict[str, Any]) -> str:
            if has_on and not s.get("on", True):
                return "off"
            return _ha_mode(str(s.get("mode", "heat")))

        def mode_command(payload: str) -> dict[str, Any]:
            wanted = payload.strip().lower()
            if wanted not in modes:
                raise _BadCommand(f"expected one of the modes {', '.join(modes)}")
            if wanted == "off" and has_on:
                return {"on": False}
            update: dict[str, Any] = {"on": True} if has_on else {}
            if "mode" in attrs:
                update["mode"] = "fan" if wanted == "fan_only" and "fan" in lares_modes else wanted
            return update

        entity.outputs[self.topic(device, "mode")] = mode
        entity.outputs[self.topic(device, "target")] = lambda s: _plain(s["target"]) if "target" in s else None
        entity.inputs[self.topic(device, "mode", "set")] = mode_command
        entity.inputs[self.topic(device, "target", "set")] = lambda p: {"target": _numeric(p, "a temperature")}
        if "temperature" in device.state:
            entity.config["current_temperature_topic"] = self.topic(device, "temperature")
            entity.outputs[self.topic(device, "temperature")] = lambda s: _plain(s["temperature"]) \
                if s.get("temperature") is not None else None
        if "fan_speed" in attrs:
            entity.config.update(fan_modes=list(attrs["fan_speed"].choices),
                                 fan_mode_state_topic=self.topic(device, "fan_mode"),
                                 fan_mode_command_topic=self.topic(device, "fan_mode", "set"))
            entity.outputs[self.topic(device, "fan_mode")] = lambda s: s.get("fan_speed")
            entity.inputs[self.topic(device, "fan_mode", "set")] = lambda p: {"fan_speed": p.strip().lower()}
        return entity

    def _vacuum(self, device: Device) -> _Entity:
        entity = self._entity("vacuum", device, {
            "command_topic": self.topic(device, "set"), "state_topic": self.topic(device, "state"),
            "supported_features": ["start", "stop", "pause", "return_home"]})
        actions = {"start": "cleaning", "stop": "idle", "pause": "paused", "return_to_base": "returning"}
        entity.outputs[self.topic(device, "state")] = lambda s: json.dumps({"state": s.get("status", "docked")})
        entity.inputs[self.topic(device, "set")] = lambda p: {
            "status": _choice(p.lower(), actions, "start, stop, pause or return_to_base")}
        return entity

    def _binary_sensor(self, device: Device) -> _Entity:
        entity = self._entity("binary_sensor", device, {"state_topic": self.topic(device, "state")})
        if device.state.get("device_class"):
            entity.config["device_class"] = device.state["device_class"]
        entity.outputs[self.topic(device, "state")] = lambda s: "ON" if s.get("on") else "OFF"
        return entity

    def _alarm(self, device: Device) -> _Entity:
        entity = self._entity("alarm_control_panel", device, {
            "command_topic": self.topic(device, "set"), "state_topic": self.topic(device, "state"),
            "supported_features": ["arm_away"], "code_arm_required": False, "code_disarm_required": False})
        entity.outputs[self.topic(device, "state")] = lambda s: "armed_away" if s.get("armed") else "disarmed"
        entity.inputs[self.topic(device, "set")] = lambda p: {"armed": _choice(
            p, {"ARM_AWAY": True, "ARM_HOME": True, "ARM_NIGHT": True, "DISARM": False}, "ARM_AWAY or DISARM")}
        return entity

    def _sensors(self, device: Device) -> list[_Entity]:
        # One entity per reading (an air sensor's temperature, humidity and CO2), all on the device's card.
        attrs = attributes_of(device.type, device.capabilities)
        readings = [k for k in device.state if k not in ("unit", "device_class")]
        if not readings:
            raise _Skip(f"{device.type}: no readings in its state to show")
        entities = []
        for key in readings:
            value, attr = device.state[key], attrs.get(key)
            oid = f"{object_id(device.id)}_{object_id(key)}"
            words = f"{device.name} {_READING_WORDS.get(key, key.replace('_', ' '))}"
            topic = self.topic(device, key)
            if isinstance(value, bool):
                entity = _Entity("binary_sensor", oid, device, {"state_topic": topic})
                entity.outputs[topic] = lambda s, key=key: "ON" if s.get(key) else "OFF"
            else:
                entity = _Entity("sensor", oid, device, {"state_topic": topic})
                entity.outputs[topic] = lambda s, key=key: None if s.get(key) is None else _plain(s[key])
                entity.config.update(_sensor_kind(key, value, attr, device.state.get("unit")))
            entity.config.update(self._common(device, oid, words))
            entity.config["json_attributes_topic"] = self.topic(device, "attributes")
            entities.append(entity)
        return entities


def _sensor_kind(key: str, value: Any, attr: Attribute | None, unit: str | None) -> dict[str, Any]:
    # A reading's unit, device class and state class, as Home Assistant checks them.
    if attr is not None and attr.kind == "choice":
        return {"device_class": "enum", "options": list(attr.choices)}
    if not isinstance(value, (int, float)):
        return {}
    unit = unit or (attr.unit if attr is not None and attr.unit else None) or _SENSOR_UNITS.get(key)
    out: dict[str, Any] = {"state_class": "measurement"}
    if unit:
        out["unit_of_measurement"] = unit
    if key in _SENSOR_CLASSES:
        out["device_class"] = _SENSOR_CLASSES[key]
    elif unit == "°C":
        out["device_class"] = "temperature"
    return out


def _open(flag: Any) -> str:
    return "open" if flag else "closed"


def _ha_mode(mode: str) -> str:
    return "fan_only" if mode == "fan" else mode


def _choice(payload: str, meanings: dict[str, Any], words: str) -> Any:
    text = payload.strip()
    for said, meaning in meanings.items():
        if text == said or text.upper() == said.upper():
            return meaning
    raise _BadCommand(f"expected {words}")


def _numeric(payload: str, what: str) -> int | float:
    try:
        return _number(payload.strip())
    except ValueError:
        raise _BadCommand(f"expected {what}, a number") from None


def _cover_command(payload: str, key: str) -> dict[str, Any]:
    # OPEN / CLOSE / STOP, or a position; `key` is what the device has: "position" (0-100) or "open".
    text = payload.strip().upper()
    if text == "STOP":  # the simulated blinds move at once: there is nothing to stop
        return {}
    if text in ("OPEN", "CLOSE"):
        opened = text == "OPEN"
        return {"position": 100 if opened else 0} if key == "position" else {"open": opened}
    if key != "position":
        raise _BadCommand("expected OPEN or CLOSE")
    try:
        return {"position": _number(text)}
    except ValueError:
        raise _BadCommand("expected OPEN, CLOSE or a position from 0 to 100") from None


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
        raise _BadCommand('expected JSON like {"state": "ON", "brightness": 128}, or ON or OFF')
    update: dict[str, Any] = {}
    if "state" in data:
        update["on"] = _choice(str(data["state"]), {"ON": True, "OFF": False}, 'a "state" of ON or OFF')
    if data.get("brightness") is not None and update.get("on", True):
        if dim is None:
            raise _BadCommand(f"this {in_sentence(device.name)} cannot be dimmed: send ON or OFF")
        if isinstance(data["brightness"], bool) or not isinstance(data["brightness"], (int, float)) \
                or not 0 <= data["brightness"] <= 255:
            raise _BadCommand('expected a "brightness" from 0 to 255')
        update["on"] = True
        update[dim] = _scale(data["brightness"], device, dim, 255, to_device=True)
    return update


def discovery_configs(home: Home, *, base: str | None = None, prefix: str = DISCOVERY_PREFIX) -> dict[str, Any]:
    """The Home Assistant discovery configs of a home's exposed devices, by config topic (no broker needed).

    Args:
        home: The home.
        base: The topics' root; default ``lares/<home id>``.
        prefix: Home Assistant's discovery prefix.

    Examples:
        >>> from lares_kit import load_world
        >>> configs = discovery_configs(load_world("townhouse"))
        >>> lock = configs["homeassistant/lock/lares_townhouse/front_door_lock/config"]
        >>> lock["unique_id"], lock["command_topic"]
        ('lares_townhouse_front_door_lock', 'lares/townhouse/front-door-lock/set')
        >>> lock["state_topic"], lock["availability_topic"], lock["device"]["name"]
        ('lares/townhouse/front-door-lock/state', 'lares/townhouse/availability', 'The townhouse')
        >>> sorted({topic.split("/")[1] for topic in configs})
        ['climate', 'cover', 'fan', 'light', 'lock', 'switch']
    """
    found = _Discovery(home, base=base or f"lares/{home.id}", node_id=f"lares_{object_id(home.id)}", prefix=prefix)
    return {found.config_topic(e): e.config for e in found.entities}


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

    def __init__(self, bridge: MqttBridge, device: Device) -> None:
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


# ---------------------------------------------------------------- the bridge
class MqttBridge:
    """The served home on an MQTT broker (see the module's docstring). Make one with :meth:`connect`.

    Examples:
        >>> from lares_kit import load_world
        >>> MqttBridge.connect(HomeService(load_world("lares-home")), "localhost")
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt.MqttError: The MQTT broker's address 'localhost' is not HOST:PORT (like 127.0.0.1:1883).
    """

    def __init__(self, service: HomeService, host: str, port: int, *, base: str | None = None,
                 prefix: str = DISCOVERY_PREFIX, source: str = "mqtt") -> None:
        home = service.home
        self.service, self.host, self.port, self.source = service, host, port, source
        self.node_id = f"lares_{object_id(home.id)}"
        self.base = base or f"lares/{home.id}"
        self.prefix = prefix
        self.discovery = _Discovery(home, base=self.base, node_id=self.node_id, prefix=prefix)
        self.availability = self.discovery.availability
        self.links = {d.id: Zigbee2MqttLink(self, d) for d in home.devices.values() if d.mqtt}
        self._by_state_topic = {link.state_topic: link for link in self.links.values()}
        self.closed = False
        self.published = 0  # times every config and state went out (start, reconnections, Home Assistant's birth)
        self._connack: Any = None
        self._online = False  # connected now (paho reconnects by itself after a lost connection)
        self._publishing = threading.Lock()  # one full publication at a time, none after close() cleared the configs
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="lares-mqtt", daemon=True)
        self._stop_listening: Callable[[], None] | None = None
        self.client = Client(callback_api_version=CallbackAPIVersion.VERSION2,
                             client_id=f"lares_kit-{object_id(home.id)}-{uuid.uuid4().hex[:8]}")
        self.client.will_set(self.availability, OFFLINE, qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self.client.reconnect_delay_set(min_delay=1, max_delay=10)

    @classmethod
    def connect(cls, service: HomeService, address: str, *, timeout: float = CONNECT_TIMEOUT,
                base: str | None = None, prefix: str = DISCOVERY_PREFIX, source: str = "mqtt") -> MqttBridge:
        """Connect to the broker at ``address``, publish the home, bind its outside devices; return the bridge.

        Args:
            service: The served home.
            address: The broker's ``HOST:PORT``.
            timeout: Seconds to reach the broker and hear it accept the connection.
            base: The root of the home's topics; default ``lares/<home id>``.
            prefix: Home Assistant's discovery prefix.
            source: Who commands from the broker speak for, for the home's safety policy.

        Raises:
            MqttError: a malformed address, or a broker that cannot be reached or refuses, in one sentence.
        """
        host, port = parse_address(address)
        bridge = cls(service, host, port, base=base, prefix=prefix, source=source)
        bridge._start(timeout)
        return bridge

    def _start(self, timeout: float) -> None:
        where = f"{self.host}:{self.port}"
        self.client.connect_timeout = timeout
        try:
            self.client.connect(self.host, self.port, keepalive=30)
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise MqttError(f"Cannot reach the MQTT broker at {where} ({reason}): is a broker such as mosquitto "
                            "running there?") from None
        self._worker.start()
        self.client.loop_start()
        if not _wait(lambda: self._connack is not None, timeout):
            self._shutdown(clear=False)
            raise MqttError(f"The MQTT broker at {where} did not accept the connection within {timeout:g} s: is it "
                            "an MQTT broker?")
        if self._connack.is_failure:
            self._shutdown(clear=False)
            raise MqttError(f"The MQTT broker at {where} refused the connection: {self._connack}.")
        if not _wait(lambda: self.published > 0, timeout):  # pragma: no cover - a local broker takes it at once
            self._shutdown(clear=False)
            raise MqttError(f"The MQTT broker at {where} did not take the home's topics within {timeout:g} s.")
        self._stop_listening = self.service.listen(self._on_event)
        for device_id, link in self.links.items():
            self.service.bind(device_id, link)

    def describe(self) -> str:
        """One line: the broker, the node id, how many devices Home Assistant sees, what is skipped or bound."""
        found = self.discovery
        text = (f"{self.host}:{self.port}, Home Assistant node {self.node_id}: {len(found.devices)} devices "
                f"published under {self.base}/")
        if found.skipped:
            text += "; skipped (" + "; ".join(f"{d} -- {why}" for d, why in found.skipped.items()) + ")"
        if self.links:
            text += "; bound to outside devices: " + ", ".join(f"{d} -> {link.command_topic}"
                                                               for d, link in self.links.items())
        return text

    @property
    def config_topics(self) -> list[str]:
        """The discovery config topics the bridge publishes, one per entity."""
        return [self.discovery.config_topic(e) for e in self.discovery.entities]

    # ------------------------------------------------------------ publishing
    def publish_all(self) -> None:
        """Publish every discovery config, the availability and every state (retained)."""
        with self._publishing:
            if self.closed:
                return
            for entity in self.discovery.entities:
                self._publish(self.discovery.config_topic(entity), json.dumps(entity.config, ensure_ascii=False))
            self._publish(self.availability, ONLINE)
            for device_id in self.discovery.devices:
                self._publish_state(device_id, dict(self.service.home.devices[device_id].state))
            robot = self.service.home.robot
            self._publish(f"{self.base}/robot", json.dumps({"id": robot.id, "room": robot.room}))
            self.published += 1

    def _publish(self, topic: str, payload: str, *, retain: bool = True) -> Any:
        return self.client.publish(topic, payload, qos=1, retain=retain)

    def _publish_state(self, device_id: str, state: dict[str, Any]) -> None:
        self._publish(f"{self.base}/{device_id}/attributes", json.dumps(state, ensure_ascii=False, default=str))
        for entity in self.discovery.by_device.get(device_id, []):
            for topic, payload_of in entity.outputs.items():
                payload = payload_of(state)
                if payload is not None:
                    self._publish(topic, payload)

    def _on_event(self, event: dict[str, Any]) -> None:
        # A change in the home (any door, any thread): its new state on its topics.
        if self.closed:
            return
        if event.get("type") == "device" and event.get("id") in self.discovery.devices:
            self._publish_state(event["id"], event.get("state", {}))
        elif event.get("type") == "robot":
            self._publish(f"{self.base}/robot", json.dumps({"id": event.get("id"), "room": event.get("room")}))

    # ------------------------------------------------------------ receiving (paho's network thread)
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        self._connack = reason_code
        if reason_code.is_failure:
            return
        if self.published and not self._online:
            log.warning("Connected again to the MQTT broker at %s:%s.", self.host, self.port)
        self._online = True
        topics = [(f"{self.prefix}/status", 1)] + [(t, 1) for t in self.discovery.commands]
        topics += [(t, 1) for t in self._by_state_topic]
        client.subscribe(topics)
        self._jobs.put(self.publish_all)  # at start, and again after a lost connection comes back

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if not self.closed and self._online:
            log.warning("Lost the MQTT broker at %s:%s (%s); trying again.", self.host, self.port, reason_code)
        self._online = False

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            topic, payload = message.topic, message.payload
            if topic == f"{self.prefix}/status":
                if payload.decode("utf-8", "replace").strip().lower() == ONLINE:
                    self._jobs.put(self.publish_all)
            elif topic in self._by_state_topic:
                link = self._by_state_topic[topic]
                if not link.heard(payload):
                    self._jobs.put(lambda: self._report(link, payload))
            elif topic in self.discovery.commands:
                self._jobs.put(lambda: self._command(topic, payload))
        except Exception:  # pragma: no cover - never let a message end paho's loop
            log.exception("could not handle the MQTT message on %s", getattr(message, "topic", "?"))

    # ------------------------------------------------------------ the bridge's thread
    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # pragma: no cover - a bug must not stop the bridge
                log.exception("the MQTT bridge failed on a message")

    def _command(self, topic: str, payload: bytes) -> None:
        # A command from Home Assistant (or anyone) on a command topic: through the tools and the safety policy.
        device, parse = self.discovery.commands[topic]
        text = payload.decode("utf-8", "replace")
        words = _words(device, self.service.home)
        try:
            update = parse(text)
        except _BadCommand as exc:
            self._refused(device, f"The command {brief(text)} for {words} on {topic} is not understood: {exc}.")
            return
        if update:
            result = self.service.command(device.id, update, source=self.source)
            if not result.ok:
                self._refused(device, result.text)
        self._publish_state(device.id, dict(self.service.home.devices[device.id].state))  # the truth, changed or not

    def _refused(self, device: Device, sentence: str) -> None:
        log.info("%s", sentence)  # lares serve-home shows it; a notebook reads the error topic instead
        self._publish(f"{self.base}/{device.id}/error", sentence, retain=False)

    def _report(self, link: Zigbee2MqttLink, payload: bytes) -> None:
        # An outside device said its state without being asked (someone pressed its switch): into the home.
        report = _json_object(payload)
        if report is None:
            log.warning("%s sent %s on %s, which is not a zigbee2mqtt state (a JSON object)",
                        link.device.id, brief(payload.decode("utf-8", "replace")), link.state_topic)
            return
        update = from_zigbee2mqtt(link.device, report)
        if update:
            self.service.apply_state(link.device.id, update)

    # ------------------------------------------------------------ stopping
    def close(self) -> None:
        """Clear the retained configs, say ``offline``, disconnect: Home Assistant forgets the home. Within ~1 s."""
        self._shutdown(clear=True)

    def _shutdown(self, *, clear: bool) -> None:
        with self._publishing:
            if self.closed:
                return
            self.closed = True
        if self._stop_listening is not None:
            self._stop_listening()
        for device_id in self.links:  # the simulation holds these devices again
            self.service.unbind(device_id)
        if clear and self.client.is_connected():  # else the broker says "offline" itself (the will)
            sent = [self._publish(topic, "") for topic in self.config_topics]
            sent.append(self._publish(self.availability, OFFLINE))
            _wait(lambda: all(info.is_published() for info in sent), CLOSE_WITHIN)
        self.client.disconnect()
        self.client.loop_stop()
        self._jobs.put(None)
        if self._worker.is_alive():
            self._worker.join()

    def __enter__(self) -> MqttBridge:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _wait(done: Callable[[], bool], seconds: float) -> bool:
    # Polled with short sleeps: a timed Event.wait never ends under faketime (tests/conftest.py).
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True
