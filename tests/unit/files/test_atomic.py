"""Atomic result files: the helper, and 200 writers killed mid-write losing nothing committed.

The kill test starts a writer process that saves benchmark-shaped records
with :func:`lares_kit.files.atomic.write_json_atomic` -- one file per record plus a
summary rewritten after each -- and prints ``committed N`` only after a write
returned. The test kills it with SIGKILL at a random moment, then checks that
every committed record is on disk intact, that every ``*.json`` file parses,
and that the benchmark's loader reads the folder. SQLite memory has its own
kill test: ``tests/unit/memory/test_memory.py::test_killed_writers_lose_nothing_committed``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lares_kit.bench.runner import load_records
from lares_kit.files.atomic import write_atomic, write_json_atomic

ATOMIC = Path(__file__).resolve().parents[3] / "lares_kit" / "files" / "atomic.py"

# The writer loads atomic.py on its own (no package import), so a process starts in ~30 ms.
WRITER = r"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("atomic", sys.argv[1])
atomic = importlib.util.module_from_spec(spec); spec.loader.exec_module(atomic)
folder, start = sys.argv[2], int(sys.argv[3])
committed = []
for n in range(start, start + 10_000):
    # a record the size of a real episode (~100 kB), so kills often land mid-write
    record = {"task": f"t{n}", "success": n % 3 != 0, "error": None, "episode": {"steps": ["x" * 100] * 1000}}
    atomic.write_json_atomic(f"{folder}/t{n}.json", record)
    committed.append(n)
    atomic.write_json_atomic(f"{folder}/summary.json", {"committed": committed})
    print(f"committed {n}", flush=True)
"""


def test_write_atomic_replaces_whole_file(tmp_path):
    target = tmp_path / "a.json"
    write_json_atomic(target, {"n": 1})
    write_json_atomic(target, {"n": 2})
    assert json.loads(target.read_text()) == {"n": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "a.txt"
    write_atomic(target, "old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def _one_kill(folder: Path, rng: random.Random) -> tuple[list[int], str]:
    """Start a writer, kill it at a random moment; return the committed numbers and how it was killed."""
    folder.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ATOMIC), str(folder), "0"],
                              stdout=subprocess.PIPE, text=True)
    committed: list[int] = []
    wanted = rng.choice([0, 1, 2, 3, 5])  # kill after this many commits (0: maybe before the first)
    while len(committed) < wanted:
        line = writer.stdout.readline()
        if not line:
            break
        committed.append(int(line.split()[1]))
    time.sleep(rng.uniform(0, 0.004))  # land somewhere inside the next write
    os.kill(writer.pid, signal.SIGKILL)
    # Lines printed before the kill are commitments too.
    committed += [int(line.split()[1]) for line in writer.stdout.read().splitlines() if line.startswith("committed")]
    writer.wait()
    return committed, f"after {wanted}"


@pytest.mark.slow
def test_killed_writers_lose_no_committed_record(tmp_path):
    kills, rng = 200, random.Random(11)
    seeds = [random.Random(rng.random()) for _ in range(kills)]
    lock, results = threading.Lock(), []

    def run(n: int) -> None:
        committed, how = _one_kill(tmp_path / f"run{n}", seeds[n])
        with lock:
            results.append((n, committed, how))

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(run, range(kills)))

    lost, corrupt, temp_left, records = 0, 0, 0, 0
    for n, committed, _ in results:
        folder = tmp_path / f"run{n}"
        for number in committed:
            path = folder / f"t{number}.json"
            lost += not path.is_file() or json.loads(path.read_text())["task"] != f"t{number}"
        for path in folder.iterdir():
            if path.suffix == ".json":
                try:
                    json.loads(path.read_text())
                except json.JSONDecodeError:
                    corrupt += 1
            else:
                temp_left += 1  # a killed write's temp file: ignored by every reader (not *.json)
        summary = folder / "summary.json"
        if committed:
            assert set(committed) <= set(json.loads(summary.read_text())["committed"])
        records += len(load_records(folder))
    print(f"\n{kills} kills: {lost} committed records lost, {corrupt} corrupt files, "
          f"{temp_left} abandoned temp files, {records} records readable")
    assert len(results) == kills
    assert (lost, corrupt) == (0, 0)
    # The test means something only if kills landed mid-write and records were committed.
    assert temp_left > 0 and records > kills
