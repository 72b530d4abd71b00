"""What each loop design costs: LLM calls, tool steps and prompt tokens per episode.

Runs the Lares scenarios (:data:`lares_kit.agents.scenarios.LARES_SCENARIOS`)
under every loop design and knowledge mode with the offline model, and
prints, per episode, the figures and their ratio to ``function-calling`` on
the same scenario and knowledge mode, measured in the same run. The offline
model counts tokens with a real tokenizer (cl100k), so prompt sizes are
real; what a real LLM would *decide* may differ.

    .venv/bin/python benchmarks/bench_loops.py [--model NAME] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.agents.scenarios import LARES_SCENARIOS
from lares_kit.tools.users import ScriptedUser

DESIGNS = ["function-calling", "intent-action"]  # the first is the baseline
MODES = ["latest", "initial", "none"]


def measure(model: str) -> list[dict]:
    rows = []
    for scenario in LARES_SCENARIOS:
        for mode in MODES:
            for design in DESIGNS:
                home = load_world(scenario.world).reset(seed=scenario.seed)
                ep = run_agent(scenario.instruction, home, agent=design, model=model, knowledge=mode,
                               user=ScriptedUser(answers=list(scenario.answers)))
                rows.append({"scenario": scenario.name, "knowledge": mode, "agent": design, "status": ep.status,
                             "success": scenario.check(ep), "llm_calls": len(ep.llm_calls),
                             "tool_steps": len(ep.tool_calls), "prompt_tokens": ep.usage["prompt_tokens"],
                             "completion_tokens": ep.usage["completion_tokens"], "seconds": round(ep.seconds, 3)})
    return rows


def _ratio(value: int, base: int) -> str:
    return f"{value / base:.2f}x" if base else "-"


def report(rows: list[dict]) -> str:
    base = {(r["scenario"], r["knowledge"]): r for r in rows if r["agent"] == DESIGNS[0]}
    head = (f"{'scenario':<10} {'knowledge':<9} {'agent':<17} {'ok':<3} {'status':<11} "
            f"{'llm':>4} {'ratio':>6} {'tools':>5} {'ratio':>6} {'prompt tok':>10} {'ratio':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        b = base[(r["scenario"], r["knowledge"])]
        lines.append(f"{r['scenario']:<10} {r['knowledge']:<9} {r['agent']:<17} {'yes' if r['success'] else 'NO':<3} "
                     f"{r['status']:<11} {r['llm_calls']:>4} {_ratio(r['llm_calls'], b['llm_calls']):>6} "
                     f"{r['tool_steps']:>5} {_ratio(r['tool_steps'], b['tool_steps']):>6} "
                     f"{r['prompt_tokens']:>10} {_ratio(r['prompt_tokens'], b['prompt_tokens']):>6}")
    lines.append("")
    for design in DESIGNS:
        for mode in MODES:
            mine = [r for r in rows if r["agent"] == design and r["knowledge"] == mode]
            ref = [base[(r["scenario"], mode)] for r in mine]
            tokens, ref_tokens = sum(r["prompt_tokens"] for r in mine), sum(r["prompt_tokens"] for r in ref)
            calls, ref_calls = sum(r["llm_calls"] for r in mine), sum(r["llm_calls"] for r in ref)
            ok = sum(r["success"] for r in mine)
            lines.append(f"total {design:<17} {mode:<8} {ok}/{len(mine)} ok, {calls} LLM calls "
                         f"({_ratio(calls, ref_calls)}), {tokens} prompt tokens ({_ratio(tokens, ref_tokens)})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="offline")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    rows = measure(args.model)
    print(report(rows))
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump({"model": args.model, "rows": rows}, f, indent=1)
    return 0 if all(r["success"] for r in rows if r["knowledge"] != "none") else 1


if __name__ == "__main__":
    sys.exit(main())
