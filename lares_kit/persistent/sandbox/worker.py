"""Layer 3 of the sandbox: the jailed worker process that runs the conditions, away from the host.

:class:`~lares_kit.persistent.sandbox.Sandbox` starts this file as a script,
``python -I -S -B .../sandbox/worker.py --worker LIMITS``: isolated mode, no
site-packages, no environment variables, so it can import only the standard
library and its sibling modules (standard library only too; lares_kit's
``__init__`` is never run). It lowers its own OS limits for good
(:func:`_jail`), then answers JSON lines on stdin/stdout: ``load`` (checked
again: the worker trusts nothing it is sent), ``drop`` and ``eval``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import TYPE_CHECKING, Any

try:
    import resource
except ImportError:  # Windows: no rlimits, so "auto" isolation means inline
    resource = None

if TYPE_CHECKING:
    from .limits import Limits

__all__ = ["main"]

_PACKAGE = "lares_sandbox"  # the name this folder gets in the worker process (see _as_package)


def _jail(limits: Limits) -> list[str]:
    """Lower this process's OS limits for good; return the ones that took effect."""
    applied = []
    for name, value in (("RLIMIT_AS", limits.memory_bytes), ("RLIMIT_FSIZE", 0), ("RLIMIT_CORE", 0),
                        ("RLIMIT_NPROC", 0), ("RLIMIT_NOFILE", 3)):  # NOFILE 3: stdin/out/err, nothing new
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            resource.setrlimit(which, (value, value))
            applied.append(f"{name}={value}")
        except (ValueError, OSError):
            pass  # e.g. macOS refuses RLIMIT_AS; the checker and guards still hold
    return applied


def _cpu_budget(limits: Limits) -> None:
    # RLIMIT_CPU counts the worker's whole life, so raise the soft limit to
    # "used so far + budget" before each tick; SIGXCPU ends the worker past it.
    # cpu_seconds is above tick_seconds + time_seconds, so the step meter and
    # the tick's budget always stop things first.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + limits.cpu_seconds
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def main(limits_json: str) -> None:
    """Jail this process, then answer the host's JSON lines until it closes the pipe.

    Args:
        limits_json: The host's :class:`~lares_kit.persistent.sandbox.limits.Limits` as JSON,
            from the worker's command line.
    """
    # Imported here, not at the top: run as a script, the package exists only once _as_package ran.
    from .checker import check_condition
    from .limits import ConditionError, Limits
    from .running import _compile, _Loaded, _run_all

    limits = Limits(**json.loads(limits_json))
    jail = _jail(limits)
    out = sys.stdout.buffer

    def reply(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    reply({"jail": jail})
    loaded: dict[str, _Loaded] = {}
    for line in sys.stdin.buffer:  # ends when the host closes the pipe
        message = json.loads(line)
        op = message["op"]
        if op == "load":
            try:  # checked again here: the worker trusts nothing it is sent
                loaded[message["id"]] = _compile(check_condition(message["code"], limits), limits)
                reply({"ok": True})
            except ConditionError as exc:
                reply({"error": str(exc)})
        elif op == "drop":
            loaded.pop(message["id"], None)
            reply({"ok": True})
        elif op == "eval":
            _cpu_budget(limits)
            unreadable = {(device, attribute): why for device, attribute, why in message["unreadable"]}
            for key, outcome in _run_all(loaded, message["ids"], message["states"], unreadable, limits):
                reply({"id": key, "value": outcome.value, "error": outcome.error, "steps": outcome.steps,
                       "skipped": outcome.skipped})


def _as_package() -> None:
    # Run by file path, this script has no package, so main's relative imports would fail. Its folder
    # becomes one (PEP 366), named lares_sandbox: as lares_kit.persistent.sandbox it would first run
    # lares_kit/__init__.py, which imports more than the standard library. The folder's own __init__
    # is not run either: main imports only the modules it needs.
    global __package__
    folder = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(_PACKAGE, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    sys.modules[_PACKAGE] = importlib.util.module_from_spec(spec)
    __package__ = _PACKAGE


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    _as_package()
    main(sys.argv[2])
