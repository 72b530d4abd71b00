"""The toolkit's own time per agent step, beside the offline model's time, on a small and a huge home.

An agent step here is one LLM call of the ``function-calling`` loop. Its
time splits into the **model** (the client call: the offline model's rules,
its token counting, the ``openai`` SDK and transport) and the **toolkit**
(everything else: building the prompt from the episode, the knowledge
format, reading the reply, dispatching the call, recording the truth
after it). Measured in one run, as the episode's loop time minus the time
inside the client, per LLM call; the once-per-episode set-up (the toolbox,
the start and end snapshots of the truth) is printed beside it:

* lares-home, the three Lares scenarios (goal: under 1 ms a step);
* the generated 5,000-device building, its five generated tasks (goal: under
  20 ms a step), with the retrieval format and with the full dump.

    .venv/bin/python benchmarks/bench_overhead.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("LARES_PROGRESS", "0")

from lares_kit import load_world  # noqa: E402
from lares_kit.agents import run_agent  # noqa: E402
from lares_kit.agents.scenarios import LARES_SCENARIOS  # noqa: E402
from lares_kit.bench.generate import generate_tasks  # noqa: E402
from lares_kit.bench.scene import set_stage  # noqa: E402
from lares_kit.generate import generate_home  # noqa: E402
from lares_kit.models import make_client  # noqa: E402
from lares_kit.users import ScriptedUser  # noqa: E402

AGENT = "function-calling"


def measure(runs: list, client, repeat: int) -> dict:
    """Per-step toolkit and model seconds, and the set-up per episode, over ``runs``.

    Args:
        runs: The episodes to time: (home factory, instruction, user factory, knowledge format) each.
        client: The offline model's client.
        repeat: How many times each episode runs.
    """
    toolkit = model = setup = 0.0
    calls = episodes = 0
    for _ in range(repeat):
        for make_home, instruction, make_user, fmt in runs:
            home, user = make_home(), make_user()
            start = time.perf_counter()
            episode = run_agent(instruction, home, agent=AGENT, model="offline", client=client, user=user,
                                knowledge_format=fmt)
            wall = time.perf_counter() - start
            inside = sum(c.seconds for c in episode.llm_calls)
            toolkit += episode.seconds - inside  # the loop: prompts, replies, dispatch, records
            setup += wall - episode.seconds  # once per episode: tools, the start and end truth
            model += inside
            calls += len(episode.llm_calls)
            episodes += 1
    return {"toolkit_ms": 1000 * toolkit / calls, "model_ms": 1000 * model / calls, "steps": calls,
            "setup_ms": 1000 * setup / episodes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="times the lares-home scenarios run (default 20)")
    args = parser.parse_args(argv)
    client = make_client("offline")
    small = [(lambda s=s: load_world(s.world).reset(seed=s.seed), s.instruction,
              lambda s=s: ScriptedUser(answers=list(s.answers)), "full") for s in LARES_SCENARIOS]
    measure(small, client, 1)  # warm up: imports, the tokenizer, the schema caches
    building = generate_home(devices=5000, seed=1)
    tasks = generate_tasks(building, n=5, seed=1)

    def big(fmt: str) -> list:
        scenes = [set_stage(t, building) for t in tasks]
        return [(lambda sc=sc: set_stage(sc.task, building).home, sc.task.instruction, lambda sc=sc: sc.user, fmt)
                for sc in scenes]

    rows = [("lares-home, Lares scenarios", "full", measure(small, client, args.repeat), 1.0),
            ("lares-home, Lares scenarios", "retrieval",
             measure([(h, i, u, "retrieval") for h, i, u, _ in small], client, args.repeat), 1.0),
            ("5,000-device building", "retrieval", measure(big("retrieval"), client, 1), 20.0),
            ("5,000-device building", "full", measure(big("full")[:2], client, 1), 20.0)]
    print(f"{'home':<30} {'knowledge':<10} {'steps':>6} {'toolkit ms/step':>16} {'model ms/step':>14} "
          f"{'toolkit/model':>14} {'goal':>8}         {'setup ms/episode':>17}")
    print("-" * 124)
    for name, fmt, r, goal in rows:
        verdict = "met" if r["toolkit_ms"] < goal else "NOT met"
        print(f"{name:<30} {fmt:<10} {r['steps']:>6} {r['toolkit_ms']:>16.2f} {r['model_ms']:>14.2f} "
              f"{r['toolkit_ms'] / r['model_ms']:>13.2f}x {'<' + format(goal, 'g') + ' ms':>8} {verdict:<8} "
              f"{r['setup_ms']:>17.1f}")
    print("\n(the full dump at 5,000 devices runs only 2 tasks: each of its steps sends ~430k tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
