"""Does ``lares bench --concurrency 8`` pay off against a slow endpoint? A ratio, measured in one run.

Starts ``lares serve-model --latency 0.2`` (the offline model as an
OpenAI-compatible HTTP server, waiting 0.2 s before each reply -- about what
a hosted model takes for a short tool call) on a free loopback port, then
runs the same benchmark episodes with 1 thread and with 8, through the real
``openai`` client over real HTTP. Prints both wall times, the speed-up
(target >= 5x) and whether the results are identical apart from their timings.

The server runs in its own process, as a real endpoint would: in this
process the model's own work would compete with the agents for one
interpreter lock, and the ratio would measure that instead.

Run: ``.venv/bin/python benchmarks/bench_concurrency.py [--latency 0.2] [--threads 8]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import openai

from lares_kit.bench.runner import run_bench
from lares_kit.bench.suites.tasks import load_tasks


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve_model(latency: float):
    """``lares serve-model`` in a child process; yields its base URL, stops it after.

    Args:
        latency: Seconds the server waits before each reply, as a remote model would.
    """
    port = free_port()
    lares = Path(sys.executable).with_name("lares")
    command = [str(lares)] if lares.exists() else [sys.executable, "-m", "lares_kit.cli.commands"]
    proc = subprocess.Popen([*command, "serve-model", "--port", str(port), "--latency", str(latency)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        probe = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=1)
        for _ in range(100):  # up to ~10 s for the server to start listening
            try:
                probe.models.list()
                break
            except openai.APIConnectionError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"lares serve-model did not start on port {port}")
        yield base_url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server waits before each reply")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--suite", action="append", default=None, help="default: lares-home and garden-flat")
    parser.add_argument("--agent", default="function-calling")
    args = parser.parse_args()
    os.environ.setdefault("LARES_PROGRESS", "0")  # the two timings are the output

    tasks = load_tasks(args.suite or ["lares-home", "garden-flat"])
    with serve_model(args.latency) as base_url:
        # One client, shared by the threads, as `lares bench` does; no retries so a failure shows.
        client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=30)
        clients = {"offline": client}  # the name the server serves (another is a 404)
        print(f"{len(tasks)} tasks, agent {args.agent}, offline model at {base_url} "
              f"with {args.latency:.2f} s per request")
        timings, results = {}, {}
        for threads in (1, args.threads):
            start = time.perf_counter()
            bench = run_bench(tasks, agents=[args.agent], models=["offline"], concurrency=threads,
                              clients=clients)
            timings[threads] = time.perf_counter() - start
            results[threads] = [{k: v for k, v in r.items() if k != "seconds"} for r in bench.results]
            calls = sum(r["llm_calls"] for r in bench.results)
            print(f"  concurrency {threads:>2}: {timings[threads]:6.2f} s for {calls} model calls, "
                  f"{sum(r['success'] for r in bench.results)}/{len(tasks)} solved")
    ratio = timings[1] / timings[args.threads]
    same = results[1] == results[args.threads]
    print(f"speed-up at concurrency {args.threads}: {ratio:.1f}x (target >= 5x)")
    print("results identical apart from timings: " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
