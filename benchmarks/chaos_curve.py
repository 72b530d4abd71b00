"""Success against fault rate: how each agent design copes with a model that breaks its replies.

Runs the Lares suites (``lares-home``, ``garden-flat``, ``townhouse``: 101
tasks, 24 held out) under every registered agent design with the chaos model
(:mod:`lares_kit.models.faults.chaos`) at fault rates 0, 5, 10, 20 and 40%, and
prints the share of tasks passed, and the ratio to the same design at 0% in
the same run. Every episode must end with a status (no exception, no
``model_error``: a broken reply is not a broken connection); the script
exits 1 otherwise. One seed per rate by default (``--seed``); about two
minutes on a laptop.

    .venv/bin/python benchmarks/chaos_curve.py [--agent NAME]... [--suite ID]... [--json PATH] [--plot PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from lares_kit.agents import AGENTS
from lares_kit.bench.runner import run_bench
from lares_kit.bench.suites.tasks import load_tasks
from lares_kit.models.faults.chaos import chaos_client

RATES = (0.0, 0.05, 0.10, 0.20, 0.40)
SUITES = ("lares-home", "garden-flat", "townhouse")


def curve(agents: list[str], suites: list[str], rates: tuple[float, ...] = RATES, seed: int = 0) -> list[dict]:
    """One row per agent and rate: tasks, passed, success share, faults injected, statuses seen.

    Args:
        agents: The agent designs to compare.
        suites: The task suites to run.
        rates: Fault rates, each the share of model calls that fail (0.0 to 1.0).
        seed: Seeds the fault stream: the same seed fails the same calls.
    """
    tasks = load_tasks(list(suites))
    rows = []
    for agent in agents:
        for rate in rates:
            name = f"chaos:offline@{rate}"
            client = chaos_client("offline", rate, seed=seed, max_retries=0)  # a fresh, seeded fault stream
            bench = run_bench(tasks, agents=[agent], models=[name], clients={name: client})
            statuses = sorted({r["status"] for r in bench.records})
            passed = sum(r["success"] for r in bench.records)
            rows.append({"agent": agent, "rate": rate, "tasks": len(tasks), "passed": passed,
                         "success": passed / len(tasks), "faults": len(client._client._transport.log),
                         "requests": client._client._transport.requests, "statuses": statuses,
                         "errors": sum(r["error"] is not None for r in bench.records)})
    return rows


def table(rows: list[dict]) -> str:
    rates = sorted({r["rate"] for r in rows})
    lines = [f"{'agent':<18}" + "".join(f"{f'{rate:.0%}':>14}" for rate in rates)]
    for agent in dict.fromkeys(r["agent"] for r in rows):
        mine = {r["rate"]: r for r in rows if r["agent"] == agent}
        base = mine[rates[0]]["success"] or 1.0
        lines.append(f"{agent:<18}" + "".join(f"{mine[rate]['success']:>7.0%} ({mine[rate]['success'] / base:.2f})"
                                               for rate in rates))
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for agent in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == agent]
        ax.plot([100 * r["rate"] for r in mine], [100 * r["success"] for r in mine], marker="o", label=agent)
    ax.set(xlabel="replies broken by the chaos model (%)", ylabel="tasks passed (%)", ylim=(0, 100),
           title="Success against fault rate (offline model)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append", default=None, help=f"default: all ({', '.join(AGENTS)})")
    parser.add_argument("--suite", action="append", default=None, help=f"default: {', '.join(SUITES)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the rows as JSON here")
    parser.add_argument("--plot", default=None, help="write the curve as a PNG here")
    args = parser.parse_args(argv)
    os.environ.setdefault("LARES_PROGRESS", "0")
    start = time.perf_counter()
    rows = curve(args.agent or list(AGENTS), args.suite or list(SUITES), seed=args.seed)
    print(f"Tasks passed at each fault rate (ratio to the same agent at 0%), {rows[0]['tasks']} tasks, "
          f"seed {args.seed}:\n")
    print(table(rows))
    faults = sum(r["faults"] for r in rows)
    print(f"\n{faults} faults injected in {sum(r['requests'] for r in rows)} model replies; "
          f"{time.perf_counter() - start:.0f} s.")
    broken = [r for r in rows if r["errors"] or "model_error" in r["statuses"] or "running" in r["statuses"]]
    if args.json:
        from lares_kit.files.atomic import write_json_atomic

        write_json_atomic(args.json, rows)
    if args.plot:
        plot(rows, args.plot)
    if broken:
        print(f"FAILED: episodes ended without a proper status: {broken}", file=sys.stderr)
        return 1
    print("Every episode ended with a status (done, step_limit or no_answer); each fault is in its trace.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
