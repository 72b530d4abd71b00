"""Home Assistant's MQTT discovery for a home: one entity per device (or per reading), its config and topics.

Part of the MQTT door of ``lares serve-home`` (:mod:`.mqtt`; taught in
``notebooks/18_a_real_home.ipynb``). :func:`discovery_configs` gives every
retained config the bridge publishes; the bridge also uses each entity's
state outputs and command parsers. The component comes from
:func:`lares_kit.ha.domains.domain_of`.

Examples:
    >>> from lares_kit import load_world
    >>> configs = discovery_configs(load_world("lares-home"))
    >>> topic = "homeassistant/light/lares_lares_home/kitchen_light/config"
    >>> configs[topic]["schema"], configs[topic]["command_topic"], configs[topic]["device"]["suggested_area"]
    ('json', 'lares/lares-home/kitchen-light/set', 'Kitchen')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from ..ha.domains import device_class_of, domain_of, object_id
from ..home.devices import Attribute, attributes_of
from ..home.graph import Device, Home
from .mqtt_payloads import (
    BadCommand,
    _choice,
    _cover_command,
    _dim_key,
    _ha_mode,
    _light_command,
    _numeric,
    _open,
    _plain,
    _range,
    _scale,
)

__all__ = ["DISCOVERY_PREFIX", "ONLINE", "OFFLINE", "NO_MQTT_ENTITY", "discovery_configs"]

ONLINE, OFFLINE = "online", "offline"
DISCOVERY_PREFIX = "homeassistant"
# Home Assistant domains its MQTT discovery has no entity for: their devices are skipped, and said so.
NO_MQTT_ENTITY = ("media_player", "todo", "weather", "calendar")
_CLIMATE_MODES = ("auto", "off", "cool", "heat", "dry", "fan_only")
_SENSOR_CLASSES = {"temperature": "temperature", "humidity": "humidity", "co2": "carbon_dioxide",
                   "battery": "battery", "power": "power", "energy": "energy"}
_SENSOR_UNITS = {"co2": "ppm", "battery": "%", "power": "W", "energy": "kWh"}
_READING_WORDS = {"co2": "CO2"}  # a reading's name in its entity's name, where its key does not say it

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
    # command topic -> the lares update a payload asks for (raises BadCommand with a sentence)
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
        entity.config.update(self._common(device, entity.object_id, None))
        entity.config["json_attributes_topic"] = self.topic(device, "attributes")
        return [entity]

    def _common(self, device: Device, oid: str, name: str | None) -> dict[str, Any]:
        # Home Assistant names an entity "<device name> <entity name>", or the device's name alone when the
        # entity's is null: one device per lares device, named with its room ("Kitchen Light"), so five
        # lights called "Light" stay apart; a sensor's readings are its entities ("Office Air sensor CO2").
        return {"name": name, "unique_id": f"{self.node_id}_{oid}",
                "device": {"identifiers": [f"{self.node_id}_{object_id(device.id)}"],
                           "name": _titled(device, self.home),
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
                raise BadCommand(f"expected one of the modes {', '.join(modes)}")
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
            words = _READING_WORDS.get(key, key.replace("_", " "))
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


def _titled(device: Device, home: Home) -> str:
    """A device's name for Home Assistant: with its room's in front unless it already says it.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("townhouse")
        >>> _titled(home.devices["kitchen-light"], home), _titled(home.devices["front-door-lock"], home)
        ('Kitchen Spotlights', 'Hall Front door lock')
    """
    room = home.room_name(device.room)
    return device.name if room.lower() in device.name.lower() else f"{room} {device.name}"


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
        ('lares/townhouse/front-door-lock/state', 'lares/townhouse/availability', 'Hall Front door lock')
        >>> sorted({topic.split("/")[1] for topic in configs})
        ['climate', 'cover', 'fan', 'light', 'lock', 'switch']
    """
    found = _Discovery(home, base=base or f"lares/{home.id}", node_id=f"lares_{object_id(home.id)}", prefix=prefix)
    return {found.config_topic(e): e.config for e in found.entities}

