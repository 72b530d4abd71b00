"""Knowledge formats (lares_kit.knowledge.modes, notebook 16), one renderer each, and the offline model."""

from __future__ import annotations

import json

import pytest

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.episode import Episode
from lares_kit.home.generator import generate_home
from lares_kit.knowledge.formats import parse_outline
from lares_kit.knowledge.modes import (
    KNOWLEDGE_FORMATS,
    LIVE_LIMIT,
    get_live_context,
    knowledge_text,
    relevant_rooms,
    use_id_enums,
)
from lares_kit.models.offline.reading import read_request
from lares_kit.tools.toolbox import Toolbox, ToolError


@pytest.fixture(scope="module")
def building():
    return generate_home(rooms=1000, devices=5000, seed=1)


def _message(home, fmt, instruction="turn on the light in the kitchen"):
    ep = Episode.start(instruction, home, agent="a", model="m", knowledge_format=fmt)
    return ep.messages(home)[1]["content"]


def test_full_is_exactly_the_lares_pretty_json():
    home = load_world("lares-home")
    assert _message(home, "full") == "WORLD KNOWLEDGE (latest)\n" + home.render_knowledge("json")


@pytest.mark.parametrize("fmt", KNOWLEDGE_FORMATS)
def test_the_offline_model_reads_every_format(fmt):
    home = load_world("townhouse")
    b = read_request([{"role": "system", "content": _message(home, fmt)},
                      {"role": "user", "content": "turn on the light in the kitchen"}])
    assert b.mode == "latest" and b.robot == home.robot.room and "kitchen" in b.rooms
    has_state = any(d.state for d in b.devices.values())
    assert has_state == (fmt != "overview")


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
    shown = {r["id"] for r in parse_outline(text)["rooms"]}
    assert {"office-513", "lobby", "stairs-5"} <= shown  # the room, the robot's, and the way between


def test_retrieval_keeps_the_rooms_the_robot_visited(building):
    _, text = knowledge_text(building, "retrieval", "find the parcel", visited=["office-905"])
    assert "office-905" in {r["id"] for r in parse_outline(text)["rooms"]}


def test_a_small_home_is_retrieved_whole():
    home = load_world("lares-home")
    assert relevant_rooms(home, "find my dog", "hallway")[0] == list(home.graph.nodes)


def test_id_enums_are_left_out_of_big_homes_except_in_the_lares_baseline(building):
    assert use_id_enums(building, "full") and not use_id_enums(building, "retrieval")
    assert use_id_enums(load_world("lares-home"), "overview")
    townhouse = load_world("townhouse")  # 36 room and device ids: enums under the Lares limit, not the lean one
    assert use_id_enums(townhouse, "outline", limit=60) and not use_id_enums(townhouse, "outline", limit=20)
    with pytest.raises(ValueError, match="^unknown knowledge format 'telepathy'; formats: auto, full, compact, "):
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


@pytest.mark.parametrize("fmt", KNOWLEDGE_FORMATS)
@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_the_lares_scenarios_still_succeed_under_every_format(fmt, agent):
    home = load_world("lares-home")
    ep = run_agent("turn on the light in the kitchen", home, agent=agent, knowledge_format=fmt)
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    home = load_world("lares-home")
    ep = run_agent("find my dog", home, agent=agent, knowledge_format=fmt)
    assert ep.status == "done" and "bruno" in home.seen
    called = [s.tool for s in ep.tool_calls]
    assert ("get_live_context" in called) == (fmt == "overview")


def test_overview_fetches_live_context_before_setting_a_thermostat():
    home = load_world("smart-building")
    ep = run_agent("set the thermostat in office 1 to 23", home, agent="function-calling",
                   knowledge_format="overview")
    assert [s.tool for s in ep.tool_calls] == ["get_live_context", "set_device", "halt"]
    assert home.devices["office-1-thermostat"].state["target"] == 23


def test_an_unknown_format_is_refused():
    with pytest.raises(Exception, match="unknown knowledge format"):
        run_agent("hi", load_world("lares-home"), knowledge_format="telepathy")


# ------------------------------------------------------------ one vocabulary
def test_modes_and_formats_have_one_home():
    from lares_kit import episode
    from lares_kit.knowledge import formats as knowledge_formats
    from lares_kit.knowledge import modes as knowledge

    assert episode.KNOWLEDGE_MODES is knowledge.KNOWLEDGE_MODES is knowledge_formats.KNOWLEDGE_MODES
    assert KNOWLEDGE_FORMATS is knowledge.KNOWLEDGE_FORMATS is knowledge_formats.KNOWLEDGE_FORMATS
    assert episode.knowledge_header is knowledge.knowledge_header is knowledge_formats.knowledge_header
    assert KNOWLEDGE_FORMATS == ("auto", "full", "compact", "outline", "overview", "retrieval")


@pytest.mark.parametrize("fmt", ["full", "compact", "overview"])
def test_the_home_and_the_prompt_write_a_format_with_the_same_renderer(fmt, monkeypatch):
    # One renderer per format: patch it, and every writer of the format -- the home, knowledge_text, the
    # episode's message in both modes that take knowledge -- must change with it.
    from lares_kit.knowledge import formats as knowledge_formats

    monkeypatch.setitem(knowledge_formats.RENDERERS, fmt, lambda k: f"<{fmt} of {k['home']}>")
    home = load_world("lares-home")
    assert home.render_knowledge(fmt) == knowledge_text(home, fmt)[1] == f"<{fmt} of lares-home>"
    for mode in ("latest", "initial"):
        ep = Episode.start("hi", home, agent="a", model="m", knowledge=mode, knowledge_format=fmt)
        assert ep.messages(home)[1]["content"].endswith(f"\n<{fmt} of lares-home>")


def test_retrieval_has_one_renderer_too(building, monkeypatch):
    from lares_kit.knowledge import modes as knowledge

    monkeypatch.setattr(knowledge, "render_retrieval",
                        lambda home, instruction, k=None, visited=(), needs=None: ("", "<r>"))
    ep = Episode.start("find the parcel", building, agent="a", model="m", knowledge_format="retrieval")
    assert knowledge_text(building, "retrieval", "find the parcel")[1] == "<r>"
    assert ep.messages(building)[1]["content"] == "WORLD KNOWLEDGE (latest)\n<r>"


def test_full_in_mode_initial_is_the_lares_json_of_the_start():
    home = load_world("lares-home")
    ep = Episode.start("hi", home, agent="a", model="m", knowledge="initial")
    home.update_device("kitchen-light", {"on": True})
    text = ep.messages(home)[1]["content"].split("\n", 1)[1]
    assert text == json.dumps(ep.initial_knowledge, indent=2) != home.render_knowledge("full")
    assert ep.messages(None)[1]["content"] == ep.messages(home)[1]["content"]  # initial needs no home


def test_the_prompt_writes_exactly_the_header_note_and_text():
    from lares_kit.knowledge.formats import format_note, knowledge_header
    from lares_kit.knowledge.modes import knowledge_prompt, resolve_format

    home = load_world("townhouse")
    for mode in ("latest", "initial"):
        for fmt in KNOWLEDGE_FORMATS:
            note, text = knowledge_text(home, fmt, "find my keys", None if mode == "latest" else home.knowledge())
            head = knowledge_header(mode) + (f"\n{note}" if note else "")
            assert knowledge_prompt(home, mode, fmt, "find my keys", initial=home.knowledge()) == f"{head}\n{text}"
            shown = resolve_format(home, fmt)  # "auto": the whole townhouse as an outline
            assert bool(note) == (shown in ("outline", "overview", "retrieval"))
            assert note.startswith(format_note(shown)[:9])
    assert knowledge_prompt(home, "none", "full") is None
