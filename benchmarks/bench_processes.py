"""Does ``lares bench --concurrency 2`` use both cores for the offline model? A ratio, measured in one run.

The offline model computes its replies in the benchmark's own process, and
the ``openai`` SDK's client-side work for each call holds Python's GIL, so
threads cannot run two episodes at once. ``run_bench`` therefore runs an
in-process model's episodes in worker processes when ``concurrency`` is above
one. This script runs the same benchmark (every suite, the four designs,
the offline model) three ways in one run:

* one worker (the baseline),
* ``concurrency`` threads (what the runner did before; for reference),
* ``concurrency`` worker processes (the default now),

and prints the wall times, the speed-ups against the baseline (target for
processes: >= 1.7x at 2 workers on 2 cores) and whether every episode's
record is identical to the baseline's apart from its timings. Last, what
saving the records costs: the runs folder's journal (one line and one flush
per episode) against one atomically written file per episode (a file fsync
and a folder fsync each, as runs were saved before). The times
include starting the workers (a fork server that imports the toolkit once).
On a busy machine the ratio falls: run it with nothing else running.

Run: ``.venv/bin/python benchmarks/bench_processes.py [--workers 2] [--agent NAME]... [--suite ID]...``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from lares_kit.bench.journal import JOURNAL, Journal
from lares_kit.bench.runner import run_bench
from lares_kit.bench.suites.tasks import load_tasks
from lares_kit.files.atomic import write_json_atomic

AGENTS = ["intent-action", "function-calling", "react", "sage"]
TARGET = 1.7


def untimed(records: list[dict]) -> list[dict]:
    """The records without the fields that time a run, at any depth.

    Args:
        records: Episode records as ``run_bench`` returns them.
    """
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in ("seconds", "started_at")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(records)


def timed(tasks, agents, **settings) -> tuple[float, list[dict]]:
    """Wall time of one benchmark run and its records.

    Args:
        tasks: The tasks to run.
        agents: The agent designs.
        **settings: ``concurrency`` and ``executor`` for :func:`run_bench`.
    """
    start = time.perf_counter()
    bench = run_bench(tasks, agents=agents, models=["offline"], **settings)
    return time.perf_counter() - start, bench.records


def saving(records: list[dict]) -> tuple[float, float]:
    """Seconds to save the records as journal lines, and as one atomically written file each.

    Args:
        records: Episode records.
    """
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        with Journal(Path(folder) / JOURNAL) as journal:
            for record in records:
                journal.append(record)
        middle = time.perf_counter()
        for n, record in enumerate(records):
            write_json_atomic(Path(folder) / "files" / f"{n}.json", record)
        return middle - start, time.perf_counter() - middle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--agent", action="append", default=None, help=f"default: {', '.join(AGENTS)}")
    parser.add_argument("--suite", action="append", default=None, help="default: every suite")
    args = parser.parse_args()
    os.environ.setdefault("LARES_PROGRESS", "0")  # the timings are the output

    tasks = load_tasks(args.suite)
    agents = args.agent or AGENTS
    print(f"{len(tasks)} tasks x {len(agents)} design(s), offline model, {os.cpu_count()} cores")
    one, baseline = timed(tasks, agents, concurrency=1)
    threads, by_threads = timed(tasks, agents, concurrency=args.workers, executor="threads")
    procs, by_processes = timed(tasks, agents, concurrency=args.workers, executor="processes")
    print(f"1 worker:                 {one:6.1f} s")
    print(f"{args.workers} threads:                {threads:6.1f} s   {one / threads:.2f}x")
    print(f"{args.workers} worker processes:       {procs:6.1f} s   {one / procs:.2f}x   (target >= {TARGET}x)")
    same = untimed(baseline) == untimed(by_threads) == untimed(by_processes)
    print(f"identical records (timings aside): {'yes' if same else 'NO'}")
    journal, files = saving(baseline)
    print(f"saving the {len(baseline)} records: one journal line and one flush each {journal:.2f} s; "
          f"one atomic file each (two fsyncs, as before) {files:.2f} s: {files / journal:.0f}x")
    ok = same and one / procs >= TARGET
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
