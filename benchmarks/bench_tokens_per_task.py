"""Prompt tokens per solved task on the whole benchmark: the agent designs with today's defaults vs the Lares baseline.

Runs every task of every suite (:func:`lares_kit.bench.load_tasks`) with the
offline model, in one run:

* the **baseline**, Lares-style: the ``intent-action`` loop, the Lares
  write-up's prompts and layout (``prompt_style="lares"``) and the whole
  world as pretty JSON in both of its calls (``knowledge_format="full"``);
* **intent-action with the defaults**: the same loop, the ``lean`` prompt
  style and the ``auto`` knowledge format;
* **each other design with the defaults**: function-calling (one call a turn,
  and with parallel calls), react, and sage (which puts no world in its
  prompts: it reads the home through its tools);
* as a reference for "equal success", function-calling the Lares way.

For each it prints the tasks solved, the prompt tokens per solved task (all
prompt tokens of the solved tasks / their number), the ratio to the baseline,
the same ratio on only the tasks both solved, and the share of prompt tokens
the offline model's prompt cache reused. The pass lines check the goals:
intent-action (defaults) >= 4.0x and the best design >= 6.0x fewer prompt
tokens per solved task than the baseline, each solving at least as many
tasks. The configurations run in two processes (this machine has two cores).

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

# (label, agent, knowledge format, prompt style, options); None: the default
BASELINE = ("Lares baseline", "intent-action", "full", "lares", None)
CONFIGS = [
    BASELINE,
    ("intent-action", "intent-action", None, None, None),
    ("function-calling", "function-calling", None, None, None),
    ("function-calling parallel", "function-calling", None, None, {"parallel_tool_calls": True}),
    ("react", "react", None, None, None),
    ("sage", "sage", None, None, None),
    ("function-calling, Lares way", "function-calling", "full", "lares", None),
]
GOALS = {"intent-action": 4.0, "best": 6.0}


def run_config(config: tuple) -> dict:
    """Every task with one configuration; the per-task results.

    Args:
        config: ``(label, agent, knowledge format, prompt style, options)`` as in :data:`CONFIGS`.
    """
    from lares_kit.agents import run_agent
    from lares_kit.bench import load_tasks
    from lares_kit.bench.judging.checks import Outcome, run_checks
    from lares_kit.bench.scene import set_stage
    from lares_kit.home.worlds import load_world
    from lares_kit.models import make_client

    label, agent, fmt, style, options = config
    client = make_client("offline")
    tasks = load_tasks()
    worlds = {w: load_world(w) for w in dict.fromkeys(t.world for t in tasks)}
    results = []
    own = False  # a design that puts no world knowledge in its prompts (sage): its own prompts, not a style's
    start = time.perf_counter()
    for task in tasks:
        scene = set_stage(task, worlds[task.world])
        try:
            episode = run_agent(task.instruction, scene.home, agent=agent, model="offline", client=client,
                                user=scene.user, max_steps=task.max_steps, memory=scene.memory,
                                knowledge_format=fmt, prompt_style=style, options=options, context=scene.run_context)
        except Exception as exc:  # noqa: BLE001 -- one broken episode must not stop the measurement
            results.append({"task": task.id, "success": False, "prompt_tokens": 0, "cached": 0, "error": repr(exc)})
            continue
        own = episode.knowledge == "none"
        run = episode.to_run_json()
        checks = run_checks(task.expect, Outcome.from_run(run, scene))
        results.append({"task": task.id, "success": all(c.passed for c in checks),
                        "prompt_tokens": run["usage"]["prompt_tokens"],
                        "cached": run["usage"]["cached_prompt_tokens"], "llm_calls": run["llm_calls"]})
    return {"label": label, "agent": agent, "format": "none" if own else fmt or "auto", "style": "own" if own else
            style or "lean",
            "results": results, "seconds": time.perf_counter() - start}


def per_solved(config: dict) -> tuple[int, float]:
    """(tasks solved, prompt tokens per solved task) of one configuration's results.

    Args:
        config: What :func:`run_config` returned.
    """
    solved = [r for r in config["results"] if r["success"]]
    return len(solved), (sum(r["prompt_tokens"] for r in solved) / len(solved) if solved else float("nan"))


def report(configs: list[dict]) -> tuple[str, bool]:
    """The table and the pass lines; True when every goal is met.

    Args:
        configs: The results of :data:`CONFIGS`, the baseline first.
    """
    base = configs[0]
    base_ok, base_tpt = per_solved(base)
    total = len(base["results"])
    base_solved = {r["task"] for r in base["results"] if r["success"]}
    lines = [f"{'design':<28} {'knowledge':<10} {'prompts':<8} {'solved':>9} {'tokens/solved':>14} {'vs baseline':>12} "
             f"{'same tasks':>11} {'cached':>7} {'seconds':>8}", "-" * 116]
    ratios = {}
    for c in configs:
        ok, tpt = per_solved(c)
        both = base_solved & {r["task"] for r in c["results"] if r["success"]}
        mine = sum(r["prompt_tokens"] for r in c["results"] if r["task"] in both)
        theirs = sum(r["prompt_tokens"] for r in base["results"] if r["task"] in both)
        ratio = base_tpt / tpt if tpt else float("nan")
        ratios[c["label"]] = (ratio, ok)
        prompt = sum(r["prompt_tokens"] for r in c["results"])
        cached = sum(r["cached"] for r in c["results"]) / prompt if prompt else 0.0
        label = "baseline" if c is base else f"{ratio:.1f}x fewer"
        lines.append(f"{c['label']:<28} {c['format']:<10} {c['style']:<8} {ok:>4}/{total:<4} {tpt:>14,.0f} "
                     f"{label:>12} {theirs / mine if mine else float('nan'):>10.1f}x {100 * cached:>6.0f}% "
                     f"{c['seconds']:>8.0f}")
    ia, ia_ok = ratios["intent-action"]
    best = max((label for label in ratios if label != base["label"] and ratios[label][1] >= base_ok),
               key=lambda label: ratios[label][0], default=None)
    ia_met = ia >= GOALS["intent-action"] and ia_ok >= base_ok
    lines += ["", f"intent-action (defaults) vs the Lares baseline: {ia:.1f}x fewer prompt tokens per solved task, "
                  f"solving {ia_ok} vs {base_ok} (goal >= {GOALS['intent-action']:.1f}x at equal or better success: "
                  f"{'met' if ia_met else 'NOT met'})"]
    best_met = best is not None and ratios[best][0] >= GOALS["best"]
    if best is None:
        lines.append(f"best design: none solves as many tasks as the baseline ({base_ok}) (goal NOT met)")
    else:
        lines.append(f"best design, {best}: {ratios[best][0]:.1f}x fewer, solving {ratios[best][1]} vs {base_ok} "
                     f"(goal >= {GOALS['best']:.1f}x at equal or better success: {'met' if best_met else 'NOT met'})")
    return "\n".join(lines), ia_met and best_met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="also write the per-task results here")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        ordered = list(pool.map(run_config, CONFIGS))
    text, met = report(ordered)
    print(text)
    print(f"\n(bench_tokens_per_task ran in {time.perf_counter() - start:.0f} s)")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump(ordered, f, indent=1)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
