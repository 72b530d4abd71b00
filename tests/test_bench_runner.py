"""The bench runner: the contract's JSON, resuming, replay, threads, broken clients, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from lares_kit.bench.runner import (
    RESULT_KEYS,
    Job,
    load_episode,
    load_records,
    run_bench,
)
from lares_kit.bench.tasks import load_suite, load_tasks

SLICE = [t for t in load_suite("lares-home") if t.category in ("direct", "search", "infeasible")]


def strip_time(results):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in results]


def test_results_have_exactly_the_contract_keys(tmp_path):
    bench = run_bench(SLICE, agents=["function-calling"], models=["offline"], runs=tmp_path)
    assert [list(r) for r in bench.results] == [list(RESULT_KEYS)] * len(SLICE)
    data = bench.to_json()
    assert set(data) == {"results", "summary"}
    json.dumps(data)  # plain data all the way down
    r = bench.results[0]
    assert (r["task"], r["world"], r["category"], r["agent"], r["model"]) == \
           ("lh-kitchen-on", "lares-home", "direct", "function-calling", "offline")
    assert isinstance(r["success"], bool) and r["steps"] >= 1 and r["oracle_steps"] >= 1 and r["error"] is None


def test_records_are_saved_and_a_second_run_resumes(tmp_path):
    first = run_bench(SLICE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert first.resumed == 0
    assert len(load_records(tmp_path)) == len(SLICE)
    second = run_bench(SLICE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert second.resumed == len(SLICE)
    assert second.results == first.results  # read back, not run again (same seconds too)


def test_a_changed_task_is_run_again(tmp_path):
    run_bench(SLICE[:2], agents=["intent-action"], models=["offline"], runs=tmp_path)
    changed = [SLICE[0], load_suite("lares-home")[1]]
    changed[0] = type(changed[0])(**{**changed[0].__dict__, "instruction": "Please turn on the kitchen light."})
    again = run_bench(changed, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 1


def test_a_saved_episode_can_be_replayed(tmp_path):
    run_bench(SLICE[:1], agents=["intent-action"], models=["offline"], runs=tmp_path)
    path = Job(SLICE[0], "intent-action", "offline").path(tmp_path)
    episode = load_episode(path)
    assert episode.instruction == SLICE[0].instruction
    assert episode.final_state["devices"]["kitchen-light"] == {"on": True}
    assert "set_light" in episode.transcript()


def test_threads_give_the_same_results_as_one():
    tasks = [t for t in load_tasks(["garden-flat"]) if t.category in ("direct", "search", "clarification")]
    one = run_bench(tasks, agents=["function-calling"], models=["offline"], concurrency=1)
    four = run_bench(tasks, agents=["function-calling"], models=["offline"], concurrency=4)
    assert strip_time(one.results) == strip_time(four.results)


def test_seeds_multiply_episodes_and_move_hidden_things():
    task = next(t for t in load_tasks() if t.id == "th-where-pepper")
    bench = run_bench([task], agents=["function-calling"], models=["offline"], seeds=3)
    assert [r["seed"] for r in bench.records] == [0, 1, 2]
    rooms = {r["episode"]["initial_state"]["items"]["pepper"]["room"] for r in bench.records}
    assert len(rooms) > 1


class BrokenClient:
    """A client whose every request fails, as an unreachable endpoint would."""

    def __init__(self):
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request):
        raise ConnectionError("no route to host")


def test_a_failing_model_is_an_error_not_a_crash():
    bench = run_bench(SLICE[:2], agents=["function-calling"], models=["broken"], clients={"broken": BrokenClient()})
    assert all(not r["success"] for r in bench.results)
    assert all("no route to host" in r["error"] for r in bench.results)
    assert bench.summary["overall"][0]["errors"] == 2


def test_summary_rows_per_category():
    bench = run_bench(SLICE, agents=["function-calling"], models=["offline"])
    rows = bench.summary["by_category"]
    assert [r["category"] for r in rows] == ["direct", "search", "infeasible"]
    assert sum(r["episodes"] for r in rows) == len(SLICE)
    assert all(0.0 <= r["success_rate"] <= 1.0 for r in rows)


@pytest.mark.slow
def test_lares_bench_command(tmp_path):
    out, fig = tmp_path / "out.json", tmp_path / "fig.png"
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli", "bench", "--suite", "lares-home", "--agent",
                           "function-calling", "--json", str(out), "--plot", str(fig), "--runs", str(tmp_path / "runs")],
                          check=False, capture_output=True, text=True, env={**__import__("os").environ, "LARES_PROGRESS": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "agent function-calling, model offline" in proc.stdout and "tokens per solved task" in proc.stdout
    data = json.loads(out.read_text())
    assert len(data["results"]) == len(load_suite("lares-home"))
    assert all(list(r) == list(RESULT_KEYS) for r in data["results"])
    assert fig.read_bytes()[:4] == b"\x89PNG"
    assert proc.stderr == ""  # no progress bar when LARES_PROGRESS=0


def test_unknown_agent_fails_with_exit_2():
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli", "bench", "--agent", "telepathy"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown agent 'telepathy'" in proc.stderr and "Traceback" not in proc.stderr
