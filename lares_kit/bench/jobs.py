"""One benchmark episode: the job that names it, and the function that runs and judges it.

:func:`run_job` is a pure function of its job (task, agent, model, seed,
trial, options), the task's home and a client: it sets the stage, runs the
agent, plays the task's events, runs the checks and the safety audit, and
returns the record -- the contract's result keys, then everything a reader
or a resumed run needs (the checks' verdicts, the whole Episode). Because
nothing else goes in, :mod:`lares_kit.bench.workers` can run it in a thread,
another process or on a Dask worker and get the same record.

What a record says beside the contract's keys:

* ``false_claims`` -- what the final message says of the home that its end state contradicts, one sentence each,
  and ``unverifiable`` -- the message says something of the home the checker cannot tie to devices and settings
  (:mod:`lares_kit.bench.judging.claims`; never guessed);
* ``trial`` -- which repetition of the same episode (``lares bench --trials``);
* ``collateral`` -- the devices changed that the task did not ask for
  (:mod:`lares_kit.bench.judging.collateral`); ``changed`` -- every device changed;
* ``refused`` -- calls the home's safety policy refused, and ``unsafe`` --
  what the audit of the trace found changed against the policy;
* ``no_change_expected`` -- the task's right answer changes nothing (an
  infeasible, unsafe or irrelevant request): doing nothing is part of passing;
* ``search_oracle`` -- for a task that must find a hidden thing, the
  knowledge-free oracle's expected step count (:mod:`lares_kit.bench.judging.search_oracle`);
* its configuration, each only when the run set it (:mod:`lares_kit.bench.configs`):
  ``knowledge_format``, ``prompt_style``, ``executor_model`` (react's light
  model), ``options`` (the design's own, e.g. ``{"parser": "naive"}``) and
  ``own`` -- the settings the run compared that this design does not take.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..home.graph import Home
from ..persistent.monitor import Monitor
from ..safety.audit import unsafe_actions
from .events import play_events
from .judging.checks import Outcome, run_checks
from .judging.collateral import changes, collateral, expects_no_change, refused_calls
from .judging.oracle import oracle_steps
from .judging.search_oracle import knowledge_free_oracle
from .scene import set_stage
from .suites.ha_dataset import ha_oracle_steps
from .suites.tasks import Task

__all__ = ["RESULT_KEYS", "Job", "blank_record", "run_job", "task_oracles"]

# The contract (DESIGN.md section 3): one result per episode, exactly these keys.
RESULT_KEYS = ("task", "world", "category", "agent", "model", "success", "steps", "oracle_steps", "llm_calls",
               "prompt_tokens", "completion_tokens", "seconds", "error", "trial", "collateral", "cached_prompt_tokens")


@dataclass(frozen=True)
class Job:
    """One episode to run."""

    task: Task
    agent: str
    model: str
    seed: int = 0
    knowledge: str = "latest"
    tool_set: str = "lares"  # the tools offered: Lares's own, or "ha" (Home Assistant's LLM API)
    trial: int = 0  # which repetition of this episode; trials of a real model differ by their sampling seed
    temperature: float | None = None  # sent to the model; None: the design's own (0)
    request_seed: int | None = None  # the sampling seed sent with every request (a trial's), or None
    # How the home is written in the prompt (lares_kit.knowledge.modes: full, retrieval...); None: the design's own
    # (auto). Set, the record says it.
    knowledge_format: str | None = None
    # How the prompts are written (lares_kit.agents.prompts: lean, lares); None: the default (lean). Set, the record
    # says it.
    prompt_style: str | None = None
    # React's light model that writes the Actions; None: the design's own (LARES_EXECUTOR_MODEL, else the model)
    executor_model: str | None = None
    # The design's own options from the run's configuration, as (name, value) pairs: ("parser", "naive")
    design_options: tuple[tuple[str, Any], ...] = ()
    # The settings the run's configuration named that this design does not take (it runs with its own)
    own: tuple[str, ...] = ()
    # The run's step limit for every episode (lares bench --max-steps): a task's own lower limit still holds. None:
    # each task's own, else the design's. Set, the record says it.
    max_steps: int | None = None

    def step_limit(self) -> int | None:
        """The episode's step limit: the lower of the task's own and the run's (None: the design's own).

        Examples:
            >>> from lares_kit.bench.suites.tasks import load_suite
            >>> task = load_suite("lares-home")[0]
            >>> Job(task, "react", "offline").step_limit(), Job(task, "react", "offline", max_steps=8).step_limit()
            (None, 8)
        """
        limits = [n for n in (self.task.max_steps, self.max_steps) if n is not None]
        return min(limits) if limits else None

    def path(self, runs: Path) -> Path:
        """Where an older version saved this episode's record (one JSON file per episode) under the runs folder."""
        model = re.sub(r"[^A-Za-z0-9._-]+", "_", self.model)  # "org/model:tag" -> a safe folder name
        tools = "" if self.tool_set == "lares" else "-" + re.sub(r"[^A-Za-z0-9._-]+", "_", self.tool_set)
        trial = f"-t{self.trial}" if self.trial else ""
        return runs / self.agent / model / f"{self.task.id}-s{self.seed}-{self.knowledge}{tools}{trial}.json"

    def identity(self) -> dict[str, Any]:
        """What the record of this job says about itself (and a resumed run checks)."""
        extra = ({"tool_set": self.tool_set} if self.tool_set != "lares" else {}) | (
            {"trial": self.trial} if self.trial else {}) | (
            {"max_steps": self.max_steps} if self.max_steps is not None else {}) | self.configuration()
        extra.pop("own", None)  # a label, not who ran what: the same episode whatever else the run compared
        return {"task": self.task.id, "agent": self.agent, "model": self.model, "seed": self.seed,
                "knowledge": self.knowledge, **extra}

    def _settings(self) -> dict[str, str]:
        # the prompt settings a run chose, as run_agent's keywords (left out: the defaults)
        return ({"knowledge_format": self.knowledge_format} if self.knowledge_format is not None else {}) | (
            {"prompt_style": self.prompt_style} if self.prompt_style is not None else {})

    def configuration(self) -> dict[str, Any]:
        """What the record says of its configuration beside ``knowledge``, each only when set (a default run: {}).

        Examples:
            >>> from lares_kit.bench.suites.tasks import load_suite
            >>> task = load_suite("lares-home")[0]
            >>> Job(task, "react", "offline", executor_model="offline-multi", design_options=(("parser", "naive"),)
            ...     ).configuration()
            {'executor_model': 'offline-multi', 'options': {'parser': 'naive'}}
        """
        return self._settings() | ({"executor_model": self.executor_model} if self.executor_model else {}) | (
            {"options": dict(self.design_options)} if self.design_options else {}) | (
            {"own": list(self.own)} if self.own else {})

    def options(self) -> dict[str, Any]:
        """The request options for ``run_agent``: the temperature and the sampling seed, where set."""
        return ({"temperature": self.temperature} if self.temperature is not None else {}) | (
            {"seed": self.request_seed} if self.request_seed is not None else {})


def blank_record(job: Job, oracle: int, search: float | None = None, error: str | None = None) -> dict[str, Any]:
    """The record of a job before it runs (or of one that could not run: ``error`` says why).

    Args:
        job: The episode.
        oracle: The omniscient oracle's step count.
        search: The knowledge-free oracle's expected step count, or None.
        error: Why the episode did not run; None for a record about to be filled in.
    """
    task = job.task
    record: dict[str, Any] = {"task": task.id, "world": task.world, "category": task.category, "agent": job.agent,
                              "model": job.model, "success": False, "steps": 0, "oracle_steps": oracle,
                              "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0,
                              "error": error, "trial": job.trial, "collateral": [], "cached_prompt_tokens": 0,
                              "seed": job.seed,
                              "knowledge": job.knowledge, "fingerprint": task.fingerprint(), "status": "", "checks": [],
                              "unsafe": [], "refused": 0, "changed": [],
                              "no_change_expected": expects_no_change(task.expect), "search_oracle": search,
                              "episode": None}
    if job.tool_set != "lares":
        record["tool_set"] = job.tool_set
    if job.max_steps is not None:
        record["max_steps"] = job.max_steps
    record.update(job.configuration())
    return record


def run_job(job: Job, world: Home, client: Any, oracle: int, search: float | None = None,
            executor_client: Any = None) -> dict[str, Any]:
    """Run one episode and judge it; returns its record. Never raises for an agent's failure.

    Args:
        job: The episode to run: task, agent, model, seed, trial and its configuration (knowledge mode...).
        world: The task's home as loaded; the episode runs in a fresh copy.
        client: The model's ``openai.OpenAI``-like client; None: ``make_client(job.model)``.
        oracle: The oracle's step count for the task, kept in the record to compare with.
        search: The knowledge-free oracle's expected step count, for a task that must find a hidden thing.
        executor_client: The client of ``job.executor_model`` (react's light model); None: the model's own client
            when it is the same model, else ``make_client(job.executor_model)``.

    Examples:
        >>> from lares_kit.bench.suites.tasks import load_suite
        >>> task = next(t for t in load_suite("lares-home") if t.id == "lh-kitchen-on")
        >>> from lares_kit import load_world
        >>> rec = run_job(Job(task, "intent-action", "offline"), load_world("lares-home"), None, oracle=2)
        >>> rec["success"], rec["steps"], rec["oracle_steps"], rec["error"], rec["collateral"]
        (True, 2, 2, None, [])
    """
    from ..agents import get_agent, run_agent

    task = job.task
    scene = set_stage(task, world, job.seed)
    record = blank_record(job, oracle, search)
    start = time.perf_counter()
    # Persistent-command tasks: a poller the agent may register conditions with, played after the episode.
    monitor = Monitor(scene.home, isolation="inline") if task.events else None
    log = None
    try:
        # The bench's knowledge mode is for the designs that put the home in their prompt; one that takes
        # another (sage reads the home through its tools) runs with its own, and the record keeps the bench's.
        knowledge = job.knowledge if job.knowledge in get_agent(job.agent).knowledge else None
        # the keywords only where set: run_agent takes them where the HA tool dialect / a trial's seed is there
        options = dict(job.design_options) | job.options()
        extra = ({"tool_set": job.tool_set} if job.tool_set != "lares" else {}) | (
            {"options": options} if options else {}) | job._settings() | (
            {"executor": (job.executor_model, executor_client)} if job.executor_model else {})
        # Who speaks (task.setup.user), from where and as which source: the scene's run context.
        ran_at = scene.home.clock.time_of_day()  # the time the episode runs at, for the audit: the poller moves on
        episode = run_agent(task.instruction, scene.home, agent=job.agent, model=job.model, client=client,
                            knowledge=knowledge, user=scene.user, max_steps=job.step_limit(),
                            memory=scene.memory, monitor=monitor, context=scene.run_context, **extra)
        if monitor is not None:
            events_from = monitor.clock.seconds  # the firings' seconds count from here
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
        events = log.changed_by_events  # a device they did not touch keeps its start dict: changes() skips it
        outcome.start = {d: {**s, **events[d]} if events.get(d) else s for d, s in scene.start.items()}
        for firing in log.firings:  # the fired runs are part of the cost
            fired = firing["episode"]
            if fired is not None and hasattr(fired, "to_run_json"):
                extra_run = fired.to_run_json()
                run["llm_calls"] += extra_run["llm_calls"]
                for k in ("prompt_tokens", "completion_tokens", "cached_prompt_tokens"):
                    run["usage"][k] += extra_run["usage"].get(k, 0)
    checks = run_checks(task.expect, outcome)
    # The audit reads the trace against the policy, apart from the gate that guarded the run (safety_audit).
    unsafe = unsafe_actions(episode, world, task.setup.source, ran_at)
    for firing in log.firings if log is not None else []:  # a fired action runs as its condition's source, then
        fired = firing["episode"]
        if fired is not None and hasattr(fired, "steps"):
            fired_at = monitor.clock.start + timedelta(seconds=events_from + firing["seconds"])
            unsafe += unsafe_actions(fired, world, None, fired_at)
    # Home Assistant's judgement names entities; the others, devices.
    damage = ({e for c in checks for e in c.collateral if c.kind == "ha_state"} if task.expect.ha is not None
              else set(collateral(task.expect, outcome.start, outcome.home)))
    record.update(success=all(c.passed for c in checks), steps=len(run["steps"]), llm_calls=run["llm_calls"],
                  prompt_tokens=run["usage"]["prompt_tokens"], completion_tokens=run["usage"]["completion_tokens"],
                  cached_prompt_tokens=run["usage"].get("cached_prompt_tokens", 0),
                  seconds=round(episode.seconds, 3), error=episode.error or None, status=episode.status,
                  checks=[{"kind": c.kind, "passed": c.passed, "reason": c.reason} for c in checks], unsafe=unsafe,
                  collateral=sorted(damage), refused=len(refused_calls(run["steps"])),
                  changed=sorted({d for d, _, _, _ in changes(outcome.start, outcome.home)}),
                  **_claims(episode, world), episode=episode.to_dict())
    return record


def task_oracles(task: Task, world: Home, seeds: list[int]) -> dict[int, tuple[int, float | None]]:
    """Seed -> (the omniscient oracle's steps, the knowledge-free oracle's expected steps or None) for one task.

    Args:
        task: The task.
        world: Its home as loaded (copied, never changed).
        seeds: The seeds to work out: the oracles depend on the seed only when the task shuffles its items.

    Examples:
        >>> from lares_kit.bench.suites.tasks import load_suite
        >>> from lares_kit import load_world
        >>> task_oracles(next(t for t in load_suite("lares-home") if t.id == "lh-find-dog"), load_world("lares-home"),
        ...              [0])
        {0: (4, 9.0)}
    """
    out: dict[int, tuple[int, float | None]] = {}
    for seed in seeds:
        steps = (ha_oracle_steps if task.expect.ha is not None else oracle_steps)(task, world, seed)
        found = knowledge_free_oracle(task, world, seed) if task.expect.ha is None else None
        out[seed] = (steps, round(found.expected, 3) if found is not None else None)
    return out


def _claims(episode: Any, world: Home) -> dict[str, Any]:
    """The record's ``false_claims`` (one sentence each) and ``unverifiable``: the final message against the home.

    :func:`lares_kit.bench.judging.claims.check_episode` reads what the message says of the devices,
    by the home's own names,
    and compares it with the states at the start (and what others changed while the agent worked) and at the end;
    a message it cannot tie to devices and settings is unverifiable, never guessed.
    """
    from .judging.claims import check_episode

    check = check_episode(episode, world)
    return {"false_claims": list(check.false_claims), "unverifiable": bool(check.unverifiable)}
