"""The offline model in Home Assistant's dialect, and the general wordings its rules gained with it.

Sentences are our own everyday wordings (not from any evaluation set). The HA-dialect runs use the fixture
homes of lares-mini (lares_kit/data/ha, written for these tests) through ``tool_set="ha"``: the static context has no
states, so the model reads them with GetLiveContext before it answers.
"""

from __future__ import annotations

import pytest

from lares_kit import load_world, run_agent
from lares_kit.bench import load_ha_dataset
from lares_kit.bench.suites.tasks import task_home
from lares_kit.tools.users import ScriptedUser

DATASET = load_ha_dataset("lares-mini")


def _home(world_fragment: str):
    task = next(t for t in DATASET.tasks if world_fragment in t.world)
    return task_home(task)


@pytest.mark.parametrize("tool_set", ["lares", "ha"])
def test_a_yes_no_question_gets_a_yes_or_a_no_with_what_was_found(tool_set):
    home = load_world("townhouse")
    ep = run_agent("is the front door locked?", home, agent="function-calling", tool_set=tool_set)
    assert ep.final_message.startswith("Yes, ") and "locked" in ep.final_message
    home.devices["front-door-lock"].state["locked"] = False
    ep = run_agent("is the front door locked?", home, agent="function-calling", tool_set=tool_set)
    assert ep.final_message.startswith("No, ") and "unlocked" in ep.final_message


def test_which_question_still_lists_instead_of_answering_yes():
    ep = run_agent("which lights are on?", load_world("townhouse"), agent="function-calling")
    assert not ep.final_message.startswith(("Yes", "No"))


def test_in_the_ha_dialect_the_model_reads_the_live_context_before_it_answers():
    home = _home("birch")
    ep = run_agent("is the towel rail on?", home, agent="function-calling", tool_set="ha")
    tools = [s.tool for s in ep.tool_calls]
    assert tools[0] == "GetLiveContext" and ep.final_message.startswith(("Yes", "No"))
    on = home.devices[next(d for d in home.devices if "towel" in d)].state["on"]
    assert ep.final_message.startswith("Yes" if on else "No")


def test_a_door_sensor_is_open_or_closed_not_on_or_off():
    home = _home("cedar")
    door = next(d for d in home.devices.values() if d.type == "binary_sensor" and d.state.get("device_class") == "door")
    ep = run_agent(f"is the {door.name.lower()} open?", home, agent="function-calling", tool_set="ha")
    assert ("open" if door.state["on"] else "closed") in ep.final_message and "device class" not in ep.final_message


@pytest.mark.parametrize("tool_set", ["lares", "ha"])
def test_number_words_and_halfway(tool_set):
    home = load_world("townhouse")
    ep = run_agent("open the living room blinds halfway", home, agent="function-calling", tool_set=tool_set)
    assert home.devices["living-room-blinds"].state["position"] == 50, ep.final_message
    home = load_world("tests/fixtures/languages/en.yaml")
    ep = run_agent("dim the floor lamp to forty percent", home, agent="function-calling", tool_set=tool_set)
    assert home.devices["sitting-room-floor-lamp"].state["brightness"] == 40, ep.final_message


@pytest.mark.parametrize("tool_set, tool", [("ha", "HassListAddItem"), ("lares", "add_to_list")])
def test_adding_to_the_shopping_list_is_one_call_in_either_dialect(tool_set, tool):
    home = _home("birch")
    todo = next(d for d in home.devices.values() if d.type == "todo")
    before = len(todo.state.get("items", []))
    ep = run_agent("add milk to the shopping list", home, agent="function-calling", tool_set=tool_set)
    assert [s.tool for s in ep.tool_calls][0] == tool
    assert len(todo.state["items"]) == before + 1 and todo.state["items"][-1]["summary"] == "milk"


def test_a_confirmation_in_the_ha_dialect_is_asked_then_the_same_intent_call_is_made():
    home = load_world("townhouse")
    ep = run_agent("unlock the front door lock, the plumber is here", home, agent="intent-action", tool_set="ha",
                   user=ScriptedUser(answers=["yes"]))
    calls = [s.tool for s in ep.tool_calls]
    assert calls == ["HassTurnOff", "ask_user", "HassTurnOff", "halt"]
    assert home.devices["front-door-lock"].state["locked"] is False
