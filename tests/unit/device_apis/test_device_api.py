"""Device API tools, capability documents and disambiguation over the SAGE home."""

from __future__ import annotations

import pytest

from lares_kit import load_world
from lares_kit.device_apis.documents import (
    capability_doc,
    capability_library,
    device_capabilities,
    execute_command,
    get_attribute,
    list_devices,
)
from lares_kit.device_apis.nearby import find_device, rank_devices
from lares_kit.device_apis.tv_and_weather import tv_guide, weather
from lares_kit.home.devices import attributes_of
from lares_kit.tools.toolbox import ToolError


@pytest.fixture
def home():
    return load_world("sage-home")


def test_the_home_has_twelve_or_more_documented_devices(home):
    assert len(home.devices) >= 12
    kinds = {d.type for d in home.devices.values()}
    assert {"tv", "light", "fridge", "dishwasher", "speaker", "thermostat", "lock"} <= kinds
    for dev in home.devices.values():
        assert device_capabilities(home, dev.id), dev.id
        assert dev.description


def test_every_documented_attribute_and_argument_is_a_real_setting(home):
    library = capability_library()
    for dev in home.devices.values():
        specs = attributes_of(dev.type, dev.capabilities)
        for cap in device_capabilities(home, dev.id):
            for command in (library[cap].get("commands") or {}).values():
                for attribute in [*(command.get("args") or {}).values(), *(command.get("sets") or {})]:
                    assert attribute in specs and not specs[attribute].read_only, (dev.id, cap, attribute)
                    assert attribute in dev.state, (dev.id, attribute)


def test_list_devices_has_one_line_per_device(home):
    lines = list_devices(home).splitlines()
    assert len(lines) == len(home.devices) + 1
    assert "tv-plant: TV in the Den" in lines[2] and "tvChannel (TV channel)" in lines[2]


def test_docs_show_ranges_values_and_commands(home):
    doc = capability_doc(home, "dishwasher", "dishwasherMode")
    assert "intensive: heavily soiled, greasy" in doc
    assert "- setDishwasherMode(course: one of eco, normal, intensive, quick, delicate, rinse)" in doc


@pytest.mark.parametrize("call, says", [
    (("tv-credenz", "tvChannel", "setTvChannel", {"channel": 3}), "Did you mean 'tv-credenza'?"),
    (("tv-credenza", "tvChanel", "setTvChannel", {"channel": 3}), "Did you mean 'tvChannel'?"),
    (("tv-credenza", "tvChannel", "setChannel", {"channel": 3}), "Its commands: setTvChannel(channel)"),
    (("tv-credenza", "tvChannel", "setTvChannel", {"channel": 30}), "use a number from 1 to 10"),
    (("tv-credenza", "tvChannel", "setTvChannel", {}), "needs the argument 'channel'"),
    (("tv-credenza", "tvChannel", "setTvChannel", {"chan": 3}), "has no argument 'chan'"),
    (("tv-plant", "tvChannel", "setTvChannel", {"channel": 3}), "switch it on first"),
    (("dishwasher", "dishwasherMode", "setDishwasherMode", {"course": "turbo"}), "one of eco, normal"),
    (("fridge", "contactSensor", "open", {}), "none, it can only be read"),
])
def test_mistakes_get_a_sentence_saying_what_is_allowed(home, call, says):
    with pytest.raises(ToolError, match=None) as err:
        execute_command(home, *call)
    assert says in str(err.value)


def test_commands_change_state_and_report_it(home):
    assert execute_command(home, "tv-strip", "colorControl", "setColor", {"hue": 0, "saturation": 100}) == \
        "tv-strip: hue is now 0 (was 66)."
    assert execute_command(home, "tv-strip", "colorControl", "setColor", {"hue": 0, "saturation": 100}) == \
        "tv-strip: hue is 0, saturation is 100 already; nothing changed."
    assert execute_command(home, "front-door-lock", "lock", "unlock") == \
        "front-door-lock: locked is now false (was true)."
    assert home.devices["front-door-lock"].state["locked"] is False
    assert get_attribute(home, "front-door-lock", "locked") == "The locked of front-door-lock is false (true or false)."


@pytest.mark.parametrize("words, device", [
    ("the TV by the plant", "tv-plant"), ("the TV by the credenza", "tv-credenza"),
    ("the light by the plant", "den-lamp"), ("the light by the dresser", "nightstand-strip"),
    ("the lights by the fireplace", "fireplace-strip"), ("the light over the dining table", "dining-strip"),
    ("the light behind the TV", "tv-strip"), ("the light in the dining room", "dining-strip"),
    ("the front door", "front-door-lock"), ("the fridge", "fridge"),
])
def test_descriptions_resolve_to_the_device_meant(home, words, device):
    assert rank_devices(home, words)[0].device_id == device
    assert find_device(home, words).startswith(f"Best match: {device} (")


def test_ambiguous_descriptions_say_so_and_name_the_candidates(home):
    answer = find_device(home, "the TV")
    assert answer.startswith("Ambiguous: 2 devices") and "tv-plant" in answer and "tv-credenza" in answer
    assert "Ask the user" in answer
    assert find_device(home, "the toaster").startswith("No device matches")


def test_all_the_lights_in_a_room(home):
    answer = find_device(home, "all the lights in the living room")
    assert "fireplace-strip" in answer and "tv-strip" in answer and "dining-strip" not in answer


def test_guide_and_weather_are_offline_fixtures(home):
    assert "channel 3 (Sports One)" in tv_guide(home, "Canadiens")
    assert tv_guide(home, "").count("channel ") == 10
    assert "sunny" in weather(home, "tomorrow")
    with pytest.raises(ToolError, match="No forecast"):
        weather(home, "next week")
