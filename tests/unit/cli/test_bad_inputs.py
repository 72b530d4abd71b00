"""Bad input to the importer, replay, bench and course commands: one sentence and exit 2, never a traceback or a hang.

Each test reproduces one attack -- a 5,000-character name, a named pipe where a file should be, a folder tree
1,100 deep, a recording or a notebook nested 100,000 deep, ``--trials 1000000000``, an output path that cannot
be written, a Dask "scheduler" that accepts and never speaks -- and checks the answer: ``lares: <sentence>`` on
stderr, status 2, nothing half-written left behind. What could hang runs in a process of its own with a generous
deadline (``DEADLINE``), which the fix answers well within.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lares_kit.cli.commands import main

ROOT = Path(__file__).resolve().parents[3]
DATASET = ROOT / "lares_kit" / "data" / "ha" / "lares-mini"
EXERCISES = ROOT / "exercises"
DEADLINE = 120  # seconds a command in its own process may take; each answers in a few
BENCH = ["bench", "--suite", "lares-home", "--tasks", "lh-kitchen-on", "--agent", "intent-action"]
ROOTLESS = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                              reason="as root, permissions do not stop a write")


def lares(capsys, *argv: str) -> tuple[int, str, str]:
    """`lares ARGV` in this process: (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lares_elsewhere(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`lares ARGV` in a new process that must end within DEADLINE seconds (else TimeoutExpired fails the test)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LARES_MODEL")}
    return subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", *map(str, argv)], capture_output=True,
                          text=True,
                          timeout=DEADLINE, cwd=ROOT, env={**clean, "LARES_PROGRESS": "0", **(env or {})})


def one_sentence(code: int, err: str, *words: str) -> None:
    assert code == 2, err
    assert err.startswith("lares: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# ------------------------------------------------------------------ the Home Assistant importer
def test_a_5000_character_dataset_name_imports_under_names_the_system_takes(capsys, tmp_path):
    data = tmp_path / "long"
    shutil.copytree(DATASET, data)
    (data / "dataset_card.yaml").write_text(f"name: {'y' * 5000}\n", encoding="utf-8")
    code, out, err = lares(capsys, "import-ha", data, "--out", tmp_path / "out")
    assert code == 0, err
    names = files_under(tmp_path / "out")
    assert len(names) == 5 and all(len(Path(n).name) <= 100 for n in names), names
    suite = next(p for p in (tmp_path / "out" / "tasks").iterdir())
    code, out, err = lares(capsys, "worlds", "check", next((tmp_path / "out").glob("*.yaml")))
    assert code == 0, err
    assert suite.name.startswith("yyyy") and suite.suffix == ".yaml"


def test_homes_deep_in_long_folders_get_short_world_ids(capsys, tmp_path):
    data = tmp_path / "data"
    deep = data.joinpath(*["d" * 200] * 10)  # a relative path of 2,000 characters: world ids are made from it
    shutil.copytree(DATASET / "cedar-cabin", deep / "cedar-cabin")
    code, _, err = lares(capsys, "import-ha", data, "--out", tmp_path / "out")
    assert code == 0, err
    assert all(len(Path(n).name) <= 100 for n in files_under(tmp_path / "out"))


@pytest.mark.parametrize("command", [["import-ha"], ["bench", "--ha-dataset"]])
def test_a_5000_character_folder_name_is_one_sentence(capsys, command):
    code, _, err = lares(capsys, *command, "x" * 5000)
    one_sentence(code, err, "not a folder")
    assert len(err) < 1000


@pytest.mark.parametrize("pipe", ["cedar-cabin/_fixtures.yaml", "cedar-cabin/cabin.yaml", "dataset_card.yaml"])
@pytest.mark.parametrize("command", ["import-ha", "bench"])
def test_a_named_pipe_in_a_dataset_is_refused_without_opening_it(tmp_path, pipe, command):
    data = tmp_path / "data"
    shutil.copytree(DATASET, data)
    (data / pipe).unlink()
    os.mkfifo(data / pipe)  # opening it to read would wait for a writer that never comes
    argv = (["import-ha", data, "--out", tmp_path / "out"] if command == "import-ha"
            else [*BENCH[:1], "--ha-dataset", data, "--agent", "intent-action", "--limit", "1"])
    done = lares_elsewhere(*argv)
    one_sentence(done.returncode, done.stderr, pipe.split("/")[-1], "not a regular file (a named pipe)")
    assert not (tmp_path / "out").exists()


def test_a_folder_tree_1100_deep_is_one_sentence(capsys, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATASET / "cedar-cabin", data / "cedar-cabin")
    folder = data
    for _ in range(1100):
        folder = folder / "a"
        folder.mkdir()
    try:
        code, _, err = lares(capsys, "import-ha", data, "--out", tmp_path / "out")
        one_sentence(code, err, "nested more than 16 deep")
        code, _, err = lares(capsys, "bench", "--ha-dataset", data)
        one_sentence(code, err, "nested more than 16 deep")
    finally:
        while folder != data:  # bottom up: a recursive removal of 1,100 levels would itself hit the recursion limit
            folder.rmdir()
            folder = folder.parent
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_refused_before_reading(capsys, tmp_path):
    taken = tmp_path / "results.txt"
    taken.write_text("mine")
    code, _, err = lares(capsys, "import-ha", DATASET, "--out", taken)
    one_sentence(code, err, "it is a file, not a folder", "--out DIR")
    code, _, err = lares(capsys, "import-ha", DATASET, "--out", taken / "worlds")
    one_sentence(code, err, "is a file, not a folder")
    assert taken.read_text() == "mine"


def test_an_import_that_cannot_finish_leaves_no_file_behind(capsys, tmp_path):
    out = tmp_path / "out"
    (out / "lares-mini-maple-house.yaml").mkdir(parents=True)  # a folder where one world file goes
    code, _, err = lares(capsys, "import-ha", DATASET, "--out", out)
    one_sentence(code, err, "lares-mini-maple-house.yaml", "it is a folder, not a file")
    assert files_under(out) == ["lares-mini-maple-house.yaml"]


# ------------------------------------------------------------------ replay
def _recording(folder: Path, bad: bytes) -> None:
    """A session file as Recorder writes it, with ``bad`` as its third line."""
    manifest = {"recording": "lares_kit", "format": 1, "models": ["offline"], "command": None, "base_url": None}
    exchange = {"n": 1, "method": "POST", "path": "/chat/completions", "status": 200, "request": {"model": "offline"},
                "headers": {}, "response": {"choices": []}}
    folder.mkdir()
    lines = [json.dumps(manifest).encode(), json.dumps(exchange).encode(), bad, json.dumps(exchange).encode()]
    (folder / "session-0001.jsonl").write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("bad,words", [
    (b"[1, 2, 3]", "it holds [1, 2, 3], not a recorded request"),
    (b'"just text"', "not a recorded request"),
    (b'{"path": "/chat/completions", "status": 200, "response": {}}', "no method"),
    (b'{"method": 7, "path": "/chat/completions", "status": 200, "response": {}}', "method should be text, not 7"),
    (b'{"method": "POST", "path": "/chat/completions", "status": "200", "response": {}}', "status should be"),
    (b'{"method": "POST", "path": "/x", "status": 200, "headers": [1], "response": {}}', "headers should map"),
    (b'{"method": "POST", "path": "/x", "status": null, "raised": "boom"}', "raised should be"),
    (b'{"method": "POST", "path": "/x", "status": 200, "text": 5}', "text should be text"),
    (b'{"method": "POST", "path": "/x", "status": 200}', "holds no response"),
    (b'{"method": "POST\xff"}', "not UTF-8 text: byte 0xff"),
    (b"[" * 100_000 + b"]" * 100_000, "nested more than 50 levels deep"),
    (b'{"method": "POST", "path": "/x", "status": 200, "response": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nested more than 50 levels deep"),
    (b'{"method": "POST", "path": "/x", "status": 200, "response": {}', "not valid JSON"),
])
def test_a_damaged_recording_line_is_one_sentence_naming_the_file_and_line(capsys, tmp_path, bad, words):
    _recording(tmp_path / "rec", bad)
    code, _, err = lares(capsys, "run", "turn on the kitchen light", "--model", f"replay:{tmp_path / 'rec'}")
    one_sentence(code, err, "session-0001.jsonl", "line 3", words, "record it again")


def test_a_damaged_manifest_is_one_sentence(capsys, tmp_path):
    folder = tmp_path / "rec"
    _recording(folder, b"{}")
    path = folder / "session-0001.jsonl"
    lines = path.read_bytes().split(b"\n")
    for first, words in ((b'{"recording": "lares_kit", "models": "offline"}', "models should be a list"),
                         (b"[]", "not a lares_kit recording"), (b"\xff\xfe", "not UTF-8")):
        path.write_bytes(b"\n".join([first, *lines[1:]]))
        code, _, err = lares(capsys, "bench", "--suite", "lares-home", "--limit", "1", "--model", f"replay:{folder}")
        one_sentence(code, err, "session-0001.jsonl", "line 1", words)


def test_a_recording_cut_short_in_its_last_line_still_replays_what_came_before(tmp_path):
    from lares_kit.models.recording.sessions import Recording

    folder = tmp_path / "rec"
    _recording(folder, b"{}")
    path = folder / "session-0001.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([lines[0], lines[1], lines[3][:30]]))  # killed mid-write: no newline, not JSON
    assert len(Recording(folder).exchanges) == 1


def test_a_recording_folder_name_of_5000_characters_is_one_sentence(capsys):
    code, _, err = lares(capsys, "run", "hi", "--model", "replay:" + "x" * 5000)
    one_sentence(code, err, "there is no recording at")
    code, _, err = lares(capsys, "run", "hi", "--record", "x" * 5000)
    one_sentence(code, err, "cannot record into", "too long")


# ------------------------------------------------------------------ lares bench: counts and output paths
@pytest.fixture
def no_run(monkeypatch):
    """Loading tasks or running episodes fails the test: the refusal must come before any work."""
    def refuse(*args, **kw):
        raise AssertionError("work started before the bad input was refused")

    monkeypatch.setattr("lares_kit.cli.bench.load_tasks", refuse)
    monkeypatch.setattr("lares_kit.cli.bench.run_bench", refuse)


@pytest.mark.parametrize("flag,value,words", [
    ("--trials", "1000000000", "from 1 to 100, not 1,000,000,000"),
    ("--seeds", "1000000000", "from 1 to 1,000, not 1,000,000,000"),
    ("--concurrency", "1000000000", "from 1 to 256"),
    ("--trials", "0", "from 1 to 100, not 0"),
    ("--seeds", "-3", "not -3"),
])
def test_huge_counts_are_refused_before_any_work(capsys, no_run, flag, value, words):
    code, _, err = lares(capsys, *BENCH, flag, value)
    one_sentence(code, err, flag, words)


def test_a_run_too_big_to_hold_is_refused_before_any_job_is_built():
    from lares_kit.bench.runner import MAX_EPISODES, run_bench
    from lares_kit.bench.suites.tasks import load_suite
    from lares_kit.errors import LaresError

    tasks = load_suite("lares-home")
    with pytest.raises(LaresError, match=f"more than the {MAX_EPISODES:,} one run may hold"):
        run_bench(tasks * 100, agents=["intent-action", "function-calling"], models=["offline"], seeds=1000,
                  trials=100)


def _outputs(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    taken = tmp_path / "taken.txt"
    taken.write_text("mine")
    (tmp_path / "runs-with-folder" / "episodes.jsonl").mkdir(parents=True)
    return {
        "json is a folder": (["--json", str(tmp_path)], "it is a folder, not a file"),
        "json under a file": (["--json", str(taken / "results.json")], "taken.txt is a file, not a folder"),
        "json name too long": (["--json", str(tmp_path / ("r" * 300 + ".json"))], "too long"),
        "plot under a file": (["--plot", str(taken / "fig.png")], "taken.txt is a file, not a folder"),
        "plot is a folder": (["--plot", str(tmp_path)], "it is a folder, not a file"),
        "plot of an unknown type": (["--plot", str(tmp_path / "fig.xyz")], "cannot draw a .xyz image"),
        "runs is a file": (["--runs", str(taken)], "it is a file, not a folder"),
        "runs under a file": (["--runs", str(taken / "runs")], "taken.txt is a file, not a folder"),
        "journal is a folder": (["--runs", str(tmp_path / "runs-with-folder")], "episodes.jsonl"),
    }


@pytest.mark.parametrize("case", [
    "json is a folder", "json under a file", "json name too long", "plot under a file", "plot is a folder",
    "plot of an unknown type", "runs is a file", "runs under a file", "journal is a folder"])
def test_an_output_that_cannot_be_written_is_refused_before_the_run(capsys, tmp_path, no_run, case):
    argv, words = _outputs(tmp_path)[case]
    code, _, err = lares(capsys, *BENCH, *argv)
    one_sentence(code, err, argv[0], "cannot", words)
    assert (tmp_path / "taken.txt").read_text() == "mine"


@ROOTLESS
def test_an_output_in_a_folder_without_write_permission_is_refused(capsys, tmp_path, no_run):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for argv in (["--json", str(locked / "r.json")], ["--plot", str(locked / "f.png")],
                     ["--runs", str(locked / "runs")]):
            code, _, err = lares(capsys, *BENCH, *argv)
            one_sentence(code, err, "no permission to write in")
    finally:
        locked.chmod(0o700)


def test_outputs_in_missing_folders_are_made_and_written_whole(capsys, tmp_path):
    json_path, plot_path = tmp_path / "a" / "b" / "results.json", tmp_path / "c" / "fig.png"
    code, out, err = lares(capsys, *BENCH, "--json", json_path, "--plot", plot_path, "--runs", tmp_path / "d" / "runs")
    assert code == 0, err
    assert json.loads(json_path.read_text())["results"][0]["task"] == "lh-kitchen-on"
    assert plot_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in tmp_path.rglob(".*.tmp")]  # no temporary file left beside them


def test_a_named_pipe_as_the_journal_is_refused_without_opening_it(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    os.mkfifo(runs / "episodes.jsonl")
    done = lares_elsewhere(*BENCH, "--runs", runs)
    one_sentence(done.returncode, done.stderr, "episodes.jsonl", "not a regular file")


# ------------------------------------------------------------------ the Dask executor
def test_an_unknown_scheme_for_the_scheduler_is_one_sentence(capsys):
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    code, _, err = lares(capsys, *BENCH, "--executor", "dask", "--scheduler", "foo://127.0.0.1:1")
    one_sentence(code, err, "foo://127.0.0.1:1 is not a Dask scheduler's address", "tcp://host:8786")


def test_a_scheduler_that_accepts_and_never_speaks_is_one_sentence_within_the_timeout():
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept_and_stay_silent():
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:  # the server socket closed: the test is over
                return

    threading.Thread(target=accept_and_stay_silent, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        done = lares_elsewhere(*BENCH, "--executor", "dask", "--scheduler", address, env={"LARES_DASK_TIMEOUT": "1"})
    finally:
        server.close()
        for conn in accepted:
            conn.close()
    one_sentence(done.returncode, done.stderr, f"cannot reach the Dask scheduler at {address}", "within 1 s",
                 "check the address")
    assert accepted, "the command never connected: the test proved nothing"


def test_a_bad_dask_timeout_setting_is_one_sentence(monkeypatch):
    from lares_kit.bench.workers import scheduler_timeout
    from lares_kit.errors import LaresError

    monkeypatch.setenv("LARES_DASK_TIMEOUT", "soon")
    with pytest.raises(LaresError, match="LARES_DASK_TIMEOUT must be a number of seconds"):
        scheduler_timeout()


# ------------------------------------------------------------------ the course builder
def test_a_course_folder_that_is_a_file_is_one_sentence(capsys, tmp_path):
    taken = tmp_path / "course.txt"
    taken.write_text("mine")
    code, _, err = lares(capsys, "course", "build", taken, "--only", "01")
    one_sentence(code, err, "cannot build the course in", "it is a file, not a folder")
    code, _, err = lares(capsys, "course", "build", taken / "course", "--only", "01")
    one_sentence(code, err, "course.txt is a file, not a folder")
    assert taken.read_text() == "mine"


@ROOTLESS
def test_a_course_folder_where_nothing_can_be_written_is_one_sentence(capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = lares(capsys, "course", "build", locked / "course", "--only", "01")
        one_sentence(code, err, "no permission to write in")
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("text,words", [
    ("not json at all", "not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "nested more than 50 levels deep"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": {}}), "cells: expected a list"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": ["x"]}), "cells[0]: expected a cell"),
    (json.dumps([1, 2]), "not a Jupyter notebook"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [
        {"cell_type": "code", "source": 5, "metadata": {}, "outputs": [], "execution_count": None}]}),
     "not a notebook Jupyter can open"),
])
def test_a_bad_exercise_notebook_is_one_sentence_and_nothing_is_written(capsys, tmp_path, text, words):
    pytest.importorskip("nbformat", reason="the [course] extra is not installed")
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    for name in ("01_shortest_route", "02_tool_error_sentence"):
        shutil.copy(EXERCISES / f"{name}.ipynb", exercises)
    (exercises / "02_tool_error_sentence.ipynb").write_text(text, encoding="utf-8")
    course = tmp_path / "course"
    code, _, err = lares(capsys, "course", "build", course, "--exercises", exercises, "--only", "01", "02")
    one_sentence(code, err, "02_tool_error_sentence.ipynb", words)
    assert not course.exists()  # 01 was fine, but nothing is written before every notebook is made


def test_a_named_pipe_as_an_exercise_notebook_is_refused_without_opening_it(tmp_path):
    pytest.importorskip("nbformat", reason="the [course] extra is not installed")
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    os.mkfifo(exercises / "01_shortest_route.ipynb")
    done = lares_elsewhere("course", "build", tmp_path / "course", "--exercises", exercises, "--only", "01")
    one_sentence(done.returncode, done.stderr, "01_shortest_route.ipynb", "not a regular file (a named pipe)")
