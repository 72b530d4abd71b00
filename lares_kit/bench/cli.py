"""``lares bench``: run task suites, print the table, write the JSON and the figure.

The parser lives in :mod:`lares_kit.cli`; this is the work behind it.
Defaults: every suite in ``worlds/tasks/``, the agents ``intent-action`` and
``function-calling``, the model from ``--model`` / ``$LARES_MODEL`` /
``offline``, one seed, one thread. Episode records go to ``--runs DIR``
(resumable: run the same command again to finish an interrupted run) or to
a new ``runs/bench-<time>`` folder.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ..errors import LaresError
from .report import format_table, plot
from .runner import DEFAULT_AGENTS, run_bench
from .tasks import load_tasks

__all__ = ["cli_bench"]


def cli_bench(args: argparse.Namespace) -> int:
    """Run ``lares bench``; returns the exit status (0, or 2 for bad input via LaresError)."""
    from ..agents import get_agent

    agents = args.agent or list(DEFAULT_AGENTS)
    for agent in agents:
        get_agent(agent)  # an unknown name fails now, with the list of agents
    if args.seeds < 1 or args.concurrency < 1:
        raise LaresError("--seeds and --concurrency must be at least 1")
    tasks = load_tasks(args.suite)
    runs = Path(args.runs) if args.runs else Path("runs") / time.strftime("bench-%Y%m%d-%H%M%S")
    bench = run_bench(tasks, agents=agents, models=args.model, seeds=args.seeds, concurrency=args.concurrency,
                      runs=runs)
    print(format_table(bench.summary))
    resumed = f", {bench.resumed} resumed from earlier runs" if bench.resumed else ""
    models = len({r["model"] for r in bench.records})
    print(f"\n{len(bench.records)} episodes ({len(tasks)} tasks x {len(agents)} agent(s) x {models} model(s) "
          f"x {args.seeds} seed(s)) in {bench.seconds:.1f} s{resumed}; episode records in {runs}/")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(bench.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"results written to {args.json_path}")
    if args.plot:
        plot(bench.summary, args.plot)
        print(f"figure written to {args.plot}")
    return 0
