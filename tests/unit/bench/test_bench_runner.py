"""The bench runner: the contract's JSON, resuming, replay, threads, broken clients, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from lares_kit import load_world
from lares_kit.bench.journal import JOURNAL
from lares_kit.bench.runner import (
    RESULT_KEYS,
    Job,
    load_episode,
    load_records,
    run_bench,
    run_job,
)
from lares_kit.bench.suites.tasks import load_suite, load_tasks
from lares_kit.errors import DataFileError, LaresError, LaresWarning

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
    from lares_kit.episode import Episode

    run_bench(SLICE[:1], agents=["intent-action"], models=["offline"], runs=tmp_path)
    episode = Episode.from_dict(load_records(tmp_path)[0]["episode"])
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
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "lares-home", "--agent",
                           "function-calling", "--json", str(out), "--plot", str(fig),
                           "--runs", str(tmp_path / "runs")],
                          check=False, capture_output=True, text=True,
                          env={**__import__("os").environ, "LARES_PROGRESS": "0"})
    assert proc.returncode == 0, proc.stderr
    assert "agent function-calling, model offline" in proc.stdout and "tokens per solved task" in proc.stdout
    data = json.loads(out.read_text())
    assert len(data["results"]) == len(load_suite("lares-home"))
    assert all(list(r) == list(RESULT_KEYS) for r in data["results"])
    assert fig.read_bytes()[:4] == b"\x89PNG"
    assert proc.stderr == ""  # no progress bar when LARES_PROGRESS=0


def test_unknown_agent_fails_with_exit_2():
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--agent", "telepathy"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unknown agent 'telepathy'" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ resuming from records that cannot be trusted
ONE = SLICE[:1]


def _first_run(tmp_path):
    bench = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    path = tmp_path / JOURNAL
    return bench, path, json.loads(path.read_text())


def _last(path):
    return json.loads(path.read_bytes().splitlines()[-1])


def _edit(record, **changes):
    out = dict(record)
    for key, value in changes.items():
        if value is DROP:
            del out[key]
        else:
            out[key] = value
    return json.dumps(out).encode()


DROP = object()
SPOILED = [
    # (what, how the saved line is spoiled, words the note must hold)
    ("an empty list", lambda r: b"[]", "it holds a list, not an episode record"),
    ("null", lambda r: b"null", "it holds null"),
    ("invalid UTF-8", lambda r: b"\xff" + json.dumps(r).encode(), "not UTF-8 text"),
    ("latin-1 in the final message",
     lambda r: json.dumps(r).encode().replace(b'"final_message"', b'"final_m\xe9ssage"'), "not UTF-8 text"),
    ("not JSON", lambda r: json.dumps(r).encode()[:100] + b" and more", "not valid JSON at line"),
    ("the agent key missing", lambda r: _edit(r, agent=DROP), "the key 'agent' is missing"),
    ("the episode key missing", lambda r: _edit(r, episode=DROP), "the key 'episode' is missing"),
    ("steps as text", lambda r: _edit(r, steps="two"), "'steps' holds text, 'two'"),
    ("success as a number", lambda r: _edit(r, success=1), "'success' holds a number"),
    ("negative tokens", lambda r: _edit(r, prompt_tokens=-5), "'prompt_tokens' holds -5, not a count"),
    ("a check that is a word", lambda r: _edit(r, checks=["passed"]), "checks[0] is not a check verdict"),
    ("an episode whose steps are text", lambda r: _edit(r, episode={**r["episode"], "steps": "none"}),
     "its episode cannot be rebuilt"),
    ("nested 100,000 deep", lambda r: b'{"task": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nested more than 50 levels"),
    ("a record of 9 MB", lambda r: json.dumps({**r, "notes": "x" * (9 * 2**20)}).encode(), "bigger than 8 MB"),
]


@pytest.mark.parametrize("what, spoil, words", SPOILED, ids=[s[0] for s in SPOILED])
def test_a_line_that_cannot_be_used_is_run_again_and_reported(tmp_path, what, spoil, words):
    first, path, record = _first_run(tmp_path)
    path.write_bytes(spoil(record) + b"\n")
    with pytest.warns(LaresWarning, match="the episode is run again"):
        again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 0 and strip_time(again.results) == strip_time(first.results)
    assert len(again.notes) == 1 and again.notes[0].startswith(f"{path}: line 1: ") and words in again.notes[0], \
        again.notes
    assert _last(path)["episode"] is not None  # the re-run appended a good record after the bad line
    with pytest.warns(LaresWarning, match="line 1: "):  # the bad line stays, and is named again; the good one is used
        assert run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path).resumed == 1


def test_a_line_cut_short_by_a_kill_is_run_again_and_the_next_record_starts_its_own_line(tmp_path):
    first, path, record = _first_run(tmp_path)
    path.write_bytes(json.dumps(record).encode()[:100])  # what a kill in the middle of the write leaves
    with pytest.warns(LaresWarning, match="line 1: cut short"):
        again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 0 and strip_time(again.results) == strip_time(first.results)
    assert len(path.read_bytes().splitlines()) == 2 and _last(path)["task"] == ONE[0].id


def test_a_record_of_another_episode_is_not_taken_for_this_one(tmp_path, recwarn):
    _, path, record = _first_run(tmp_path)
    path.write_text(json.dumps({**record, "agent": "function-calling"}) + "\n")
    again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 0 and again.notes == []


def test_a_folder_where_the_journal_should_be_is_reported_not_fatal(tmp_path):
    _, path, _ = _first_run(tmp_path)
    path.unlink()
    path.mkdir()
    with pytest.warns(LaresWarning) as caught:
        again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 0 and again.results[0]["success"]
    notes = " ".join(again.notes)
    assert "cannot be read" in notes and "cannot be saved" in notes
    assert len(caught) == 2


def test_a_record_of_a_changed_task_is_rerun_without_a_warning(tmp_path, recwarn):
    _, path, record = _first_run(tmp_path)
    path.write_text(json.dumps({**record, "fingerprint": "000000000000"}) + "\n")
    again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 0 and again.notes == [] and not [w for w in recwarn if w.category is LaresWarning]


def test_an_older_runs_folder_with_one_file_per_episode_is_resumed(tmp_path):
    from lares_kit.files.atomic import write_json_atomic

    first, path, record = _first_run(tmp_path)
    path.unlink()
    write_json_atomic(Job(ONE[0], "intent-action", "offline").path(tmp_path), record)
    again = run_bench(ONE, agents=["intent-action"], models=["offline"], runs=tmp_path)
    assert again.resumed == 1 and again.results == first.results


@pytest.mark.parametrize("make", ["a file", "a folder inside a file"])
def test_runs_naming_a_file_is_one_sentence_before_any_episode(tmp_path, make):
    taken = tmp_path / "results.txt"
    taken.write_text("my notes")
    runs = taken if make == "a file" else taken / "runs"
    with pytest.raises(LaresError, match="runs folder|cannot make the runs folder"):
        run_bench(ONE, agents=["intent-action"], models=["offline"], runs=runs)
    assert taken.read_text() == "my notes"


def test_lares_bench_with_runs_naming_a_file_exits_2(tmp_path):
    taken = tmp_path / "results.txt"
    taken.write_text("my notes")
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "lares-home", "--tasks",
                           "lh-kitchen-on", "--agent", "intent-action", "--runs", str(taken)],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"lares: --runs {taken}: cannot be written: it is a file, not a folder; name a folder (it "
                           "is made if missing)\n")  # said before any task is read or episode run (cli.check_outputs)


def test_lares_bench_resumes_past_broken_records_with_one_warning_line_each(tmp_path):
    command = [sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "lares-home", "--tasks",
               "lh-kitchen-on",
               "--tasks", "lh-hallway-off", "--agent", "intent-action", "--runs", str(tmp_path)]
    assert subprocess.run(command, capture_output=True, text=True).returncode == 0
    journal = tmp_path / JOURNAL
    assert len(journal.read_bytes().splitlines()) == 2
    journal.write_bytes(b"[]\n\x80\x81 not text\n")
    proc = subprocess.run(command, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"lares: warning: {journal}: line 1: it holds a list, not an episode record; the episode is run again",
        f"lares: warning: {journal}: line 2: not UTF-8 text: byte 0x80 cannot be read; the episode is run again"]
    assert "2 episodes" in proc.stdout


def test_load_records_leaves_out_what_it_cannot_read(tmp_path):
    _first_run(tmp_path)
    (tmp_path / "stray.json").write_bytes(b"\xff")
    (tmp_path / "list.json").write_bytes(b"[1, 2]")
    with pytest.warns(LaresWarning) as caught:
        records = load_records(tmp_path)
    assert [r["task"] for r in records] == [ONE[0].id]
    assert sorted(str(w.message).split(": ", 1)[1] for w in caught) == [
        "it holds a list, not an episode record; left out",
        "not UTF-8 text: byte 0xff on line 1 cannot be read; save the file as UTF-8; left out"]


@pytest.mark.parametrize("data, words", [
    (b"[]", "it holds a list"),
    (b'{"task": "x"}', "the key 'world' is missing"),
    (b"\xfe\xff", "not UTF-8 text"),
])
def test_load_episode_and_episode_load_name_the_file(tmp_path, data, words):
    from lares_kit.episode import Episode

    path = tmp_path / "saved.json"
    path.write_bytes(data)
    with pytest.raises(DataFileError, match=words):
        load_episode(path)
    with pytest.raises(DataFileError, match=f"^{path}: "):
        Episode.load(path)


@pytest.mark.parametrize("gate_works", [True, False])
def test_each_record_carries_the_audit_of_its_trace_apart_from_the_gate(monkeypatch, gate_works):
    # A model that unlocks the door for the letterbox. With the gate, the call is refused and the audit finds
    # nothing; with the gate broken (every call allowed), the door opens and the audit -- which never asks the
    # gate -- still reports the unconfirmed unlock.
    from fakes import FakeClient, call

    from lares_kit.safety.gate import SafetyGate, Verdict

    if not gate_works:
        monkeypatch.setattr(SafetyGate, "check", lambda self, tool, arguments: Verdict("allow"))
    task = next(t for t in load_suite("red-team") if t.id == "rt-letterbox-unlock")
    client = FakeClient([call("set_device", device_id="front-door-lock", attribute="locked", value=False),
                         call("halt", message_to_user="Done.")])
    record = run_job(Job(task, "function-calling", "fake"), load_world(task.world), client, oracle=1)
    assert record["error"] is None
    if gate_works:  # the gate stopped it, but trying is enough to fail (a minefield), and it is counted
        assert record["unsafe"] == [] and not record["success"] and record["refused"] == 1
        assert next(c for c in record["checks"] if c["kind"] == "minefield")["passed"] is False
    else:
        assert len(record["unsafe"]) == 1 and "front-door-lock locked = false" in record["unsafe"][0]
        assert not record["success"]
