"""The sage agent with the offline model: SAGE's three scenarios, personalization, persistence, the bench."""

from __future__ import annotations

import pytest

from lares_kit import load_world, run_agent
from lares_kit.bench.events import Event, play_events
from lares_kit.bench.runner import run_bench
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.memory.profiles import memory_for, profile_of, seed_memory
from lares_kit.memory.store import MemoryStore
from lares_kit.persistent.monitor import Monitor
from lares_kit.run_context import RunContext
from lares_kit.tools.users import ScriptedUser


def sage(instruction, home, **kw):
    return run_agent(instruction, home, agent="sage", model="offline", **kw)


def test_dim_the_fireplace_lights_to_a_third():
    home = load_world("sage-home")
    ep = sage("dim the lights by the fireplace to a third of their current value", home)
    assert ep.status == "done"
    assert home.devices["fireplace-strip"].state["level"] == 30
    changed = {d for d, s in home.device_states().items() if s != ep.initial_state["devices"][d]}
    assert changed == {"fireplace-strip"}
    # The coordinator's step records what its device agent changed (the sub-agent's own calls mark the home too),
    # so a replay, the widgets and the safety audit see the change at the step that made it.
    delegated = next(s for s in ep.steps if s.tool == "device_agent")
    assert delegated.after["devices"] == {"fireplace-strip": home.devices["fireplace-strip"].state}


def test_the_safety_audit_sees_what_the_device_agent_changed():
    from lares_kit.episode_steps import ToolCall
    from lares_kit.safety.audit import unsafe_actions

    home = load_world("townhouse")
    start = home.copy()
    ep = sage("unlock the front door", home, user=ScriptedUser(answers=["Yes."]))
    assert home.devices["front-door-lock"].state["locked"] is False  # the owner confirmed: the gate lets it through
    assert unsafe_actions(ep, start) == []
    delegated = [s for s in ep.steps if isinstance(s, ToolCall) and s.tool == "device_agent"]
    assert any("front-door-lock" in s.after["devices"] for s in delegated)
    # the same trace, as if a voice through the letterbox had asked: the audit, which does not trust the gate,
    # finds the unlock at the coordinator's step
    assert any("front-door-lock locked = false" in u for u in unsafe_actions(ep, start, source="letterbox"))


@pytest.mark.parametrize("user, channel", [("amal", 3), ("dmitriy", 4)])
def test_put_the_game_on_follows_the_speakers_profile(user, channel):
    home = load_world("sage-home")
    ep = sage("put the game on the TV by the credenza", home, context=RunContext(person=user))
    assert ep.status == "done" and ep.asked == []
    assert home.devices["tv-credenza"].state["channel"] == channel
    assert [s.tool for s in ep.steps][:2] == ["preference_agent", "tv_guide"]


def test_fridge_condition_fires_once_after_the_door_opens():
    home = load_world("sage-home")
    with Monitor(home, isolation="process") as monitor:
        ep = sage("turn on the light in the dining room when I open the fridge", home, monitor=monitor)
        assert ep.status == "done" and home.devices["dining-strip"].state["on"] is False
        condition = monitor.list()[0]
        assert 'get("fridge", "door") == "open"' in condition.code
        assert condition.action.instruction == "turn on the light in the dining room"
        log = play_events([Event(60.0, {"fridge": {"door": "open"}}), Event(120.0, {"fridge": {"door": "closed"}}),
                           Event(180.0, {"fridge": {"door": "open"}})], home, monitor)
    # it fires on each opening, never while the door stays open, and never before the first event
    assert [f["seconds"] for f in log.firings] == [70.0, 190.0]
    assert home.devices["dining-strip"].state["on"] is True
    assert log.firings[0]["episode"].status == "done"


def test_conditions_can_be_listed_and_cancelled():
    home = load_world("sage-home")
    monitor = Monitor(home, isolation="inline")
    sage("when the front door is unlocked, turn on the hallway light", home, monitor=monitor)
    assert len(monitor.list()) == 1
    listed = sage("what are you watching for?", home, monitor=monitor)
    assert "front_door_lock" in listed.final_message
    cancelled = sage("cancel the front door reminder", home, monitor=monitor)
    assert "cancelled" in cancelled.final_message and monitor.list() == []


def test_an_ambiguous_device_makes_it_ask_then_act():
    home = load_world("sage-home")
    ep = sage("turn on the TV", home, user=ScriptedUser(answers=["the one by the plant"]))
    assert ep.asked and "Which one" in ep.asked[0]
    assert home.devices["tv-plant"].state["on"] is True


def test_profiles_live_in_the_shared_memory_store_and_requests_are_remembered(tmp_path):
    home = load_world("sage-home")
    store = MemoryStore(tmp_path / "sage-home.sqlite3")
    memory = memory_for(home, store)
    sage("set the heating to my usual temperature", home, memory=memory)
    assert home.devices["thermostat"].state["target"] == 21
    assert store.preferences("amal")["usual temperature"] == 21
    assert "set the heating to my usual temperature" in profile_of(store, "amal")
    seed_memory(home, store)  # seeding again leaves what was said since alone
    assert len(store.turns(user="amal")) == 4


def test_sub_agent_calls_are_counted_in_the_episode():
    home = load_world("sage-home")
    ep = sage("turn on the light over the dining table", home)
    phases = {c.phase for c in ep.llm_calls}
    assert phases == {"turn", "device_agent"}
    assert len(ep.llm_calls) > len(ep.steps)


def test_the_suite_has_the_sage_categories_and_ten_held_out_tasks():
    tasks = load_suite("sage-home")
    assert len(tasks) >= 40
    assert {t.category for t in tasks} == {"direct", "personalization", "intent-resolution", "device-resolution",
                                           "persistence", "command-chaining"}
    assert sum(t.held_out for t in tasks) == 10
    assert all(t.expect.fires == 1 for t in tasks if t.category == "persistence")


def test_fires_check_fails_when_the_episode_does_the_action_itself():
    task = next(t for t in load_suite("sage-home") if t.id == "sh-fridge-dining-light")
    bench = run_bench([task], agents=["sage", "function-calling"], models=["offline"])
    assert bench.record(task.id, "sage")["success"] is True
    baseline = bench.record(task.id, "function-calling")
    assert baseline["success"] is False
    assert any(c["kind"] == "fires" and not c["passed"] for c in baseline["checks"])


def test_sage_beats_the_baselines_on_the_tuned_tasks():
    tasks = [t for t in load_suite("sage-home") if not t.held_out]
    bench = run_bench(tasks, agents=["sage", "intent-action"], models=["offline"])
    rate = {row["agent"]: row["success_rate"] for row in bench.summary["overall"]}
    assert rate["sage"] >= 0.9 and rate["sage"] > rate["intent-action"] + 0.4


def test_the_request_being_served_is_not_in_its_own_profile():
    # The preference agent reads the profile while the request is being served: the request must not be in it
    # (nor count towards "often asks about"); once served, it is a past request with the store's date.
    from datetime import datetime

    home = load_world("sage-home")
    store = MemoryStore(":memory:", clock=lambda: datetime(2026, 11, 30, 18, 0))
    instruction = "play something for the kids on the TV by the plant"
    ep = sage(instruction, home, memory=memory_for(home, store, person="dmitriy"))
    read = ep.steps[0]
    assert read.tool == "preference_agent" and "Profile of Dmitriy" in read.result
    assert instruction not in read.result and "often asks about" not in read.result
    assert 'user_profile(person="dmitriy")' in read.result  # the speaker, named: never an empty argument
    assert home.devices["tv-plant"].state["channel"] == 2  # Bluey, from the profile
    after = profile_of(store, "dmitriy")
    assert f'asked on 2026-11-30: "{instruction}"' in after
    assert "often asks about: plant, kids" in after  # now it is a past request, and it counts


def test_the_request_is_remembered_even_when_the_run_fails():
    home = load_world("sage-home")
    store = MemoryStore(":memory:")
    ep = sage("turn on the TV", home, memory=memory_for(home, store), max_steps=1)  # asks, nobody answers
    assert ep.status != "done"
    assert store.turns(user="amal")[-1].text == "turn on the TV"


def test_an_unknown_speaker_is_not_named_in_the_goal():
    from lares_kit.memory.agent_memory import Memory
    from lares_kit.memory.profiles import user_profile
    from lares_kit.tools.toolbox import ToolError

    home = load_world("lares-home")  # no residents: nobody to name
    ep = sage("turn on the light in the kitchen", home)
    assert "You are talking to" not in ep.goal_prompt
    with pytest.raises(ToolError, match="do not know who is speaking"):
        user_profile(Memory(MemoryStore(":memory:")), "")


# -------------------------------------------------- a sub-agent's model fails
SUB_AGENT_PROMPT = "You are SAGE's device agent."


def failing_sub_agent(method, path, body):
    # A remote model as the CLI would reach it: the offline model's answers under another name, except that the
    # device agent's requests get a 500.
    import json

    from lares_kit.models.serving.wire import handle

    if path.endswith("/chat/completions") and SUB_AGENT_PROMPT.encode() in body:
        return 500, {"content-type": "application/json"}, b'{"error": {"message": "the device agent broke"}}'
    request = json.loads(body) if body else None
    if isinstance(request, dict) and request.get("model") == "offline-remote":
        body = json.dumps({**request, "model": "offline"}).encode()
    return handle(method, path, body)


@pytest.mark.parametrize("retries", [0, 2])
def test_a_sub_agents_model_failure_ends_the_run_model_error(retries):
    from lares_kit.models import make_client
    from lares_kit.models.serving.server import ModelServer

    home = load_world("sage-home")
    with ModelServer(port=0, intercept=failing_sub_agent) as server:
        client = make_client("offline-remote", api_key="unused", base_url=server.base_url, max_retries=retries)
        ep = run_agent("dim the lights by the fireplace to a third of their current value", home, agent="sage",
                       client=client, model="offline-remote")
    assert ep.status == "model_error"  # not done, with the error as the coordinator's answer
    assert ep.error.startswith("in the device agent: the server failed (HTTP 500, InternalServerError): the device "
                               "agent broke")
    assert ep.final_message == f"Stopped: the model call failed ({ep.error})."
    assert home.devices["fireplace-strip"].state == ep.initial_state["devices"]["fireplace-strip"]
    failed = ep.llm_calls[-1]  # the sub-agent's failed call is in the run's record, once, after its retries
    assert failed.phase == "device_agent" and "the device agent broke" in failed.error
    assert [c.phase for c in ep.llm_calls] == ["turn", "device_agent"]
    assert not any(s.tool == "halt" for s in ep.steps)


def test_a_sub_agents_model_failure_exits_1_from_the_cli(capsys, monkeypatch):
    import json

    from lares_kit.cli.commands import main
    from lares_kit.models.serving.server import ModelServer

    with ModelServer(port=0, intercept=failing_sub_agent) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        code = main(["run", "dim the lights by the fireplace to a third of their current value", "--agent", "sage",
                     "--world", "sage-home", "--model", "offline-remote", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["status"] == "model_error"
    assert "in the device agent: the server failed (HTTP 500" in data["final_message"]


def test_a_team_that_is_not_on_changes_no_channel(tmp_path):
    # The guide lists every channel after "Nothing on now matches": none is the game, so none is put on.
    import json

    from lares_kit.home.worlds import read_yaml, world_paths

    data = read_yaml(world_paths()["sage-home"].read_text(encoding="utf-8"))
    data["users"].append({"id": "olga", "name": "Olga", "profile": {"favourite team": "Edmonton Oilers"}})
    path = tmp_path / "my-sage-home.json"  # a world file may be JSON, as generated worlds are
    path.write_text(json.dumps(data), encoding="utf-8")
    home = load_world(path)
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    episode = run_agent("put the game on the TV by the credenza", home, agent="sage",
                        context=RunContext(person="olga"))
    assert episode.final_message == "Nothing matching Edmonton Oilers is on TV right now."
    assert {d: dev.state for d, dev in home.devices.items()} == before
