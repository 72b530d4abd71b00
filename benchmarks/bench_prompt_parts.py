"""Each part of the lean prompt style on its own: what it saves in prompt tokens, and whether it costs success.

The ``lean`` prompt style and the ``auto`` knowledge format (the defaults)
differ from the Lares baseline (``prompt_style="lares"``,
``knowledge_format="full"``) in six parts. This script runs the intent-action
loop on every task of every suite with the offline model, in one run:

* the baseline, and the defaults;
* the baseline with **one part** of the defaults added (what the part alone
  saves);
* the defaults with **one part** taken back to the baseline's (what the
  defaults would lose without it).

The parts: the knowledge format (``full`` -> ``auto``), the role and goal
prompts, the tool texts (whole docstrings -> first sentences, the intent
tool too), the id enums (up to 60 ids -> up to 20), the layout (the knowledge
second -> last: tokens do not change, the share a prompt cache reuses does)
and the action call (everything the intent call saw -> the decision and the
part of the home its arguments name). A part is kept when it costs no task:
with it alone the baseline solves as many, and without it the defaults solve
no more. intent-action's tool list changes from call to call, so a prompt
cache reuses nothing of it in either layout; the layout's effect on caching
is measured on function-calling, whose tools stay the same: the defaults, and
the defaults with the knowledge second. The configurations run in two
processes.

    .venv/bin/python benchmarks/bench_prompt_parts.py
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("LARES_PROGRESS", "0")

# part -> the PromptStyle fields it sets ("knowledge" is the knowledge format, not a style field)
PARTS = {"knowledge format": ("knowledge",), "role and goal": ("role", "goal"), "tool texts": ("tool_text",),
         "id enums": ("enum_limit",), "layout": ("order",), "action call": ("action",)}
AGENT = "intent-action"
CACHE_AGENT = "function-calling"  # the same tools every call: what the layout does to the prompt cache shows


def configs() -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    """(label, base, part, fields): the baseline, the defaults, each part added to one and taken from the other."""
    out = [("baseline", "lares", None, ()), ("defaults", "lean", None, ())]
    for part, fields in PARTS.items():
        out.append((f"baseline + {part}", "lares", part, fields))
        out.append((f"defaults - {part}", "lean", part, fields))
    return out + [(f"{CACHE_AGENT} defaults", "lean", None, ()),
                  (f"{CACHE_AGENT} defaults - layout", "lean", "layout", PARTS["layout"])]


def run_config(config: tuple[str, str, str | None, tuple[str, ...]]) -> dict:
    """Every task with one configuration: (solved, prompt tokens of the solved tasks, cached share, seconds).

    Args:
        config: ``(label, base style, part, fields)`` from :func:`configs`: the base's fields are replaced by the
            other style's for the fields of the part.
    """
    from lares_kit.agents import run_agent
    from lares_kit.agents.prompts import PROMPT_STYLES
    from lares_kit.bench import load_tasks
    from lares_kit.bench.judging.checks import Outcome, run_checks
    from lares_kit.bench.scene import set_stage
    from lares_kit.home.worlds import load_world
    from lares_kit.models import make_client

    label, base, _, fields = config
    other = "lean" if base == "lares" else "lares"
    style = PROMPT_STYLES[base]
    swap = {f: getattr(PROMPT_STYLES[other], f) for f in fields if f != "knowledge"}
    style = dataclasses.replace(style, name=label, **swap)
    fmt = {"lares": "full", "lean": "auto"}[other if "knowledge" in fields else base]
    client = make_client("offline")
    tasks = load_tasks()
    worlds = {w: load_world(w) for w in dict.fromkeys(t.world for t in tasks)}
    solved = tokens = prompt = cached = 0
    start = time.perf_counter()
    for task in tasks:
        scene = set_stage(task, worlds[task.world])
        agent = CACHE_AGENT if label.startswith(CACHE_AGENT) else AGENT
        episode = run_agent(task.instruction, scene.home, agent=agent, model="offline", client=client,
                            user=scene.user, max_steps=task.max_steps, memory=scene.memory, knowledge_format=fmt,
                            prompt_style=style, context=scene.run_context)
        run = episode.to_run_json()
        ok = all(c.passed for c in run_checks(task.expect, Outcome.from_run(run, scene)))
        solved += ok
        tokens += run["usage"]["prompt_tokens"] if ok else 0
        prompt += run["usage"]["prompt_tokens"]
        cached += run["usage"]["cached_prompt_tokens"]
    return {"label": label, "solved": solved, "per_solved": tokens / solved if solved else float("nan"),
            "cached": cached / prompt if prompt else 0.0, "tasks": len(tasks), "seconds": time.perf_counter() - start}


def report(results: dict[str, dict]) -> str:
    """The table of parts: alone on the baseline, and taken from the defaults; a verdict for each.

    Args:
        results: label -> what :func:`run_config` returned, for every configuration of :func:`configs`.
    """
    base, lean = results["baseline"], results["defaults"]
    lines = [f"intent-action on {base['tasks']} tasks. baseline (lares prompts, full): {base['solved']} solved, "
             f"{base['per_solved']:,.0f} prompt tokens per solved task, {100 * base['cached']:.0f}% cached; "
             f"defaults (lean, auto): {lean['solved']} solved, {lean['per_solved']:,.0f}, "
             f"{100 * lean['cached']:.0f}% cached ({base['per_solved'] / lean['per_solved']:.1f}x fewer)", "",
             f"{'part':<18} {'alone: solved':>14} {'tokens/solved':>14} {'saves':>7} {'cached':>7}   "
             f"{'without: solved':>16} {'tokens/solved':>14} {'costs':>7} {'cached':>7}   verdict", "-" * 132]
    for part in PARTS:
        alone, without = results[f"baseline + {part}"], results[f"defaults - {part}"]
        saves = 1 - alone["per_solved"] / base["per_solved"]
        costs = without["per_solved"] / lean["per_solved"] - 1
        kept = alone["solved"] >= base["solved"] and without["solved"] <= lean["solved"]
        verdict = "kept: costs no task" if kept else "costs tasks"
        lines.append(f"{part:<18} {alone['solved']:>14} {alone['per_solved']:>14,.0f} {100 * saves:>6.0f}% "
                     f"{100 * alone['cached']:>6.0f}%   {without['solved']:>16} {without['per_solved']:>14,.0f} "
                     f"{100 * costs:>6.0f}% {100 * without['cached']:>6.0f}%   {verdict}")
    last, second = results[f"{CACHE_AGENT} defaults"], results[f"{CACHE_AGENT} defaults - layout"]
    lines += ["", f"layout and the prompt cache ({CACHE_AGENT}, defaults): the knowledge last, "
                  f"{100 * last['cached']:.0f}% of prompt tokens cached; the knowledge second (the Lares layout), "
                  f"{100 * second['cached']:.0f}% (the same tokens: {last['per_solved']:,.0f} and "
                  f"{second['per_solved']:,.0f} per solved task)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.processes)) as pool:
        results = {r["label"]: r for r in pool.map(run_config, configs())}
    print(report(results))
    print(f"\n(bench_prompt_parts ran in {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
