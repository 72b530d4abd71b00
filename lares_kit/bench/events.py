"""Events after an episode: the world moves on, and persistent commands must react -- once.

Taught in ``notebooks/13_persistent_commands.ipynb``. A persistence task
("turn on the dining light when I open the fridge") cannot be judged when
the agent halts: nothing should have happened yet. Its ``events:`` say what
happens next on the poller's simulated clock, e.g. the fridge opens 60 s
later; :func:`play_events` runs them against the episode's
:class:`~lares_kit.monitor.Monitor` and returns what the checks need:

* the device states right after the episode (before any event): the action
  must not have been done early;
* the events' own changes, which are the world's doing, not the agent's
  (the ``unchanged`` check starts from them);
* the firings, with their times, for the ``fires`` check (exactly N, none
  before the first event).

This module parses and plays events; it does not run agents (the monitor's
``on_fire`` does, set by the agent that registered the condition).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..home import Home

__all__ = ["Event", "EventLog", "parse_events", "play_events", "SETTLE_TICKS"]

SETTLE_TICKS = 3  # ticks after the last event, so a late edge still fires


@dataclass
class Event:
    """At ``after`` seconds on the poller's clock, these device states change (a person opens the fridge)."""

    after: float
    states: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class EventLog:
    """What happened after the episode: states before the events, the events' changes, the firings."""

    before: dict[str, dict[str, Any]]  # device id -> state when the episode ended
    changed_by_events: dict[str, dict[str, Any]]  # device id -> attributes the events set
    first_event: float | None  # clock seconds of the first event
    firings: list[dict[str, Any]] = field(default_factory=list)  # {"seconds", "condition", "instruction", "episode"}
    start: dict[str, dict[str, Any]] = field(default_factory=dict)  # device id -> state when the episode started


def parse_events(v: Any, raw: Any, key: str) -> list[Event]:
    """Events from a task file, validated with the task's :class:`~lares_kit.bench.validate.Validator`."""
    events = []
    last = -1.0
    for n, entry in enumerate(v.list(raw if raw is not None else [], key)):
        where = f"{key}[{n}]"
        entry = v.mapping(entry, where)
        for name in entry:
            v.expect(name in ("after", "states"), f"{where}.{name}", f"unknown key {name!r}; known keys: after, states")
        after = entry.get("after")
        v.expect(isinstance(after, (int, float)) and not isinstance(after, bool) and after > last, f"{where}.after",
                 "expected seconds after the episode, larger than the event before's")
        events.append(Event(float(after), v.device_states(entry.get("states", {}), f"{where}.states",
                                                         settable_only=False)))
        last = float(after)
    return events


def play_events(events: list[Event], home: Home, monitor: Any) -> EventLog:
    """Tick the monitor through the events (interval by interval), then settle; return the log.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.monitor import Action, Monitor
        >>> home = load_world("sage-home")
        >>> monitor = Monitor(home, isolation="inline")
        >>> _ = monitor.register('def opened():\\n    return get("fridge", "door") == "open"', Action("x"), "open")
        >>> log = play_events([Event(30.0, {"fridge": {"door": "open"}})], home, monitor)
        >>> [f["seconds"] for f in log.firings], log.first_event
        ([40.0], 30.0)
    """
    log = EventLog(copy.deepcopy(home.device_states()), {}, events[0].after if events else None)
    start = monitor.clock.seconds
    for event in events:
        while monitor.clock.seconds - start + monitor.interval <= event.after:
            _tick(monitor, log)
        if monitor.clock.seconds - start < event.after:
            _tick(monitor, log, event.after - (monitor.clock.seconds - start))
        for device_id, update in event.states.items():
            home.update_device(device_id, update)
            log.changed_by_events.setdefault(device_id, {}).update(copy.deepcopy(update))
    for _ in range(SETTLE_TICKS):
        _tick(monitor, log)
    for firing in log.firings:
        firing["seconds"] -= start
    return log


def _tick(monitor: Any, log: EventLog, seconds: float | None = None) -> None:
    for firing in monitor.tick(seconds):
        log.firings.append({"seconds": monitor.clock.seconds, "condition": firing.condition_id,
                            "instruction": firing.instruction, "episode": firing.result, "error": firing.error})
