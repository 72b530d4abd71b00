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
from .judging.checks import CheckResult, Outcome, run_checks
from .judging.oracle import oracle_plan, oracle_steps
from .report import format_table, plot, summarize
from .runner import RESULT_KEYS, BenchRun, run_bench
from .scene import Scene, set_stage
from .suites.generated import generate_tasks
from .suites.ha_dataset import HADataset, import_ha, load_ha_dataset
from .suites.tasks import CATEGORIES, Task, TaskError, load_suite, load_tasks, task_home

__all__ = ["CATEGORIES", "HADataset", "RESULT_KEYS", "BenchRun", "CheckResult", "Outcome", "Scene", "Task",
           "TaskError", "format_table", "generate_tasks", "import_ha", "load_ha_dataset", "load_suite", "load_tasks",
           "oracle_plan", "oracle_steps", "plot", "run_bench", "run_checks", "set_stage", "task_home", "summarize",
           "Event", "play_events", "collateral", "pass_hat_k", "wilson_interval", "select_tasks", "Expect", "Setup"]

# More public names, each imported from its module when first asked for
_LAZY = {
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
