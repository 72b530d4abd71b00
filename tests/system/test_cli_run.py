"""`lares run` and `lares demo` with the offline model, end to end through the CLI."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lares_kit.cli.commands import main

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


@pytest.mark.parametrize("argv, says", [
    (["--agent", "sage", "--world", "sage-home", "--knowledge", "latest"],
     "sage does not take the knowledge mode 'latest' (it takes: none)"),
    (["--agent", "function-calling", "--executor-model", "offline-multi"], "function-calling has no executor model"),
])
def test_a_setting_the_agent_does_not_take_is_a_clean_error(capsys, argv, says):
    assert main(["run", "turn on the light in the kitchen", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_sage_runs_with_its_own_knowledge_when_none_is_given(capsys):
    _, data = run_json(capsys, "dim the lights by the fireplace to a third of their current value",
                       "--agent", "sage", "--world", "sage-home")
    assert data["status"] == "done" and data["state"]["fireplace-strip"]["level"] == 30


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


# ---------------------------------------------------------------- persistent commands: the poller and --event
FRIDGE = "when I open the fridge, turn on the dining light"
SAGE = ["--agent", "sage", "--world", "sage-home"]


def test_sage_registers_a_persistent_command_instead_of_acting(capsys):
    code, data = run_json(capsys, FRIDGE, *SAGE)
    assert code == 0 and list(data)[:len(RUN_KEYS)] == RUN_KEYS and data["status"] == "done"
    assert data["state"]["dining-strip"]["on"] is False  # nothing happens until the fridge opens
    [condition] = data["conditions"]
    assert condition["verdict"] == "accepted" and condition["reads"] == ["fridge.door"]
    assert 'get("fridge", "door") == "open"' in condition["code"] and condition["value"] is False
    assert condition["instruction"] == "turn on the dining light"
    assert data["events"] == [] and data["firings"] == [] and data["state_after_events"] is None


def test_the_transcript_shows_the_code_the_verdict_and_how_to_see_it_fire(capsys):
    assert main(["run", FRIDGE, *SAGE]) == 0
    out = capsys.readouterr().out
    assert "~ Persistent commands: 1 registered, checked every 10 s" in out
    assert '    |     return get("fridge", "door") == "open"' in out
    assert "sandbox  accepted: the checker allowed its syntax (it reads fridge.door)" in out
    assert '--event "30s fridge door=open"' in out  # the door is closed now: opening it is what would fire


def test_events_fire_on_the_rising_edge_at_their_simulated_time(capsys):
    events = ["--event", "30s fridge door=open", "--event", "2m fridge door=closed", "--event", "3m fridge door=open"]
    code, data = run_json(capsys, FRIDGE, *SAGE, *events)
    assert code == 0
    assert data["events"] == [{"seconds": 30.0, "states": {"fridge": {"door": "open"}}},
                              {"seconds": 120.0, "states": {"fridge": {"door": "closed"}}},
                              {"seconds": 180.0, "states": {"fridge": {"door": "open"}}}]
    # polled every 10 s: the tick after each opening fires, and only then
    assert [(f["seconds"], f["condition"], f["status"]) for f in data["firings"]] == \
        [(40.0, "fridge_door_open", "done"), (190.0, "fridge_door_open", "done")]
    assert any(s["tool"] == "device_agent" for s in data["firings"][0]["steps"])
    assert data["state"]["dining-strip"]["on"] is False and data["state_after_events"]["dining-strip"]["on"] is True
    assert data["conditions"][0]["fired"] == 2


def test_the_transcript_interleaves_events_and_firings(capsys):
    assert main(["run", FRIDGE, *SAGE, "--event", "30 fridge door=open"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("~ After the episode, on the simulated clock:"):]
    assert tail.index("t=   30s  event   fridge door=open") < tail.index(
        't=   40s  fires   fridge_door_open turned True -> "turn on the dining light"')
    assert "      > turn on the dining light" in tail and "dining-strip: on is now true" in tail
    assert "1 firing;" in tail


def test_an_event_that_changes_nothing_fires_nothing(capsys):
    code, data = run_json(capsys, FRIDGE, *SAGE, "--event", "30s fridge door=closed")
    assert code == 0 and data["firings"] == [] and data["state_after_events"]["dining-strip"]["on"] is False


@pytest.mark.parametrize("agent", ["intent-action", "function-calling"])
def test_an_agent_without_a_condition_agent_says_nothing_was_registered(capsys, agent):
    assert main(["run", FRIDGE, "--world", "sage-home", "--agent", agent, "--event", "30s fridge door=open"]) == 0
    out = capsys.readouterr().out
    assert f"No persistent command was registered: {agent} has no condition agent" in out
    assert "0 firings" in out


def test_a_persistent_command_to_an_agent_with_no_poller_is_named(capsys):
    assert main(["run", FRIDGE, "--world", "sage-home"]) == 0
    out = capsys.readouterr().out
    assert "This reads as a persistent command" in out and "only --agent sage registers one" in out
    assert main(["run", "turn on the light in the kitchen"]) == 0
    assert "persistent" not in capsys.readouterr().out  # an ordinary command gets no such note


def test_a_world_with_nothing_to_watch(capsys):
    # lares-home has no fridge: the condition agent says so, nothing is registered, and nothing is switched on
    assert main(["run", "when I open the fridge, turn on the kitchen light", "--agent", "sage"]) == 0
    out = capsys.readouterr().out
    assert "~ No persistent command was registered: the answer above says why." in out
    _, data = run_json(capsys, "when I open the fridge, turn on the kitchen light", "--agent", "sage")
    assert "No device matches 'the fridge'" in data["final_message"]
    assert data["conditions"] == [] and data["state"]["kitchen-light"] == {"on": False}


@pytest.mark.parametrize("event,says", [
    ("30s", "write it as TIME DEVICE ATTRIBUTE=VALUE"),
    ("30s fridge door", "write it as TIME DEVICE ATTRIBUTE=VALUE"),
    ("soon fridge door=open", "'soon' is not a time"),
    ("99999m fridge door=open", "too late"),
    ("30s fridg door=open", "there is no device 'fridg' in sage-home. Did you mean 'fridge'?"),
    ("30s fridge dor=open", "fridge has no 'dor'; it has: door,"),
    ("30s fridge door=ajar", "door of fridge must be one of open, closed."),
    ("30s dining-strip level=500", "level of dining-strip must be a number from 0 to 100"),
])
def test_bad_event_text_is_one_sentence_and_exit_2(capsys, event, says):
    assert main(["run", FRIDGE, *SAGE, "--event", event]) == 2
    err = capsys.readouterr().err
    assert says in err and err.startswith(f"lares: event {event!r}: ") and "Traceback" not in err
    assert err.count("\n") == 1


def test_the_monitor_keeps_what_the_sandbox_refused():
    from lares_kit import load_world
    from lares_kit.persistent.monitor import Monitor
    from lares_kit.persistent.sandbox import ConditionError

    with Monitor(load_world("sage-home"), isolation="inline") as monitor:
        with pytest.raises(ConditionError):
            monitor.register("import os\ndef f():\n    return True")
        with pytest.raises(ConditionError):
            monitor.register("def f():\n    return get('fridge', 'lid') == 'open'")
        assert [why.split(";")[0] for _, why in monitor.refused] == [
            "Line 1: imports are not allowed in a condition",
            "The condition reads 'lid' of 'fridge', which it does not have"]
        assert monitor.conditions == {}


def test_a_refused_condition_is_shown_with_the_sandbox_verdict(capsys, monkeypatch):
    import functools

    from lares_kit.persistent.sandbox import host

    # A sandbox that allows only 20 characters of code refuses the condition agent's fridge condition.
    monkeypatch.setattr(host, "Limits", functools.partial(host.Limits, max_code_chars=20))
    assert main(["run", FRIDGE, *SAGE, "--event", "30s fridge door=open"]) == 0
    out = capsys.readouterr().out
    assert "~ Persistent commands: 0 registered" in out and "  a condition the sandbox refused:" in out
    assert "    sandbox  refused: The condition is 66 characters long; keep it under 20" in out
    assert "0 firings" in out
    _, data = run_json(capsys, FRIDGE, *SAGE)
    assert [(c["verdict"], c["id"]) for c in data["conditions"]] == [("refused", None)]
    assert data["conditions"][0]["code"].startswith("def fridge_door_open():")


# ------------------------------------------------------------------------------------------- --person
@pytest.mark.parametrize("person,channel", [([], 3), (["--person", "dmitriy"], 4), (["--person", "Dmitriy"], 4),
                                            (["--person", "amal"], 3)])
def test_person_is_who_sage_serves(capsys, person, channel):
    # the game on the TV by the plant: Amal (the first resident) supports the Canadiens (3), Dmitriy the Raptors (4)
    code, data = run_json(capsys, "put the game on the TV by the plant", *SAGE, *person)
    assert code == 0 and data["status"] == "done" and data["state"]["tv-plant"]["channel"] == channel


def test_an_unknown_person_lists_the_residents(capsys):
    assert main(["run", "put the game on", *SAGE, "--person", "bob"]) == 2
    err = capsys.readouterr().err
    assert err == "lares: sage-home knows these people: amal, dmitriy; --person 'bob' is not one of them.\n"


def test_person_without_memory_is_refused_for_agents_that_cannot_use_it(capsys):
    assert main(["run", "set my office to my usual temperature", "--world", "smart-building", "--person", "ana"]) == 2
    err = capsys.readouterr().err
    assert "intent-action reads --person only from its memory: add --memory" in err and "Traceback" not in err


def test_person_with_memory_is_whose_preference_is_stored(capsys, tmp_path):
    from lares_kit.memory.agent_memory import MemoryStore

    store = tmp_path / "memory.sqlite3"
    code, data = run_json(capsys, "I like the office at 23 degrees.", "--world", "smart-building", "--person", "ben",
                          "--memory", str(store), "--agent", "function-calling")
    assert code == 0 and data["status"] == "done"
    assert MemoryStore(store).preferences("ben") == {"office temperature": 23}


# ---------------------------------------------------------------- --json: one document on stdout, always
def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("argv,status,code", [
    (["set the office light depending on whether it's daytime"], "no_answer", 0),
    (["when I open the fridge, turn on the dining light", *SAGE, "--event", "30s fridge door=open"], "done", 0),
    (["hi", "--world", "attic"], "error", 2),
    (["hi", "--agent", "telepathy"], "error", 2),
    (["hi", "--max-steps", "0"], "error", 2),
    ([FRIDGE, *SAGE, "--event", "30s fridge door=ajar"], "error", 2),
    (["put the game on", *SAGE, "--person", "bob"], "error", 2),
    (["hi", "--model", "gpt-4o-mini"], "error", 2),  # a remote model with no key
])
def test_json_stdout_is_one_document_in_every_outcome(capsys, monkeypatch, argv, status, code):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", *argv, "--json"]) == code
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["status"] == status
    if status == "error":
        assert captured.err == f"lares: {data['error']}\n" and data["instruction"] == argv[0]


def test_json_with_a_model_that_cannot_be_reached(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nobody listens there
    assert main(["run", "turn on the light in the kitchen", "--model", "some-model", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "model_error" and "Connection error" in data["final_message"]


def test_json_stdout_stays_clean_when_something_prints_during_the_run(capsys, monkeypatch):
    import lares_kit.cli.run as run_module
    from lares_kit.tools.users import NoAnswer

    class ChattyUser:  # asks through input()'s prompt, which writes to stdout, as TerminalUser() does
        def __init__(self, stream=None):
            pass

        def ask(self, question):
            print(f"[the agent asks] {question}")
            raise NoAnswer("nobody")

    monkeypatch.setattr(run_module, "TerminalUser", ChattyUser)
    assert main(["run", "set the office light depending on whether it's daytime", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["status"] == "no_answer" and "[the agent asks]" in captured.err


@pytest.mark.slow
def test_json_question_unanswered_through_the_console_script():
    lares = Path(sys.executable).with_name("lares")
    env = {k: v for k, v in os.environ.items() if k != "LARES_MODEL"}
    proc = subprocess.run([str(lares), "run", "set the office light depending on whether it's daytime", "--json"],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120,
                          check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "no_answer"
    assert "[the agent asks]" in proc.stderr


# ------------------------------------------------ the request: server, temperature, action format (issue 19)
def test_the_request_flags_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--server NAME", "--temperature T", "--action-format FORMAT", "LARES_SERVER", "llamacpp"):
        assert flag in text


def test_server_temperature_and_action_format_reach_the_request(capsys, monkeypatch):
    from openai.resources.chat.completions import Completions

    sent = []
    real = Completions.create

    def spy(self, **request):  # what the SDK is asked to send
        sent.append(request)
        return real(self, **request)

    monkeypatch.setattr(Completions, "create", spy)
    code, data = run_json(capsys, "turn on the light in meeting room 1", "--world", "smart-building", "--agent",
                          "react", "--server", "llamacpp", "--temperature", "0.4", "--action-format", "json_schema")
    assert code == 0 and data["status"] == "done" and len(sent) == data["llm_calls"]
    assert {r["temperature"] for r in sent} == {0.4} and all(r["max_tokens"] for r in sent)
    assert {"type": "json_object"} in [r.get("response_format") for r in sent]  # llama.cpp's server: no json_schema


def test_the_server_comes_from_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("LARES_SERVER", "ollama")
    code, data = run_json(capsys, "turn on the light in the kitchen")
    assert code == 0 and data["status"] == "done" and data["llm_calls"] == 4  # the fallback needs no extra call
    monkeypatch.setenv("LARES_SERVER", "koboldcpp")
    assert main(["run", "turn on the light in the kitchen"]) == 2
    assert "unknown server 'koboldcpp'; servers: auto, offline, openai" in capsys.readouterr().err


@pytest.mark.parametrize("argv,says", [
    (["--server", "tgi"], "lares: unknown server 'tgi'; servers: auto, offline, openai, llamacpp, ollama, vllm, "
                          "lmstudio\n"),
    (["--temperature", "warm"], "lares: --temperature must be a number from 0 to 2, not 'warm'\n"),
    (["--temperature", "3"], "lares: --temperature must be a number from 0 to 2, not '3'\n"),
    (["--agent", "react", "--action-format", "yaml"],
     "lares: --action-format must be one of json_schema, text, parallel, not 'yaml'\n"),
    (["--action-format", "text"], "lares: --action-format is how react's executor writes Actions; intent-action has "
                                  "no executor: leave it out, or use --agent react.\n"),
])
def test_a_bad_request_flag_is_one_sentence_and_exit_2(capsys, argv, says):
    assert main(["run", "turn on the light in the kitchen", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err == says and captured.out == ""
