"""Where episodes run: threads, worker processes, or a Dask cluster.

An episode is a pure function of its job -- task, agent, model name, seed,
trial, configuration -- and the task's home: :func:`run_episode` makes the model's
client inside the worker and returns the record. So any executor with
``concurrent.futures``' ``submit`` can run a benchmark:

* ``threads`` -- for a remote model, where an episode spends its time
  waiting for replies (one client shared by the threads);
* ``processes`` -- for a model that computes in this process (the offline
  model, the chaos model around it): the ``openai`` SDK's own work for each
  call holds Python's GIL, so threads add nothing, while processes use
  every core. On Linux a worker starts as a fork of this process, with the
  toolkit already imported (``$LARES_START_METHOD`` chooses another way);
* ``dask`` -- a Dask cluster: ``--scheduler tcp://host:8786`` for a lab's
  own, or a ``LocalCluster`` of ``concurrency`` worker processes on this
  machine when no address is given (the optional ``[dask]`` extra). Every
  worker needs lares_kit installed, the same version as the machine that
  submits. A scheduler must answer within :data:`SCHEDULER_TIMEOUT` seconds
  (``$LARES_DASK_TIMEOUT`` to change it), or the run stops with a sentence
  before any episode: Dask's own ``timeout`` bounds the connection but not
  the handshake after it, so something that accepts and never speaks would
  hold ``Client()`` for ever.

The chaos model gets a fresh client for each episode, seeded from the
episode (task, seed, trial and ``$LARES_CHAOS_SEED``): which replies break
then depends on the episode alone, not on which worker ran what first, so
every executor gives the same records.
"""

from __future__ import annotations

import asyncio
import hashlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from ..errors import LaresError, clip
from .jobs import run_job

__all__ = ["EXECUTORS", "SCHEDULER_TIMEOUT", "check_scheduler", "episode_seed", "in_process", "open_executor",
           "run_episode", "scheduler_timeout", "worker_client"]

EXECUTORS = ("threads", "processes", "dask")
SCHEDULER_TIMEOUT = 10.0  # seconds a Dask scheduler has to answer; $LARES_DASK_TIMEOUT overrides it
_CLIENTS: dict[str, Any] = {}  # model name -> client, one per worker process
_LOCK = threading.Lock()


def in_process(model: str) -> bool:
    """Whether a model computes its replies in this process (so processes, not threads, run it in parallel).

    The offline model's rules hold Python's GIL, and a local model is one
    llama.cpp instance that answers one request at a time: episodes in threads
    would wait for each other. In worker processes each has its own (a local
    model's weights are mapped from the same file, so they are in memory once).

    Args:
        model: A resolved model name.

    Examples:
        >>> in_process("offline"), in_process("chaos:offline@0.2"), in_process("local-qwen"), in_process("gpt-4o-mini")
        (True, True, True, False)
    """
    from ..models.servers import in_process as model_in_process  # the question the server profile asks too

    return model_in_process(model)


def episode_seed(task: str, seed: int, trial: int) -> int:
    """A seed for one episode's random choices, the same on every machine and in every process.

    Args:
        task: The task id.
        seed: The episode's seed (where a shuffling task hides its items).
        trial: The trial number, 0 for the first.

    Examples:
        >>> episode_seed("lh-find-dog", 0, 1) == episode_seed("lh-find-dog", 0, 1) != episode_seed("lh-find-dog", 0, 2)
        True
    """
    base = os.environ.get("LARES_CHAOS_SEED", "0")
    return int.from_bytes(hashlib.sha256(f"{base}/{task}/{seed}/{trial}".encode()).digest()[:4], "big")


def worker_client(model: str, task: str, seed: int, trial: int) -> Any:
    """The client an episode talks through: the process's shared one, or a chaos client seeded by the episode.

    Args:
        model: The resolved model name.
        task: The task id (seeds a chaos model).
        seed: The episode's seed.
        trial: The trial number.
    """
    from ..models import make_client
    from ..models.faults.chaos import chaos_client, parse_chaos_name

    chaos = parse_chaos_name(model)
    if chaos is not None:
        return chaos_client(chaos[0], rate=chaos[1], seed=episode_seed(task, seed, trial))
    with _LOCK:
        if model not in _CLIENTS:
            _CLIENTS[model] = make_client(model)
        return _CLIENTS[model]


def run_episode(job: Any, world: Any, oracle: int, search: Any = None) -> dict[str, Any]:
    """Run one job in whatever process this is; its record (see :func:`lares_kit.bench.jobs.run_job`).

    React's executor model, when the job names one, gets its client here too, as the model does.

    Args:
        job: The :class:`~lares_kit.bench.runner.Job`.
        world: The task's home as loaded; the episode runs in its own copy.
        oracle: The omniscient oracle's step count.
        search: The knowledge-free oracle's result for a search task, or None.
    """
    client = worker_client(job.model, job.task.id, job.seed, job.trial)
    light = (worker_client(job.executor_model, job.task.id, job.seed, job.trial)
             if job.executor_model not in (None, job.model) else None)
    return run_job(job, world, client, oracle, search, light)


def scheduler_timeout() -> float:
    """Seconds a Dask scheduler has to answer: ``$LARES_DASK_TIMEOUT``, else :data:`SCHEDULER_TIMEOUT`.

    Examples:
        >>> scheduler_timeout() == float(os.environ.get("LARES_DASK_TIMEOUT", SCHEDULER_TIMEOUT))
        True
    """
    given = os.environ.get("LARES_DASK_TIMEOUT", "").strip()
    if not given:
        return SCHEDULER_TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 3600:
        raise LaresError(f"LARES_DASK_TIMEOUT must be a number of seconds above 0 and at most 3600, not {given!r}")
    return seconds


def check_scheduler(address: str, timeout: float) -> None:
    """Reach the Dask scheduler at ``address`` and hear its handshake within ``timeout`` seconds, or a LaresError.

    Runs in a thread of its own with its own event loop, so it works where a loop is already running (a
    notebook); the whole attempt, handshake included, is bounded by ``asyncio.wait_for``.

    Args:
        address: The scheduler's address, ``tcp://host:8786``.
        timeout: Seconds it has to answer.

    Examples:
        >>> check_scheduler("foo://127.0.0.1:1", 1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: foo://127.0.0.1:1 is not a Dask scheduler's address (unknown address scheme ...
    """
    try:
        from distributed.comm import connect
    except ImportError:
        raise LaresError("--executor dask needs Dask: pip install 'lares-kit[dask]' (or dask[distributed])") from None
    shown = clip(address, 200)
    failed: list[BaseException] = []

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout), timeout)
        await comm.close()

    def attempt() -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(handshake())
        except BaseException as exc:  # noqa: BLE001 -- any failure is said below, in the caller's thread
            failed.append(exc)
        finally:
            loop.close()  # without waiting for a name lookup still running: the attempt is over

    thread = threading.Thread(target=attempt, name="lares-dask-check", daemon=True)
    thread.start()
    thread.join()  # bounded: wait_for ends the attempt after `timeout` seconds
    if not failed:
        return
    exc = failed[0]
    if isinstance(exc, ValueError):  # an unknown scheme (foo://), no port, a port that is not a number
        raise LaresError(f"{shown} is not a Dask scheduler's address ({clip(str(exc), 120)}); give one such as "
                         "tcp://host:8786") from None
    if isinstance(exc, asyncio.TimeoutError):
        why = f"nothing answered as a Dask scheduler within {timeout:g} s"
    elif isinstance(exc, OSError):
        why = clip(str(exc) or type(exc).__name__, 200)
    else:
        why = f"it did not answer as a Dask scheduler: {type(exc).__name__}"
    raise LaresError(f"cannot reach the Dask scheduler at {shown} ({why}); check the address and port, that the "
                     "scheduler is running (dask scheduler) and that nothing else listens there "
                     "(LARES_DASK_TIMEOUT gives it longer)") from None


def _dask_executor(workers: int, scheduler: str | None) -> tuple[Executor, Callable[[], None]]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise LaresError("--executor dask needs Dask: pip install 'lares-kit[dask]' (or dask[distributed])") from None
    if scheduler:
        timeout = scheduler_timeout()
        check_scheduler(scheduler, timeout)  # answers within the timeout, or a sentence
        try:
            client = Client(scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise LaresError(f"cannot reach the Dask scheduler at {clip(scheduler, 200)} ({clip(str(exc), 200)}); "
                             "check the address and that the scheduler is running") from None
        return client.get_executor(), client.close
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    client = Client(cluster)

    def close() -> None:
        client.close()
        cluster.close()

    return client.get_executor(), close


def _start_method() -> str:
    # "fork" where there is one (Linux, macOS is excluded by Python itself): a worker starts as a copy of this
    # process, with the toolkit already imported, and without running the caller's script again -- a learner's
    # script that calls run_bench at the top level, with no `if __name__ == "__main__":`, works as it is.
    # Elsewhere "spawn", which starts a fresh interpreter (and needs that guard, as all multiprocessing does).
    return os.environ.get("LARES_START_METHOD") or (
        "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn")


def open_executor(kind: str, workers: int, scheduler: str | None = None) -> tuple[Executor, Callable[[], None]]:
    """An executor of the named kind with ``workers`` workers, and the function that shuts it down.

    Args:
        kind: ``threads``, ``processes`` or ``dask`` (:data:`EXECUTORS`).
        workers: How many episodes run at once (a Dask cluster at ``scheduler`` has its own workers).
        scheduler: A Dask scheduler's address (``tcp://host:8786``); None: a LocalCluster on this machine.
    """
    if kind == "threads":
        pool: Executor = ThreadPoolExecutor(max_workers=workers)
    elif kind == "processes":
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(_start_method()))
    elif kind == "dask":
        return _dask_executor(workers, scheduler)
    else:
        raise LaresError(f"unknown executor {kind!r}; use one of: {', '.join(EXECUTORS)}")
    return pool, lambda: pool.shutdown(wait=True, cancel_futures=True)
