"""The toolkit's own time per agent step, set-up included, beside the offline model's time, on a small and a huge home.

The figure is **toolkit ms per step, including each episode's set-up**: the
wall time of whole benchmark episodes, less the time spent inside the
model's client, divided by their steps. An agent step is one LLM call of the
``function-calling`` loop. What one episode's toolkit time includes:

* **staging** the task's home: a copy of the loaded world with the task's
  set-up applied, as ``lares bench`` does it
  (:func:`lares_kit.bench.scene.set_stage`; for a Lares scenario,
  ``copy_home`` of the loaded home and ``reset`` with the scenario's seed);
* **run_agent**: the toolbox and the prompts, the Episode's start (the
  knowledge and the true state of the home at the start), every step's own
  work (building the prompt in the knowledge format, reading the reply,
  dispatching the call, recording the truth after it), and the true state
  at the end;
* **judging**: for a generated task, everything ``lares bench`` does after
  the episode (:func:`lares_kit.bench.jobs.run_job`: the checks, the
  collateral damage, the safety audit, the record holding the whole
  episode); for a Lares scenario, its check.

Not included: the **model** -- the client call: the offline model's rules,
its token counting, the ``openai`` SDK and the in-process transport --
printed beside it as model ms/step for scale; loading the world or
generating the building and its tasks (once per suite, not per episode);
writing the journal. ``loop ms/step`` and ``setup ms/episode`` split the
figure: the steps' own work, and the rest of the episode.

* lares-home, the Lares scenarios (goal: under 1 ms a step);
* the generated 5,000-device building, its five generated tasks (goal: under
  20 ms a step), with the default format, ``auto`` (there: retrieval; each
  task ``--big-repeat`` times), and with the full dump (two tasks once: each
  of its prompts is ~430k tokens). On lares-home ``auto`` is the whole home as
  an outline; ``full`` is the Lares pretty JSON.

At 5,000 devices Python's garbage collector is a large part of the figure:
what an episode keeps (its copy of the home, the Episode's records of the
home at the start and the end) is what it traverses. It is counted, as it
is in ``lares bench``.

    .venv/bin/python benchmarks/bench_overhead.py [--repeat N] [--big-repeat N]
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
from lares_kit.bench.jobs import Job, run_job  # noqa: E402
from lares_kit.bench.scene import copy_home  # noqa: E402
from lares_kit.bench.suites.generated import generate_tasks  # noqa: E402
from lares_kit.home.generator import generate_home  # noqa: E402
from lares_kit.models import make_client  # noqa: E402
from lares_kit.tools.users import ScriptedUser  # noqa: E402

AGENT = "function-calling"

HEADER = """\
toolkit ms/step = (wall time of whole episodes - time inside the model's client) / LLM calls. Each episode includes:
  staging its home (set_stage; a Lares scenario: copy_home and reset), run_agent's start (the knowledge and the true
  state at the start), its steps' own work, its end (the true state at the end), and judging (run_job's checks,
  collateral damage, safety audit and record; a scenario's check). Not included: the model call (model ms/step),
  loading or generating the world, writing the journal.
loop ms/step: the steps' own work alone; setup ms/episode: the rest of an episode (staging, start, end, judging).
"""


class Tally:
    """Seconds and steps summed over episodes: the whole episode, the loop, and the model."""

    def __init__(self) -> None:
        self.wall = self.loop = self.model = 0.0
        self.steps = self.episodes = 0

    def add(self, wall: float, loop: float, model: float, steps: int) -> None:
        """Count one episode.

        Args:
            wall: Its wall time, staging and judging included.
            loop: The time run_agent's loop took (episode.seconds), the model's calls included.
            model: The time inside the model's client.
            steps: Its LLM calls.
        """
        self.wall, self.loop, self.model = self.wall + wall, self.loop + loop, self.model + model
        self.steps, self.episodes = self.steps + steps, self.episodes + 1

    def row(self) -> dict:
        """The figures of the table, in ms."""
        return {"episodes": self.episodes, "steps": self.steps,
                "toolkit_ms": 1000 * (self.wall - self.model) / self.steps,
                "loop_ms": 1000 * (self.loop - self.model) / self.steps,
                "setup_ms": 1000 * (self.wall - self.loop) / self.episodes,
                "model_ms": 1000 * self.model / self.steps}


def scenarios(fmt: str, client, repeat: int) -> dict:
    """The Lares scenarios ``repeat`` times: copy and reset the loaded home, run the agent, check the end.

    Args:
        fmt: The knowledge format.
        client: The offline model's client.
        repeat: How many times each scenario runs.
    """
    worlds = {s.world: load_world(s.world) for s in LARES_SCENARIOS}
    tally = Tally()
    for _ in range(repeat):
        for s in LARES_SCENARIOS:
            start = time.perf_counter()
            home = copy_home(worlds[s.world]).reset(seed=s.seed)
            episode = run_agent(s.instruction, home, agent=AGENT, model="offline", client=client,
                                user=ScriptedUser(answers=list(s.answers)), knowledge_format=fmt)
            if not s.check(episode):
                raise SystemExit(f"The {s.name} scenario failed its check with {fmt}: the figures would not be "
                                 "of a working episode.")
            tally.add(time.perf_counter() - start, episode.seconds, sum(c.seconds for c in episode.llm_calls),
                      len(episode.llm_calls))
    return tally.row()


def tasks(world, chosen: list, fmt: str, client, repeat: int = 1) -> dict:
    """Each task ``repeat`` times, as ``lares bench`` runs it (run_job: stage, run, judge, record).

    Args:
        world: The loaded (generated) home.
        chosen: The tasks.
        fmt: The knowledge format.
        client: The offline model's client.
        repeat: How many times each task runs.
    """
    tally = Tally()
    for _ in range(repeat):
        for task in chosen:
            tally.add(*timed_job(task, world, fmt, client))
    return tally.row()


def timed_job(task, world, fmt: str, client) -> tuple[float, float, float, int]:
    """One run_job: its wall time, its loop's time, the time inside the model, its LLM calls.

    The record is dropped on return, as ``lares bench`` drops it once it is in the journal.

    Args:
        task: The task.
        world: Its loaded home.
        fmt: The knowledge format.
        client: The offline model's client.
    """
    start = time.perf_counter()
    record = run_job(Job(task, AGENT, "offline", knowledge_format=fmt), world, client, oracle=0)
    wall = time.perf_counter() - start
    episode = record["episode"]
    if episode is None:
        raise SystemExit(f"{task.id} did not run: {record['error']}")
    return wall, episode["seconds"], sum(c["seconds"] for c in episode["llm_calls"]), record["llm_calls"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="times the lares-home scenarios run (default 20)")
    parser.add_argument("--big-repeat", type=int, default=3,
                        help="times the building's tasks run with auto (default 3: a garbage collection of "
                             "the whole heap comes every few episodes, so one pass is a noisy figure)")
    args = parser.parse_args(argv)
    client = make_client("offline")
    scenarios("full", client, 1)  # warm up: imports, the tokenizer, the schema caches
    building = generate_home(devices=5000, seed=1)
    generated = generate_tasks(building, n=5, seed=1)
    tasks(building, generated[:1], "auto", client)  # warm up the big home's caches likewise
    rows = [("lares-home, Lares scenarios", "full", scenarios("full", client, args.repeat), 1.0),
            ("lares-home, Lares scenarios", "auto", scenarios("auto", client, args.repeat), 1.0),
            ("5,000-device building", "auto", tasks(building, generated, "auto", client, args.big_repeat), 20.0),
            ("5,000-device building", "full", tasks(building, generated[:2], "full", client), 20.0)]
    print(HEADER)
    print(f"{'home':<28} {'knowledge':<10} {'episodes':>8} {'steps':>6} {'toolkit ms/step':>16} {'goal':>8} "
          f"{'':<8} {'loop ms/step':>13} {'setup ms/episode':>17} {'model ms/step':>14}")
    print("-" * 138)
    for name, fmt, r, goal in rows:
        verdict = "met" if r["toolkit_ms"] < goal else "NOT met"
        print(f"{name:<28} {fmt:<10} {r['episodes']:>8} {r['steps']:>6} {r['toolkit_ms']:>16.2f} "
              f"{'<' + format(goal, 'g') + ' ms':>8} {verdict:<8} {r['loop_ms']:>13.2f} {r['setup_ms']:>17.2f} "
              f"{r['model_ms']:>14.2f}")
    print("\n(the full dump at 5,000 devices runs only 2 tasks: each of its steps sends ~430k tokens, and its loop "
          "time is\n writing that JSON again at every step: the format's own cost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
