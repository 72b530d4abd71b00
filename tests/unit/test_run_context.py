"""The run's context is passed, not hidden: who speaks, from where, as which source, through which server."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lares_kit
from lares_kit import RunContext, load_world, run_agent
from lares_kit.bench.scene import set_stage
from lares_kit.bench.suites.tasks import Setup, Task
from lares_kit.errors import LaresError
from lares_kit.sentences.markers import room_in, speaker_in
from lares_kit.tools.remote import RemoteTools

# What Home.extra may hold: data a world file gives (lares_kit.home.worlds), nothing about one run.
WORLD_KEYS = {"policy", "device_extras", "tv_guide", "weather", "layout", "users"}


def _extra_keys_read() -> dict[str, set[str]]:
    # every literal key read or written on something's `.extra` (home.extra["x"], home.extra.get("x")), by module
    found: dict[str, set[str]] = {}
    root = Path(lares_kit.__file__).parent
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "extra":
                key = node.slice
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "extra" and node.args):
                key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.setdefault(key.value, set()).add(str(path.relative_to(root)))
    return found


def test_home_extra_holds_world_data_only():
    keys = _extra_keys_read()
    assert "policy" in keys and "users" in keys  # the scan sees the world data it should
    stray = {key: sorted(where) for key, where in keys.items() if key not in WORLD_KEYS}
    assert not stray, f"Home.extra is for world data; these modules keep run context there: {stray}"


def test_the_person_and_room_reach_the_goal_and_the_home_keeps_none_of_it():
    home = load_world("townhouse")
    before = dict(home.extra)
    episode = run_agent("is the light on?", home, "function-calling",
                        context=RunContext(person="ana", room="main-bedroom"))
    assert room_in(episode.goal_prompt) == "main-bedroom"
    assert home.extra == before
    # the speaker is named through the memory (whose turns are kept): function-calling keeps none unless given one,
    # react always keeps one
    assert speaker_in(episode.goal_prompt) == ""
    react = run_agent("is the light on?", load_world("townhouse"), "react", context=RunContext(person="ana"))
    assert speaker_in(react.goal_prompt) == "ana"


def test_a_room_the_home_does_not_have_is_not_said():
    episode = run_agent("is the light on?", load_world("townhouse"), "function-calling",
                        context=RunContext(room="the-moon"))
    assert room_in(episode.goal_prompt) == ""


def test_a_tasks_set_up_is_its_run_context_not_its_homes_data():
    task = Task("t", "demo", "sage-home", "direct", "put the game on the TV by the credenza",
                setup=Setup(user="dmitriy", room="living-room", source="guest"))
    scene = set_stage(task, load_world("sage-home"))
    assert scene.run_context == RunContext(source="guest", person="dmitriy", room="living-room")
    assert not {"user", "room", "source"} & set(scene.home.extra)
    assert set_stage(Task("u", "demo", "sage-home", "direct", "hi"), load_world("sage-home")).run_context \
        == RunContext()


@pytest.mark.parametrize("person, channel", [("amal", 3), ("dmitriy", 4)])
def test_sage_follows_the_person_the_context_names(person, channel):
    home = load_world("sage-home")
    episode = run_agent("put the game on the TV by the credenza", home, agent="sage",
                        context=RunContext(person=person))
    assert episode.status == "done" and home.devices["tv-credenza"].state["channel"] == channel


@pytest.mark.parametrize("bad, sentence", [
    ({"source": None}, "a run's source must be a name such as owner, guest or letterbox (text), not None"),
    ({"person": ["ana"]}, "a run's person must be a resident id (text), not ['ana']"),
    ({"room": 7}, "a run's room must be a room id (text) or None, not 7"),
])
def test_a_bad_context_is_one_sentence(bad, sentence):
    with pytest.raises(LaresError) as err:
        RunContext(**bad)
    assert str(err.value) == sentence


def test_run_agent_takes_only_a_run_context():
    with pytest.raises(LaresError, match=r"^context must be a RunContext \(from lares_kit import RunContext\), "
                                         r"not a dict$"):
        run_agent("hello", load_world("lares-home"), context={"source": "guest"})


def test_a_remote_homes_tools_bring_the_local_home_up_to_date_before_the_prompt():
    from lares_kit.tools.toolbox import default_tools

    class Far(RemoteTools):
        def sync(self, home):  # the real home's kitchen light was switched on meanwhile
            home.update_device("kitchen-light", {"on": True})

    home = load_world("lares-home")
    assert home.devices["kitchen-light"].state["on"] is False
    episode = run_agent("is the kitchen light on?", home, "function-calling", tools=Far(default_tools(home)))
    assert home.devices["kitchen-light"].state["on"] is True and episode.status == "done"


def test_the_served_home_owns_a_context_per_caller():
    from lares_kit.serve.service import HomeService

    service = HomeService(load_world("townhouse"), source="guest")
    assert service.source == "guest" and service.context == RunContext(source="guest")
    assert service.context_for("letterbox").source == "letterbox" and service.context_for(None) is service.context
    refused = service.call("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": False},
                           source="letterbox")
    assert not refused.ok and service.home.devices["front-door-lock"].state == {"locked": True}


def test_a_replay_names_its_recording_and_a_recorder_its_folder(tmp_path):
    from lares_kit.models import make_client
    from lares_kit.models.recording.replay import recorder_of, recording_of

    live = make_client("offline", record=str(tmp_path))
    first = run_agent("turn on the light in the kitchen", load_world("lares-home"), "function-calling", "offline",
                      client=live)
    assert recorder_of(live).count == len(first.llm_calls) and recording_of(live) is None
    replay = make_client(f"replay:{tmp_path}")
    assert recording_of(replay).models == ["offline"] and recorder_of(replay) is None
    again = run_agent("turn on the light in the kitchen", load_world("lares-home"), "function-calling",
                      f"replay:{tmp_path}")
    assert again.model == "offline" and [s.tool for s in again.tool_calls] == [s.tool for s in first.tool_calls]
