"""The Sandbox the poller uses: conditions loaded by key and evaluated together, inline or in the jail.

With ``isolation="process"`` the conditions live in the worker process
(:mod:`lares_kit.persistent.sandbox.worker`) and this module is the host's end of its
pipe: it starts the worker, sends each tick's device states as one JSON line,
reads one answer per condition, and kills and restarts a worker that stops
answering. Standard library only.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import weakref
from dataclasses import asdict
from typing import Any

from . import worker as worker_script
from .checker import check_condition
from .guards import _Meter, _OutOfBudget
from .limits import CheckedCondition, ConditionError, Limits, Outcome
from .running import _check_states, _compile, _Loaded, _readable, _run_all, _skipped, _Unreadable

__all__ = ["Sandbox"]


class Sandbox:
    """Conditions loaded by key, evaluated together against one tick's device states.

    ``isolation`` is ``"process"`` (a persistent jailed worker, see
    :mod:`lares_kit.persistent.sandbox`), ``"inline"`` (this process, checker, guards and budgets) or
    ``"auto"`` (process where the OS has ``resource`` limits, else inline).
    ``jail`` lists the OS limits the worker really got.

    Examples:
        >>> with Sandbox() as box:
        ...     box.load("fridge_open", "def fridge_open():\\n    return get('fridge', 'door') == 'open'").name
        ...     box.evaluate({"fridge": {"door": "open"}})
        ...     box.evaluate({"fridge": {"door": "closed"}})["fridge_open"].value
        'fridge_open'
        {'fridge_open': Outcome(value=True, error=None, steps=15, skipped=False)}
        False
    """

    def __init__(self, limits: Limits | None = None, isolation: str = "auto",
                 worker_command: list[str] | None = None) -> None:
        self.limits = limits or Limits()
        if isolation == "auto":
            isolation = "process" if worker_script.resource is not None else "inline"
        if isolation not in ("process", "inline"):
            raise ValueError(f"unknown isolation {isolation!r}; use 'process', 'inline' or 'auto'")
        self.isolation = isolation
        self.restarts = 0  # how often the worker was killed and started again
        self._codes: dict[str, str] = {}  # key -> source, in load order; reloads a restarted worker
        self._inline: dict[str, _Loaded] = {}
        self._worker = _Worker(self.limits, worker_command) if isolation == "process" else None

    @property
    def jail(self) -> list[str]:
        return self._worker.jail if self._worker else []

    def load(self, key: str, code: str, checked: CheckedCondition | None = None) -> CheckedCondition:
        """Check ``code`` and keep it under ``key``; raise :class:`ConditionError` if it is refused.

        ``checked`` is what :func:`check_condition` already returned for this
        code, so the host does not check it twice (the worker still does: it
        trusts nothing it is sent).
        """
        if checked is None or checked.code != code:
            checked = check_condition(code, self.limits)
        if self._worker is None:
            self._inline[key] = _compile(checked, self.limits)
        else:
            try:
                self._worker.ensure(self._codes)
                reply = self._worker.request({"op": "load", "id": key, "code": code}, self._worker.load_seconds)
            except _Stopped as exc:
                self._restart()
                raise ConditionError(f"The condition could not be loaded: {exc}.") from None
            if "error" in reply:
                raise ConditionError(reply["error"])
        self._codes[key] = code
        return checked

    def drop(self, key: str) -> None:
        """Forget a condition (unknown keys are ignored)."""
        self._codes.pop(key, None)
        self._inline.pop(key, None)
        if self._worker is not None and self._worker.running:
            try:
                self._worker.request({"op": "drop", "id": key}, self._worker.load_seconds)
            except _Stopped:
                self._restart()

    def evaluate(self, states: dict[str, dict[str, Any]], keys: list[str] | None = None) -> dict[str, Outcome]:
        """Run conditions (all, or ``keys``, in that order) on ``{device_id: state}``; every key gets an Outcome.

        Each condition gets ``Limits.max_steps`` and ``time_seconds``; after
        ``tick_seconds`` the rest are skipped (``Outcome.skipped``).
        """
        _check_states(states)
        keys = list(self._codes) if keys is None else list(keys)
        unknown = [k for k in keys if k not in self._codes]
        if unknown:
            raise KeyError(f"no condition loaded as {unknown[0]!r}")
        if self._worker is None:
            return dict(_run_all(self._inline, keys, states, {}, self.limits))
        text, unreadable = _encode_states(states, self.limits)
        results: dict[str, Outcome] = {}
        pending = keys  # answered in order, so pending[0] is the one running
        started = time.perf_counter()
        while pending:
            if results and time.perf_counter() - started > self.limits.tick_seconds:
                results.update((key, _skipped(self.limits)) for key in pending)  # after a restart
                break
            try:
                self._worker.ensure(self._codes)
                self._worker.send_line(f'{{"op": "eval", "ids": {json.dumps(pending)}, "unreadable": '
                                       f'{json.dumps(unreadable)}, "states": {text}}}')
                while pending:
                    reply = self._worker.receive(self._worker.answer_seconds)
                    if not isinstance(reply, dict) or reply.get("id") != pending[0]:
                        raise _Stopped("the worker answered out of turn, so it was stopped and restarted")
                    results[pending[0]] = Outcome(reply.get("value"), reply.get("error"), reply.get("steps", 0),
                                                  bool(reply.get("skipped")))
                    pending = pending[1:]
            except _Stopped as exc:
                # Kill and restart the worker; the culprit gets the error, the rest run again.
                results[pending[0]] = Outcome(None, f"The sandbox stopped this condition: {exc}.")
                pending = pending[1:]
                self._restart()
        return results

    def _restart(self) -> None:
        self._worker.stop()
        self.restarts += 1

    def close(self) -> None:
        """Stop the worker process (a garbage-collected Sandbox stops it too)."""
        if self._worker is not None:
            self._worker.stop()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _encode_states(states: dict[str, Any], limits: Limits) -> tuple[str, list[list]]:
    """The states as JSON for the worker, and ``[device_id, attribute, why]`` for values JSON cannot carry.

    One ``json.dumps`` in the usual case. A value that cannot be encoded (a
    number of 4,300+ digits, a value that holds itself) is sent as None and
    named in the second list, so only the conditions that read it fail, with
    the same sentence as inline -- not the whole tick.
    """
    try:
        return json.dumps(states, default=str), []
    except (ValueError, TypeError, RecursionError):
        pass
    clean: dict[str, Any] = {}
    unreadable: list[list] = []
    for device_id, state in states.items():
        if not isinstance(state, dict):
            clean[str(device_id)] = state if _encodable(state) else None
            continue
        clean[str(device_id)] = fixed = {}
        for attribute, value in state.items():
            if not _encodable(value):
                unreadable.append([str(device_id), str(attribute), _why_unreadable(value, limits)])
                value = None
            fixed[str(attribute)] = value
    return json.dumps(clean, default=str), unreadable


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, default=str)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _why_unreadable(value: Any, limits: Limits) -> str:
    meter = _Meter()
    meter.start(limits.max_steps, None)  # a value that holds itself is infinitely large
    try:
        _readable(value, limits, meter.charge)
    except _Unreadable as exc:
        return str(exc)
    except _OutOfBudget:
        return f"it is larger than a condition may read in one tick ({limits.max_steps:,} steps)"
    return "it cannot be copied for a condition"


class _Stopped(Exception):
    # The worker did not answer in time or died; the message says why, for the model.
    pass


def _stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)  # its own session: the group is the worker and anything it started
        except (ProcessLookupError, PermissionError):
            pass
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class _Worker:
    """The host's end of the jailed worker: JSON lines over its stdin/stdout."""

    def __init__(self, limits: Limits, command: list[str] | None) -> None:
        self.limits = limits
        self.command = command
        self.proc: subprocess.Popen | None = None
        self.jail: list[str] = []
        self._buffer = b""
        self._finalizer: weakref.finalize | None = None
        # The worker stops a condition itself at time_seconds; the host waits
        # longer than that before it kills the worker (a backstop for a stuck one).
        self.answer_seconds = limits.time_seconds + max(1.0, limits.time_seconds)
        self.load_seconds = max(5.0, self.answer_seconds)  # a check of the largest condition takes well under 1 s

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self, codes: dict[str, str]) -> None:
        if self.running:
            return
        self.stop()
        command = self.command or [sys.executable, "-I", "-S", "-B", os.path.abspath(worker_script.__file__),
                                   "--worker", json.dumps(asdict(self.limits))]
        # No secrets reach the worker: API keys live in the environment.
        env = {k: os.environ[k] for k in ("PATH", "LD_LIBRARY_PATH", "SYSTEMROOT") if k in os.environ}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        self._finalizer = weakref.finalize(self, _stop_process, self.proc)
        self._buffer = b""
        hello = self.receive(max(10.0, self.answer_seconds))  # a cold interpreter start can be slow
        self.jail = list(hello.get("jail", []))
        for key, code in codes.items():
            self.request({"op": "load", "id": key, "code": code}, self.load_seconds)

    def send_line(self, text: str) -> None:
        try:
            self.proc.stdin.write(text.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Stopped(self._death()) from None

    def receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Stopped(f"the worker did not answer within {timeout:g} s, so it was stopped and restarted")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _Stopped(self._death())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            raise _Stopped("the worker answered something that is not JSON, so it was stopped and restarted") from None

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send_line(json.dumps(message))
        return self.receive(timeout)

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "the worker process stopped reading its input, so it was stopped and restarted"
        if code == -24:  # SIGXCPU: RLIMIT_CPU
            return f"the worker process ended: it used more than {self.limits.cpu_seconds} s of CPU in one tick"
        if code < 0:
            return f"the worker process ended on signal {-code}"
        return f"the worker process ended with exit code {code}"

    def stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _stop_process once
            self._finalizer = None
        self.proc = None

