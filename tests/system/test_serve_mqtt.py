"""The MQTT door of ``lares serve-home`` (lares_kit.serve.mqtt), against a real Mosquitto broker on loopback.

An independent paho client plays the outside world: Home Assistant reading the discovery configs and
sending commands, and a zigbee2mqtt light a world device is bound to. Every wait polls with a timeout
(a timed Event.wait never ends under faketime, tests/conftest.py).
"""

import json
import logging
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from mosquitto import Outside, free_port, running_mosquitto, wait_until

from lares_kit import WorldError, load_world
from lares_kit.cli.commands import main
from lares_kit.home.graph import Device
from lares_kit.home.worlds import parse_world, read_yaml
from lares_kit.sentences.markers import DONE_HINT
from lares_kit.serve.mqtt import MqttBridge, MqttError, discovery_configs, from_zigbee2mqtt
from lares_kit.serve.mqtt_zigbee2mqtt import BadReport
from lares_kit.serve.service import HomeService

WORLDS = Path(__file__).resolve().parents[2] / "worlds"
LAMP = {"command_topic": "zigbee2mqtt/kitchen-lamp/set", "state_topic": "zigbee2mqtt/kitchen-lamp",
        "format": "zigbee2mqtt"}


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture
def broker(tmp_path):
    """A Mosquitto of its own on a free loopback port, anonymous, no persistence; yields the port."""
    with running_mosquitto(tmp_path) as ports:
        yield ports[0]


@pytest.fixture
def outside(broker):
    clients: list[Outside] = []

    def make(*topics: str) -> Outside:
        clients.append(Outside(broker, *topics))
        return clients[-1]

    yield make
    for client in clients:
        client.close()


def world(name: str, **changes) -> dict:
    """A world file's data, with ``device id={key: value}`` changes (``expose: false``, ``mqtt: {...}``)."""
    data = read_yaml((WORLDS / f"{name}.yaml").read_text())  # YAML 1.2: `on:` is the key "on"
    devices = {d["id"]: d for d in data["devices"]}
    for device_id, keys in changes.items():
        devices[device_id.replace("_", "-")].update(keys)
    return data


@pytest.fixture
def townhouse():
    """The townhouse with a dimmable floor lamp and a back door lock hidden from the assistant."""
    data = world("townhouse", living_room_lamp={"state": {"on": False, "brightness": 0}},
                 back_door_lock={"expose": False})
    return HomeService(parse_world(data, "townhouse.yaml"))


@pytest.fixture
def bridge(broker, townhouse):
    with MqttBridge.connect(townhouse, f"127.0.0.1:{broker}") as bridge:
        yield bridge


# ---------------------------------------------------------------- discovery
def test_discovery_configs_arrive_retained_and_well_formed(bridge, outside):
    home = bridge.service.home
    configs = outside().retained_now("homeassistant/#")
    assert sorted(configs) == sorted(bridge.config_topics)
    payloads = {topic: json.loads(text) for topic, text in configs.items()}
    unique_ids = [p["unique_id"] for p in payloads.values()]
    assert len(unique_ids) == len(set(unique_ids))
    seen_devices = set()
    for topic, config in payloads.items():
        component, node_id, object_id = topic.split("/")[1:4]
        assert node_id == "lares_townhouse" and topic.endswith("/config")
        device_id = next(d for d in home.devices if config["device"]["identifiers"] == [f"lares_townhouse_"
                                                                                         f"{d.replace('-', '_')}"])
        device = home.devices[device_id]
        seen_devices.add(device_id)
        room = home.room_name(device.room)
        titled = device.name if room.lower() in device.name.lower() else f"{room} {device.name}"
        assert config["device"] == {"identifiers": [f"lares_townhouse_{object_id}"], "name": titled,
                                    "manufacturer": "lares_kit", "model": f"simulated {device.type}",
                                    "suggested_area": room}
        assert config["name"] is None and config["unique_id"] == f"lares_townhouse_{object_id}"  # the device's
        assert (config["availability_topic"], config["payload_available"], config["payload_not_available"]) == \
            ("lares/townhouse/availability", "online", "offline")
        state_topic = config.get("state_topic") or config["mode_state_topic"]
        command_topic = config.get("command_topic") or config["mode_command_topic"]
        assert state_topic.startswith(f"lares/townhouse/{device_id}/")
        assert command_topic.startswith(f"lares/townhouse/{device_id}/") and command_topic.endswith("/set")
        expected = {"light": "light", "lock": "lock", "thermostat": "climate", "blinds": "cover", "fan": "fan"}
        assert component == expected.get(device.type, "switch"), device_id
        if component == "light":
            assert config["schema"] == "json"
            assert config["brightness"] is (device_id == "living-room-lamp")
    exposed = {d.id for d in home.devices.values() if d.exposed}
    assert seen_devices == exposed - {"living-room-tv"}  # a media player: no MQTT discovery for it
    assert "back-door-lock" not in seen_devices and "back_door_lock" not in json.dumps(configs)
    assert "living-room-tv" in bridge.describe() and "media player" in bridge.describe()
    assert "lares_townhouse" in bridge.describe() and f"{len(seen_devices)} devices" in bridge.describe()


def test_states_are_published_retained_with_availability(bridge, outside):
    states = outside().retained_now("lares/townhouse/#")
    assert states["lares/townhouse/availability"] == "online"
    assert states["lares/townhouse/front-door-lock/state"] == "LOCKED"
    assert json.loads(states["lares/townhouse/hall-light/state"]) == {"state": "ON", "color_mode": "onoff"}
    assert states["lares/townhouse/hall-thermostat/mode"] == "heat"
    assert states["lares/townhouse/hall-thermostat/target"] == "19"
    assert states["lares/townhouse/living-room-blinds/position"] == "0"
    assert json.loads(states["lares/townhouse/oven/attributes"]) == {"on": False, "temperature": 0}
    assert "lares/townhouse/back-door-lock/state" not in states  # hidden from the assistant


def test_discovery_configs_of_every_world_have_unique_ids():
    for path in sorted(WORLDS.glob("*.yaml")):
        configs = discovery_configs(load_world(path))
        ids = [c["unique_id"] for c in configs.values()]
        assert len(ids) == len(set(ids)), path.name


# ---------------------------------------------------------------- commands
def test_a_command_changes_the_home_and_its_state_is_published(bridge, outside):
    home, world_outside = bridge.service.home, outside("lares/townhouse/#")
    world_outside.publish("lares/townhouse/living-room-lamp/set", '{"state": "ON", "brightness": 128}')
    state = world_outside.last("lares/townhouse/living-room-lamp/state", where=lambda p: '"brightness": 128' in p)
    assert home.devices["living-room-lamp"].state == {"on": True, "brightness": 50}
    assert json.loads(state) == {"state": "ON", "color_mode": "brightness", "brightness": 128}

    world_outside.publish("lares/townhouse/living-room-blinds/position/set", "40")
    assert world_outside.last("lares/townhouse/living-room-blinds/position", where=lambda p: p == "40") == "40"
    assert home.devices["living-room-blinds"].state == {"position": 40}

    world_outside.publish("lares/townhouse/hall-thermostat/target/set", "21.5")
    world_outside.last("lares/townhouse/hall-thermostat/target", where=lambda p: p == "21.5")
    assert home.devices["hall-thermostat"].state["target"] == 21.5

    world_outside.publish("lares/townhouse/kettle/set", "ON")
    world_outside.last("lares/townhouse/kettle/state", where=lambda p: p == "ON")
    assert home.devices["kettle"].state == {"on": True}


def test_a_refused_or_unreadable_command_changes_nothing(bridge, outside):
    home, world_outside = bridge.service.home, outside("lares/townhouse/+/error", "lares/townhouse/+/state")
    world_outside.publish("lares/townhouse/front-door-lock/set", "UNLOCK")
    refusal = world_outside.last("lares/townhouse/front-door-lock/error")
    assert refusal.startswith("Refused by the home's safety policy: unlocking a door (front-door-lock)")
    assert "'mqtt'" in refusal
    assert home.devices["front-door-lock"].state == {"locked": True}
    assert world_outside.last("lares/townhouse/front-door-lock/state") == "LOCKED"

    world_outside.publish("lares/townhouse/kettle/set", "BOIL")
    sentence = world_outside.last("lares/townhouse/kettle/error")
    assert sentence == ("The command 'BOIL' for the kettle in the Kitchen on lares/townhouse/kettle/set is not "
                        "understood: expected ON or OFF.")
    assert home.devices["kettle"].state == {"on": False}
    world_outside.publish("lares/townhouse/living-room-lamp/set", "{not json")
    assert "expected JSON like" in world_outside.last("lares/townhouse/living-room-lamp/error")
    assert home.devices["living-room-lamp"].state == {"on": False, "brightness": 0}
    world_outside.publish("lares/townhouse/kettle/set", "ON")  # the bridge's thread lives on
    world_outside.last("lares/townhouse/kettle/state", where=lambda p: p == "ON")


# ---------------------------------------------------------------- birth and stop
def test_home_assistant_birth_publishes_the_configs_again(bridge, outside):
    topic = "homeassistant/light/lares_townhouse/hall_light/config"
    ha = outside(topic)
    ha.last(topic)
    assert len(ha.heard(topic, retained=True)) == 1 and not ha.heard(topic, retained=False)
    ha.publish("homeassistant/status", "online")
    again = ha.last(topic, where=lambda p: bool(p))
    wait_until(lambda: ha.heard(topic, retained=False), 5, "the config published again")
    assert json.loads(again)["unique_id"] == "lares_townhouse_hall_light"


def test_close_clears_the_retained_configs_and_says_offline(broker, townhouse, outside):
    bridge = MqttBridge.connect(townhouse, f"127.0.0.1:{broker}")
    assert len(outside().retained_now("homeassistant/#")) == len(bridge.config_topics)
    started = time.monotonic()
    bridge.close()
    assert time.monotonic() - started < 1.5
    assert outside().retained_now("homeassistant/#") == {}
    assert outside().retained_now("lares/townhouse/availability") == {"lares/townhouse/availability": "offline"}
    bridge.close()  # a second close does nothing


# ---------------------------------------------------------------- bound devices
class Zigbee2MqttLight:
    """A zigbee2mqtt light on the broker: takes JSON commands on its /set topic, answers on its state topic."""

    def __init__(self, client: Outside, *, silent: bool = False, garbage: dict | None = None) -> None:
        self.client, self.silent = client, silent
        self.garbage = garbage  # said on the state topic before each answer (or instead of it, when silent)
        self.state = {"state": "OFF", "brightness": 254, "linkquality": 87}
        self.commands: list[dict] = []
        client.on_message = self._command
        client.subscribe(LAMP["command_topic"])

    def _command(self, topic: str, payload: str) -> None:
        if topic != LAMP["command_topic"]:
            return
        self.commands.append(json.loads(payload))
        if self.garbage is not None:
            self.client.client.publish(LAMP["state_topic"], json.dumps(self.garbage))
        if not self.silent:
            self.state.update(self.commands[-1])
            self.client.client.publish(LAMP["state_topic"], json.dumps(self.state))


@pytest.fixture
def bound_home(broker):
    service = HomeService(parse_world(world("lares-home", kitchen_light={"mqtt": dict(LAMP)}), "lares-home.yaml"))
    with MqttBridge.connect(service, f"127.0.0.1:{broker}") as bridge:
        yield bridge


def test_a_tool_call_reaches_the_bound_device_and_its_state_comes_back(bound_home, outside):
    service, lamp = bound_home.service, Zigbee2MqttLight(outside())
    watcher = outside("lares/lares-home/kitchen-light/state")
    result = service.call("set_light", {"light_id": "kitchen-light", "on": True})
    assert result.ok, result.text
    assert lamp.commands == [{"state": "ON"}]
    assert service.home.devices["kitchen-light"].state == {"on": True}
    watcher.last("lares/lares-home/kitchen-light/state", where=lambda p: json.loads(p)["state"] == "ON")
    # someone presses the light's switch: its report comes into the home on its own
    lamp.client.publish(LAMP["state_topic"], json.dumps({"state": "OFF", "linkquality": 80}))
    wait_until(lambda: service.home.devices["kitchen-light"].state == {"on": False}, 5, "the report applied")
    watcher.last("lares/lares-home/kitchen-light/state", where=lambda p: json.loads(p)["state"] == "OFF")
    assert "kitchen-light -> zigbee2mqtt/kitchen-lamp/set" in bound_home.describe()


def test_an_agent_episode_through_mcp_reaches_the_bound_device(bound_home, outside):
    # The whole path: an agent's tool call -> MCP -> the served home -> the broker -> the device, and back.
    from lares_kit import run_agent
    from lares_kit.serve.app import HomeServer
    from lares_kit.serve.client import mcp_tools

    service, lamp = bound_home.service, Zigbee2MqttLight(outside())
    with HomeServer(service, port=0) as server, \
            mcp_tools(server.mcp_url, headers=getattr(server, "headers", None)) as tools:  # its token, if any
        home = tools.home()
        episode = run_agent("turn on the light in the kitchen", home, "intent-action", tools=tools)
    assert episode.status == "done" and lamp.commands == [{"state": "ON"}]
    assert service.home.devices["kitchen-light"].state == home.devices["kitchen-light"].state == {"on": True}
    assert episode.tool_calls[0].result == ("The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit. "
                                            + DONE_HINT)


def test_a_silent_bound_device_fails_the_call_and_changes_nothing(bound_home, outside):
    service, lamp = bound_home.service, Zigbee2MqttLight(outside(), silent=True)
    started = time.monotonic()
    result = service.call("set_light", {"light_id": "kitchen-light", "on": True})
    assert 1.9 < time.monotonic() - started < 4
    assert not result.ok
    assert result.text == "The light in the Kitchen did not answer within 2 s."
    assert lamp.commands == [{"state": "ON"}]
    assert service.home.devices["kitchen-light"].state == {"on": False}


def test_serve_home_with_a_bound_device_publishes_and_stops_on_ctrl_c(broker, outside, tmp_path):
    path = tmp_path / "bound-home.yaml"
    path.write_text(yaml.safe_dump(world("lares-home", kitchen_light={"mqtt": dict(LAMP)})))
    out, err = open(tmp_path / "out.txt", "wb"), open(tmp_path / "err.txt", "wb")
    process = subprocess.Popen([sys.executable, "-m", "lares_kit", "serve-home", str(path), "--mqtt",
                                f"127.0.0.1:{broker}"], stdout=out, stderr=err)
    try:
        ha = outside("homeassistant/#")
        config = json.loads(ha.last("homeassistant/light/lares_lares_home/kitchen_light/config", 30))
        assert config["command_topic"] == "lares/lares-home/kitchen-light/set"
        wait_until(lambda: "MQTT: 127.0.0.1" in (tmp_path / "out.txt").read_text(), 5, "the MQTT line printed")
        said = (tmp_path / "out.txt").read_text()
        url = re.search(r"at (http://\S+) ", said).group(1)
        token = re.search(r"token: (\S+)", said)  # a server that asks for one prints it
        url += f"/?token={token.group(1)}" if token else ""
        wait_until(lambda: answers(url), 10, "the HTTP door answering")  # serving: Ctrl-C is handled now
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        assert process.wait(timeout=5) == 0
        assert time.monotonic() - started < 2
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        out.close()
        err.close()
    assert "Traceback" not in (tmp_path / "err.txt").read_text()
    assert outside().retained_now("homeassistant/#") == {}


# ---------------------------------------------------------------- what bound devices report
def dropped(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().endswith("the report is dropped.")]


@pytest.mark.parametrize(("device_id", "bad", "why", "good", "state"), [
    ("front-door-lock", {"locked": "maybe"}, "locked 'maybe' is not true or false",
     {"state": "UNLOCK", "lock_state": "unlocked"}, {"locked": False}),
    ("living-room-lamp", {"on": "banana"}, "on 'banana' is not true or false",
     {"state": "ON", "brightness": 127}, {"on": True, "brightness": 50}),
    ("living-room-lamp", {"state": "ON", "brightness": 900}, "brightness 900 is not a number from 0 to 254",
     {"state": "ON", "brightness": 254}, {"on": True, "brightness": 100}),
])
def test_a_bound_report_that_does_not_fit_is_logged_and_dropped(broker, outside, caplog, device_id, bad, why, good,
                                                                state):
    caplog.set_level(logging.WARNING, logger="lares_kit.serve")
    device = outside()
    device.publish(LAMP["state_topic"], json.dumps(bad), retain=True)  # left on the broker before the bridge starts
    lamp = {"on": False, "brightness": 0}
    changes = {device_id.replace("-", "_"): {"mqtt": dict(LAMP)}, "living_room_lamp": {"state": lamp}}
    if device_id == "living-room-lamp":
        changes["living_room_lamp"] = {"state": lamp, "mqtt": dict(LAMP)}
    service = HomeService(parse_world(world("townhouse", **changes), "townhouse.yaml"))
    before = dict(service.home.devices[device_id].state)
    with MqttBridge.connect(service, f"127.0.0.1:{broker}"):
        wait_until(lambda: len(dropped(caplog)) == 1, 5, "the retained report dropped")
        assert service.home.devices[device_id].state == before
        device.publish(LAMP["state_topic"], json.dumps(bad))  # and live
        wait_until(lambda: len(dropped(caplog)) == 2, 5, "the live report dropped")
        assert service.home.devices[device_id].state == before
        device.publish(LAMP["state_topic"], json.dumps(good))  # a good report still comes in
        wait_until(lambda: service.home.devices[device_id].state == state, 5, "the good report applied")
    words = {"front-door-lock": "The front door lock in the Hall", "living-room-lamp": "The floor lamp in the "
             "Living room"}[device_id]
    assert dropped(caplog)[0] == (f"{words} ({device_id}) sent {json.dumps(bad)!r} on zigbee2mqtt/kitchen-lamp, "
                                  f"which does not fit it ({why}): the report is dropped.")
    assert len(dropped(caplog)) == 2


def test_a_tool_does_not_take_a_report_that_does_not_fit_for_the_answer(bound_home, outside, caplog):
    caplog.set_level(logging.WARNING, logger="lares_kit.serve")
    service, lamp = bound_home.service, Zigbee2MqttLight(outside(), garbage={"on": "banana"})
    result = service.call("set_light", {"light_id": "kitchen-light", "on": True})  # garbage, then the answer
    assert result.ok, result.text
    assert service.home.devices["kitchen-light"].state == {"on": True}
    assert len(dropped(caplog)) == 1 and "(on 'banana' is not true or false)" in dropped(caplog)[0]
    lamp.silent = True  # only garbage now: the tool waits it out and fails, and nothing changes
    result = service.call("set_light", {"light_id": "kitchen-light", "on": False})
    assert not result.ok
    assert result.text == ("The light in the Kitchen did not answer within 2 s with a state that fits it (it sent "
                           "'{\"on\": \"banana\"}': on 'banana' is not true or false).")
    assert service.home.devices["kitchen-light"].state == {"on": True}
    assert lamp.commands == [{"state": "ON"}, {"state": "OFF"}]


LOCK = Device("door", "Front door", "lock", "hall", {"locked": True})
DIMMED = Device("lamp", "Lamp", "light", "kitchen", {"on": False, "brightness": 0})
PLAIN = Device("lamp", "Lamp", "light", "kitchen", {"on": False})
HEATING = Device("trv", "Thermostat", "thermostat", "hall", {"target": 19, "mode": "heat"})
SENSOR = Device("air", "Air sensor", "sensor", "hall", {"temperature": 20, "battery": 90})


@pytest.mark.parametrize(("device", "report", "update"), [
    (LOCK, {"state": "LOCK", "lock_state": "locked", "linkquality": 90}, {"locked": True}),
    (LOCK, {"lock_state": "not_fully_locked"}, {"locked": False}),  # jammed half-way: not locked
    (DIMMED, {"state": "OFF", "brightness": 0}, {"on": False, "brightness": 0}),
    (PLAIN, {"state": "ON", "brightness": 900, "color_temp": 300}, {"on": True}),  # the world does not dim it
    (HEATING, {"occupied_heating_setpoint": 21.5, "system_mode": "HEAT", "local_temperature": 20}, {"target": 21.5,
                                                                                                 "mode": "heat"}),
    (SENSOR, {"temperature": 21.5, "battery": 88, "voltage": 3000}, {"temperature": 21.5, "battery": 88}),
])
def test_a_report_that_fits_comes_in_lares_terms(device, report, update):
    assert from_zigbee2mqtt(device, report) == update


@pytest.mark.parametrize(("device", "report", "why"), [
    (LOCK, {"locked": "maybe"}, "locked 'maybe' is not true or false"),
    (LOCK, {"state": "OPEN"}, "state 'OPEN' is not LOCK or UNLOCK"),
    (LOCK, {"lock_state": "jammed"}, "lock_state 'jammed' is not locked, unlocked or not_fully_locked"),
    (DIMMED, {"on": "banana"}, "on 'banana' is not true or false"),
    (DIMMED, {"state": "ON", "on": "banana"}, "on 'banana' is not true or false"),  # every value is checked
    (DIMMED, {"state": "ON", "brightness": 900}, "brightness 900 is not a number from 0 to 254"),
    (DIMMED, {"brightness": float("nan")}, "brightness nan is not a number from 0 to 254"),
    (DIMMED, {"brightness": True}, "brightness True is not a number from 0 to 254"),
    (DIMMED, {"state": "DIM"}, "state 'DIM' is not ON or OFF"),
    (HEATING, {"occupied_heating_setpoint": 45}, "target 45 is not a number from 5 to 30 °C"),
    (HEATING, {"system_mode": "banana"}, "mode 'banana' is not one of heat, cool, auto, off"),
    (HEATING, {"temperature": 21}, "temperature is not in its state (the world device has no such attribute)"),
    (SENSOR, {"battery": "full"}, "battery 'full' is not a number"),
    (SENSOR, {"temperature": float("inf")}, "temperature inf is not a number from -40 to 60 °C"),
    (SENSOR, {"temperature": 10 ** 400}, "temperature <a number of 1,329 bits> is not a number from -40 to 60 °C"),
    (SENSOR, {"co2": 400}, "co2 is not in its state (the world device has no such attribute)"),
])
def test_a_report_that_does_not_fit_is_refused_whole_with_what_is_wrong(device, report, why):
    with pytest.raises(BadReport) as refused:
        from_zigbee2mqtt(device, {**report, "linkquality": 80})
    assert str(refused.value) == why


# ---------------------------------------------------------------- births
def test_a_flood_of_births_while_the_bridge_is_busy_is_one_republication(bridge, outside):
    # The bridge's thread is held busy while 3,000 births and then a command arrive. Births heard while a
    # republication waits ask for none more: the thread finds one republication, then the command.
    home, ha = bridge.service.home, outside()
    before, release = bridge.published, threading.Event()
    bridge._jobs.put(lambda: wait_until(release.is_set, 60, "the test letting the bridge go"))
    for _ in range(2999):
        ha.client.publish("homeassistant/status", "online", qos=1)
    ha.publish("homeassistant/status", "online")
    ha.publish("lares/townhouse/kettle/set", "ON")
    wait_until(lambda: bridge._jobs.qsize() >= 2, 30, "the command queued behind the births")
    release.set()
    wait_until(lambda: home.devices["kettle"].state == {"on": True}, 30, "the command applied")
    assert bridge.published - before == 1
    assert bridge.births > 1000  # the flood did reach the bridge (the broker may drop a few QoS 0 births)


def test_a_command_right_after_a_flood_of_births_is_applied(bridge, outside):
    # As an attack sends it: 3,000 births as fast as they go, then a command at once. Before births were
    # coalesced each one republished everything, the broker dropped messages and the command was lost.
    home, ha = bridge.service.home, outside("lares/townhouse/kettle/state")
    before = bridge.published
    for _ in range(3000):
        ha.client.publish("homeassistant/status", "online", qos=1)
    ha.publish("lares/townhouse/kettle/set", "ON")
    wait_until(lambda: home.devices["kettle"].state == {"on": True}, 30, "the command applied")
    ha.last("lares/townhouse/kettle/state", 30, where=lambda p: p == "ON")
    republished = bridge.published - before
    assert 1 <= republished <= bridge.births / 3, (republished, bridge.births)


# ---------------------------------------------------------------- no broker
def test_a_broker_that_is_not_there_is_one_sentence(broker):
    service, closed = HomeService(load_world("lares-home")), free_port()
    started = time.monotonic()
    with pytest.raises(MqttError, match=rf"^Cannot reach the MQTT broker at 127\.0\.0\.1:{closed} \("):
        MqttBridge.connect(service, f"127.0.0.1:{closed}")
    assert time.monotonic() - started < 4
    with pytest.raises(MqttError, match=r"^The MQTT broker's address 'nohost' is not HOST:PORT"):
        MqttBridge.connect(service, "nohost")
    with pytest.raises(MqttError, match="a whole number from 1 to 65535"):
        MqttBridge.connect(service, "127.0.0.1:99999")


def test_serve_home_without_a_broker_exits_2_with_a_sentence(capsys):
    closed = free_port()
    done = subprocess.run([sys.executable, "-m", "lares_kit", "serve-home", "lares-home", "--mqtt",
                           f"127.0.0.1:{closed}"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith(f"lares: Cannot reach the MQTT broker at 127.0.0.1:{closed} (")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert main(["serve-home", "lares-home", "--mqtt", "nohost"]) == 2
    assert capsys.readouterr().err == ("lares: The MQTT broker's address 'nohost' is not HOST:PORT "
                                       "(like 127.0.0.1:1883).\n")


# ---------------------------------------------------------------- the world file's mqtt: key
@pytest.mark.parametrize(("mqtt", "where", "words"), [
    ({**LAMP, "qos": 1}, "devices[0].mqtt", "unknown key 'qos'"),
    ({"command_topic": "z/lamp/set", "format": "zigbee2mqtt"}, "devices[0].mqtt", "missing required key 'state_topic'"),
    ({**LAMP, "format": "tasmota"}, "devices[0].mqtt.format", "expected zigbee2mqtt"),
    ({k: v for k, v in LAMP.items() if k != "format"}, "devices[0].mqtt", "missing required key 'format'"),
    ({**LAMP, "state_topic": "zigbee2mqtt/#"}, "devices[0].mqtt.state_topic", "cannot hold the wildcards"),
    ({**LAMP, "command_topic": 7}, "devices[0].mqtt.command_topic", "expected a topic"),
    ({**LAMP, "timeout": 0}, "devices[0].mqtt.timeout", "more than 0 and at most 60"),
    ("zigbee2mqtt/lamp", "devices[0].mqtt", "expected a mapping, got a string"),
])
def test_a_bad_mqtt_key_in_a_world_file_is_a_sentence(mqtt, where, words):
    data = {"id": "tiny", "rooms": [{"id": "a"}], "robot": {"id": "robot", "room": "a"},
            "devices": [{"id": "lamp", "type": "light", "room": "a", "state": {"on": False}, "mqtt": mqtt}]}
    with pytest.raises(WorldError) as caught:
        parse_world(data, "tiny.yaml")
    assert str(caught.value).startswith(f"tiny.yaml: {where}: ") and words in str(caught.value)
    home = parse_world({**data, "devices": [{**data["devices"][0], "mqtt": {**LAMP, "timeout": 0.5}}]}, "tiny.yaml")
    assert home.devices["lamp"].mqtt == {**LAMP, "timeout": 0.5}
