"""How the offline model and the importer read a Home Assistant home: the general readings behind the HA scores.

The home and every sentence are this project's own (tests/fixtures/ha/oak-terrace, written for these tests, not
taken from any evaluation set). Each sentence stands for a kind of request:

* two entities of one device share its name (a lock and its door sensor, "Back Door"): the one that can do
  what is asked is meant;
* a room word that begins several rooms' names ("the bedroom": Bedroom 1 and Bedroom 2);
* a fan with speeds is on exactly when its percentage is above 0, as HA reports it;
* a cover keeps its device class ("the curtains"), a valve turns on ("turn on the water");
* a speaker pauses for "stop", skips tracks (HA's ``media_track``), and is what "the volume" means;
* a floor word inside a name ("Dusty Downstairs") is the name;
* lists take items with Lares's own ``add_to_list`` as with HA's ``HassListAddItem``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lares_kit import load_world, run_agent
from lares_kit.bench import load_ha_dataset, run_bench
from lares_kit.bench.suites.tasks import task_home
from lares_kit.errors import ToolError
from lares_kit.ha.domains import from_ha, to_ha
from lares_kit.models.offline.ha.reading import read_static_context
from lares_kit.safety.policy import changes_of
from lares_kit.tools.device_tools import add_to_list
from lares_kit.tools.toolbox import Toolbox, default_tools
from lares_kit.tools.users import ScriptedUser

OAK = Path(__file__).resolve().parents[2] / "fixtures" / "ha" / "oak-terrace"


@pytest.fixture(scope="module")
def oak():
    return load_ha_dataset(OAK)


def _home(oak):
    return task_home(oak.tasks[0])


@pytest.mark.parametrize("tool_set", ["lares", "ha"])
def test_every_reading_of_the_fixture_home_succeeds_with_no_collateral_damage(oak, tool_set):
    bench = run_bench(oak.tasks, agents=["function-calling"], models=["offline"], tool_set=tool_set)
    failed = {r["task"]: r["episode"]["final_message"] for r in bench.records if not r["success"]}
    assert not failed, failed
    assert len(bench.records) == 17 and not any(r["collateral"] for r in bench.records)


def test_a_kind_in_a_room_is_every_one_there_in_has_dialect_and_a_question_in_lares(oak):
    home = _home(oak)
    ep = run_agent("turn off the light in the kitchen", home, agent="function-calling")
    assert ep.status == "no_answer" and "Which one" in ep.final_message
    assert home.devices["light-kitchen-ceiling"].state["on"] and home.devices["light-kitchen-strip"].state["on"]
    home = _home(oak)
    ep = run_agent("turn off the light in the kitchen", home, agent="function-calling", tool_set="ha")
    assert ep.status == "done", ep.final_message
    assert not home.devices["light-kitchen-ceiling"].state["on"] and not home.devices["light-kitchen-strip"].state["on"]
    assert not home.devices["light-reading-lamp"].state["on"]  # another room's light is left alone


def test_the_list_asked_about_is_the_one_the_answer_names(oak):
    home = _home(oak)
    user = ScriptedUser(rules=[("Which list", "The groceries, please.")])
    ep = run_agent("add oat milk to the list", home, agent="function-calling", user=user)
    assert user.asked and user.asked[0].startswith("Which list do you mean:"), ep.final_message
    assert home.devices["todo-groceries"].state["items"][-1]["summary"] == "oat milk"
    assert not home.devices["todo-chores"].state.get("items")
    assert "oat milk" in ep.final_message


def test_put_on_a_shelf_is_not_a_list_even_in_a_home_of_lists(oak):
    home = _home(oak)
    ep = run_agent("put the book on the shelf", home, agent="function-calling")
    assert not any(s.tool == "add_to_list" for s in ep.tool_calls), ep.final_message


def test_add_to_list_is_offered_with_a_list_checks_its_input_and_is_seen_by_the_safety_gate(oak):
    home = _home(oak)
    assert add_to_list in default_tools(home) and add_to_list not in default_tools(load_world("townhouse"))
    box = Toolbox(home)
    schema = next(s for s in box.schemas() if s["function"]["name"] == "add_to_list")
    assert schema["function"]["parameters"]["properties"]["list_id"]["enum"] == ["todo-chores", "todo-groceries"]
    with pytest.raises(ToolError, match="is not a list"):
        add_to_list(home, "light-reading-lamp", "milk")
    with pytest.raises(ToolError, match="The item is empty"):
        add_to_list(home, "todo-chores", "  ")
    (change,) = changes_of(home, "add_to_list", {"list_id": "todo-chores", "item": "mop"})
    assert change.attribute == "items" and change.value[-1] == {"summary": "mop", "status": "needs_action"}
    assert home.devices["todo-chores"].state.get("items") in (None, [])  # judging a call changes nothing


def test_a_home_of_lights_with_a_brightness_gets_the_device_tools():
    home = load_world("lares-home")
    assert "set_device" not in [fn.__name__ for fn in default_tools(home)]
    home.devices["kitchen-light"].state["brightness"] = 80
    assert "set_device" in [fn.__name__ for fn in default_tools(home)]


def test_has_views_of_fans_covers_and_speakers_read_back_the_same():
    assert to_ha("fan", {"on": True, "percentage": 0}) == ("on", {"percentage": 100})  # on, no speed set: full
    assert to_ha("fan", {"on": False, "percentage": 40}) == ("off", {"percentage": 0})  # the dial kept while off
    curtain = from_ha("cover", "closed", {"current_position": 0, "device_class": "curtain"})
    assert curtain == ("cover", {"position": 0, "device_class": "curtain"})
    assert to_ha(*curtain) == ("closed", {"current_position": 0, "device_class": "curtain"})
    speaker = from_ha("media_player", "playing", {"volume_level": 0.4, "media_track": 3})
    assert speaker[1]["track"] == 3 and to_ha(*speaker)[1]["media_track"] == 3


def test_entities_of_one_name_in_has_static_context_stay_two_devices():
    text = ("Static Context: An overview...\n- names: Back Door\n  domain: lock\n  areas: Hall\n"
            "- names: Back Door\n  domain: binary_sensor\n  areas: Hall\n")
    _, devices, _ = read_static_context(text)
    assert sorted(d.type for d in devices.values()) == ["binary_sensor", "lock"]


def test_a_change_whose_intent_tool_is_not_offered_is_reported_not_looped(oak):
    from lares_kit.agents.dialects import dialect_tools

    home = _home(oak)
    tools = [fn for fn in dialect_tools(home) if fn.__name__ != "HassVacuumReturnToBase"]
    home.devices["vacuum-dusty-downstairs"].state["status"] = "cleaning"
    ep = run_agent("return the vacuum to its dock", home, agent="function-calling", tool_set="ha", tools=tools)
    assert ep.status == "done" and len(ep.tool_calls) <= 3, [s.tool for s in ep.tool_calls]
    assert "no tool" in ep.final_message and home.devices["vacuum-dusty-downstairs"].state["status"] == "cleaning"
