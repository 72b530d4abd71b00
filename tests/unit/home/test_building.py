"""The smart building world and how the device tools read on it."""

import pytest

from lares_kit import Toolbox, check_home, load_world
from lares_kit.cli.commands import main
from lares_kit.home.devices import attributes_of, check_value


@pytest.fixture
def home():
    return load_world("smart-building")


@pytest.fixture
def box(home):
    return Toolbox(home)


def say(box, name, **args):
    return box.dispatch(name, args)


def test_the_building_is_valid_and_has_two_floors(home, capsys):
    assert check_home(home) == []
    assert main(["worlds", "check", "smart-building"]) == 0
    assert capsys.readouterr().out == "smart-building: ok\n"
    floors = {}
    for room, attrs in home.graph.nodes(data=True):
        floors.setdefault(attrs["floor"], []).append(room)
    assert sorted(floors) == [0, 1] and home.graph.number_of_nodes() >= 12
    for kind in ("lobby", "corridor-0", "corridor-1", "stairs-0", "stairs-1", "meeting-room-2", "office-3"):
        assert kind in home.graph
    # The floors meet only at the stairs.
    between = [(a, b) for a, b in home.graph.edges if home.graph.nodes[a]["floor"] != home.graph.nodes[b]["floor"]]
    assert between in ([("stairs-0", "stairs-1")], [("stairs-1", "stairs-0")])
    assert home.route("lobby", "meeting-room-2") == ["lobby", "stairs-0", "stairs-1", "corridor-1", "meeting-room-2"]


def test_it_has_the_papers_kinds_of_device(home):
    kinds = {d.type for d in home.devices.values()}
    assert {"door", "window", "fan", "light", "thermostat", "hvac", "sensor"} <= kinds
    sensors = [d for d in home.devices.values() if d.type == "sensor"]
    assert all({"temperature", "humidity", "co2"} <= set(d.state) for d in sensors)


def test_every_state_is_within_its_range(home):
    for dev in home.devices.values():
        specs = attributes_of(dev.type, dev.capabilities)
        for key, value in dev.state.items():
            assert key in specs, f"{dev.id}.{key} has no spec"
            assert check_value(specs[key], value) == (value, None), f"{dev.id}.{key} = {value!r}"


def test_meeting_room_2_starts_stuffy(home):
    air = home.devices["meeting-room-2-sensor"].state
    assert air["temperature"] > 24 and air["humidity"] > 60 and air["co2"] > 1000
    assert home.devices["meeting-room-2-window"].state == {"open": False}
    assert home.devices["meeting-room-2-fan"].state["on"] is False
    assert home.devices["meeting-room-2-hvac"].state["on"] is False


def test_reading_a_sensor_reads_naturally(box):
    assert say(box, "read_device", device_id="meeting-room-2-sensor").text == (
        "The air sensor in the Meeting room 2 (meeting-room-2-sensor) is a sensor: temperature 28.5 °C, "
        "humidity 71%, co2 1650 ppm. Settings: none, it only reports readings. "
        "Comfortable: 20-24 °C, humidity 30-60%, CO2 under 1000 ppm.")


@pytest.mark.parametrize("device, sentence", [
    ("meeting-room-2-window", "The window in the Meeting room 2 (meeting-room-2-window) is a window: closed. "
                              "Settings: open (true or false)."),
    ("meeting-room-2-fan", "The ceiling fan in the Meeting room 2 (meeting-room-2-fan) is a fan: off, speed 1. "
                           "Settings: on (true or false); speed (a number from 0 to 3)."),
    ("lobby-entrance-door", "The entrance door in the Lobby (lobby-entrance-door) is a door: closed, unlocked. "
                            "Settings: open (true or false); locked (true or false)."),
    ("meeting-room-2-hvac", "The air conditioner in the Meeting room 2 (meeting-room-2-hvac) is a hvac: off, "
                            "mode cool, target 22 °C, fan_speed auto. Settings: on (true or false); mode (one of "
                            "cool, heat, fan, dry, auto); target (a number from 16 to 30 °C); fan_speed (one of "
                            "auto, low, medium, high)."),
])
def test_reading_devices(box, device, sentence):
    assert say(box, "read_device", device_id=device).text == sentence


def test_doing_something_about_the_stuffy_room(box):
    assert say(box, "set_device", device_id="meeting-room-2-window", attribute="open", value=True).text == \
        "The window in the Meeting room 2 (meeting-room-2-window) is now open (was closed)."
    assert say(box, "set_device", device_id="meeting-room-2-fan", attribute="on", value=True).text == \
        "The ceiling fan in the Meeting room 2 (meeting-room-2-fan) is now on (was off)."
    assert say(box, "set_device", device_id="meeting-room-2-hvac", attribute="mode", value="cool").text == \
        "The mode of the air conditioner in the Meeting room 2 (meeting-room-2-hvac) is already cool; nothing changed."
    assert say(box, "set_device", device_id="meeting-room-2-window", attribute="open", value=True).text == \
        "The window in the Meeting room 2 (meeting-room-2-window) is already open; nothing changed."
    assert box.home.devices["meeting-room-2-window"].state["open"] is True


def test_mistakes_get_hints(box):
    ro = say(box, "set_device", device_id="meeting-room-2-sensor", attribute="humidity", value=45)
    assert not ro.ok and ro.text == ("'humidity' can be read but not set on the air sensor in the Meeting room 2 "
                                     "(meeting-room-2-sensor). It has no settings; it only reports readings.")
    hot = say(box, "set_device", device_id="meeting-room-2-hvac", attribute="target", value=12)
    assert hot.text == ("12 is not a valid target for the air conditioner in the Meeting room 2 (meeting-room-2-hvac); "
                        "use a number from 16 to 30 °C.")
    speed = say(box, "set_device", device_id="meeting-room-2-hvac", attribute="fan_speed", value="turbo")
    assert speed.text.endswith("use one of auto, low, medium, high.")
    locked = say(box, "set_device", device_id="server-room-door", attribute="locked", value=False)
    assert locked.text == "The door in the Server room (server-room-door) is now unlocked (was locked)."


def test_anas_office_is_below_her_usual_temperature(box):
    assert "Ana's office" in box.home.graph.nodes["office-3"]["aliases"]
    assert say(box, "set_device", device_id="office-3-thermostat", attribute="target", value=21).text == \
        "The target of the thermostat in the Office 3 (office-3-thermostat) is now 21 (was 19)."
