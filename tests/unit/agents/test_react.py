"""The react agent: two models, the parser's policies, parallel calls, the paper's failure and its fixes."""

import json

import pytest

from lares_kit import load_world, run_agent
from lares_kit.agents.react import action_format, rounds
from lares_kit.bench import load_suite, run_bench
from lares_kit.episode_steps import Action, Thought

MULTI = "Turn on the light in office 3, open the window in meeting room 3 and switch on the kitchen fan."
EXPECTED = {"office-3-light": {"on": True}, "meeting-room-3-window": {"open": True}, "kitchen-fan": {"on": True}}


def changed(ep):
    return all(ep.final_state["devices"][d][k] == v for d, want in EXPECTED.items() for k, v in want.items())


def test_stuffy_room_reads_the_sensor_then_acts():
    ep = run_agent("it's stuffy in meeting room 2, do something", load_world("smart-building"), agent="react")
    assert ep.status == "done"
    assert isinstance(ep.steps[0], Thought) and isinstance(ep.steps[1], Action)
    assert ep.steps[1].tool == "read_device" and ep.steps[1].arguments == {"device_id": "meeting-room-2-sensor"}
    devices = ep.final_state["devices"]
    assert devices["meeting-room-2-window"]["open"] and devices["meeting-room-2-hvac"]["on"]
    text = ep.transcript()
    assert "Thought" in text and "Action" in text and "Observation" in text


def test_planner_and_executor_are_separate_calls():
    ep = run_agent("turn on the light in meeting room 1", load_world("smart-building"), agent="react")
    assert [c.phase for c in ep.llm_calls] == ["thought", "action", "thought"]
    assert ep.final_state["devices"]["meeting-room-1-light"] == {"on": True, "brightness": 100}  # not brightness 1


def test_the_executor_can_be_another_model():
    ep = run_agent(MULTI, load_world("smart-building"), agent="react", executor="offline-multi",
                   options={"action_format": "text"})
    assert changed(ep) and ep.status == "done"


@pytest.mark.parametrize("action_format, parser, solved", [
    ("text", "naive", False),  # the paper's failure: several Actions break the parser, every round
    ("text", "one", True),  # fix 1: stricter parsing, run the first, say the rest were ignored
    ("json_schema", "one", True),  # fix 2: constrained output can hold one Action only
    ("parallel", "one", True),  # fix 3: parallel calls for independent actions
])
def test_several_actions_after_one_thought(action_format, parser, solved):
    ep = run_agent(MULTI, load_world("smart-building"), agent="react", executor="offline-multi",
                   options={"action_format": action_format, "parser": parser})
    assert changed(ep) is solved
    if not solved:
        assert ep.status == "step_limit" and rounds(ep) == 10
        assert "not one JSON object" in ep.errors[0].message


def test_the_ignored_actions_are_reported_to_the_model():
    ep = run_agent(MULTI, load_world("smart-building"), agent="react", executor="offline-multi",
                   options={"action_format": "text", "parser": "one"})
    notes = [s.message for s in ep.steps if s.kind == "error"]
    assert notes and notes[0].startswith("Note: your reply had 3 Actions; only the first was run")


def test_parallel_calls_save_rounds_on_the_multi_task_category():
    tasks = [t for t in load_suite("smart-building") if t.category == "multi-task"]
    bench = run_bench(tasks, agents=["react", "react-parallel"], models=["offline"])
    by = {(r["agent"], r["task"]): r for r in bench.records}
    both = [t.id for t in tasks if by[("react", t.id)]["success"] and by[("react-parallel", t.id)]["success"]]
    one = sum(rounds(bench.episode(t, "react")) for t in both)
    parallel = sum(rounds(bench.episode(t, "react-parallel")) for t in both)
    assert both and one / parallel > 1.5


def test_response_format_schemas():
    one = action_format(["set_light", "halt"], "json_schema")
    assert one["json_schema"]["schema"]["properties"]["tool"]["enum"] == ["set_light", "halt"]
    many = action_format(["set_light", "halt"], "parallel")
    assert many["json_schema"]["schema"]["properties"]["actions"]["type"] == "array"


def test_contradiction_is_pointed_out_and_not_acted_on():
    from lares_kit.tools.users import ScriptedUser

    ep = run_agent("Lower the temperature in office 3 to make the room warmer.", load_world("smart-building"),
                   agent="react", user=ScriptedUser(answers=["Oh right, never mind."]))
    assert "colder, not warmer" in ep.asked[0]
    assert ep.final_state["devices"]["office-3-thermostat"]["target"] == 19


def test_the_cli_runs_react_with_json(capsys):
    from lares_kit.cli.commands import main

    assert main(["run", "--agent", "react", "--world", "smart-building", "--json", "hello"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["agent"] == "react" and out["status"] == "done" and out["llm_calls"] == 1
