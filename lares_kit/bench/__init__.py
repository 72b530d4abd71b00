"""The benchmark: task suites with automatic checks, oracles, a parallel runner, reports.

Taught in ``notebooks/08_evaluation.ipynb``; ``lares bench`` is the command.
One concept per module:

* :mod:`~lares_kit.bench.suites.tasks` -- the task files in ``worlds/tasks/``, validated;
* :mod:`~lares_kit.bench.scene` -- a fresh home, the set-up and the simulated user for one episode;
* :mod:`~lares_kit.bench.judging.checks` -- every kind of check, with a reason sentence;
* :mod:`~lares_kit.bench.judging.collateral` -- what an episode changed that its task did not ask for;
* :mod:`~lares_kit.bench.judging.oracle` -- the fewest tool calls that solve a task, by search;
* :mod:`~lares_kit.bench.judging.search_oracle` -- the fewest steps on average when the agent does not know
  where things are;
* :mod:`~lares_kit.bench.suites.generated` -- tasks for a generated home, each solved by the oracle first;
* :mod:`~lares_kit.bench.jobs` -- one episode, run and judged: a pure function of its job;
* :mod:`~lares_kit.bench.workers` -- where episodes run: threads, worker processes, a Dask cluster;
* :mod:`~lares_kit.bench.journal` -- one JSON line per finished episode, resumable;
* :mod:`~lares_kit.bench.runner` -- agents x models x tasks x seeds x trials;
* :mod:`~lares_kit.bench.stats` -- Wilson intervals and pass^k;
* :mod:`~lares_kit.bench.report` -- the summary table and the figure.

>>> from lares_kit.bench import load_tasks
>>> len(load_tasks()) >= 60
True
"""

from ..lazy_exports import lazy_exports

__all__ = ["CATEGORIES", "HADataset", "RESULT_KEYS", "BenchRun", "CheckResult", "Outcome", "Scene", "Task",
           "TaskError", "format_table", "generate_tasks", "import_ha", "load_ha_dataset", "load_suite", "load_tasks",
           "oracle_plan", "oracle_steps", "plot", "run_bench", "run_checks", "set_stage", "task_home", "summarize",
           "Event", "play_events", "collateral", "pass_hat_k", "wilson_interval", "select_tasks", "Expect", "Setup"]

# Public names, each imported from its module when first asked for (lares_kit.lazy_exports)
_LAZY = {
    "CheckResult": "lares_kit.bench.judging.checks",
    "Outcome": "lares_kit.bench.judging.checks",
    "run_checks": "lares_kit.bench.judging.checks",
    "oracle_plan": "lares_kit.bench.judging.oracle",
    "oracle_steps": "lares_kit.bench.judging.oracle",
    "format_table": "lares_kit.bench.report",
    "plot": "lares_kit.bench.report",
    "summarize": "lares_kit.bench.report",
    "RESULT_KEYS": "lares_kit.bench.runner",
    "BenchRun": "lares_kit.bench.runner",
    "run_bench": "lares_kit.bench.runner",
    "Scene": "lares_kit.bench.scene",
    "set_stage": "lares_kit.bench.scene",
    "generate_tasks": "lares_kit.bench.suites.generated",
    "HADataset": "lares_kit.bench.suites.ha_dataset",
    "import_ha": "lares_kit.bench.suites.ha_dataset",
    "load_ha_dataset": "lares_kit.bench.suites.ha_dataset",
    "CATEGORIES": "lares_kit.bench.suites.tasks",
    "Task": "lares_kit.bench.suites.tasks",
    "TaskError": "lares_kit.bench.suites.tasks",
    "load_suite": "lares_kit.bench.suites.tasks",
    "load_tasks": "lares_kit.bench.suites.tasks",
    "task_home": "lares_kit.bench.suites.tasks",
    "Event": "lares_kit.bench.events",
    "play_events": "lares_kit.bench.events",
    "collateral": "lares_kit.bench.judging.collateral",
    "pass_hat_k": "lares_kit.bench.stats",
    "wilson_interval": "lares_kit.bench.stats",
    "select_tasks": "lares_kit.bench.suites.selection",
    "Expect": "lares_kit.bench.suites.tasks",
    "Setup": "lares_kit.bench.suites.tasks",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
