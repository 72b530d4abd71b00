"""Prompt tokens per LLM call as the home grows, for each knowledge format.

Generates a house and buildings of 10, 100, 1,000 and 5,000 devices
(:mod:`lares_kit.home.generator`), five tasks for each checked by the oracle
(:mod:`lares_kit.bench.suites.generated`), and measures, in one run:

* **prompt tokens per call**: the first call of every task with the
  ``function-calling`` agent and the offline model (the model's own count,
  cl100k), averaged over the tasks, for each format of
  :mod:`lares_kit.knowledge.modes`;
* **success** on the generated tasks: every format at the two small sizes,
  and the best format (retrieval) at every size;
* the growth ratio (5,000 devices / 10 devices) per format -- goal: the best
  format within 2x -- and the full-dump / best ratio at 5,000 devices;
* the time to generate, validate and load each world from its file (goal: a
  5,000-device world in under 2 s).

    .venv/bin/python benchmarks/bench_prompt_size.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LARES_PROGRESS", "0")

from lares_kit.agents import run_agent  # noqa: E402
from lares_kit.bench.judging.checks import Outcome, run_checks  # noqa: E402
from lares_kit.bench.scene import set_stage  # noqa: E402
from lares_kit.bench.suites.generated import generate_tasks  # noqa: E402
from lares_kit.home.generator import generate_world, world_size  # noqa: E402
from lares_kit.home.worlds import check_home, load_world, parse_world  # noqa: E402
from lares_kit.knowledge.modes import KNOWLEDGE_FORMATS  # noqa: E402
from lares_kit.models import make_client  # noqa: E402

SIZES = [10, 100, 1000, 5000]
BEST = "retrieval"
AGENT = "function-calling"
FULL_RUN_SIZES = (10, 100)  # every format runs whole episodes here; only the best one above


def solve(task, home, fmt: str, client, max_steps: int | None = None) -> tuple[bool, list[int]]:
    """Run one generated task; (success, prompt tokens of each call).

    Args:
        task: A generated task.
        home: Its generated home; the episode runs in a copy.
        fmt: The knowledge format (``full``, ``compact``, ``overview``, ``retrieval``).
        client: The offline model's client.
        max_steps: The step limit; None: the agent's own.
    """
    scene = set_stage(task, home)
    episode = run_agent(task.instruction, scene.home, agent=AGENT, model="offline", client=client,
                        knowledge_format=fmt, user=scene.user, max_steps=max_steps, context=scene.run_context)
    checks = run_checks(task.expect, Outcome.from_run(episode.to_run_json(), scene))
    return all(c.passed for c in checks), [c.prompt_tokens for c in episode.llm_calls]


def measure() -> dict:
    client = make_client("offline")
    rows, worlds = [], []
    for devices in SIZES:
        start = time.perf_counter()
        data = generate_world(devices=devices, seed=1)
        generated = time.perf_counter() - start
        start = time.perf_counter()
        home = parse_world(data, f"<{devices} devices>")
        loaded = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as folder:  # the file `lares worlds generate --out` writes
            path = Path(folder) / "world.yaml"
            path.write_text(json.dumps(data, indent=1), encoding="utf-8")
            start = time.perf_counter()
            load_world(path)
            from_file = time.perf_counter() - start
        tasks = generate_tasks(home, n=5, seed=1)
        worlds.append({"devices": devices, "rooms": world_size(devices), "generate_s": generated, "load_s": loaded,
                       "file_s": from_file,
                       "check_home": check_home(home), "tasks": len(tasks)})
        for fmt in KNOWLEDGE_FORMATS:
            first, per_call, ok, ran = [], [], 0, devices in FULL_RUN_SIZES or fmt == BEST
            for task in tasks:
                success, calls = solve(task, home, fmt, client, None if ran else 1)
                first.append(calls[0])
                per_call += calls
                ok += success
            rows.append({"devices": devices, "format": fmt, "first_call": sum(first) / len(first),
                         "per_call": sum(per_call) / len(per_call) if ran else None,
                         "success": ok if ran else None, "tasks": len(tasks)})
            print(f"  measured {devices:>5} devices, {fmt:<9}", file=sys.stderr)
    return {"rows": rows, "worlds": worlds}


def report(result: dict) -> str:
    rows, worlds = result["rows"], result["worlds"]
    cell = {(r["devices"], r["format"]): r for r in rows}
    lines = ["\n".join(f"{w['devices']} devices / {w['rooms']} rooms: generated {w['generate_s']:.3f} s, "
                       f"validated {w['load_s']:.3f} s, from its file {w['file_s']:.3f} s, "
                       f"check_home {'ok' if not w['check_home'] else 'FAILED'}"
                       for w in worlds), ""]
    head = f"{'prompt tokens per call':<24}" + "".join(f"{d:>10,}" for d in SIZES) + f"{'5000/10':>10}"
    lines += [head + "   (first call of each task, mean over 5 tasks)", "-" * len(head)]
    growth = {}
    for s in KNOWLEDGE_FORMATS:
        values = [cell[(d, s)]["first_call"] for d in SIZES]
        growth[s] = values[-1] / values[0]
        lines.append(f"{s:<24}" + "".join(f"{v:>10,.0f}" for v in values) + f"{growth[s]:>9.1f}x")
    lines += ["", f"{'success (of 5 tasks)':<24}" + "".join(f"{d:>10,}" for d in SIZES)]
    for s in KNOWLEDGE_FORMATS:
        lines.append(f"{s:<24}" + "".join(f"{'-' if cell[(d, s)]['success'] is None else cell[(d, s)]['success']:>10}"
                                          for d in SIZES))
    small = cell[(SIZES[0], BEST)]["success"]
    big = cell[(SIZES[-1], BEST)]["success"]
    dump_vs_best = cell[(SIZES[-1], "full")]["first_call"] / cell[(SIZES[-1], BEST)]["first_call"]
    lines += ["",
              f"best format ({BEST}): prompt at 5,000 devices / at 10 devices = {growth[BEST]:.2f}x "
              f"(goal <= 2x: {'met' if growth[BEST] <= 2 else 'NOT met'}); success {big}/5 at 5,000 devices vs "
              f"{small}/5 at 10 ({'same level' if big >= small else 'LOWER'})",
              f"full dump / {BEST} at 5,000 devices: {dump_vs_best:.0f}x fewer prompt tokens per call",
              f"5,000-device world: generated in {worlds[-1]['generate_s']:.2f} s, validated in "
              f"{worlds[-1]['load_s']:.2f} s, loaded from its file in {worlds[-1]['file_s']:.2f} s "
              f"(goal < 2 s: {'met' if worlds[-1]['file_s'] < 2 else 'NOT met'})"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_path", default=None, help="also write the measurements here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = measure()
    print(report(result))
    print(f"\n(bench_prompt_size ran in {time.perf_counter() - start:.0f} s)")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
