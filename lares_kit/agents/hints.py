"""The hints ``lares run`` prints under a transcript: each one a command line that works.

``event_hint`` -- after a persistent command is registered, the ``--event`` that makes its condition turn
True; ``step_limit_hint`` -- after an agent used up its steps, the ``--max-steps`` that gives it more.
``tests/test_cli_hints.py`` runs every hint it can print.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..devices import attributes_of
from ..home import Home

__all__ = ["event_hint", "step_limit_hint"]


def _word(value: Any) -> str:
    # true, 5, open: a value as it is typed in --event
    return value if isinstance(value, str) else json.dumps(value)


def event_hint(monitor: Any, home: Home) -> str:
    """``DEVICE ATTRIBUTE=VALUE`` for ``--event``: what the first registered condition reads, set so it turns True.

    The value is one the condition's code compares with ("finished" in ``== "finished"``, 26 for ``> 25``), else
    the other choice or the other truth value than now; "VALUE" when nothing tells.

    Args:
        monitor: The poller the conditions were registered with.
        home: The home they read.
    """
    reads = [(c, d, a) for c in monitor.list() for d, a in c.reads if a and d in home.devices]
    if not reads:
        return "DEVICE ATTRIBUTE=VALUE"
    condition, device_id, attribute = reads[0]
    dev = home.devices[device_id]
    spec = attributes_of(dev.type, dev.capabilities).get(attribute)
    now = dev.state.get(attribute)
    code = getattr(condition, "code", "") or ""
    if spec is not None and spec.kind == "choice":
        # the value the condition waits for ("finished" in == "finished"), else the other choice than now
        said = [v for v in re.findall(r"""["']([^"']+)["']""", code) if v in spec.choices and v != now]
        value = said[0] if said else next((c for c in spec.choices if c != now), "VALUE")
    elif isinstance(now, bool):
        value = _word(not now)
    elif isinstance(now, (int, float)) and (m := re.search(
            rf"""get\(\s*["']{re.escape(device_id)}["']\s*,\s*["']{re.escape(attribute)}["']\s*\)\s*"""
            r"(>=|<=|>|<|==)\s*(-?\d+(?:\.\d+)?)", code)):
        bound = float(m.group(2))  # a value just across the bound: "> 25" -> 26
        crossed = bound + {">": 1, "<": -1}.get(m.group(1), 0)
        value = _word(int(crossed) if crossed.is_integer() else crossed)
    else:
        value = "VALUE"
    return f"{device_id} {attribute}={value}"


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
