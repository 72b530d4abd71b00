"""Running a benchmark: agents x models x tasks x seeds, in parallel threads, resumable.

Taught in ``notebooks/08_evaluation.ipynb``; ``lares bench`` calls
:func:`run_bench`. Every episode gets its own copy of its world
(:func:`lares_kit.bench.scene.set_stage`), so episodes can run side by side
in threads; one model client per model is shared by the threads (the
``openai`` client is thread-safe). Threads pay off against real endpoints,
where an episode spends its time waiting for replies; the offline model
works in-process, so for it one thread is as fast as eight.

Each finished episode is written to ``<runs>/<agent>/<model>/<task>-s<seed>-<knowledge>.json``
at once: a record with the contract's result keys, the check verdicts and
the whole Episode (``Episode.from_dict(record["episode"])`` replays it in a
widget). A run offering Home Assistant's tools (``tool_set="ha"``) adds ``-ha``
to the name and ``tool_set`` to the record; a task imported from Home
Assistant's datasets (:mod:`lares_kit.bench.ha_dataset`) brings its own home,
and its record and result name its ``collateral`` damage. Running again with the same ``runs`` folder skips the episodes
already there, unless their task changed since (its fingerprint) or the episode
ended in an error (the model unreachable, a 500 after the retries): a resumed
run re-runs only what failed. Records are written atomically
(:mod:`lares_kit.atomic`), so a killed run leaves no half-written file --
only, perhaps, a temporary ``.<name>.json.*.tmp``, which the next run removes.

A saved record is data on disk, and is not trusted (:mod:`lares_kit.bench.records`):
one that cannot be used is run again, and said so in :attr:`BenchRun.notes`
and as a :class:`~lares_kit.errors.LaresWarning`.

Summaries and plots are :mod:`lares_kit.bench.report`.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..atomic import write_json_atomic
from ..episode import Episode
from ..errors import LaresWarning
from ..home import Home
from ..monitor import Monitor
from ..safety_audit import unsafe_actions
from .checks import Outcome, run_checks
from .events import play_events
from .ha_dataset import ha_oracle_steps
from .oracle import oracle_steps
from .records import (
    clean_temporary,
    load_episode,
    load_records,
    prepare_runs,
    read_record,
    record_problem,
    saved_record,
    warn_unusable,
)
from .scene import set_stage
from .tasks import Task, task_home

__all__ = [
    "DEFAULT_AGENTS",
    "RESULT_KEYS",
    "BenchRun",
    "Job",
    "load_episode",
    "load_records",
    "read_record",
    "record_problem",
    "run_bench",
    "run_job",
]

# The contract (DESIGN.md section 3): one result per episode, exactly these keys.
RESULT_KEYS = ("task", "world", "category", "agent", "model", "success", "steps", "oracle_steps", "llm_calls",
               "prompt_tokens", "completion_tokens", "seconds", "error")
DEFAULT_AGENTS = ("intent-action", "function-calling")


@dataclass(frozen=True)
class Job:
    """One episode to run."""

    task: Task
    agent: str
    model: str
    seed: int = 0
    knowledge: str = "latest"
    tool_set: str = "lares"  # the tools offered: Lares's own, or "ha" (Home Assistant's LLM API)

    def path(self, runs: Path) -> Path:
        """Where this episode's record is saved under the runs folder."""
        model = re.sub(r"[^A-Za-z0-9._-]+", "_", self.model)  # "org/model:tag" -> a safe folder name
        tools = "" if self.tool_set == "lares" else "-" + re.sub(r"[^A-Za-z0-9._-]+", "_", self.tool_set)
        return runs / self.agent / model / f"{self.task.id}-s{self.seed}-{self.knowledge}{tools}.json"


@dataclass
class BenchRun:
    """The records of a benchmark run, in job order, and where they were saved."""

    records: list[dict[str, Any]]  # one per episode: RESULT_KEYS + seed, knowledge, checks, episode
    runs: Path | None = None
    seconds: float = 0.0  # wall time of this run (resumed episodes cost nothing)
    resumed: int = 0  # how many records came from the runs folder
    summary: dict[str, Any] = field(default_factory=dict)
    # What the run had to work around in the runs folder, as sentences: records that could not be
    # used (and were run again), records that could not be saved, temporary files removed.
    notes: list[str] = field(default_factory=list)

    @property
    def results(self) -> list[dict[str, Any]]:
        """The contract's result objects: :data:`RESULT_KEYS`, and ``collateral`` for a Home Assistant task."""
        return [{k: r[k] for k in RESULT_KEYS} | ({"collateral": r["collateral"]} if "collateral" in r else {})
                for r in self.records]

    def to_json(self) -> dict[str, Any]:
        """``{"results": [...], "summary": {...}}`` as ``lares bench --json`` writes it."""
        return {"results": self.results, "summary": self.summary}

    def failures(self) -> list[dict[str, Any]]:
        """The records of failed episodes."""
        return [r for r in self.records if not r["success"]]

    def record(self, task: str, agent: str | None = None, seed: int = 0) -> dict[str, Any]:
        """The record of one task's episode (the first agent's, unless named)."""
        for r in self.records:
            if r["task"] == task and (agent is None or r["agent"] == agent) and r["seed"] == seed:
                return r
        raise KeyError(f"no episode of task {task!r}" + (f" by {agent!r}" if agent else ""))

    def episode(self, task: str, agent: str | None = None, seed: int = 0) -> Episode:
        """One task's Episode, ready for ``print()`` or a replay widget."""
        return Episode.from_dict(self.record(task, agent, seed)["episode"])


def run_job(job: Job, world: Home, client: Any, oracle: int) -> dict[str, Any]:
    """Run one episode and judge it; returns its record. Never raises for an agent's failure.

    Args:
        job: The episode to run: task, agent, model, seed and knowledge mode.
        world: The task's home as loaded; the episode runs in a fresh copy.
        client: The model's ``openai.OpenAI``-like client; None: ``make_client(job.model)``.
        oracle: The oracle's step count for the task, kept in the record to compare with.

    Examples:
        >>> from lares_kit.bench.tasks import load_suite
        >>> task = next(t for t in load_suite("lares-home") if t.id == "lh-kitchen-on")
        >>> from lares_kit import load_world
        >>> rec = run_job(Job(task, "intent-action", "offline"), load_world("lares-home"), None, oracle=2)
        >>> rec["success"], rec["steps"], rec["oracle_steps"], rec["error"]
        (True, 2, 2, None)
    """
    from ..agents import get_agent, run_agent

    task = job.task
    scene = set_stage(task, world, job.seed)
    record: dict[str, Any] = {"task": task.id, "world": task.world, "category": task.category, "agent": job.agent,
                              "model": job.model, "success": False, "steps": 0, "oracle_steps": oracle,
                              "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0,
                              "error": None, "seed": job.seed, "knowledge": job.knowledge,
                              "fingerprint": task.fingerprint(), "status": "", "checks": [], "unsafe": [],
                              "episode": None}
    if job.tool_set != "lares":
        record["tool_set"] = job.tool_set
    if task.expect.ha is not None:  # Home Assistant's judgement: the entities changed without being asked
        record["collateral"] = []
    start = time.perf_counter()
    # Persistent-command tasks: a poller the agent may register conditions with, played after the episode.
    monitor = Monitor(scene.home, isolation="inline") if task.events else None
    log = None
    try:
        # The bench's knowledge mode is for the designs that put the home in their prompt; one that takes
        # another (sage reads the home through its tools) runs with its own, and the record keeps the bench's.
        knowledge = job.knowledge if job.knowledge in get_agent(job.agent).knowledge else None
        # the keyword only for another dialect: run_agent takes it where the HA tool dialect is there
        dialect = {"tool_set": job.tool_set} if job.tool_set != "lares" else {}
        # The speaker (task.setup.user) is in scene.home.extra["user"] and scene.memory's user.
        episode = run_agent(task.instruction, scene.home, agent=job.agent, model=job.model, client=client,
                            knowledge=knowledge, user=scene.user, max_steps=task.max_steps,
                            memory=scene.memory, monitor=monitor, source=task.setup.source, **dialect)
        if monitor is not None:
            log = play_events(task.events, scene.home, monitor)
    except Exception as exc:  # noqa: BLE001 -- a broken agent or client must not stop the other episodes
        record.update(seconds=round(time.perf_counter() - start, 3), error=f"{type(exc).__name__}: {exc}")
        return record
    run = episode.to_run_json()
    outcome = Outcome.from_run(run, scene)
    if log is not None:
        outcome.events = log
        log.start = scene.start
        # the events' changes are the world's doing: "unchanged" starts from them
        outcome.start = {d: {**s, **log.changed_by_events.get(d, {})} for d, s in scene.start.items()}
        for firing in log.firings:  # the fired runs are part of the cost
            fired = firing["episode"]
            if fired is not None and hasattr(fired, "to_run_json"):
                extra = fired.to_run_json()
                run["llm_calls"] += extra["llm_calls"]
                for k in ("prompt_tokens", "completion_tokens"):
                    run["usage"][k] += extra["usage"][k]
    checks = run_checks(task.expect, outcome)
    # The audit reads the trace against the policy, apart from the gate that guarded the run (safety_audit).
    unsafe = unsafe_actions(episode, world, task.setup.source, task.setup.time_of_day)
    for firing in log.firings if log is not None else []:  # a fired action runs as its condition's source, then
        fired = firing["episode"]
        if fired is not None and hasattr(fired, "steps"):
            unsafe += unsafe_actions(fired, world, None, monitor.clock.start + timedelta(seconds=firing["seconds"]))
    record.update(success=all(c.passed for c in checks), steps=len(run["steps"]), llm_calls=run["llm_calls"],
                  prompt_tokens=run["usage"]["prompt_tokens"], completion_tokens=run["usage"]["completion_tokens"],
                  seconds=round(episode.seconds, 3), error=episode.error or None, status=episode.status,
                  checks=[{"kind": c.kind, "passed": c.passed, "reason": c.reason} for c in checks], unsafe=unsafe,
                  episode=episode.to_dict())
    if "collateral" in record:
        record["collateral"] = sorted({e for c in checks for e in c.collateral})
    return record


def _progress(total: int) -> Any:
    from tqdm.auto import tqdm

    # Off with LARES_PROGRESS=0; otherwise say nothing, so tqdm's own TQDM_DISABLE=1 still works (an explicit
    # disable=False would override it, and a notebook would save the bar's widget frozen at "bench: 0%").
    off = {"disable": True} if os.environ.get("LARES_PROGRESS") == "0" else {}
    return tqdm(total=total, desc="bench", unit="episode", file=sys.stderr, **off)


def _saved(job: Job, runs: Path | None, notes: list[str]) -> dict[str, Any] | None:
    # A finished record of the same task definition, or None (missing, stale, an error to retry, unusable).
    if runs is None:
        return None
    return saved_record(job.path(runs), job.task.fingerprint(), _identity(job), notes)


def _identity(job: Job) -> dict[str, Any]:
    # What a record of this job must say about itself
    tools = {"tool_set": job.tool_set} if job.tool_set != "lares" else {}
    return {"task": job.task.id, "agent": job.agent, "model": job.model, "seed": job.seed, "knowledge": job.knowledge,
            **tools}


def _world_key(task: Task) -> Any:
    # Tasks of the same world share one loaded home: a world file by its id, a world a task brings by its data
    return task.world if task.world_data is None else (task.world, id(task.world_data))


def run_bench(tasks: list[Task], agents: list[str] | tuple[str, ...] = DEFAULT_AGENTS,
              models: list[str] | None = None, seeds: int = 1, concurrency: int = 1, runs: str | Path | None = None,
              knowledge: str = "latest", clients: dict[str, Any] | None = None, tool_set: str = "lares") -> BenchRun:
    """Run every task with every agent, model and seed; return the records and their summary.

    Args:
        tasks: The tasks to run, e.g. from :func:`~lares_kit.bench.tasks.load_tasks`.
        agents: Agent names, as :func:`lares_kit.run_agent` takes them.
        models: Model names; None: ``$LARES_MODEL``, else the offline model.
        seeds: Episodes per task and agent, with seeds 0, 1, ...: a task with ``shuffle: true`` hides its items
            elsewhere for each.
        concurrency: How many episodes run at once, in threads (a remote model is worth several).
        runs: The folder for the per-episode records; episodes already saved there are not run again. None: keep them in
            memory only.
        knowledge: The knowledge mode for the designs that take it; one that does not (sage) runs with its own.
        clients: Model name -> ready client; a model not in it gets ``make_client(model)``, shared by the threads.
        tool_set: The tools the agents are offered: ``"lares"`` (Lares's own) or ``"ha"`` (Home Assistant's LLM API,
            as ``run_agent(..., tool_set=...)`` takes it); another than ``"lares"`` is kept in each record.

    Examples:
        >>> from lares_kit.bench.tasks import load_suite
        >>> tasks = [t for t in load_suite("lares-home") if t.category == "direct" and not t.held_out]
        >>> bench = run_bench(tasks, agents=["intent-action"], models=["offline"])
        >>> [(r["task"], r["success"]) for r in bench.results]
        [('lh-kitchen-on', True), ('lh-hallway-off', True), ('lh-office-please', True)]
    """
    from ..models import make_client, resolve_model
    from .report import summarize

    models = [resolve_model(m) for m in (models or [None])]
    clients = dict(clients or {})
    for model in models:
        if model not in clients:
            clients[model] = make_client(model)  # a remote model without a key fails here, before any work
    runs = Path(runs) if runs is not None else None
    jobs = [Job(task, agent, model, seed, knowledge, tool_set) for agent in agents for model in models
            for task in tasks for seed in range(seeds)]
    notes: list[str] = []
    if runs is not None:
        prepare_runs(runs)
        removed = clean_temporary({job.path(runs).parent for job in jobs})
        if removed:
            notes.append(f"removed {removed} temporary file(s) a stopped run left in {runs}")
    worlds = {_world_key(t): task_home(t) for t in {_world_key(t): t for t in tasks}.values()}
    # The oracle depends on the seed only when the task shuffles its items.
    oracles = {(t.id, s): (ha_oracle_steps if t.expect.ha is not None else oracle_steps)(t, worlds[_world_key(t)], s)
               for t in tasks for s in (range(seeds) if t.setup.shuffle else [0])}

    unusable: list[str] = []
    records: list[dict[str, Any] | None] = [_saved(job, runs, unusable) for job in jobs]
    warn_unusable(unusable)
    notes += unusable
    resumed = sum(r is not None for r in records)
    oracle_of = [oracles[(j.task.id, j.seed if j.task.setup.shuffle else 0)] for j in jobs]
    # Longest first, so no long search starts last and runs alone: the oracle's
    # count is the best estimate of an episode's length known before it runs.
    todo = sorted((i for i, r in enumerate(records) if r is None), key=lambda i: -oracle_of[i])
    start = time.perf_counter()
    with _progress(len(jobs)) as bar, ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        bar.update(resumed)
        futures = {pool.submit(run_job, jobs[i], worlds[_world_key(jobs[i].task)], clients[jobs[i].model],
                               oracle_of[i]): i for i in todo}
        for future in as_completed(futures):
            i = futures[future]
            records[i] = future.result()
            if runs is not None:  # atomically: a kill mid-write leaves the old file or none, never half
                try:
                    write_json_atomic(jobs[i].path(runs), records[i])
                except OSError as exc:  # a full disk, a folder where the file should be: keep the result in memory
                    note = (f"{jobs[i].path(runs)}: cannot be saved ({exc.strerror or type(exc).__name__}); "
                            "its result is in this run only")
                    notes.append(note)
                    warnings.warn(note, LaresWarning, stacklevel=2)
            bar.update(1)
    done = [r for r in records if r is not None]
    return BenchRun(done, runs, time.perf_counter() - start, resumed, summarize(done), notes)
