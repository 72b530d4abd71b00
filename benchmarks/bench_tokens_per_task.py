"""Prompt tokens per solved task on the whole benchmark: each agent design vs the Lares baseline.

Runs every task of every suite (:func:`lares_kit.bench.load_tasks`) with the
offline model, in one run:

* the **baseline**, Lares-style: the ``intent-action`` loop with the full
  pretty-JSON world in every intent and action call (``knowledge_format="full"``);
* **each agent design** (function-calling, intent-action, react, sage) with
  the retrieval format of :mod:`lares_kit.knowledge` (SAGE puts no world
  dump in its prompts: it reads the home through its tools, so it runs with
  its own setting, shown as ``own``), and, as a reference for "equal
  success", function-calling and react with the full dump.

For each it prints the tasks solved and the prompt tokens per solved task
(all prompt tokens of the solved tasks / their number), and the ratio to the
baseline. Goal: at least 3x fewer tokens at equal success. The
configurations run in two processes (this machine has two cores).

    .venv/bin/python benchmarks/bench_tokens_per_task.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("LARES_PROGRESS", "0")

BASELINE = ("intent-action", "full")
# Each design with retrieval, and beside it with the full dump: the same design's success without the format.
DESIGNS = [("function-calling", "retrieval"), ("function-calling", "full"), ("intent-action", "retrieval"),
           ("react", "retrieval"), ("react", "full"), ("sage", "own")]


def run_config(config: tuple[str, str]) -> dict:
    """Every task with one (agent, knowledge format); the per-task results.

    Args:
        config: ``(agent, knowledge format)``, e.g. ``("intent-action", "compact")``.
    """
    from lares_kit.agents import AGENTS, run_agent
    from lares_kit.bench import load_tasks
    from lares_kit.bench.checks import Outcome, run_checks
    from lares_kit.bench.scene import set_stage
    from lares_kit.models import make_client
    from lares_kit.worlds import load_world

    agent, fmt = config
    if agent not in AGENTS:
        return {"agent": agent, "format": fmt, "results": [], "seconds": 0.0, "missing": True}
    client = make_client("offline")
    tasks = load_tasks()
    worlds = {w: load_world(w) for w in dict.fromkeys(t.world for t in tasks)}
    results = []
    start = time.perf_counter()
    for task in tasks:
        scene = set_stage(task, worlds[task.world])
        try:
            episode = run_agent(task.instruction, scene.home, agent=agent, model="offline", client=client,
                                user=scene.user, max_steps=task.max_steps, memory=scene.memory,
                                knowledge_format=None if fmt == "own" else fmt)
        except Exception as exc:  # noqa: BLE001 -- one broken episode must not stop the measurement
            results.append({"task": task.id, "success": False, "prompt_tokens": 0, "error": repr(exc)})
            continue
        run = episode.to_run_json()
        checks = run_checks(task.expect, Outcome.from_run(run, scene))
        results.append({"task": task.id, "success": all(c.passed for c in checks),
                        "prompt_tokens": run["usage"]["prompt_tokens"], "llm_calls": run["llm_calls"]})
    return {"agent": agent, "format": fmt, "results": results, "seconds": time.perf_counter() - start}


def per_solved(config: dict) -> tuple[int, float]:
    solved = [r for r in config["results"] if r["success"]]
    return len(solved), (sum(r["prompt_tokens"] for r in solved) / len(solved) if solved else float("nan"))


def report(configs: list[dict]) -> str:
    base = configs[0]
    base_ok, base_tpt = per_solved(base)
    total = len(base["results"])
    lines = [f"{'agent':<18} {'knowledge':<10} {'solved':>9} {'tokens/solved task':>19} {'vs baseline':>12} "
             f"{'same tasks':>11} {'seconds':>8}", "-" * 94]
    base_solved = {r["task"] for r in base["results"] if r["success"]}
    for c in configs:
        if c.get("missing"):
            lines.append(f"{c['agent']:<18} (not available in this checkout)")
            continue
        ok, tpt = per_solved(c)
        # the same tasks solved by both: tokens on exactly those, so a design cannot win by failing long tasks
        both = base_solved & {r["task"] for r in c["results"] if r["success"]}
        mine = sum(r["prompt_tokens"] for r in c["results"] if r["task"] in both)
        theirs = sum(r["prompt_tokens"] for r in base["results"] if r["task"] in both)
        ratio = base_tpt / tpt if tpt else float("nan")
        same = theirs / mine if mine else float("nan")
        label = "baseline" if c is base else f"{ratio:.1f}x fewer"
        lines.append(f"{c['agent']:<18} {c['format']:<10} {ok:>4}/{total:<4} {tpt:>19,.0f} {label:>12} "
                     f"{same:>10.1f}x {c['seconds']:>8.0f}")
    lines.append("")
    for c in configs[1:]:
        if c.get("missing"):
            continue
        ok, tpt = per_solved(c)
        if c["format"] == "full":
            continue  # a reference row: the design's own success with the whole world in the prompt
        ratio = base_tpt / tpt
        own = next((per_solved(o)[0] for o in configs if o["agent"] == c["agent"] and o["format"] == "full"), None)
        verdict = "met" if ratio >= 3 and ok >= base_ok else "NOT met"
        if own is not None:
            verdict += f"; the same design with the full dump solves {own}"
        lines.append(f"{c['agent']} + {c['format']}: {ratio:.1f}x fewer prompt tokens per solved task than the "
                     f"Lares baseline, solving {ok} vs {base_ok} (goal >= 3x at equal success: {verdict})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="also write the per-task results here")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    configs = [BASELINE, *DESIGNS]
    # longest first, so the two processes finish together
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        results = dict(zip(configs, pool.map(run_config, configs)))
    ordered = [results[c] for c in configs]
    print(report(ordered))
    print(f"\n(bench_tokens_per_task ran in {time.perf_counter() - start:.0f} s)")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump(ordered, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
