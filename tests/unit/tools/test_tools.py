"""Every tool's success and error sentences."""

import json
import types

import pytest

from lares_kit import Toolbox, load_world
from lares_kit.device_apis.documents import DEVICE_API_TOOLS
from lares_kit.knowledge.modes import get_live_context
from lares_kit.memory.agent_memory import MEMORY_TOOLS
from lares_kit.tools.schema import tool_schema
from lares_kit.tools.toolbox import DEVICE_TOOLS, LARES_TOOLS, default_tools
from lares_kit.tools.users import NoAnswer, ScriptedUser


@pytest.fixture
def box():
    return Toolbox(load_world("lares-home"), user=ScriptedUser(answers=["Yes, it is sunny."]))


def say(box, name, **args):
    return box.dispatch(name, args)


def test_toggle_light_names_light_room_and_state(box):
    obs = say(box, "toggle_light", light_id="kitchen-light")
    assert obs.ok and obs.text == "The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit."
    obs = say(box, "toggle_light", light_id="kitchen-light")
    assert obs.text.startswith("The light in the Kitchen (kitchen-light) is now off.")


def test_toggle_unknown_light_suggests(box):
    obs = say(box, "toggle_light", light_id="kitchen-lite")
    assert not obs.ok and obs.content.startswith("Error: No light found with the ID 'kitchen-lite'.")
    assert "Did you mean 'kitchen-light'?" in obs.text


def test_toggle_room_id_points_at_its_light(box):
    obs = say(box, "toggle_light", light_id="kitchen")
    assert obs.text == "'kitchen' is a room, not a light; its light is 'kitchen-light'."


def test_set_light_is_idempotent(box):
    assert say(box, "set_light", light_id="hallway-light", on=True).text == \
        "The light in the Hallway (hallway-light) is already on; nothing changed."
    assert box.home.version == 0
    obs = say(box, "set_light", light_id="hallway-light", on=False)
    assert obs.text == "The light in the Hallway (hallway-light) is now off. The Hallway is dark."


def test_move_robot_to_adjacent_room(box):
    obs = say(box, "move_robot", destination_room_id="kitchen")
    assert obs.ok and obs.text == "The robot moved from the Hallway to the Kitchen (kitchen). It is dark there."
    assert box.home.robot.room == "kitchen"


def test_move_robot_not_adjacent_lists_options(box):
    obs = say(box, "move_robot", destination_room_id="office")
    assert not obs.ok
    assert obs.text == ("The Office is not next to the Hallway; from the Hallway (hallway) "
                        "the robot can go to: lounge, kitchen, bedroom.")
    assert box.home.robot.room == "hallway"


def test_move_robot_unknown_room(box):
    obs = say(box, "move_robot", destination_room_id="kitchn")
    assert "There is no room with the ID 'kitchn'. Did you mean 'kitchen'?" in obs.text


def test_move_robot_already_there(box):
    assert say(box, "move_robot", destination_room_id="hallway").text == \
        "The robot is already in the Hallway (hallway); it did not move."


def test_look_in_the_dark_says_what_to_do(box):
    say(box, "move_robot", destination_room_id="bedroom")
    obs = say(box, "look_with_robot")
    assert not obs.ok
    assert obs.text == ("It's too dark to see anything in the Bedroom -- "
                        "turn on the light in the Bedroom (bedroom-light) first.")


def test_look_lists_devices_and_movable_things_without_trailing_comma(box):
    say(box, "set_light", light_id="bedroom-light", on=True)
    say(box, "move_robot", destination_room_id="bedroom")
    obs = say(box, "look_with_robot")
    assert obs.ok
    assert obs.text.endswith("Devices: light (bedroom-light). Also here: Bruno, a dog (bruno).")
    assert ", ." not in obs.text


def test_look_with_nothing_movable(box):
    obs = say(box, "look_with_robot")
    assert obs.text.endswith("Nothing that moves is here.")


def test_ask_user_returns_answer(box):
    assert say(box, "ask_user", question="Is it daytime?").text == "The user answered: Yes, it is sunny."


def test_ask_user_without_answer_raises_no_answer(box):
    say(box, "ask_user", question="Is it daytime?")
    with pytest.raises(NoAnswer):
        say(box, "ask_user", question="And now?")


def test_halt_is_final(box):
    obs = say(box, "halt", message_to_user="Done.")
    assert obs.final and obs.text == "Done."


def test_device_tools_on_a_home_with_a_thermostat(tmp_path):
    path = tmp_path / "heated.yaml"
    path.write_text("""
id: heated
rooms: [{id: hall, exits: []}]
devices:
  - {id: hall-thermostat, name: Thermostat, type: thermostat, room: hall, state: {target: 18, temperature: 17.5}}
robot: {id: robot, room: hall}
""")
    home = load_world(path)
    assert [f.__name__ for f in default_tools(home)][4:6] == ["set_device", "read_device"]
    box = Toolbox(home)
    assert box.dispatch("set_device", {"device_id": "hall-thermostat", "attribute": "target", "value": 21}).text == \
        "The target of the thermostat in the Hall (hall-thermostat) is now 21 (was 18)."
    bad = box.dispatch("set_device", {"device_id": "hall-thermostat", "attribute": "target", "value": 45})
    assert bad.text == ("45 is not a valid target for the thermostat in the Hall (hall-thermostat); "
                        "use a number from 5 to 30 °C.")
    ro = box.dispatch("set_device", {"device_id": "hall-thermostat", "attribute": "temperature", "value": 20})
    assert "'temperature' can be read but not set" in ro.text
    assert "temperature 17.5" in box.dispatch("read_device", {"device_id": "hall-thermostat"}).text
    assert "Did you mean 'hall-thermostat'?" in box.dispatch("read_device", {"device_id": "hall-thermostat2"}).text


def test_error_sentences_in_a_big_home_list_only_the_closest_names():
    """5,000 devices: an unknown id names the closest 30 and the count, not all 5,000 (some 25,000 tokens)."""
    from lares_kit.errors import LIST_AT_MOST
    from lares_kit.home.generator import generate_home

    home = generate_home(devices=5000, seed=1)
    box = Toolbox(home, tools=default_tools(home))
    cases = [("set_light", {"light_id": "office-12-lihgt", "on": True}, "Lights", 1000),
             ("read_device", {"device_id": "office-3-thermostatt"}, "Devices", 5000),
             ("move_robot", {"destination_room_id": "office-1x"}, "Rooms", 1000)]
    texts = {}
    for tool, args, label, total in cases:
        obs = texts[tool] = box.dispatch(tool, args)
        assert not obs.ok and len(obs.text) < 1200, obs.text
        listed = obs.text.split(f"{label} (the {LIST_AT_MOST} closest of {total}): ", 1)[1].rstrip(".").split(", ")
        assert len(listed) == LIST_AT_MOST and set(listed) <= set(home.devices) | set(home.graph)
    # The closest comes first, and a typo's intended id is there.
    obs = texts["read_device"]
    assert "Did you mean 'office-3-thermostat'?" in obs.text and "closest of 5000): office-3-thermostat," in obs.text


def test_error_sentences_in_a_small_home_still_list_every_name(box):
    obs = box.dispatch("set_light", {"light_id": "attic-light", "on": True})
    assert obs.text.endswith("Lights: " + ", ".join(d.id for d in box.home.lights()) + ".")


# The tools' docstrings carry doctested Examples; the model must see the same schema as without them.
def _without_examples(fn):
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__annotations__ = fn.__kwdefaults__, fn.__annotations__
    copy.__doc__ = (fn.__doc__ or "").split("\n    Examples:")[0]
    return copy


@pytest.mark.parametrize("fn", [*LARES_TOOLS, *DEVICE_TOOLS, *DEVICE_API_TOOLS, get_live_context, *MEMORY_TOOLS],
                         ids=lambda fn: fn.__name__)
def test_examples_in_a_tool_s_docstring_do_not_reach_its_schema(fn):
    home = load_world("sage-home")
    enums = Toolbox(home, tools=[fn]).enums()
    schema = tool_schema(fn, enums)
    assert schema == tool_schema(_without_examples(fn), enums)
    assert ">>>" not in json.dumps(schema) and "Examples" not in json.dumps(schema)


@pytest.mark.parametrize("fn", [*LARES_TOOLS, *DEVICE_TOOLS], ids=lambda fn: fn.__name__)
def test_every_agent_facing_tool_has_doctested_examples(fn):
    assert "\n    Examples:\n        >>> " in fn.__doc__, f"{fn.__name__} has no Examples section"
