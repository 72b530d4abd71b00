"""The dispatcher: every kind of bad model output becomes an error observation."""

import pytest

from lares_kit import Toolbox, ToolError, load_world


def boom(home) -> str:
    """A tool with a bug in it."""
    raise ZeroDivisionError("division by zero")


def polite(home) -> str:
    """A tool that reports a mistake."""
    raise ToolError("Try again with the lights on.")


@pytest.fixture
def box():
    from lares_kit.tools.toolbox import LARES_TOOLS
    return Toolbox(load_world("lares-home"), tools=[*LARES_TOOLS, boom, polite])


BAD_CALLS = [
    # (kind, name, arguments, words the observation must contain)
    ("unknown tool", "fly", "{}", "There is no tool called 'fly'"),
    ("near-miss tool name", "toggleLight", "{}", "Did you mean 'toggle_light'?"),
    ("invalid JSON", "toggle_light", '{"light_id": "kitchen-light"', "not valid JSON"),
    ("JSON that is not an object", "toggle_light", '["kitchen-light"]', "got a JSON list, expected an object"),
    ("arguments of the wrong Python type", "toggle_light", 42, "got int, expected a JSON object"),
    ("missing argument", "toggle_light", "{}", "toggle_light needs the argument 'light_id' (string)"),
    ("extra argument", "toggle_light", '{"light_id": "kitchen-light", "colour": "red"}', "has no argument 'colour'"),
    ("wrong type", "set_light", '{"light_id": "kitchen-light", "on": "yes"}',
     "'on' must be a boolean, got the string 'yes'"),
    ("number for a string", "toggle_light", '{"light_id": 3}', "'light_id' must be a string, got int 3"),
    ("null for a required value", "move_robot", '{"destination_room_id": null}', "must be a string, got null"),
    ("unknown id", "toggle_light", '{"light_id": "garage-light"}', "No light found with the ID 'garage-light'"),
    ("exception inside a tool", "boom", "{}",
     "The tool boom failed unexpectedly (ZeroDivisionError: division by zero)"),
    ("tool error", "polite", "{}", "Try again with the lights on."),
    ("empty tool name", "", "{}", "There is no tool called ''"),
    ("None tool name", None, "{}", "There is no tool called None"),
]


@pytest.mark.parametrize("kind, name, arguments, words", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_calls_become_error_observations(box, kind, name, arguments, words):
    before = box.home.truth()
    obs = box.dispatch(name, arguments)
    assert not obs.ok
    assert obs.content.startswith("Error: ")
    assert words in obs.text
    after = box.home.truth()
    before.pop("time"), after.pop("time")
    assert before == after  # nothing changed in the home


@pytest.mark.parametrize("empty", ["", "  ", None, "{}"])
def test_empty_arguments_mean_no_arguments(box, empty):
    assert box.dispatch("look_with_robot", empty).ok


def test_repeated_call_that_changed_nothing_is_blocked(box):
    assert box.dispatch("look_with_robot", "{}").ok
    again = box.dispatch("look_with_robot", "{}")
    assert not again.ok and "already called look_with_robot" in again.text
    box.dispatch("toggle_light", '{"light_id": "kitchen-light"}')  # the home changed
    assert box.dispatch("look_with_robot", "{}").ok


def test_toggle_twice_is_not_a_dead_loop(box):
    # each toggle changes the home, so the second one is allowed
    assert box.dispatch("toggle_light", '{"light_id": "kitchen-light"}').ok
    assert box.dispatch("toggle_light", '{"light_id": "kitchen-light"}').ok


def test_repeat_filter_can_be_switched_off():
    box = Toolbox(load_world("lares-home"), block_repeats=False)
    assert box.dispatch("look_with_robot", "{}").ok
    assert box.dispatch("look_with_robot", "{}").ok


def test_dict_arguments_are_accepted(box):
    assert box.dispatch("set_light", {"light_id": "kitchen-light", "on": True}).ok
