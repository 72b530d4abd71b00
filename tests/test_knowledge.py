"""Knowledge strategies (lares_kit.knowledge) and the offline model under each of them."""

from __future__ import annotations

import json

import pytest

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.episode import Episode
from lares_kit.generate import generate_home
from lares_kit.knowledge import (
    LIVE_LIMIT,
    STRATEGIES,
    get_live_context,
    knowledge_text,
    relevant_rooms,
    use_id_enums,
)
from lares_kit.models.reading import read_request
from lares_kit.tools import Toolbox, ToolError


@pytest.fixture(scope="module")
def building():
    return generate_home(rooms=1000, devices=5000, seed=1)


def _message(home, strategy, instruction="turn on the light in the kitchen"):
    ep = Episode.start(instruction, home, agent="a", model="m", knowledge_format=strategy)
    return ep.messages(home)[1]["content"]


def test_full_is_exactly_the_lares_pretty_json():
    home = load_world("lares-home")
    assert _message(home, "full") == "WORLD KNOWLEDGE (latest)\n" + home.render_knowledge("json")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_offline_model_reads_every_strategy(strategy):
    home = load_world("townhouse")
    b = read_request([{"role": "system", "content": _message(home, strategy)},
                      {"role": "user", "content": "turn on the light in the kitchen"}])
    assert b.mode == "latest" and b.robot == home.robot.room and "kitchen" in b.rooms
    has_state = any(d.state for d in b.devices.values())
    assert has_state == (strategy != "overview")


def test_overview_has_no_states_and_says_where_to_get_them():
    text = _message(load_world("smart-building"), "overview")
    assert '"state"' not in text and "get_live_context" in text.splitlines()[1]


def test_retrieval_finds_the_named_room_in_a_building_and_stays_small(building):
    rooms, full = relevant_rooms(building, "Set the thermostat in Office 513 to 22 degrees.", "lobby")
    assert "office-513" in full and len(rooms) < 30
    rooms, full = relevant_rooms(building, "Turn on the lights in the Oak room.", "lobby")
    assert any(building.graph.nodes[r].get("aliases") == ["Oak room"] for r in full)
    note, text = knowledge_text(building, "retrieval", "Set the thermostat in Office 513 to 22 degrees.")
    assert note.startswith("Retrieved: ") and len(text) < 6000
    shown = {r["id"] for r in json.loads(text)["rooms"]}
    assert {"office-513", "lobby", "stairs-5"} <= shown  # the room, the robot's, and the way between


def test_retrieval_keeps_the_rooms_the_robot_visited(building):
    _, text = knowledge_text(building, "retrieval", "find the parcel", visited=["office-905"])
    assert "office-905" in {r["id"] for r in json.loads(text)["rooms"]}


def test_a_small_home_is_retrieved_whole():
    home = load_world("lares-home")
    assert relevant_rooms(home, "find my dog", "hallway")[0] == list(home.graph.nodes)


def test_id_enums_are_left_out_of_big_homes_except_in_the_lares_baseline(building):
    assert use_id_enums(building, "full") and not use_id_enums(building, "retrieval")
    assert use_id_enums(load_world("lares-home"), "overview")
    with pytest.raises(ValueError, match="unknown knowledge strategy"):
        use_id_enums(building, "telepathy")


def test_live_context_filters_by_room_floor_and_type(building):
    text = get_live_context(building, room="office-513")
    states = json.loads(text[text.index("{"):])
    assert states and all(building.devices[d].room == "office-513" for d in states)
    text = get_live_context(building, floor=3, type="thermostat")
    assert all(building.devices[d].type == "thermostat" for d in json.loads(text[text.index("{"):]))
    with pytest.raises(ToolError, match=f"ask for at most {LIVE_LIMIT}"):
        get_live_context(building)
    with pytest.raises(ToolError, match="No rooms on floor 42"):
        get_live_context(building, floor=42)
    box = Toolbox(building, tools=[get_live_context], id_enums=False)
    assert box.dispatch("get_live_context", '{"room": "office-5x"}').content.startswith("Error: There is no room")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_the_lares_scenarios_still_succeed_under_every_strategy(strategy, agent):
    home = load_world("lares-home")
    ep = run_agent("turn on the light in the kitchen", home, agent=agent, knowledge_format=strategy)
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    home = load_world("lares-home")
    ep = run_agent("find my dog", home, agent=agent, knowledge_format=strategy)
    assert ep.status == "done" and "bruno" in home.seen
    called = [s.tool for s in ep.tool_calls]
    assert ("get_live_context" in called) == (strategy == "overview")


def test_overview_fetches_live_context_before_setting_a_thermostat():
    home = load_world("smart-building")
    ep = run_agent("set the thermostat in office 1 to 23", home, agent="function-calling",
                   knowledge_format="overview")
    assert [s.tool for s in ep.tool_calls] == ["get_live_context", "set_device", "halt"]
    assert home.devices["office-1-thermostat"].state["target"] == 23


def test_an_unknown_format_is_refused():
    with pytest.raises(Exception, match="unknown knowledge format"):
        run_agent("hi", load_world("lares-home"), knowledge_format="telepathy")
