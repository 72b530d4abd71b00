"""Real models' episodes, recorded once and replayed by the lessons: the set, where it lives, and its tables.

Taught in notebooks 00, 04, 05, 09, 15 and 16. The offline model is a rule-based stand-in: it behaves the same
under every design, so it cannot show what a design does for a model. A real one can. These are real episodes of
small models that run on a laptop's CPU (``--model local-qwen``, Qwen2.5-Coder-1.5B-Instruct; ``--model local``,
SmolLM2-135M), recorded with ``scripts/record_real_models.py`` on the three Lares scenarios under every design,
and shipped inside the package (``lares_kit/data/recorded/<model>/``): their session files replay through the
real ``openai`` SDK (``--model replay:DIR``), byte for byte, with no model, no key and no compute.

* :data:`PLAN` -- which episodes are recorded: a :class:`Recorded` each (model, design, scenario, knowledge
  mode, react's executor model);
* :func:`recorded_folder` -- where a model's recordings are;
* :func:`replay` -- one recorded episode run again, from the recording;
* :func:`summary` -- what was measured when it was recorded (``episodes.jsonl``: status, solved, steps, tokens,
  wall seconds on the recording machine), which a replay cannot measure again;
* :func:`table` -- solved n/N with a 95% Wilson interval, steps, tokens and recorded wall time, per group.

Replay answers only the requests that were recorded: a change to a prompt, a tool or a world that these episodes
cover makes them stale, and a replay then ends ``model_error`` with a sentence that names the script to run
(``tests/system/test_recorded.py`` checks every shipped episode still replays as it was recorded).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from ..errors import LaresError
from .stats import wilson_interval

__all__ = ["PLAN", "Recorded", "RECORDED_ROOT", "RECORD_SCRIPT", "MAX_STEPS", "episode_summary", "recorded_folder",
           "format_table", "replay", "rows", "run_one", "solved", "summary", "table"]

RECORDED_ROOT = Path(__file__).resolve().parent.parent / "data" / "recorded"
RECORD_SCRIPT = "scripts/record_real_models.py"
MAX_STEPS = 8  # a failing episode of a small model runs to its limit: 8 steps bound a recording's time
# "Now" for the memory of the designs that have one (react, sage): the day the shipped episodes were recorded, so
# a replay asks what the recording asked on any later day (a note's date is in what recall returns).
RECORDED_DAY = datetime(2026, 12, 5, 12, 0)


@dataclass(frozen=True)
class Recorded:
    """One recorded episode: which model, design, Lares scenario and knowledge mode (and react's executor)."""

    model: str  # "local-qwen", "local"
    agent: str  # "function-calling", "intent-action", "react", "sage"
    scenario: str  # a name in lares_kit.agents.scenarios.LARES_SCENARIOS
    knowledge: str = "latest"  # latest, initial or none (sage keeps its own)
    executor: str | None = None  # react: the light model that writes the action; None: the same model

    @property
    def key(self) -> str:
        """A name for the episode, unique in :data:`PLAN`: ``local-qwen/react/kitchen/latest``."""
        return "/".join([self.model, self.agent, self.scenario, self.knowledge]
                        + ([f"executor={self.executor}"] if self.executor else []))


_DESIGNS = ("function-calling", "intent-action", "react", "sage")
_SCENARIOS = ("kitchen", "dog", "dog-moved", "daytime")

_ONE_EACH = ("kitchen", "dog", "daytime")  # one scenario of each kind: direct, search, asking

# What the lessons replay, in the order it is recorded: Qwen under every design on every scenario; the two
# single-model loops with stale and with no knowledge (notebook 05); react's planner/executor split with the
# real model on either side (notebook 09); SmolLM2, a model ten times smaller, for contrast.
PLAN: tuple[Recorded, ...] = (
    *(Recorded("local-qwen", a, s) for a in _DESIGNS for s in _SCENARIOS),
    *(Recorded("local-qwen", a, s, k) for k in ("initial", "none") for a in _DESIGNS[:2] for s in _ONE_EACH),
    *(Recorded("offline", "react", s, executor="local-qwen") for s in _ONE_EACH),
    *(Recorded("local-qwen", "react", s, executor="offline") for s in _ONE_EACH),
    *(Recorded("local", a, s) for a in _DESIGNS for s in ("kitchen", "dog")),
)


def recorded_folder(model: str, root: Path | None = None) -> Path:
    """The folder of one model's recorded episodes (the model that plans, for react's splits).

    Args:
        model: The model's name, e.g. ``"local-qwen"``.
        root: Where recordings live; None: inside the package.

    Examples:
        >>> recorded_folder("local-qwen").parts[-2:]
        ('recorded', 'local-qwen')
    """
    return (root or RECORDED_ROOT) / model


def _folder_of(episode: Recorded, root: Path | None) -> Path:
    # react with the offline planner and a real executor is the real model's recording
    return recorded_folder(episode.executor if episode.model == "offline" and episode.executor else episode.model,
                           root)


def summary(root: Path | None = None) -> dict[str, dict[str, Any]]:
    """What was measured when each episode was recorded: key -> its summary line in ``episodes.jsonl``.

    Args:
        root: Where recordings live; None: inside the package.
    """
    found: dict[str, dict[str, Any]] = {}
    base = root or RECORDED_ROOT
    for path in sorted(base.glob("*/episodes.jsonl")) if base.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                found[record["key"]] = record
    return found


def run_one(episode: Recorded, client: Any, executor_client: Any = None, max_steps: int = MAX_STEPS) -> Any:
    """Run one planned episode with the given clients (recording or replaying); return the Episode.

    Args:
        episode: The planned episode.
        client: The ``openai`` client of ``episode.model``.
        executor_client: react's executor's client when the episode names one.
        max_steps: The step limit (:data:`MAX_STEPS`; a test records one step).
    """
    from ..agents import get_agent, run_agent
    from ..agents.scenarios import LARES_SCENARIOS
    from ..home.worlds import load_world
    from ..memory.store import MemoryStore
    from ..tools.users import ScriptedUser

    scenario = next(s for s in LARES_SCENARIOS if s.name == episode.scenario)
    home = load_world(scenario.world, seed=scenario.seed)
    executor = (episode.executor, executor_client) if episode.executor else None
    knowledge = None if episode.agent == "sage" else episode.knowledge
    # a memory's notes carry their date, which the model reads (recall): the recording's day, on any day
    memory = MemoryStore(":memory:", clock=lambda: RECORDED_DAY) if get_agent(episode.agent).memory else None
    return run_agent(scenario.instruction, home, episode.agent, episode.model, client=client,
                     user=ScriptedUser(answers=list(scenario.answers)), knowledge=knowledge,
                     max_steps=max_steps, executor=executor, memory=memory)


def replay(episode: Recorded, root: Path | None = None) -> Any:
    """The recorded episode, run again from its recording (no model runs); returns the Episode.

    A request that was not recorded ends the episode ``model_error``, its error naming what differs.

    Args:
        episode: A planned episode (one of :data:`PLAN`).
        root: Where recordings live; None: inside the package.
    """
    from ..models import make_client
    from ..models.recording.replay import replay_client

    folder = _folder_of(episode, root)
    shipped = summary(root).get(episode.key)
    if shipped is None:
        raise LaresError(f"{episode.key} is not recorded: run {RECORD_SCRIPT}")
    # its own session only: a model may answer the same request differently in two episodes (another cache state)
    client = replay_client(folder, max_retries=0, only=[shipped["session"]])
    executor_client = None
    if episode.executor:
        executor_client = client if episode.executor != "offline" else make_client("offline")
        if episode.model == "offline":
            client = make_client("offline")
    return run_one(episode, client, executor_client)


def rows(episodes: Iterable[Recorded], root: Path | None = None) -> list[tuple[Recorded, Any, dict[str, Any]]]:
    """Each planned episode run again -- replayed, or live when ``$LARES_MODEL`` names its model -- with its figures.

    A lesson's cell calls this: with no model installed it replays the shipping recordings in a moment; a
    learner with time sets ``LARES_MODEL=local-qwen`` and the same cell runs Qwen live (minutes) instead.
    The wall seconds are the recording machine's when replayed (a replay takes none), measured when live.

    Args:
        episodes: Planned episodes (of :data:`PLAN`).
        root: Where recordings live; None: inside the package.

    Returns:
        (episode, its Episode, its summary line: solved, status, steps, tokens, seconds), in the order given.
    """
    import os
    import time

    from ..models import make_client

    recorded, live_model = summary(root), os.environ.get("LARES_MODEL")
    out = []
    for episode in episodes:
        # live only for the real model the variable names (the notebooks' CI sets LARES_MODEL=offline: replay)
        if live_model and live_model != "offline" and live_model in (episode.model, episode.executor):
            real = make_client(live_model)
            offline = make_client("offline")
            start = time.perf_counter()
            if episode.model == "offline":
                ep = run_one(episode, offline, real)
            else:
                ep = run_one(episode, real, (offline if episode.executor == "offline" else real)
                             if episode.executor else None)
            line = episode_summary(episode, ep, time.perf_counter() - start, "live")
        else:
            ep = replay(episode, root)
            line = {**episode_summary(episode, ep, 0.0, ""),
                    "seconds": recorded.get(episode.key, {}).get("seconds", 0.0)}
        out.append((episode, ep, line))
    return out


def solved(episode: Recorded, ep: Any) -> bool:
    """Whether the scenario's check passes on an Episode of it.

    Args:
        episode: The planned episode.
        ep: Its Episode.
    """
    from ..agents.scenarios import LARES_SCENARIOS

    return next(s for s in LARES_SCENARIOS if s.name == episode.scenario).check(ep)


def table(rows: Iterable[dict[str, Any]], by: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows of episode summaries grouped ``by`` some of their keys: solved n/N, a 95% interval, means.

    Args:
        rows: Summaries, as :func:`summary` gives them (``solved``, ``steps``, ``prompt_tokens``, ``seconds``).
        by: The keys to group by, e.g. ``("model", "agent")``.

    Examples:
        >>> rows = [{"agent": "a", "solved": True, "steps": 2, "prompt_tokens": 10, "completion_tokens": 1,
        ...          "seconds": 3.0}, {"agent": "a", "solved": False, "steps": 8, "prompt_tokens": 30,
        ...          "completion_tokens": 3, "seconds": 9.0}]
        >>> t = table(rows, ("agent",))[0]
        >>> t["agent"], t["solved"], t["n"], t["steps"], t["seconds"]
        ('a', 1, 2, 5.0, 6.0)
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in by), []).append(row)
    out = []
    for values, members in groups.items():
        n, wins = len(members), sum(bool(m["solved"]) for m in members)
        low, high = wilson_interval(wins, n)
        mean = lambda key: round(sum(m[key] for m in members) / n, 1)  # noqa: E731
        out.append({**dict(zip(by, values)), "solved": wins, "n": n, "low": low, "high": high,
                    "steps": mean("steps"), "prompt_tokens": mean("prompt_tokens"),
                    "completion_tokens": mean("completion_tokens"), "seconds": mean("seconds")})
    return out


def format_table(groups: list[dict[str, Any]], by: tuple[str, ...]) -> str:
    """:func:`table`'s groups as text a lesson prints: solved n/N with its interval, means per episode.

    Args:
        groups: What :func:`table` returned.
        by: The keys it grouped by, shown first.

    Examples:
        >>> print(format_table([{"agent": "react", "solved": 1, "n": 4, "low": 0.05, "high": 0.7, "steps": 5.5,
        ...                      "prompt_tokens": 4200.0, "completion_tokens": 80.0, "seconds": 120.0}], ("agent",)))
        agent             solved  95% interval  steps  prompt tok  compl tok  seconds
        react                1/4         5-70%    5.5       4,200         80      120
    """
    head = "".join(f"{k:<18}" for k in by) + \
        f"{'solved':>6}  {'95% interval':>12}  {'steps':>5}  {'prompt tok':>10}  {'compl tok':>9}  {'seconds':>7}"
    lines = [head]
    for g in groups:
        solved, interval = f"{g['solved']}/{g['n']}", f"{round(100 * g['low'])}-{round(100 * g['high'])}%"
        lines.append("".join(f"{str(g[k]):<18}" for k in by) + f"{solved:>6}  {interval:>12}  {g['steps']:>5}  "
                     f"{g['prompt_tokens']:>10,.0f}  {g['completion_tokens']:>9,.0f}  {g['seconds']:>7,.0f}")
    return "\n".join(lines)


def episode_summary(episode: Recorded, ep: Any, seconds: float, session: str) -> dict[str, Any]:
    """The line ``episodes.jsonl`` keeps for one recorded episode.

    Args:
        episode: The planned episode.
        ep: Its Episode, as recorded.
        seconds: Wall time of the episode on the recording machine.
        session: The session file its requests went to.
    """
    return {"key": episode.key, **asdict(episode), "status": ep.status, "solved": solved(episode, ep),
            "steps": len(ep.steps), "llm_calls": len(ep.llm_calls), **ep.usage, "seconds": round(seconds, 1),
            "calls": [s.call_text for s in ep.tool_calls], "final_message": ep.final_message, "session": session}
