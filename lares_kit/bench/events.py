"""Events after an episode: the world moves on, and persistent commands must react -- once.

Taught in ``notebooks/13_persistent_commands.ipynb``. A persistence task
("turn on the dining light when I open the fridge") cannot be judged when
the agent halts: nothing should have happened yet. Its ``events:`` say what
happens next on the poller's simulated clock, e.g. the fridge opens 60 s
later; :func:`play_events` runs them against the episode's
:class:`~lares_kit.persistent.monitor.Monitor` and returns what the checks need:

* the device states right after the episode (before any event): the action
  must not have been done early;
* the events' own changes, which are the world's doing, not the agent's
  (the ``unchanged`` check starts from them);
* the firings, with their times, for the ``fires`` check (exactly N, none
  before the first event).

Events come from a task file (:func:`parse_events`) or from text a person
types, ``lares run --event "30s fridge door=open"`` (:func:`parse_event_texts`).
This module parses and plays events; it does not run agents (the monitor's
``on_fire`` does, set by the agent that registered the condition).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..errors import LaresError, choices, did_you_mean
from ..home.devices import attributes_of, check_value
from ..home.graph import Home
from ..sentences.times import TimeError, minutes_of_day

__all__ = ["Event", "EventLog", "parse_events", "parse_event_texts", "parse_at_texts", "play_events", "SETTLE_TICKS",
           "EVENT_SYNTAX"]
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

SETTLE_TICKS = 3  # ticks after the last event, so a late edge still fires
EVENT_SYNTAX = "TIME DEVICE ATTRIBUTE=VALUE ..., e.g. '30s fridge door=open' (TIME: 30, 30s or 2m after the episode)"
LATEST_EVENT = 24 * 3600.0  # typed events play within a simulated day (8,640 ticks at 10 s), so a typo cannot hang
_TIME = re.compile(r"^(\d+(?:\.\d+)?)(s|m)?$")  # 30, 30s, 2m, 1.5m


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
    """Events from a task file, validated with the task's :class:`~lares_kit.bench.suites.validate.Validator`.

    Args:
        v: The Validator of the task file being read: it names the file in errors and knows the task's world.
        raw: The task's ``events`` value as YAML read it: a list of ``{after, states}`` mappings, or None.
        key: The key path of that value in the file, e.g. ``tasks[3].events``, for error messages.
    """
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


def parse_event_texts(texts: list[str], home: Home) -> list[Event]:
    """Events from typed text, checked against ``home``; a LaresError says what to fix in one sentence.

    Each text is ``TIME DEVICE ATTRIBUTE=VALUE ...`` (see :data:`EVENT_SYNTAX`).
    Values are checked like a tool's arguments; the attribute may be one the
    home only reads (a fridge's door sensor). Texts with the same time become
    one event; events are sorted by time.

    Args:
        texts: Events as typed, e.g. ``"30s fridge door=open"`` (``lares run --event``).
        home: The home the devices and attributes are checked against.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("sage-home")
        >>> parse_event_texts(["2m fridge door=closed", "30s fridge door=open"], home)  # doctest: +NORMALIZE_WHITESPACE
        [Event(after=30.0, states={'fridge': {'door': 'open'}}),
         Event(after=120.0, states={'fridge': {'door': 'closed'}})]
        >>> parse_event_texts(["30s fridge door=ajar"], home)
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: event '30s fridge door=ajar': door of fridge must be one of open, closed.
    """
    by_time: dict[float, dict[str, dict[str, Any]]] = {}
    for text in texts:
        after, device_id, update = _event_from_text(text, home)
        by_time.setdefault(after, {}).setdefault(device_id, {}).update(update)
    return [Event(after, states) for after, states in sorted(by_time.items())]


def parse_at_texts(texts: list[str], home: Home) -> list[Event]:
    """``lares run --at``: moments the clock runs on to after the episode, as events that change nothing.

    Each text is a time of day ("19:00", "7pm"), the next one from now, or a day and a time ("saturday 09:00"),
    within a week; a LaresError says what to fix in one sentence.

    Args:
        texts: The times as typed.
        home: The home whose clock says when now is.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("townhouse")  # 08:00 on a Monday
        >>> parse_at_texts(["19:00", "tuesday 7am"], home)
        [Event(after=39600.0, states={}), Event(after=82800.0, states={})]
        >>> parse_at_texts(["teatime"], home)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --at 'teatime': 'teatime' is not a time of day: ...
    """
    now = home.clock.now()
    out = []
    for text in texts:
        words = text.lower().split()
        day = words[0] if words and words[0] in _DAYS else None
        try:
            minute = minutes_of_day(" ".join(words[1:] if day else words))
        except TimeError as exc:
            raise LaresError(f"--at {text!r}: {exc}") from None
        target = now.replace(hour=minute // 60, minute=minute % 60, second=0, microsecond=0)
        while target <= now or (day is not None and f"{target:%A}".lower() != day):
            target += timedelta(days=1)
        out.append(Event((target - now).total_seconds(), {}))
    return sorted(out, key=lambda e: e.after)


def _event_from_text(text: str, home: Home) -> tuple[float, str, dict[str, Any]]:
    def fail(message: str) -> LaresError:
        return LaresError(f"event {text!r}: {message}")

    words = text.split()
    if len(words) < 3 or not all("=" in w for w in words[2:]):
        raise fail(f"write it as {EVENT_SYNTAX}.")
    when = _TIME.match(words[0].lower())
    if when is None:
        raise fail(f"{words[0]!r} is not a time; use seconds or minutes after the episode, like 30, 30s or 2m.")
    after = float(when.group(1)) * (60 if when.group(2) == "m" else 1)
    if after > LATEST_EVENT:
        raise fail(f"{words[0]!r} is too late; events play within a day after the episode (at most 1440m).")
    device_id = words[1]
    dev = home.devices.get(device_id)
    if dev is None:
        ids = list(home.devices)
        raise fail(f"there is no device {device_id!r} in {home.id}.{did_you_mean(device_id, ids)} "
                   f"{choices('Devices', device_id, ids)}")
    specs = attributes_of(dev.type, dev.capabilities)
    update: dict[str, Any] = {}
    for pair in words[2:]:
        attribute, _, raw = pair.partition("=")
        if attribute not in dev.state:
            raise fail(f"{device_id} has no {attribute!r}; it has: {', '.join(dev.state) or 'nothing'}.")
        if attribute in specs:
            value, allowed = check_value(specs[attribute], raw)
            if allowed is not None:
                raise fail(f"{attribute} of {device_id} must be {allowed}.")
        else:  # an attribute with no declared kind: JSON words (true, 5) or plain text
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
        update[attribute] = value
    return after, device_id, update


def play_events(events: list[Event], home: Home, monitor: Any) -> EventLog:
    """Tick the monitor through the events (interval by interval), then settle; return the log.

    Args:
        events: What happens after the episode, in time order: device states set at clock seconds.
        home: The home the events change (the monitor's own).
        monitor: The :class:`~lares_kit.persistent.monitor.Monitor` whose conditions are checked as the clock runs.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.persistent.monitor import Action, Monitor
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
