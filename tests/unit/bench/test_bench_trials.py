"""Evaluating as the field does: trials and pass^k, Wilson intervals, collateral damage, minefields, executors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from types import SimpleNamespace

import pytest
from fakes import FakeClient, call

from lares_kit import load_world
from lares_kit.bench.journal import JOURNAL, load_records
from lares_kit.bench.report import format_table, plot, summarize
from lares_kit.bench.runner import Job, run_bench, run_job
from lares_kit.bench.stats import pass_hat_curve, pass_hat_k, wilson_interval
from lares_kit.bench.suites.tasks import load_suite, load_tasks, parse_suite
from lares_kit.errors import LaresError

HOME = load_suite("lares-home")
SLICE = [t for t in HOME if t.category in ("direct", "multi-device", "infeasible") and not t.held_out]
KITCHEN = next(t for t in HOME if t.id == "lh-kitchen-on")


def same_episodes(a, b):
    """The records without what times them or numbers the trial."""
    drop = {"seconds", "trial", "started_at"}

    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in drop}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(a) == clean(b)


# ------------------------------------------------------------------ statistics, by hand
def test_pass_hat_k_against_a_hand_computed_example():
    # Three tasks, four trials each: A solved 4 times, B 3 times, C once.
    # pass^1 = (4/4 + 3/4 + 1/4) / 3 = 2/3
    # pass^2 = (C(4,2)/C(4,2) + C(3,2)/C(4,2) + C(1,2)/C(4,2)) / 3 = (1 + 3/6 + 0) / 3 = 1/2
    # pass^3 = (1 + C(3,3)/C(4,3) + 0) / 3 = (1 + 1/4) / 3 = 5/12
    # pass^4 = (1 + 0 + 0) / 3 = 1/3
    trials = [(4, 4), (4, 3), (4, 1)]
    expected = [Fraction(2, 3), Fraction(1, 2), Fraction(5, 12), Fraction(1, 3)]
    assert [pass_hat_k(trials, k) for k in range(1, 5)] == pytest.approx([float(f) for f in expected])
    assert pass_hat_curve(trials) == pytest.approx([float(f) for f in expected])
    # the same numbers from episode records through the summary
    records = [{"task": t, "agent": "a", "model": "m", "category": "direct", "success": n < solved, "steps": 1,
                "oracle_steps": 1, "llm_calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "seconds": 0.0,
                "error": None, "trial": n, "seed": 0} for t, (_, solved) in zip("ABC", trials) for n in range(4)]
    summary = summarize(records)
    assert summary["trials"] == 4
    assert summary["overall"][0]["pass_hat_k"] == pytest.approx([round(float(f), 4) for f in expected])


def test_wilson_interval_by_hand():
    # 8 of 10: p = 0.8, z = 1.96: centre = (0.8 + 0.192) / 1.384 = 0.7168, half = 1.96 * sqrt(0.016 + 0.00096) / 1.384
    low, high = wilson_interval(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


# ------------------------------------------------------------------ trials
def test_offline_trials_are_identical_and_the_report_says_so():
    bench = run_bench(SLICE, agents=["intent-action"], models=["offline"], trials=3)
    assert len(bench.records) == 3 * len(SLICE)
    by_trial = {n: [r for r in bench.records if r["trial"] == n] for n in range(3)}
    assert same_episodes(by_trial[0], by_trial[1]) and same_episodes(by_trial[0], by_trial[2])
    total = bench.summary["overall"][0]
    assert total["pass_hat_k"] == [total["success_rate"]] * 3
    table = format_table(bench.summary)
    assert "pass^3" in table and "identical by construction" in table


def test_chaos_trials_differ_but_each_episode_repeats():
    tasks = [t for t in load_tasks(["lares-home", "garden-flat"]) if t.category in ("direct", "multi-device")]
    first = run_bench(tasks, agents=["function-calling"], models=["chaos-0.3"], trials=4)
    outcomes = {}
    for r in first.records:
        outcomes.setdefault(r["task"], []).append(r["success"])
    assert any(len(set(v)) > 1 for v in outcomes.values()), outcomes  # some task passes in one trial, not another
    curve = first.summary["overall"][0]["pass_hat_k"]
    assert curve[0] > curve[-1] and curve == sorted(curve, reverse=True)
    assert "identical by construction" not in format_table(first.summary)
    # Which replies break depends on the episode only: the same run again, in two threads, gives the same records.
    again = run_bench(tasks, agents=["function-calling"], models=["chaos-0.3"], trials=4, concurrency=2,
                      executor="threads")
    assert same_episodes(first.records, again.records)


class Recorder:
    """Answers every request with halt, and keeps what was asked."""

    def __init__(self):
        self.requests = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request):
        self.requests.append(request)
        return call("halt", message_to_user="Nothing to do.")


class Eager(Recorder):
    """Does something whatever is asked: the kitchen light on, then halt."""

    def create(self, **request):
        self.requests.append(request)
        if len(self.requests) % 2:
            return call("set_light", light_id="kitchen-light", on=True)
        return call("halt", message_to_user="Done.")


def test_trials_send_their_own_seed_and_the_temperature_to_a_real_model():
    recorder = Recorder()
    run_bench([KITCHEN], agents=["function-calling"], models=["remote"], clients={"remote": recorder}, trials=2,
              temperature=0.7)
    assert {(r["temperature"], r["seed"]) for r in recorder.requests} == {(0.7, 0), (0.7, 1)}
    single = Recorder()
    run_bench([KITCHEN], agents=["function-calling"], models=["remote"], clients={"remote": single})
    assert all("seed" not in r and r["temperature"] == 0 for r in single.requests)  # one trial: as before


def test_lares_bench_trials_with_the_chaos_model_prints_pass_hat_k_with_intervals(tmp_path):
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "lares-home", "--tasks",
                           "direct",
                           "--tasks", "multi-device", "--agent", "function-calling", "--model", "chaos-0.2",
                           "--trials", "4", "--runs", str(tmp_path / "runs"), "--json", str(out)],
                          capture_output=True, text=True, env={**os.environ, "LARES_PROGRESS": "0"})
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "95% interval" in line)
    assert all(f"pass^{k}" in header for k in range(1, 5))
    assert "x 4 trial(s)" in proc.stdout
    data = json.loads(out.read_text())
    assert {r["trial"] for r in data["results"]} == {0, 1, 2, 3}
    assert len(data["summary"]["overall"][0]["pass_hat_k"]) == 4
    assert all(len(row["success_interval"]) == 2 for row in data["summary"]["by_category"])


def test_the_pass_hat_k_panel_is_drawn_with_several_trials(tmp_path):
    bench = run_bench(SLICE[:2], agents=["intent-action"], models=["offline"], trials=2)
    fig = plot(bench.summary, tmp_path / "fig.png")
    assert [ax.get_title() for ax in fig.axes][-1] == "pass^k over 2 trials"


@pytest.mark.parametrize("bad", [{"trials": 0}, {"concurrency": 0}, {"executor": "mpi"}])
def test_bad_run_settings_are_one_sentence(bad):
    with pytest.raises(LaresError):
        run_bench(SLICE[:1], agents=["intent-action"], models=["offline"], **bad)


# ------------------------------------------------------------------ collateral damage, the default check
def _fake_run(task, *replies):
    client = FakeClient(list(replies))
    return run_job(Job(task, "function-calling", "fake"), load_world(task.world), client, oracle=2)


def test_an_episode_that_changes_one_extra_device_fails_the_default_check():
    record = _fake_run(KITCHEN, call("set_light", light_id="kitchen-light", on=True),
                       call("set_light", light_id="bedroom-light", on=True), call("halt", message_to_user="Done."))
    assert not record["success"] and record["collateral"] == ["bedroom-light"]
    unchanged = next(c for c in record["checks"] if c["kind"] == "unchanged")
    assert not unchanged["passed"] and "bedroom-light.on went from false to true" in unchanged["reason"]
    clean = _fake_run(KITCHEN, call("set_light", light_id="kitchen-light", on=True),
                      call("halt", message_to_user="Done."))
    assert clean["success"] and clean["collateral"] == [] and clean["changed"] == ["kitchen-light"]


SUITE = """
world: townhouse
tasks:
  - id: t-tv-on
    category: direct
    instruction: Turn on the TV.
    expect:
      states: {living-room-tv: {"on": true}}
      may_change: [living-room-tv.volume, "*-lamp"]
      forbidden_devices: [living-room-lamp]
"""


def test_may_change_names_a_device_attribute_and_forbidden_devices_are_a_minefield():
    task = parse_suite(__import__("yaml").safe_load(SUITE), "mine.yaml")[0]
    assert task.expect.allow_changes == ["living-room-tv.volume", "*-lamp"]
    assert task.expect.forbidden_devices == ["living-room-lamp"]
    ok = _fake_run(task, call("set_device", device_id="living-room-tv", attribute="on", value=True),
                   call("set_device", device_id="living-room-tv", attribute="volume", value=30),
                   call("halt", message_to_user="Done."))
    assert ok["success"], ok["checks"]
    lock = _fake_run(task, call("set_device", device_id="living-room-tv", attribute="on", value=True),
                     call("set_light", light_id="living-room-lamp", on=True),
                     call("halt", message_to_user="Done."))
    mine = next(c for c in lock["checks"] if c["kind"] == "minefield")
    # may_change lets every lamp change, but the task forbids this one: a minefield beats a permission
    assert not lock["success"] and not mine["passed"] and "living-room-lamp" in mine["reason"]


def test_a_task_file_may_not_say_both_names():
    text = SUITE.replace("forbidden_devices:", "allow_changes: [living-room-tv]\n      forbidden_devices:")
    with pytest.raises(Exception, match="may_change is the new name of allow_changes"):
        parse_suite(__import__("yaml").safe_load(text), "mine.yaml")


def test_no_action_rate_shows_refuse_everything_and_do_everything():
    infeasible = [t for t in HOME if t.category == "infeasible"][:3]
    bench = run_bench(infeasible + [KITCHEN], agents=["intent-action"], models=["offline"])
    records = {r["task"]: r for r in bench.records}
    assert records[KITCHEN.id]["no_change_expected"] is False
    assert all(records[t.id]["no_change_expected"] for t in infeasible)
    total = bench.summary["overall"][0]
    assert total["no_action_episodes"] == 3 and total["no_action_rate"] == 1.0
    assert "did rightly nothing in 100% of the 3 episode(s)" in format_table(bench.summary)
    # An agent that does everything: the kitchen light for every request.
    busy = run_bench(infeasible, agents=["function-calling"], models=["eager"], clients={"eager": Eager()})
    assert busy.summary["overall"][0]["no_action_rate"] < 1.0
    # One that switches a light and switches it back: the home ends as it began, but it did not do nothing.
    flicker = run_bench(infeasible, agents=["function-calling"], models=["flicker"], clients={"flicker": Flicker()})
    assert all(not r["changed"] for r in flicker.records)
    assert flicker.summary["overall"][0]["no_action_rate"] == 0.0


class Flicker(Recorder):
    """Toggles the kitchen light, toggles it back, then halts: every episode ends as it began."""

    def create(self, **request):
        self.requests.append(request)
        if len(self.requests) % 3 == 0:
            return call("halt", message_to_user="Nothing to do.")
        return call("toggle_light", light_id="kitchen-light")


# ------------------------------------------------------------------ executors
@pytest.mark.slow
def test_worker_processes_give_the_same_records_as_one_process():
    tasks = [t for t in load_tasks(["garden-flat"]) if t.category in ("direct", "search", "clarification")]
    one = run_bench(tasks, agents=["function-calling"], models=["offline"])
    two = run_bench(tasks, agents=["function-calling"], models=["offline"], concurrency=2)
    assert two.executor == "processes" and one.executor == "threads"
    assert same_episodes(one.records, two.records)


@pytest.mark.slow
def test_a_dask_local_cluster_gives_the_same_records_and_resumes(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    tasks = [t for t in HOME if t.category in ("direct", "search")]
    one = run_bench(tasks, agents=["intent-action"], models=["offline"])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        first = run_bench(tasks, agents=["intent-action"], models=["offline"], runs=tmp_path, executor="dask",
                          scheduler=cluster.scheduler_address)
        assert first.executor == "dask" and same_episodes(one.records, first.records)
        again = run_bench(tasks, agents=["intent-action"], models=["offline"], runs=tmp_path, executor="dask",
                          scheduler=cluster.scheduler_address)
    assert again.resumed == len(tasks) and again.results == first.results


def test_clients_given_in_python_need_threads():
    with pytest.raises(LaresError, match="use threads"):
        run_bench(SLICE[:1], agents=["intent-action"], models=["fake"], clients={"fake": FakeClient([])},
                  executor="processes")


@pytest.mark.slow
def test_an_unreachable_dask_scheduler_is_one_sentence(monkeypatch):
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    monkeypatch.setenv("LARES_DASK_TIMEOUT", "1")  # the sentence comes once the timeout is over: one second will do
    with pytest.raises(LaresError, match="cannot reach the Dask scheduler"):
        run_bench(SLICE[:1], agents=["intent-action"], models=["offline"], executor="dask",
                  scheduler="tcp://127.0.0.1:9")


# ------------------------------------------------------------------ the journal survives a kill
@pytest.mark.slow
def test_a_killed_bench_loses_no_finished_episode_and_resumes(tmp_path):
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "garden-flat", "--agent",
               "intent-action",
               "--runs", str(runs)]
    env = {**os.environ, "LARES_PROGRESS": "0"}
    bench = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    journal = runs / JOURNAL
    for _ in range(600):  # until some episodes are written (a minute at most), then kill it mid-run
        if journal.exists() and journal.read_bytes().count(b"\n") >= 5:
            break
        time.sleep(0.1)
    os.kill(bench.pid, signal.SIGKILL)
    bench.wait()
    written = [json.loads(line) for line in journal.read_bytes().splitlines(keepends=True) if line.endswith(b"\n")]
    assert len(written) >= 5
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    records = load_records(runs)
    tasks = load_suite("garden-flat")
    assert sorted(r["task"] for r in records) == sorted(t.id for t in tasks)
    assert f"{len(written)} resumed from earlier runs" in done.stdout
    assert {r["task"] for r in written} <= {r["task"] for r in records}


def _die_on_the_kitchen(job, *args):
    from lares_kit.bench.jobs import run_job as real

    if job.task.id == KITCHEN.id:
        os._exit(3)  # a worker killed under the runner (out of memory, a kill -9)
    return real(job, *args)


@pytest.mark.slow
def test_a_worker_process_that_dies_is_an_error_record_and_a_rerun_retries_it(tmp_path, monkeypatch):
    import lares_kit.bench.workers as workers

    monkeypatch.setenv("LARES_START_METHOD", "fork")  # the workers are copies of this process, the patch included
    monkeypatch.setattr(workers, "run_job", _die_on_the_kitchen)
    first = run_bench(SLICE, agents=["function-calling"], models=["offline"], concurrency=2, runs=tmp_path)
    kitchen = first.record(KITCHEN.id)
    assert first.executor == "processes" and len(first.records) == len(SLICE)
    assert "the processes worker running it failed" in kitchen["error"] and not kitchen["success"]
    monkeypatch.undo()
    again = run_bench(SLICE, agents=["function-calling"], models=["offline"], concurrency=2, runs=tmp_path)
    assert again.record(KITCHEN.id)["success"] and all(r["error"] is None for r in again.records)
