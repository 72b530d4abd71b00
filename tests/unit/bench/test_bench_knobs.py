"""Benchmark configurations: knowledge modes, react's executor model and the designs' options, compared side by side."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from lares_kit.bench.configs import check_configurations, configurations, design_configurations, settings_given
from lares_kit.bench.journal import JOURNAL, identity_key, load_records
from lares_kit.bench.runner import RESULT_KEYS, run_bench
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.cli.commands import main
from lares_kit.errors import LaresError

HOME = [t for t in load_suite("lares-home") if t.id in ("lh-kitchen-on", "lh-hallway-off")]
MULTI = [t for t in load_suite("smart-building") if t.id in ("sb-lights-office-2-5", "sb-three-rooms")]
# What a record of a run given no configuration holds, key by key, in order (as before configurations existed)
DEFAULT_KEYS = [*RESULT_KEYS, "seed", "knowledge", "fingerprint", "status", "checks", "unsafe", "refused", "changed",
                "no_change_expected", "search_oracle", "episode", "false_claims", "unverifiable"]


@pytest.fixture(autouse=True)
def _no_models_from_the_environment(monkeypatch):
    for name in ("LARES_MODEL", "LARES_EXECUTOR_MODEL"):
        monkeypatch.delenv(name, raising=False)


def lares(capsys, *argv: str) -> tuple[int, str, str]:
    """`lares ARGV` in this process: (exit status, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def journal(runs: Path) -> list[dict]:
    return [json.loads(line) for line in (runs / JOURNAL).read_text().splitlines()]


def test_lares_bench_prints_a_block_for_each_knowledge_mode(tmp_path, capsys):
    out = tmp_path / "out.json"
    code, text, err = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--tasks",
                            "lh-hallway-off", "--agent", "intent-action", "--agent", "sage", "--knowledge", "latest",
                            "--knowledge", "initial", "--runs", str(tmp_path / "runs"), "--json", str(out))
    assert code == 0, err
    titles = [line for line in text.splitlines() if line.startswith("agent ")]
    assert titles == ["agent intent-action, model offline, knowledge latest",
                      "agent intent-action, model offline, knowledge initial",
                      "agent sage, model offline, knowledge none (does not take the knowledge mode)"]
    assert "6 episodes (2 tasks x 2 agent(s) x 2 configurations" in text  # sage runs once, with its own
    results = json.loads(out.read_text())["results"]
    assert [(r["agent"], r["knowledge"], r.get("own")) for r in results[::2]] == [
        ("intent-action", "latest", None), ("intent-action", "initial", None), ("sage", "none", ["knowledge"])]
    assert all(list(r)[:len(RESULT_KEYS)] == list(RESULT_KEYS) for r in results)  # every contract key kept, first
    # each episode ran in the mode its record names: the knowledge message it was given says so
    for record in journal(tmp_path / "runs"):
        assert record["episode"]["knowledge"] == record["knowledge"]
    summary = json.loads(out.read_text())["summary"]
    assert [row["configuration"] for row in summary["overall"]] == [
        {"knowledge": "latest"}, {"knowledge": "initial"}, {"knowledge": "none", "own": ["knowledge"]}]


def test_react_runs_with_the_executor_model_its_records_name(tmp_path, capsys):
    code, text, err = lares(capsys, "bench", "--suite", "smart-building", "--tasks", "sb-lights-office-2-5",
                            "--agent", "react", "--agent", "intent-action", "--executor-model", "offline",
                            "--executor-model", "offline-multi", "--action-format", "text", "--parser", "naive",
                            "--runs", str(tmp_path))
    assert code == 0, err
    assert "agent react, model offline, executor model offline-multi, action_format text, parser naive" in text
    assert "agent intent-action, model offline (does not take the executor model, action_format option, parser " \
           "option)" in text
    records = {(r["agent"], r.get("executor_model")): r for r in journal(tmp_path)}
    assert set(records) == {("react", "offline"), ("react", "offline-multi"), ("intent-action", None)}
    assert records[("react", "offline")]["options"] == {"action_format": "text", "parser": "naive"}
    assert records[("intent-action", None)]["own"] == ["executor_model", "action_format", "parser"]
    # The light model really wrote the Actions: offline-multi writes several per reply, and the naive parser then
    # runs the last -- the smart-building paper's failure (notebook 09); the offline executor writes one.
    assert records[("react", "offline")]["success"] and not records[("react", "offline-multi")]["success"]


def test_the_executor_model_gets_the_executor_prompts(tmp_path):
    from lares_kit.models import make_client

    asked: list[str] = []

    class Counting:  # the offline-multi model, counting who asks it
        def __init__(self):
            self.inner = make_client("offline-multi")
            self.chat = self

        @property
        def completions(self):
            return self

        def create(self, **request):
            asked.append(request["messages"][0]["content"][:40])
            return self.inner.chat.completions.create(**request)

    bench = run_bench(MULTI[:1], agents=["react"], models=["offline"], executor_model="offline-multi",
                      clients={"offline-multi": Counting()})
    assert asked and all(text.startswith("You write tool calls") for text in asked)  # Prompt B, and only it
    assert bench.records[0]["executor_model"] == "offline-multi"


@pytest.mark.parametrize("argv, sentence", [
    (["--knowledge", "warm"], "unknown knowledge mode 'warm'; modes: latest, initial, none"),
    (["--agent", "sage", "--knowledge", "latest"], "no agent in this run takes the knowledge mode 'latest' (sage "
                                                  "takes none); add an agent that does, or leave the knowledge "
                                                  "mode out"),
    (["--agent", "intent-action", "--executor-model", "offline"], "no agent in this run has an executor model"),
    (["--agent", "react", "--action-format", "yaml"],
     "option action_format must be one of json_schema, text, parallel; got 'yaml'"),
    (["--agent", "react", "--parser", "greedy"], "option parser must be one of naive, one, all; got 'greedy'"),
    (["--agent", "function-calling", "--parser", "naive"], "no agent in this run has the option parser (react and "
                                                           "react-parallel have it)"),
    (["--option", "parsr=naive"], "no design has the option 'parsr'; the designs' options: "),
    (["--option", "naive"], "--option takes KEY=VALUE, e.g. parser=naive, not 'naive'"),
    (["--option", "temperature=0.5"], "temperature is not a design option to compare: the run sets the temperature"),
    (["--agent", "function-calling", "--option", "parallel_tool_calls=maybe"],
     "option parallel_tool_calls must be true or false, not 'maybe'"),
    (["--knowledge-format", "prose"], "unknown knowledge format 'prose'; formats: auto, full"),
    (["--prompt-style", "terse"], "unknown prompt style 'terse'; styles: "),
])
def test_a_value_no_agent_takes_is_one_sentence_and_exit_2_before_anything_runs(tmp_path, capsys, argv, sentence):
    code, text, err = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", *argv,
                            "--runs", str(tmp_path / "runs"))
    assert code == 2
    assert err.startswith(f"lares: {sentence}") and err.count("\n") == 1 and "Traceback" not in err, err
    assert text == "" and not (tmp_path / "runs").exists()  # nothing ran, nothing was written


def test_a_mixed_run_never_stops_for_a_setting_one_design_lacks(tmp_path):
    bench = run_bench(HOME, agents=["function-calling", "react", "sage"], models=["offline"],
                      knowledge=["initial"], options={"parser": "naive", "parallel_tool_calls": True})
    assert not [r for r in bench.records if r["error"]]
    by_agent = {r["agent"]: r for r in bench.records}
    assert by_agent["function-calling"]["options"] == {"parallel_tool_calls": True}
    assert by_agent["function-calling"]["own"] == ["parser"]
    assert by_agent["react"]["options"] == {"parser": "naive"} and by_agent["react"]["knowledge"] == "initial"
    assert by_agent["sage"]["knowledge"] == "none" and by_agent["sage"]["own"] == ["knowledge", "parser"]


def test_resume_keeps_configurations_apart(tmp_path):
    first = run_bench(MULTI, agents=["react"], models=["offline"], runs=tmp_path, executor_model="offline")
    assert first.resumed == 0
    other = run_bench(MULTI, agents=["react"], models=["offline"], runs=tmp_path, executor_model="offline-multi",
                      options={"action_format": "text", "parser": "naive"})
    assert other.resumed == 0  # another configuration: not the records of the first
    assert {r["success"] for r in other.records} == {False}  # what it ran is its own (the several-Actions failure)
    styled = run_bench(MULTI, agents=["react"], models=["offline"], runs=tmp_path, prompt_style="lares")
    assert styled.resumed == 0  # nor is another prompt style the default one's
    both = run_bench(MULTI, agents=["react"], models=["offline"], runs=tmp_path,
                     configurations=[{"executor_model": "offline"},
                                     {"executor_model": "offline-multi", "action_format": "text", "parser": "naive"}])
    assert both.resumed == 2 * len(MULTI)
    assert both.results == first.results + other.results  # read back, each as its own configuration
    keys = [identity_key(r) for r in load_records(tmp_path)]
    assert len(keys) == len(set(keys)) == 3 * len(MULTI)


def test_a_design_resumed_from_a_run_that_compared_nothing_is_the_same_episode(tmp_path):
    run_bench(HOME, agents=["intent-action"], models=["offline"], runs=tmp_path)
    mixed = run_bench(HOME, agents=["intent-action", "react"], models=["offline"], runs=tmp_path,
                      executor_model="offline")
    assert mixed.resumed == len(HOME)  # intent-action takes no executor model: its episodes are already there
    assert [r.get("own") for r in mixed.records if r["agent"] == "intent-action"] == [["executor_model"]] * len(HOME)


def test_a_run_given_no_configuration_writes_the_records_it_always_did(tmp_path):
    plain = run_bench(HOME, agents=["function-calling", "sage"], models=["offline"], runs=tmp_path / "plain")
    assert [list(r) for r in journal(tmp_path / "plain")] == [DEFAULT_KEYS] * len(plain.records)
    assert [list(r) for r in plain.results] == [list(RESULT_KEYS)] * len(plain.records)
    assert "configuration" not in plain.summary["overall"][0]
    # naming the default mode runs the same episodes for the designs that take it
    named = run_bench(HOME, agents=["function-calling"], models=["offline"], knowledge="latest")
    same = [{k: v for k, v in r.items() if k not in ("seconds", "episode")} for r in plain.records[:len(HOME)]]
    assert [{k: v for k, v in r.items() if k not in ("seconds", "episode")} for r in named.records] == same


def test_configurations_combine_every_value_and_a_design_runs_once_for_what_it_does_not_take():
    configs = configurations(settings_given(knowledge=["latest", "none"], executor_model=["a", "b"]))
    assert len(configs) == 4
    assert design_configurations(configs, "intent-action") == [({"knowledge": "latest"}, ("executor_model",)),
                                                               ({"knowledge": "none"}, ("executor_model",))]
    assert len(design_configurations(configs, "react")) == 4
    assert design_configurations(configs, "sage") == [({"knowledge": "none"}, ("knowledge", "executor_model"))]
    with pytest.raises(LaresError, match="given both for the run and in a listed configuration"):
        configurations({"knowledge": ["none"]}, [{"knowledge": "latest"}])
    with pytest.raises(LaresError, match="more than the 10,000 one run may hold"):
        configurations({f"k{n}": list(range(10)) for n in range(5)})
    with pytest.raises(LaresError, match="is a setting of its own"):
        settings_given(options={"knowledge": "none"})
    check_configurations([{"knowledge": "none"}], ["sage"])  # its own mode, asked for: fine


def test_compare_runs_matches_episodes_by_their_whole_configuration(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("compare_runs", Path(__file__).resolve().parents[3] / "scripts" /
                                                  "compare_runs.py")
    compare_runs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_runs)
    for folder in ("before", "after"):
        run_bench(MULTI[:1], agents=["react"], models=["offline"], runs=tmp_path / folder,
                  executor_model=["offline", "offline-multi"], options={"parser": "naive", "action_format": "text"})
    assert compare_runs.main([str(tmp_path / "before"), str(tmp_path / "after")]) == 0
    assert "records: 2 before, 2 after; 0 missing after, 0 new" in capsys.readouterr().out
    lines = (tmp_path / "after" / JOURNAL).read_text().splitlines()
    changed = json.loads(lines[1])
    changed["episode"]["final_message"] += " (changed)"
    (tmp_path / "after" / JOURNAL).write_text("\n".join([lines[0], json.dumps(changed)]) + "\n")
    assert compare_runs.main([str(tmp_path / "before"), str(tmp_path / "after")]) == 1
    out = capsys.readouterr().out
    assert "differing records: 1" in out
    assert f"{changed['task']}/react/offline/0/latest/lares/0/{changed['executor_model']}/" in out


def test_a_run_step_limit_bounds_every_episode_and_keeps_its_records_apart(tmp_path, capsys):
    runs = tmp_path / "runs"
    code, out, _ = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--agent", "react",
                         "--max-steps", "1", "--runs", str(runs))
    assert code == 0 and "nothing solved" in out  # one Thought/Action round cannot switch the light and halt
    (bounded,) = journal(runs)
    assert bounded["max_steps"] == 1 and bounded["steps"] == 1 and bounded["status"] == "step_limit"
    # the same episode without the limit is another episode: it runs, and solves the task
    code, out, _ = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--agent", "react",
                         "--runs", str(runs))
    assert code == 0 and "resumed" not in out
    free = journal(runs)[-1]
    assert "max_steps" not in free and free["success"] and identity_key(free) != identity_key(bounded)
    # the limit again: resumed from the journal, not run again
    code, out, _ = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--agent", "react",
                         "--max-steps", "1", "--runs", str(runs))
    assert "1 resumed" in out and len(journal(runs)) == 2


@pytest.mark.parametrize("value", ["0", "1001"])
def test_a_step_limit_out_of_bounds_is_one_sentence(tmp_path, capsys, value):
    code, out, err = lares(capsys, "bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--max-steps", value,
                           "--runs", str(tmp_path / "runs"))
    assert code == 2 and err.strip().count("\n") == 0 and "--max-steps" in err and value in err
