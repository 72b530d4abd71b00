"""`lares run` and `lares demo` with the offline model, end to end through the CLI."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lares_kit.cli import main

RUN_KEYS = ["instruction", "world", "agent", "model", "final_message", "status", "steps", "llm_calls", "usage",
            "asked", "state"]
LIGHTS_AT_START = {"lounge-light": False, "hallway-light": True, "kitchen-light": False, "bedroom-light": False,
                   "office-light": False}
DESIGNS = [[], ["--agent", "function-calling"], ["--knowledge", "initial"]]
DESIGN_IDS = ["intent-action", "function-calling", "initial-knowledge"]


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv("LARES_MODEL", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # nobody at the terminal unless a test says so


def run_json(capsys, *argv):
    code = main(["run", *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def lights(data):
    return {dev: state["on"] for dev, state in data["state"].items() if dev != "robot"}


@pytest.mark.parametrize("extra", DESIGNS, ids=DESIGN_IDS)
def test_kitchen_light_and_nothing_else(capsys, extra):
    code, data = run_json(capsys, "turn on the light in the kitchen", *extra)
    assert code == 0 and list(data) == RUN_KEYS
    assert data["status"] == "done" and data["model"] == "offline" and data["world"] == "lares-home"
    assert lights(data) == {**LIGHTS_AT_START, "kitchen-light": True}
    assert data["asked"] == [] and data["llm_calls"] >= 2 and data["usage"]["prompt_tokens"] > 0
    assert data["steps"][-1]["tool"] == "halt"


@pytest.mark.parametrize("extra", DESIGNS, ids=DESIGN_IDS)
@pytest.mark.parametrize("seed,room", [(None, "bedroom"), (5, "office"), (7, "kitchen"), (0, "lounge"), (1, "hallway")])
def test_light_for_my_dog_found_by_looking(capsys, extra, seed, room):
    seed_args = [] if seed is None else ["--seed", str(seed)]
    code, data = run_json(capsys, "turn on the light for my dog", *seed_args, *extra)
    assert data["status"] == "done", data["final_message"]
    assert data["state"][f"{room}-light"] == {"on": True}
    looks = [s for s in data["steps"] if s["tool"] == "look_with_robot" and s["ok"]]
    assert looks and "Bruno, a dog (bruno)" in looks[-1]["result"]
    assert data["state"]["robot"] == room  # it went there and saw him


@pytest.mark.parametrize("extra", DESIGNS, ids=DESIGN_IDS)
@pytest.mark.parametrize("answer,office_on", [("Yes, it's a bright sunny day.", False), ("No, it's night time.", True)])
def test_office_light_by_daytime_asks_then_acts(capsys, extra, answer, office_on):
    code, data = run_json(capsys, "set the office light depending on whether it's daytime", "--answer", answer, *extra)
    assert data["status"] == "done" and len(data["asked"]) == 1
    assert lights(data) == {**LIGHTS_AT_START, "office-light": office_on}


def test_answers_are_fed_in_order_and_none_left_means_no_answer(capsys):
    code, data = run_json(capsys, "set the office light depending on whether it's daytime")
    assert code == 0 and data["status"] == "no_answer" and len(data["asked"]) == 1
    assert lights(data) == LIGHTS_AT_START


def test_the_person_at_the_terminal_is_asked(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("no, it is the middle of the night\n"))
    code = main(["run", "set the office light depending on whether it's daytime", "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)  # the question went to stderr, stdout is only the object
    assert code == 0 and "[the agent asks]" in captured.err and data["state"]["office-light"] == {"on": True}


def test_transcript_without_json(capsys):
    assert main(["run", "turn on the light in the kitchen"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("> turn on the light in the kitchen") and "set_light" in out and "= done" in out


def test_max_steps_and_knowledge_none(capsys):
    code, data = run_json(capsys, "turn on the light for my dog", "--max-steps", "2")
    assert data["status"] == "step_limit" and data["llm_calls"] == 4
    _, data = run_json(capsys, "turn on the light in the kitchen", "--knowledge", "none")
    assert data["status"] == "done"


def test_unknown_agent_is_a_clean_error(capsys):
    assert main(["run", "hi", "--agent", "telepathy"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'telepathy'" in err and "intent-action" in err and "Traceback" not in err


def test_demo_passes_all_three(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count("check: passed") == 3 and "3 of 3 scenarios passed" in out
    assert "[the agent asks]" not in out and "asks" in out


@pytest.mark.slow
def test_the_console_script(tmp_path):
    lares = Path(sys.executable).with_name("lares")
    env = {k: v for k, v in os.environ.items() if k != "LARES_MODEL"}
    proc = subprocess.run([str(lares), "run", "turn on the light in the kitchen", "--json"], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["state"]["kitchen-light"] == {"on": True}


def test_knowledge_format_changes_the_prompt_not_the_result(capsys):
    sizes = {}
    for fmt in ("full", "retrieval"):
        assert main(["run", "turn on the light in the kitchen", "--agent", "function-calling",
                     "--knowledge-format", fmt, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["status"] == "done" and data["state"]["kitchen-light"] == {"on": True}
        sizes[fmt] = data["usage"]["prompt_tokens"]
    assert sizes["retrieval"] < sizes["full"]
