"""The hints ``lares run`` prints under a transcript: each one a command line that works.

``event_hint`` -- after a persistent command is registered, the ``--event`` or ``--at`` that makes its
condition turn True; ``step_limit_hint`` -- after an agent used up its steps, the ``--max-steps`` that gives it more.
``tests/unit/cli/test_cli_hints.py`` runs every hint it can print.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from ..home.clock import CLOCK_ID
from ..home.devices import attributes_of
from ..home.graph import Home

__all__ = ["event_hint", "step_limit_hint"]

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _word(value: Any) -> str:
    # true, 5, open: a value as it is typed in --event
    return value if isinstance(value, str) else json.dumps(value)


def event_hint(monitor: Any, home: Home) -> str:
    """What to add to ``lares run`` so the first registered condition turns True: ``--event "30s ..."`` or ``--at``.

    A condition on a device gets the ``--event`` that sets what it reads to a value its code compares with
    ("finished" in ``== "finished"``, 26 for ``> 25``), else the other choice or truth value than now ("VALUE" when
    nothing tells); a condition on the clock gets the ``--at`` time it waits for ("19:00", "saturday 09:00").

    Args:
        monitor: The poller the conditions were registered with.
        home: The home they read.
    """
    reads = [(c, d, a) for c in monitor.list() for d, a in c.reads
             if a and (d in home.devices or d == CLOCK_ID)]
    if not reads:
        return '--event "30s DEVICE ATTRIBUTE=VALUE"'
    condition, device_id, attribute = reads[0]
    code = getattr(condition, "code", "") or ""
    if device_id == CLOCK_ID and device_id not in home.devices:
        return _at_hint(code, monitor.clock)
    dev = home.devices[device_id]
    spec = attributes_of(dev.type, dev.capabilities).get(attribute)
    now = dev.state.get(attribute)
    if spec is not None and spec.kind == "choice":
        # the value the condition waits for ("finished" in == "finished"), else the other choice than now
        said = [v for v in re.findall(r"""["']([^"']+)["']""", code) if v in spec.choices and v != now]
        value = said[0] if said else next((c for c in spec.choices if c != now), "VALUE")
    elif isinstance(now, bool):
        wanted = re.search(r"==\s*(True|False)\b", code)
        value = _word(wanted.group(1) == "True" if wanted else not now)
        if wanted and value == _word(now):  # true already: it must turn the other way first, then back
            return (f'--event "30s {device_id} {attribute}={_word(not now)}" '
                    f'--event "60s {device_id} {attribute}={value}"')
    elif isinstance(now, (int, float)) and (m := re.search(
            rf"""get\(\s*["']{re.escape(device_id)}["']\s*,\s*["']{re.escape(attribute)}["']\s*\)\s*"""
            r"(>=|<=|>|<|==)\s*(-?\d+(?:\.\d+)?)", code)):
        bound = float(m.group(2))  # a value just across the bound: "> 25" -> 26
        crossed = bound + {">": 1, "<": -1}.get(m.group(1), 0)
        value = _word(int(crossed) if crossed.is_integer() else crossed)
    else:
        value = "VALUE"
    return f'--event "30s {device_id} {attribute}={value}"'


def _at_hint(code: str, clock: Any) -> str:
    # The first moment, from now, a clock condition waits for: its "HH:MM" on a day it allows, or its minute count.
    now = clock.now()
    if minutes := re.search(r"""get\(\s*["']clock["']\s*,\s*["']minutes["']\s*\)\s*>=?\s*(\d+)""", code):
        target = clock.start + timedelta(minutes=int(minutes.group(1)))
    elif at := re.search(r"""["'](\d\d):(\d\d)["']""", code):
        named = [d for d in _DAYS if re.search(rf"""["']{d}["']""", code)]
        allowed = [d for d in _DAYS if d not in named] if re.search(r"\bnot in\b|!=", code) else named or _DAYS
        target = now.replace(hour=int(at.group(1)), minute=int(at.group(2)), second=0, microsecond=0)
        while target <= now or f"{target:%A}".lower() not in allowed:
            target += timedelta(days=1)
    else:
        return "--at HH:MM"
    day = "" if target.date() == now.date() else f"{target:%A} ".lower()
    return f'--at "{day}{target:%H:%M}"' if day else f"--at {target:%H:%M}"


def step_limit_hint(episode: Any, given: int | None) -> str:
    """The line under a transcript that ended at its step limit: how to give the agent more steps ("" otherwise).

    Args:
        episode: The finished episode.
        given: The ``--max-steps`` the run was given, or None (the design's own).

    Examples:
        >>> from types import SimpleNamespace
        >>> step_limit_hint(SimpleNamespace(status="step_limit", max_steps=20), None)
        '\\n~ The agent used all 20 of its steps without calling halt: give it more with --max-steps 40.'
        >>> step_limit_hint(SimpleNamespace(status="done", max_steps=20), None)
        ''
    """
    if getattr(episode, "status", "") != "step_limit":
        return ""
    steps = getattr(episode, "max_steps", None) or given or 0
    more = max(2 * steps, 2)
    return f"\n~ The agent used all {steps} of its steps without calling halt: give it more with --max-steps {more}."
