"""Running a benchmark: agents x models x tasks x seeds x trials, in parallel, resumable.

Taught in ``notebooks/08_evaluation.ipynb``; ``lares bench`` calls
:func:`run_bench`. Every episode is a pure function of its job
(:func:`lares_kit.bench.jobs.run_job`): it gets its own copy of its world,
loaded once per run, so episodes can run side by side in threads, worker
processes or on a Dask cluster (:mod:`lares_kit.bench.workers`). By default a
model that computes in this process (the offline model, the chaos model
around it) runs in worker processes when ``concurrency`` is above one, and a
remote model in threads, which wait for its replies side by side.

Beside agents and models, a run compares *configurations*
(:mod:`lares_kit.bench.configs`): every combination of the knowledge modes,
knowledge formats, prompt styles, react executor models and design options
it is given, each run with every agent -- once for a design that does not
take what they vary, which then runs with its own.

``trials`` repeats every episode: the offline model is deterministic, so its
trials are identical by construction; the chaos model breaks other replies in
each trial, and a real model is sent a different sampling ``seed`` per trial
(and the ``temperature`` given). The summary then holds pass^k
(:mod:`lares_kit.bench.stats`).

Each finished episode is appended to ``<runs>/episodes.jsonl`` at once, one
line and one flush (:mod:`lares_kit.bench.journal`): a record with the
contract's result keys, the check verdicts and the whole Episode
(``Episode.from_dict(record["episode"])`` replays it in a widget). Running again
with the same ``runs`` folder skips the episodes already there, unless their
task changed since (its fingerprint) or the episode ended in an error (the
model unreachable, a 500 after the retries): a resumed run re-runs only what
failed. A line that cannot be used is run again, and said so in
:attr:`BenchRun.notes` and as a :class:`~lares_kit.errors.LaresWarning`.
Folders of older runs, with one JSON file per episode, are read too.

Summaries and plots are :mod:`lares_kit.bench.report`.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..episode import Episode
from ..errors import LaresError, LaresWarning, brief
from .configs import RECORD_FIELDS, SETTINGS, check_configurations, design_configurations, settings_given
from .configs import configurations as combinations
from .jobs import RESULT_KEYS, Job, blank_record, run_job, task_oracles
from .journal import JOURNAL, Journal, identity_key, latest_records, load_records
from .records import (
    load_episode,
    prepare_runs,
    read_record,
    record_problem,
    saved_record,
    warn_unusable,
)
from .suites.tasks import Task, task_home
from .workers import EXECUTORS, in_process, open_executor, run_episode, worker_client

__all__ = [
    "DEFAULT_AGENTS",
    "MAX_CONCURRENCY",
    "MAX_EPISODES",
    "MAX_SEEDS",
    "MAX_TRIALS",
    "RESULT_KEYS",
    "BenchRun",
    "Job",
    "check_counts",
    "load_episode",
    "load_records",
    "read_record",
    "record_problem",
    "run_bench",
    "run_job",
]

DEFAULT_AGENTS = ("intent-action", "function-calling")
# The most a run may ask for. Every episode's record (its whole Episode) stays in memory until the run ends, and
# every worker is started at once: a mistyped --trials 1000000000 must be a sentence, not a MemoryError an hour in.
MAX_SEEDS = 1_000  # a shuffling task's hiding places; a handful show the spread
MAX_TRIALS = 100  # pass^k is read for k up to about 10
MAX_CONCURRENCY = 256  # worker processes or threads at once
MAX_STEP_LIMIT = 1_000  # --max-steps: far above any design's own (20)
MAX_EPISODES = 200_000  # tasks x agents x models x seeds x trials: ~2,000 tasks x 4 agents x 5 models x 5 trials


@dataclass
class BenchRun:
    """The records of a benchmark run, in job order, and where they were saved."""

    records: list[dict[str, Any]]  # one per episode: RESULT_KEYS + seed, knowledge, checks, episode
    runs: Path | None = None
    seconds: float = 0.0  # wall time of this run (resumed episodes cost nothing)
    resumed: int = 0  # how many records came from the runs folder
    summary: dict[str, Any] = field(default_factory=dict)
    # What the run had to work around in the runs folder, as sentences: records that could not be
    # used (and were run again), records that could not be saved.
    notes: list[str] = field(default_factory=list)
    executor: str = "threads"  # where the episodes ran: threads, processes or dask
    # the run's configurations (lares_kit.bench.configs), [{}] when it compared none
    configurations: list[dict[str, Any]] = field(default_factory=lambda: [{}])

    @property
    def results(self) -> list[dict[str, Any]]:
        """The contract's result objects: :data:`RESULT_KEYS` (a record of an older run: trial 0, no damage).

        A run that compared configurations adds, after them, what each record says of its own
        (:data:`~lares_kit.bench.configs.RECORD_FIELDS`: ``knowledge``, then ``executor_model``, ``options``...
        where set); a run given none has exactly the contract's keys.
        """
        defaults = {"trial": 0, "collateral": [], "cached_prompt_tokens": 0}
        named = RECORD_FIELDS if self.configurations != [{}] else ()
        return [{k: r[k] if k in r else defaults[k] for k in RESULT_KEYS} | {k: r[k] for k in named if k in r}
                for r in self.records]

    def to_json(self) -> dict[str, Any]:
        """``{"results": [...], "summary": {...}}`` as ``lares bench --json`` writes it."""
        return {"results": self.results, "summary": self.summary}

    def failures(self) -> list[dict[str, Any]]:
        """The records of failed episodes."""
        return [r for r in self.records if not r["success"]]

    def record(self, task: str, agent: str | None = None, seed: int = 0, trial: int = 0) -> dict[str, Any]:
        """The record of one task's episode (the first agent's, unless named)."""
        for r in self.records:
            if (r["task"] == task and (agent is None or r["agent"] == agent) and r["seed"] == seed
                    and r.get("trial", 0) == trial):
                return r
        raise KeyError(f"no episode of task {task!r}" + (f" by {agent!r}" if agent else ""))

    def episode(self, task: str, agent: str | None = None, seed: int = 0, trial: int = 0) -> Episode:
        """One task's Episode, ready for ``print()`` or a replay widget."""
        return Episode.from_dict(self.record(task, agent, seed, trial)["episode"])


def _progress(total: int) -> Any:
    from tqdm.auto import tqdm

    # Off with LARES_PROGRESS=0; otherwise say nothing, so tqdm's own TQDM_DISABLE=1 still works (an explicit
    # disable=False would override it, and a notebook would save the bar's widget frozen at "bench: 0%").
    off = {"disable": True} if os.environ.get("LARES_PROGRESS") == "0" else {}
    return tqdm(total=total, desc="bench", unit="episode", file=sys.stderr, **off)


def _world_key(task: Task) -> Any:
    # Tasks of the same world share one loaded home: a world file by its id, a world a task brings by its data
    return task.world if task.world_data is None else (task.world, id(task.world_data))


def _resume(jobs: list[Job], runs: Path | None, notes: list[str]) -> list[dict[str, Any] | None]:
    # The saved record of each job that a resumed run may keep, from the journal (or an older run's files).
    if runs is None:
        return [None] * len(jobs)
    journal = runs / JOURNAL
    lines = latest_records(journal, notes)
    saved: list[dict[str, Any] | None] = []
    for job in jobs:
        found = lines.get(identity_key(job.identity()))
        if found is None:  # an older run's file, if there is one (older runs had no executor models or options)
            legacy = job.path(runs)
            older = legacy.parent.is_dir() and not (job.executor_model or job.design_options)
            saved.append(_labelled(saved_record(legacy, job.task.fingerprint(), job.identity(), notes), job)
                         if older else None)
            continue
        number, record = found
        if record.get("fingerprint") != job.task.fingerprint() or record["error"]:
            saved.append(None)  # the task changed since, or the model failed: run it again, without a word
        else:
            saved.append(_labelled(record, job))
    notes[:] = [f"{n}; the episode is run again" if n.startswith(str(journal)) else n for n in notes]
    return saved


def _labelled(record: dict[str, Any] | None, job: Job) -> dict[str, Any] | None:
    # A saved record names the settings this run compared that its design does not take (an earlier run may have
    # compared others, or none): the same episode, labelled as this run's report groups it.
    if record is None or record.get("own") == (list(job.own) or None):
        return record
    record = {k: v for k, v in record.items() if k != "own"}
    if job.own:
        record["own"] = list(job.own)
    return record


def check_counts(seeds: int = 1, trials: int = 1, concurrency: int = 1, episodes: int = 0) -> None:
    """Refuse, in one sentence, a count of seeds, trials, workers or episodes outside the bounds above.

    Args:
        seeds: Seeds per task (``--seeds``).
        trials: Trials per episode (``--trials``).
        concurrency: Episodes at once (``--concurrency``).
        episodes: The episodes of the whole run (0: not known yet).

    Examples:
        >>> check_counts(seeds=3, trials=4)
        >>> check_counts(trials=1_000_000_000)
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: trials (--trials) must be a whole number from 1 to 100, not 1,000,000,000
    """
    for name, value, most in (("seeds", seeds, MAX_SEEDS), ("trials", trials, MAX_TRIALS),
                              ("concurrency", concurrency, MAX_CONCURRENCY)):
        if type(value) is not int or not 1 <= value <= most:
            shown = f"{value:,}" if type(value) is int else brief(value)
            raise LaresError(f"{name} (--{name}) must be a whole number from 1 to {most:,}, not {shown}")
    if episodes > MAX_EPISODES:
        raise LaresError(f"this run would be {episodes:,} episodes (tasks x agents x models x seeds x trials), more "
                         f"than the {MAX_EPISODES:,} one run may hold; run fewer tasks (--tasks, --limit) or fewer "
                         "seeds or trials")


def choose_executor(executor: str | None, concurrency: int, models: list[str], clients: dict[str, Any]) -> str:
    """The executor a run uses: the one asked for, else processes for in-process models, threads otherwise.

    Args:
        executor: ``threads``, ``processes``, ``dask``, or None to choose.
        concurrency: How many episodes run at once; one needs no workers (threads, a single one).
        models: The resolved model names.
        clients: The ready clients the caller gave: they live in this process, so they need threads.

    Examples:
        >>> choose_executor(None, 2, ["offline"], {}), choose_executor(None, 4, ["gpt-4o-mini"], {})
        ('processes', 'threads')
    """
    if executor is not None:
        if executor not in EXECUTORS:
            raise LaresError(f"unknown executor {executor!r}; use one of: {', '.join(EXECUTORS)}")
        if executor != "threads" and clients:
            raise LaresError(f"clients given in Python live in this process; the {executor} executor cannot use "
                             "them (use threads, or name the models instead)")
        return executor
    if concurrency > 1 and not clients and all(in_process(m) for m in models):
        return "processes"
    return "threads"


def run_bench(tasks: list[Task], agents: list[str] | tuple[str, ...] = DEFAULT_AGENTS,
              models: list[str] | None = None, seeds: int = 1, concurrency: int = 1, runs: str | Path | None = None,
              knowledge: str | Sequence[str] | None = None, clients: dict[str, Any] | None = None,
              tool_set: str = "lares", trials: int = 1, temperature: float | None = None, executor: str | None = None,
              scheduler: str | None = None, knowledge_format: str | Sequence[str] | None = None,
              prompt_style: str | Sequence[str] | None = None, executor_model: str | Sequence[str] | None = None,
              options: dict[str, Any] | None = None,
              configurations: list[dict[str, Any]] | None = None, max_steps: int | None = None) -> BenchRun:
    """Run every task with every agent, model, configuration, seed and trial; return the records and their summary.

    The settings below that take several values (a list or tuple) compare them side by side: every combination
    is a configuration (:mod:`lares_kit.bench.configs`), run with every agent. A design that does not take a
    setting runs with its own, once, and its records name it in ``own``; a value that no agent takes is a
    LaresError before any episode runs.

    Args:
        tasks: The tasks to run, e.g. from :func:`~lares_kit.bench.suites.tasks.load_tasks`.
        agents: Agent names, as :func:`lares_kit.run_agent` takes them.
        models: Model names; None: ``$LARES_MODEL``, else the offline model.
        seeds: Episodes per task and agent, with seeds 0, 1, ...: a task with ``shuffle: true`` hides its items
            elsewhere for each.
        concurrency: How many episodes run at once (worker processes or threads, see ``executor``).
        runs: The folder for the episode journal; episodes already saved there are not run again. None: keep them in
            memory only.
        knowledge: The knowledge mode, or several, for the designs that take it; one that does not (sage) runs with
            its own. None: ``latest`` (and sage's records say ``latest``, as they always have).
        clients: Model name -> ready client, or a function ``(model, task, seed, trial) -> client`` called for
            each episode (as :func:`~lares_kit.bench.workers.worker_client` is); a model not in it gets a client
            of its own in each worker.
        tool_set: The tools the agents are offered: ``"lares"`` (Lares's own) or ``"ha"`` (Home Assistant's LLM API,
            as ``run_agent(..., tool_set=...)`` takes it); another than ``"lares"`` is kept in each record.
        trials: How many times each episode runs (trial 0, 1, ...); with more than one, each trial of a real model is
            sent its own sampling seed.
        temperature: The temperature sent to the model; None: the designs' own (0).
        executor: ``threads``, ``processes`` or ``dask``; None: processes for an in-process model with
            ``concurrency`` above 1, threads otherwise (:func:`choose_executor`).
        scheduler: A Dask scheduler's address for ``executor="dask"``; None: a LocalCluster of ``concurrency``
            workers on this machine.
        knowledge_format: How the home is written into the prompt (``auto``, ``full``, ``outline``, ``retrieval``...),
            or several; None: the designs' own (``auto``). Set, each record says it.
        prompt_style: How the prompts are written, ``lean`` or ``lares``, or both; None: the default (``lean``). Set,
            each record says it.
        executor_model: React's light model that writes the Actions, or several; None: the design's own
            (``$LARES_EXECUTOR_MODEL``, else the model). Set, each react record says it (``executor_model``).
        options: The designs' own options, name -> a value or a list of values (``{"parser": ["one", "naive"]}``,
            ``{"parallel_tool_calls": True}``), each checked by the options dataclass of the designs that have it.
            Set, each record of a design that takes it says it (``options``).
        configurations: Configurations named one by one, each a mapping of the settings above (options by their
            own names): ``[{"knowledge": "none"}, {"executor_model": "offline-multi", "parser": "naive"}]``; each is
            combined with every combination of the settings given separately. None: only those.
        max_steps: A step limit for every episode (a task's own lower limit still holds); None: each task's own,
            else the design's. Set, each record says it, and a resumed run reuses only records of the same limit.

    Examples:
        >>> from lares_kit.bench.suites.tasks import load_suite
        >>> tasks = [t for t in load_suite("lares-home") if t.category == "direct" and not t.held_out]
        >>> bench = run_bench(tasks, agents=["intent-action"], models=["offline"])
        >>> [(r["task"], r["success"]) for r in bench.results]
        [('lh-kitchen-on', True), ('lh-hallway-off', True), ('lh-office-please', True)]
    """
    from ..models import make_client, resolve_model
    from .report import summarize

    configs = combinations(settings_given(knowledge, knowledge_format, prompt_style, executor_model, options),
                           configurations)
    # at most this many episodes (a design runs once for the settings it does not take)
    check_counts(seeds, trials, concurrency,
                 len(tasks) * len(agents) * len(configs) * len(models or [None]) * seeds * trials)
    check_configurations(configs, agents)  # a value no agent takes is a sentence now, before any work
    if max_steps is not None and (type(max_steps) is not int or not 1 <= max_steps <= MAX_STEP_LIMIT):
        raise LaresError(f"the step limit (--max-steps) must be a whole number from 1 to {MAX_STEP_LIMIT}, "
                         f"not {brief(max_steps)}")
    configs = [c | {"executor_model": resolve_model(c["executor_model"])} if "executor_model" in c else c
               for c in configs]
    models = [resolve_model(m) for m in (models or [None])]
    clients = dict(clients or {})
    executors = list(dict.fromkeys(c["executor_model"] for c in configs if "executor_model" in c))
    kind = choose_executor(executor, concurrency, list(dict.fromkeys(models + executors)), clients)
    for model in dict.fromkeys(models + executors):
        if model not in clients:
            make_client(model)  # a remote model without a key fails here, before any work
    runs = Path(runs) if runs is not None else None
    jobs = [Job(task, agent, model, seed, taken.get("knowledge", "latest"), tool_set, trial, temperature,
                trial if trials > 1 else None, taken.get("knowledge_format"), taken.get("prompt_style"),
                executor_model=taken.get("executor_model"), own=own, max_steps=max_steps,
                design_options=tuple((k, v) for k, v in taken.items() if k not in SETTINGS))
            for agent in agents for taken, own in design_configurations(configs, agent) for model in models
            for task in tasks for seed in range(seeds) for trial in range(trials)]
    notes: list[str] = []
    if runs is not None:
        prepare_runs(runs)
    worlds = {_world_key(t): task_home(t) for t in {_world_key(t): t for t in tasks}.values()}
    unusable: list[str] = []
    records: list[dict[str, Any] | None] = _resume(jobs, runs, unusable)
    warn_unusable(unusable)
    notes += unusable
    resumed = sum(r is not None for r in records)
    keys = [(j.task.id, j.seed if j.task.setup.shuffle else 0) for j in jobs]
    start = time.perf_counter()
    todo = [i for i, r in enumerate(records) if r is None]
    pool, close = open_executor(kind, concurrency, scheduler) if todo else (None, lambda: None)
    oracles: dict[tuple[str, int], tuple[int, float | None]] = {}
    try:
        # The oracles of the tasks to run, in the workers too: they are the run's one sequential part otherwise.
        pending = list({jobs[i].task.id: jobs[i].task for i in todo}.values())
        units = [(t, worlds[_world_key(t)], list(range(seeds)) if t.setup.shuffle else [0]) for t in pending]
        found = ([] if not units else map(task_oracles, *zip(*units)) if kind == "threads"
                 else list(pool.map(task_oracles, *zip(*units))))
        for task, per_seed in zip(pending, found):
            oracles.update({(task.id, seed): value for seed, value in per_seed.items()})
    except BaseException:
        close()
        raise
    # Longest first, so no long search starts last and runs alone: the oracle's
    # count is the best estimate of an episode's length known before it runs.
    todo.sort(key=lambda i: -oracles[keys[i]][0])
    journal = Journal(runs / JOURNAL) if runs is not None else None
    try:
        with _progress(len(jobs)) as bar:
            bar.update(resumed)
            futures = {}
            for i in todo:
                job, world = jobs[i], worlds[_world_key(jobs[i].task)]
                if kind == "threads":
                    client = _episode_client(clients, job.model, job)
                    light = (_episode_client(clients, job.executor_model, job)
                             if job.executor_model not in (None, job.model) else None)
                    futures[pool.submit(run_job, job, world, client, *oracles[keys[i]], light)] = i
                else:
                    futures[pool.submit(run_episode, job, world, *oracles[keys[i]])] = i
            for future in as_completed(futures):
                i = futures[future]
                try:
                    records[i] = future.result()
                except Exception as exc:  # noqa: BLE001 -- a worker that died (killed, out of memory, a lost node)
                    records[i] = blank_record(jobs[i], *oracles[keys[i]], error=f"the {kind} worker running it "
                                              f"failed ({type(exc).__name__}: {exc}); run again to retry it")
                if journal is not None:
                    try:
                        journal.append(records[i])
                    except OSError as exc:  # a full disk: keep the result in memory
                        note = (f"{journal.path}: a record cannot be saved ({exc.strerror or type(exc).__name__}); "
                                "its result is in this run only")
                        notes.append(note)
                        warnings.warn(note, LaresWarning, stacklevel=2)
                bar.update(1)
    finally:
        close()
        if journal is not None:
            journal.close()
    done = [r for r in records if r is not None]
    return BenchRun(done, runs, time.perf_counter() - start, resumed, summarize(done), notes, kind, configs)


def _episode_client(clients: dict[str, Any], model: str, job: Job) -> Any:
    # the caller's client for the model, else one for this episode: worker_client, or a function like it
    client = clients.get(model) or worker_client
    return client if hasattr(client, "chat") else client(model, job.task.id, job.seed, job.trial)
