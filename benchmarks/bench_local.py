"""The local models on a task slice: SmolLM2 constrained vs unconstrained, Gemma 3 270M, Qwen2.5-Coder-1.5B; and speed.

Runs a 20-task slice of the benchmark (spread over the categories, as
``lares bench --model local`` picks it) through llama.cpp with each local
model name in turn: SmolLM2-135M with tool calls constrained by the tools'
JSON schemas (``local``) and decoded freely (``local-unconstrained``),
Gemma 3 270M -- the base model -- constrained (``local-gemma``), and
Qwen2.5-Coder-1.5B-Instruct constrained in its own ``<tool_call>`` format
(``local-qwen``; eleven times SmolLM2's parameters: its slice takes over an hour on 2 cores).
It prints for each: the valid-call rate (replies that are one call to an
offered function with arguments valid for its schema), tasks passed, tokens
per second and time; then the ratio constrained / unconstrained when both ran.

``--speed`` runs no task: it sends each model the first request of "turn on
the light in the kitchen" (function-calling agent, lares-home) ``--repeats``
times, its whole prompt read afresh each time, and prints llama.cpp's own
timers -- prompt tokens read per second and tokens written per second -- and
each model's ratio to the first one named, measured in the same run.

Needs the ``[local]`` extra (``make local``); without it, it says so and exits 0.

    .venv/bin/python benchmarks/bench_local.py [--suite ID]... [--limit 20] [--agent function-calling]
        [--max-steps 6] [--model local|local-unconstrained|local-gemma|local-qwen]... [--json PATH]
    .venv/bin/python benchmarks/bench_local.py --speed [--repeats 3] [--model NAME]...

The two small models, one run (the table in docs/models.md):

    LARES_PROGRESS=0 LARES_LOCAL_THREADS=1 .venv/bin/python benchmarks/bench_local.py --max-steps 4 \\
        --model local --model local-gemma

Speed, SmolLM2 as the baseline (the local-qwen figures in docs/models.md):

    LARES_LOCAL_THREADS=1 .venv/bin/python benchmarks/bench_local.py --speed --model local --model local-qwen
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from lares_kit.bench import load_tasks, run_bench
from lares_kit.bench.suites.selection import select_tasks
from lares_kit.cli.bench import LOCAL_SLICE
from lares_kit.models.local.catalog import LOCAL_SPECS
from lares_kit.models.local.llama import (
    CONSTRAINED,
    LOCAL_MODELS,
    UNCONSTRAINED,
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
    local = get_local_model(model=model)
    local.stats[model] = LocalStats()  # count this run only
    start = time.perf_counter()
    bench = run_bench(tasks, agents=[agent], models=[model])
    stats = local.stats[model]
    return {"model": model, "weights": LOCAL_SPECS[model].weights.title, "agent": agent, "tasks": len(tasks),
            "success": sum(r["success"] for r in bench.results), "requests": stats.requests,
            "valid_calls": stats.valid_calls, "valid_rate": round(stats.valid_rate, 3),
            "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "tokens_per_second": round(stats.tokens_per_second, 1), "seconds": round(time.perf_counter() - start, 1),
            "called": dict(sorted(stats.called.items(), key=lambda kv: -kv[1])),
            "per_task": {r["task"]: r["success"] for r in bench.results}}


def first_request(model: str) -> dict:
    """The first request of "turn on the light in the kitchen" with the function-calling agent in lares-home.

    Args:
        model: the local model name the request names.
    """
    from lares_kit import load_world
    from lares_kit.agents.prompts import GOAL_PROMPT, ROLE_PROMPT
    from lares_kit.episode import Episode
    from lares_kit.tools.toolbox import Toolbox

    home = load_world("lares-home")
    episode = Episode.start("turn on the light in the kitchen", home, agent="function-calling", model=model,
                            knowledge="latest", max_steps=5, system_prompt=ROLE_PROMPT, goal_prompt=GOAL_PROMPT)
    return {"model": model, "messages": episode.messages(home), "tools": Toolbox(home).schemas(),
            "tool_choice": "auto"}


def speed(model: str, repeats: int) -> dict:
    """Prompt reading and decoding speed of one local model, from llama.cpp's own timers (best of ``repeats``).

    Args:
        model: a local model name.
        repeats: how many times the request is sent; each reads its whole prompt again (the KV cache is reset).
    """
    import llama_cpp

    local = get_local_model(model=model)
    request, best = first_request(model), None
    for _ in range(repeats):
        local.llama.reset()  # forget the cached prompt: every run reads all of it
        local.complete(request)
        perf = llama_cpp.llama_perf_context(local.llama._ctx.ctx)
        row = {"prompt_tokens": perf.n_p_eval, "prompt_per_s": round(perf.n_p_eval / perf.t_p_eval_ms * 1000, 1),
               "decode_tokens": perf.n_eval, "decode_per_s": round(perf.n_eval / perf.t_eval_ms * 1000, 1)}
        best = row if best is None or row["prompt_per_s"] > best["prompt_per_s"] else best
    return {"model": model, "weights": LOCAL_SPECS[model].weights.title, "repeats": repeats, **best}


def speed_report(rows: list[dict]) -> str:
    """The speed rows as a table, with each model's ratio to the first row's.

    Args:
        rows: what :func:`speed` returned, one per model name; the first is the baseline.
    """
    base = rows[0]
    lines = [f"{'model':<20} {'prompt':>7} {'read tok/s':>11} {'ratio':>6} {'written':>8} {'write tok/s':>12} "
             f"{'ratio':>6}  weights"]
    for r in rows:
        lines.append(f"{r['model']:<20} {r['prompt_tokens']:>7} {r['prompt_per_s']:>11.1f} "
                     f"{r['prompt_per_s'] / base['prompt_per_s']:>6.2f} {r['decode_tokens']:>8} "
                     f"{r['decode_per_s']:>12.1f} {r['decode_per_s'] / base['decode_per_s']:>6.2f}  {r['weights']}")
    return "\n".join(lines)


def report(rows: list[dict]) -> str:
    """The rows as a table, which functions each model chose, and constrained / unconstrained if both ran.

    Args:
        rows: what :func:`measure` returned, one per model name.
    """
    head = f"{'model':<20} {'valid calls':>14} {'rate':>6} {'passed':>9} {'tok/s':>6} {'seconds':>8}  weights"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['model']:<20} {r['valid_calls']:>6} of {r['requests']:<5} {r['valid_rate']:>6.0%} "
                     f"{r['success']:>3} of {r['tasks']:<3} {r['tokens_per_second']:>6.1f} {r['seconds']:>8.0f}"
                     f"  {r['weights']}")
    for r in rows:
        if r["called"]:
            lines.append(f"{r['model']} chose: " + ", ".join(f"{name} {n}" for name, n in r["called"].items()))
    by = {r["model"]: r for r in rows}
    if CONSTRAINED in by and UNCONSTRAINED in by and by[UNCONSTRAINED]["valid_rate"]:
        ratio = by[CONSTRAINED]["valid_rate"] / by[UNCONSTRAINED]["valid_rate"]
        lines.append(f"\nSmolLM2's valid-call rate, constrained / unconstrained: {ratio:.1f}x")
    elif CONSTRAINED in by and UNCONSTRAINED in by:
        lines.append("\nSmolLM2's valid-call rate, constrained / unconstrained: unconstrained made no valid call")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", default=None, help="task suites (default: all)")
    parser.add_argument("--limit", type=int, default=LOCAL_SLICE)
    parser.add_argument("--agent", default="function-calling")
    parser.add_argument("--max-steps", type=int, default=6,
                        help="cap each task's step limit (a rambling model can take minutes per step)")
    parser.add_argument("--model", action="append", default=None, choices=LOCAL_MODELS,
                        help="a local model name, repeatable (default: all of them, in this order: "
                             f"{', '.join(LOCAL_MODELS)})")
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--speed", action="store_true", help="measure reading and writing speed only (no tasks)")
    parser.add_argument("--repeats", type=int, default=3, help="--speed: requests per model (the best is kept)")
    args = parser.parse_args(argv)
    models = args.model or list(LOCAL_MODELS)
    reasons = [local_available(model) for model in models]
    if any(reasons):
        print(f"skipped: {next(r for r in reasons if r)}")
        return 0
    if args.speed:
        rows = [speed(model, max(1, args.repeats)) for model in models]
        print(speed_report(rows))
        if args.json_path:
            with open(args.json_path, "w", encoding="utf-8") as out:
                json.dump(rows, out, indent=1)
        return 0
    tasks = [dataclasses.replace(t, max_steps=min(t.max_steps or args.max_steps, args.max_steps))
             for t in select_tasks(load_tasks(args.suite), limit=args.limit)]
    print(f"{len(tasks)} tasks, agent {args.agent}: {', '.join(t.id for t in tasks)}", flush=True)
    rows = []
    for model in models:
        rows.append(measure(tasks, args.agent, model))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "per_task"}), flush=True)
    print(report(rows))
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
