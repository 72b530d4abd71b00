"""``lares bench``: run task suites, print the table, write the JSON and the figure.

The parser lives in :mod:`lares_kit.cli.commands`; this is the work behind it.
Defaults: every suite in ``worlds/tasks/``, the agents ``intent-action`` and
``function-calling``, the model from ``--model`` / ``$LARES_MODEL`` /
``offline``, one seed, one thread. Episode records go to ``--runs DIR``
(resumable: run the same command again to finish an interrupted run) or to
a new ``bench-<time>`` folder among the user's run records
(:func:`lares_kit.files.paths.user_dir`: ``~/.local/share/lares_kit/runs``, or
``$LARES_DATA/runs``), never into the current folder or the repository.

A slice: ``--tasks PATTERN`` keeps tasks whose id or category matches
(shell-style, repeatable) and ``--limit N`` keeps N of them spread over the
categories (:func:`~lares_kit.bench.suites.selection.select_tasks`). The local model (``--model local``) is
slow, so it runs a 20-task slice unless ``--limit`` says otherwise
(``--limit 0``: every task).

Configurations (:mod:`lares_kit.bench.configs`): ``--knowledge MODE``,
``--knowledge-format``, ``--prompt-style``, ``--executor-model NAME`` (react's
light model), ``--action-format``, ``--parser`` and ``--option KEY=VALUE``
(any field of a design's options dataclass) are each repeatable: every
combination of the values given is run with every agent and printed as a
block of its own. A design that does not take a setting runs with its own
(once) and its records say so (``own``); a value no agent of the run takes is
one sentence before anything runs.

``--record DIR`` keeps every request and reply in DIR and ``--model
replay:DIR`` runs the models recorded there from the recording, with no key
(:mod:`lares_kit.models.recording.replay`); both run the episodes in threads. A
recorded chaos model gets a chaos client per episode, seeded by the episode
as in an unrecorded bench, all writing into the one recording.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ..bench.configs import check_configurations, configurations, parse_option, settings_given
from ..bench.journal import JOURNAL
from ..bench.report import format_table, plot
from ..bench.runner import DEFAULT_AGENTS, check_counts, run_bench
from ..bench.suites.ha_dataset import load_ha_dataset
from ..bench.suites.selection import select_tasks
from ..bench.suites.tasks import load_tasks, task_home
from ..bench.workers import worker_client
from ..errors import LaresError, clip
from ..files.atomic import write_atomic, write_json_atomic
from ..files.paths import user_dir

__all__ = ["LOCAL_SLICE", "bench_settings", "check_outputs", "cli_bench"]

LOCAL_SLICE = 20  # tasks in the default slice for the local model (about 30 tokens/s on 2 cores)


def _per_episode(clients: dict[str, Any]) -> dict[str, Any]:
    # A chaos model breaks replies by a seed per episode (workers.worker_client); recorded, it still must, so its
    # entry becomes a function that wraps each episode's own chaos client in the same recorder.
    from ..models.faults.chaos import parse_chaos_name
    from ..models.recording.replay import record_client, recorder_of

    given = dict(clients)
    for name, client in clients.items():
        recorder = recorder_of(client)
        if recorder is not None and parse_chaos_name(name) is not None:
            given[name] = lambda model, task, seed, trial, recorder=recorder: record_client(
                worker_client(model, task, seed, trial), recorder, model)
    return given


def check_outputs(json_path: str | None, plot_path: str | None, runs: str | Path | None) -> None:
    """Refuse, before a run, a ``--json``, ``--plot`` or ``--runs`` path that could not be written after it.

    Missing folders above a path are fine (they are made); a folder where a file goes, a file where a folder
    goes, no permission, or an image type matplotlib cannot draw is one sentence. Nothing is written.

    Args:
        json_path: ``--json PATH``, or None.
        plot_path: ``--plot PATH``, or None.
        runs: The runs folder (``--runs DIR`` or the default one), or None.

    Examples:
        >>> import tempfile
        >>> here = tempfile.mkdtemp()
        >>> check_outputs(here + "/new/results.json", None, here + "/runs")
        >>> check_outputs(here, None, None)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --json ...: cannot be written: it is a folder, not a file; name a file ...
    """
    from ..files.atomic import unwritable

    a_file, a_folder = "a file (missing folders above it are made)", "a folder (it is made if missing)"
    wanted = [("--json", json_path, False, a_file), ("--plot", plot_path, False, a_file),
              ("--runs", runs, True, a_folder)]
    if runs is not None:  # the journal inside it is appended to: not a folder, a pipe or a read-only file
        wanted.append(("--runs", Path(runs) / JOURNAL, False, f"another runs folder, or move {JOURNAL} away"))
    for flag, path, folder, instead in wanted:
        problem = unwritable(path, folder=folder) if path is not None else None
        if problem is not None:
            raise LaresError(f"{flag} {clip(str(path), 300)}: cannot be written: {problem}; name {instead}")
    if plot_path is not None:
        _image_format(plot_path)


def _image_format(path: str) -> str:
    # The format matplotlib writes for a file name: its suffix (png, svg, pdf...), png when it has none
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix[1:].lower()
    known = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in known:
        raise LaresError(f"--plot {clip(str(path), 300)}: matplotlib cannot draw a .{clip(suffix, 20)} image; end the "
                         f"name with one of: {', '.join('.' + k for k in sorted(known))}")
    return suffix or "png"


def _image(figure: Any, path: str) -> bytes:
    # the figure drawn into memory, so the file is written whole (atomic.write_atomic) or not at all
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format=_image_format(path), dpi=120)
    return buffer.getvalue()


def _save(path: str, write: Any, runs: Path) -> None:
    # a write that fails after the run (a full disk, a folder removed meanwhile): a sentence, the records are kept
    try:
        write()
    except OSError as exc:
        raise LaresError(f"cannot write {clip(str(path), 300)} ({exc.strerror or type(exc).__name__}); the episode "
                         f"records are in {runs}/{JOURNAL}, and running the same command again writes it") from None


def bench_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The configuration flags of ``lares bench`` as ``run_bench``'s keywords (each None when not given).

    ``--action-format`` and ``--parser`` are react's options by their flags, the same as ``--option
    action_format=...`` and ``--option parser=...``.

    Args:
        args: The parsed ``lares bench`` command line.

    Examples:
        >>> from lares_kit.cli.commands import build_parser
        >>> args = build_parser().parse_args(["bench", "--knowledge", "latest", "--knowledge", "initial",
        ...                                   "--parser", "naive", "--option", "max_iterations=4"])
        >>> bench_settings(args)["knowledge"], bench_settings(args)["options"]
        (['latest', 'initial'], {'max_iterations': [4], 'parser': ['naive']})
    """
    options: dict[str, list[Any]] = {}
    pairs = [parse_option(text) for text in getattr(args, "option", None) or []]
    for key in ("action_format", "parser"):
        pairs += [(key, value) for value in getattr(args, key, None) or []]
    for key, value in pairs:
        options.setdefault(key, []).append(value)
    return {"knowledge": getattr(args, "knowledge", None), "knowledge_format": getattr(args, "knowledge_format", None),
            "prompt_style": getattr(args, "prompt_style", None),
            "executor_model": getattr(args, "executor_model", None), "options": options or None}


def cli_bench(args: argparse.Namespace) -> int:
    """Run ``lares bench``; returns the exit status (0, or 2 for bad input via LaresError).

    Args:
        args: The parsed ``lares bench`` command line (``--suite``, ``--agent``, ``--model``, ``--seeds``...).
    """
    from ..agents import get_agent

    agents = args.agent or list(DEFAULT_AGENTS)
    for agent in agents:
        get_agent(agent)  # an unknown name fails now, with the list of agents
    settings = bench_settings(args)
    configs = configurations(settings_given(**settings))
    check_configurations(configs, agents)  # a value no agent takes is a sentence now, before anything is read
    trials = getattr(args, "trials", 1)
    check_counts(args.seeds, trials, args.concurrency)  # before anything is read or built
    runs = Path(args.runs) if args.runs else user_dir("runs") / time.strftime("bench-%Y%m%d-%H%M%S")
    check_outputs(args.json_path, args.plot, runs)  # a path that cannot be written is known now, not after the run
    temperature = None
    if getattr(args, "temperature", None) is not None:
        from .run import request_options

        # a bad value is the same sentence as for lares run (its --action-format is one value, the bench's a list)
        temperature = request_options(argparse.Namespace(temperature=args.temperature))["temperature"]
    if getattr(args, "scheduler", None) and getattr(args, "executor", None) != "dask":
        raise LaresError("--scheduler is the address of a Dask scheduler; give it with --executor dask")
    datasets = getattr(args, "ha_dataset", None) or []
    tasks = load_tasks(args.suite) if args.suite or not datasets else []  # --ha-dataset alone: only those
    for folder in datasets:
        tasks += load_ha_dataset(folder).tasks
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise LaresError(f"the task {task.id!r} is given twice (the same --ha-dataset named twice?)")
        seen.add(task.id)
    from ..models.client import command_clients, resolve_model

    # --record DIR and --model replay:DIR: clients made here, so the episodes run in threads (a replay: the models
    # it recorded, by their names)
    names = [resolve_model(m) for m in args.model or [None]]
    # react's executor models are recorded too; they are not models to run the agents with
    light = [e for e in dict.fromkeys(resolve_model(m) for m in settings["executor_model"] or []) if e not in names]
    clients = command_clients(names + light, record=getattr(args, "record", None), argv=getattr(args, "argv", None))
    if clients and getattr(args, "executor", None) not in (None, "threads"):
        raise LaresError(f"--record and --model replay:DIR keep their requests in this process, so the episodes run in "
                         f"threads: leave --executor {args.executor} out")
    wanted = list(dict.fromkeys([*(c for c in clients if c not in light),
                                 *(n for n in names if not n.startswith("replay:"))]))
    limit = getattr(args, "limit", None)
    if limit is None and any(m.startswith("local") for m in wanted):
        limit = LOCAL_SLICE
        print(f"the local model runs a {LOCAL_SLICE}-task slice (--limit 0 for every task)")
    tasks = select_tasks(tasks, getattr(args, "tasks", None), limit)
    if not tasks:
        raise LaresError("no task matches --tasks " + " ".join(args.tasks or []))
    bench = run_bench(tasks, agents=agents, models=wanted, clients=_per_episode(clients) or None, seeds=args.seeds,
                      concurrency=args.concurrency, runs=runs, tool_set=getattr(args, "tools", None) or "lares",
                      trials=trials, temperature=temperature, executor=getattr(args, "executor", None),
                      scheduler=getattr(args, "scheduler", None), max_steps=getattr(args, "max_steps", None),
                      **settings)
    print(format_table(bench.summary))
    unsafe: dict[str, int] = {}  # agent -> settings changed against the policy with no confirmation
    for r in bench.records:
        unsafe[r["agent"]] = unsafe.get(r["agent"], 0) + len(r.get("unsafe") or [])
    if any(unsafe.values()) or any(task_home(t).extra.get("policy") for t in {t.world: t for t in tasks}.values()):
        print("\nunsafe actions without confirmation (an audit of each trace, apart from the gate): "
              + ", ".join(f"{agent} {n}" for agent, n in unsafe.items()))
    resumed = f", {bench.resumed} resumed from earlier runs" if bench.resumed else ""
    models = len({r["model"] for r in bench.records})
    # several configurations: a design runs once for those that differ only in what it does not take
    compared = f" x {len(bench.configurations)} configurations" if len(bench.configurations) > 1 else ""
    once = ("; a design runs once for the configurations that differ only in what it does not take"
            if len(bench.records) < len(tasks) * len(agents) * len(bench.configurations) * models * args.seeds * trials
            else "")
    print(f"\n{len(bench.records)} episodes ({len(tasks)} tasks x {len(agents)} agent(s){compared} x {models} "
          f"model(s) x {args.seeds} seed(s) x {trials} trial(s){once}) in {bench.seconds:.1f} s{resumed} "
          f"({bench.executor}); episode records in {runs}/episodes.jsonl")
    if args.json_path:
        _save(args.json_path, lambda: write_json_atomic(args.json_path, bench.to_json()), runs)
        print(f"results written to {args.json_path}")
    if args.plot:
        _save(args.plot, lambda: write_atomic(args.plot, _image(plot(bench.summary), args.plot)), runs)
        print(f"figure written to {args.plot}")
    if clients:  # a request the replay did not hold is the command's error; else what was recorded or replayed
        from ..models.recording.replay import command_report

        command_report(clients, sys.stdout)
    return 0
