"""What schema-constrained decoding buys a tiny model: the local model, constrained vs unconstrained, on a task slice.

Runs a 20-task slice of the benchmark (spread over the categories, as
``lares bench --model local`` picks it) with SmolLM2-135M through llama.cpp,
once with tool calls constrained by the tools' JSON schemas (``local``) and
once decoded freely (``local-unconstrained``), and prints for each: the
valid-call rate (replies that are one call to an offered function with
arguments valid for its schema), task success, tokens per second and time;
then the ratio constrained / unconstrained, measured in the same run.

Needs the ``[local]`` extra (``make local``); without it, it says so and exits 0.

    .venv/bin/python benchmarks/bench_local.py [--suite ID]... [--limit 20] [--agent function-calling]
        [--max-steps 6] [--model local|local-unconstrained] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from lares_kit.bench import load_tasks, run_bench
from lares_kit.bench.cli import LOCAL_SLICE, select_tasks
from lares_kit.models.local import (
    CONSTRAINED,
    LOCAL_MODELS,
    LocalStats,
    get_local_model,
    local_available,
)


def measure(tasks: list, agent: str, model: str) -> dict:
    """Run the tasks with one local model name; its figures.

    Args:
        tasks: The benchmark tasks to run.
        agent: The agent design to run them with.
        model: A local model name, as ``make local`` serves it.
    """
    local = get_local_model()
    local.stats[model] = LocalStats()  # count this run only
    start = time.perf_counter()
    bench = run_bench(tasks, agents=[agent], models=[model])
    stats = local.stats[model]
    return {"model": model, "agent": agent, "tasks": len(tasks),
            "success": sum(r["success"] for r in bench.results), "requests": stats.requests,
            "valid_calls": stats.valid_calls, "valid_rate": round(stats.valid_rate, 3),
            "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "tokens_per_second": round(stats.tokens_per_second, 1), "seconds": round(time.perf_counter() - start, 1),
            "called": dict(sorted(stats.called.items(), key=lambda kv: -kv[1])),
            "per_task": {r["task"]: r["success"] for r in bench.results}}


def report(rows: list[dict]) -> str:
    head = f"{'model':<20} {'valid calls':>14} {'rate':>6} {'success':>9} {'tok/s':>6} {'seconds':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['model']:<20} {r['valid_calls']:>6} of {r['requests']:<5} {r['valid_rate']:>6.0%} "
                     f"{r['success']:>3} of {r['tasks']:<3} {r['tokens_per_second']:>6.1f} {r['seconds']:>8.0f}")
    for r in rows:
        if r["called"]:
            lines.append(f"{r['model']} chose: " + ", ".join(f"{name} {n}" for name, n in r["called"].items()))
    by = {r["model"]: r for r in rows}
    if len(by) == 2 and by[LOCAL_MODELS[1]]["valid_rate"]:
        ratio = by[CONSTRAINED]["valid_rate"] / by[LOCAL_MODELS[1]]["valid_rate"]
        lines.append(f"\nvalid-call rate, constrained / unconstrained: {ratio:.1f}x")
    elif len(by) == 2:
        lines.append("\nvalid-call rate, constrained / unconstrained: unconstrained made no valid call")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", default=None, help="task suites (default: all)")
    parser.add_argument("--limit", type=int, default=LOCAL_SLICE)
    parser.add_argument("--agent", default="function-calling")
    parser.add_argument("--max-steps", type=int, default=6,
                        help="cap each task's step limit (a rambling model can take minutes per step)")
    parser.add_argument("--model", action="append", default=None, choices=LOCAL_MODELS,
                        help="one of the two (default: both, constrained first)")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args(argv)
    reason = local_available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    tasks = [dataclasses.replace(t, max_steps=min(t.max_steps or args.max_steps, args.max_steps))
             for t in select_tasks(load_tasks(args.suite), limit=args.limit)]
    print(f"{len(tasks)} tasks, agent {args.agent}: {', '.join(t.id for t in tasks)}", flush=True)
    rows = []
    for model in args.model or LOCAL_MODELS:
        rows.append(measure(tasks, args.agent, model))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "per_task"}), flush=True)
    print(report(rows))
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
