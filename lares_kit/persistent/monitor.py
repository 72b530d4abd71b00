"""Persistent commands: conditions checked on a simulated clock, actions fired on the rising edge.

Taught in ``notebooks/13_persistent_commands.ipynb``. SAGE handles "turn on
the dining light when I open the fridge" in two steps: a tool writes the
condition as a small Python function and tests it, then a poller checks it
every 10 seconds and runs the stored command again *when the value turns from
False to True* -- not on every tick while the fridge stays open.

* The poller's time is the home's own clock (``home.clock``, a simulated
  :class:`~lares_kit.home.clock.Clock`): it moves only when told to, so a
  notebook can replay an afternoon in a millisecond and a test is exact.
  A condition reads it as the device ``clock`` ("every evening at 7":
  ``get("clock", "time") == "19:00"``; :data:`~lares_kit.home.clock.CLOCK_ATTRIBUTES`).
* :class:`Monitor` is the poller over a :class:`~lares_kit.home.graph.Home`:
  ``register`` checks and test-runs a condition, ``notify`` attaches an
  :class:`Action`, ``tick`` advances the clock and evaluates every condition on
  a copy of the device states, fires actions on rising edges, and records a
  ``timeline`` of :class:`Check` rows for a plot. A condition that fails is
  reported in ``notices`` and disabled after ``max_errors`` failures in a row;
  the poller never crashes. Each condition has a step and a time budget, and
  each tick a time budget (:class:`~lares_kit.persistent.sandbox.Limits`): a condition
  past its own budget fails like any other, while the ones a tick had no time
  left for are not blamed -- they go first at the next tick.
* ``create_condition``, ``notify_on_condition``, ``list_conditions`` and
  ``cancel_condition`` are the agent-facing tools (the Toolbox injects
  ``monitor`` by name, like ``home``).

What a condition may contain, and how it is kept from harming anything, is
:mod:`lares_kit.persistent.sandbox`. This module does not run agents: an :class:`Action`
carries an instruction and a callback the caller supplies (the SAGE agent
plugs its own loop in there).

**Who asked, and when it runs.** A condition keeps the ``source`` of the
instruction that registered it (the Toolbox passes its own to the tools), and
each :class:`Firing` carries it with the time on the poller's clock: whoever
runs the action judges it as *that* source at *that* time
(:mod:`lares_kit.safety.gate`), never as whoever happened to set the poller up. A
condition registered with no source is untrusted. The home's clock says the
time: it starts at the home's time of day (a task's ``setup.time_of_day``),
else 08:00, and a fired run's safety gate reads it as the firing left it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

from ..errors import ToolError, choices, did_you_mean
from ..home.clock import CLOCK_ATTRIBUTES, CLOCK_ID, Clock
from ..home.graph import Home
from .sandbox import ConditionError, Limits, Sandbox, check_condition

__all__ = ["Action", "Firing", "Condition", "Check", "Monitor", "create_condition",
           "notify_on_condition", "list_conditions", "cancel_condition", "PERSISTENT_TOOLS"]


@dataclass
class Firing:
    """One action fired by a rising edge; ``result``/``error`` are what the callback returned or raised."""

    time: datetime
    condition_id: str
    instruction: str
    description: str
    owner: str | None
    result: Any = None
    error: str | None = None
    source: str | None = None  # who gave the instruction that registered the condition: the action runs as them


@dataclass
class Action:
    """What to do when a condition turns True: an instruction for the agent, and who carries it out.

    ``callback(firing)`` runs the instruction (e.g. the SAGE agent); None uses
    the Monitor's ``on_fire``, or only records the firing. ``once`` cancels
    the condition after it fires ("the *next* time someone opens the fridge").
    """

    instruction: str
    callback: Callable[[Firing], Any] | None = None
    once: bool = False


@dataclass
class Condition:
    """A registered condition and its poller state."""

    id: str
    code: str
    description: str
    owner: str | None
    created: datetime
    reads: list[tuple[str, str | None]]  # (device_id, attribute or None) it reads, from its code
    action: Action | None = None
    enabled: bool = True
    value: bool = False  # the last value it returned; the edge is detected against it
    errors: int = 0  # failures in a row
    last_error: str | None = None
    fired: int = 0
    source: str | None = None  # who registered it ("owner", "letterbox"...; None: unknown, so untrusted)


@dataclass
class Check:
    """One row of the timeline: a condition's value at a tick, and whether it fired."""

    time: datetime
    seconds: float  # clock seconds since start, for plots
    condition_id: str
    value: bool | None  # None: it failed (see error), or was skipped
    fired: bool = False
    error: str | None = None
    steps: int = 0  # the work it did (Limits.max_steps is the budget): the one that used the time is named here
    skipped: bool = False  # the tick's time ran out before its turn: not a failure, it goes first next tick


class Monitor:
    """The poller: conditions over one Home, checked on every :meth:`tick` of the home's simulated clock.

    ``interval`` is the simulated seconds per tick (SAGE polls every 10 s).
    ``on_fire(firing)`` runs actions that have no callback of their own.
    ``isolation`` and ``limits`` go to the :class:`~lares_kit.persistent.sandbox.Sandbox`.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> monitor = Monitor(home, isolation="inline")
        >>> monitor.register("def kitchen_lit():\\n    return get('kitchen-light', 'on')",
        ...                  Action("open the blinds"), "the kitchen light is on")
        'kitchen_lit'
        >>> monitor.tick()
        []
        >>> home.update_device("kitchen-light", {"on": True})
        >>> [f.instruction for f in monitor.tick()]
        ['open the blinds']
        >>> monitor.tick()  # still on: no new edge
        []
        >>> [(c.seconds, c.value, c.fired) for c in monitor.timeline]
        [(0.0, False, False), (10.0, False, False), (20.0, True, True), (30.0, True, False)]
    """

    def __init__(self, home: Home, *, interval: float = 10.0, on_fire: Callable[[Firing], Any] | None = None,
                 max_errors: int = 3, isolation: str = "auto", limits: Limits | None = None) -> None:
        self.home = home
        self.interval = interval
        self.on_fire = on_fire
        self.max_errors = max_errors
        self.sandbox = Sandbox(limits, isolation)
        self.conditions: dict[str, Condition] = {}  # id -> condition, in registration order
        self.timeline: list[Check] = []  # oldest first
        self.firings: list[Firing] = []  # oldest first
        self.notices: list[str] = []  # failures and disablings, as sentences for people and models
        self.refused: list[tuple[str, str]] = []  # (code, why) of each registration turned away, oldest first
        self.seconds_evaluating = 0.0  # wall time spent evaluating, for the cost per tick
        self._waiting: list[str] = []  # ids the last tick had no time for, in its order: they go first

    @property
    def clock(self) -> Clock:
        """The poller's time: the home's own clock (one clock, so a fired run's gate reads the firing's time)."""
        return self.home.clock

    # ------------------------------------------------------------ registering
    def register(self, code: str, action: Action | None = None, description: str = "",
                 owner: str | None = None, source: str | None = None) -> str:
        """Check, load and test-run a condition; return its id (the function's name, made unique).

        Raises :class:`~lares_kit.persistent.sandbox.ConditionError` with sentences saying
        what to fix: refused code, an unknown device or attribute, a failing
        test run. The test run's value is where edges start from, so a fridge
        already open when the command is given fires at the *next* opening.
        A refused condition is also kept in ``refused``, with the reason, so a
        transcript can show what the sandbox turned away. ``source`` is who gave
        the instruction: its actions will run as that source.
        """
        try:
            checked = check_condition(code, self.sandbox.limits)  # checked once: the sandbox reuses it
            condition_id = self._free_id(checked.name)
            self.sandbox.load(condition_id, code, checked)
        except ConditionError as exc:
            self.refused.append((code, str(exc)))
            raise
        try:
            self._check_reads(checked.reads)
            states = self._states()
            outcome = self.sandbox.evaluate(states, [condition_id])[condition_id]
            if outcome.error:
                raise ConditionError(f"The condition was tested on the home now and failed: {outcome.error}")
        except ConditionError as exc:
            self.sandbox.drop(condition_id)
            self.refused.append((code, str(exc)))
            raise
        condition = Condition(condition_id, code, description, owner, self.clock.now(), checked.reads, action,
                              value=outcome.value, source=source)
        self.conditions[condition_id] = condition
        self.timeline.append(Check(self.clock.now(), self.clock.seconds, condition_id, outcome.value))
        return condition_id

    def notify(self, condition_id: str, action: Action) -> Condition:
        """Attach (or replace) the action fired when the condition turns True."""
        condition = self._get(condition_id)
        condition.action = action
        return condition

    def list(self) -> list[Condition]:
        """Every registered condition, enabled or not, oldest first."""
        return list(self.conditions.values())

    def cancel(self, condition_id: str) -> Condition:
        """Stop checking a condition and forget it; return it."""
        condition = self._get(condition_id)
        del self.conditions[condition_id]
        self.sandbox.drop(condition_id)
        return condition

    # ---------------------------------------------------------------- polling
    def tick(self, seconds: float | None = None) -> list[Firing]:
        """Advance the clock by ``seconds`` (default ``interval``), check every condition, fire on rising edges.

        All conditions see the same copy of the device states, taken before
        any action runs; actions then run in registration order. Returns the
        firings of this tick. Conditions the tick had no time for
        (``Check.skipped``) keep their last value, count no failure, and are
        checked first next tick. Only a simulated clock can be moved: on a fixed
        or local one a :class:`~lares_kit.home.clock.ClockError` says so.
        """
        self.clock.advance(self.interval if seconds is None else seconds)
        active = [c for c in self.conditions.values() if c.enabled]
        if not active:
            return []
        # The sandbox gets a copy: a condition can read the home but never change it.
        states = self._states()
        # The ones the last tick had no time for go first, in the order they waited: none waits twice in a row.
        rank = {cid: n for n, cid in enumerate(self._waiting)}
        order = sorted(active, key=lambda c: rank.get(c.id, len(rank)))
        started = time.perf_counter()
        outcomes = self.sandbox.evaluate(states, [c.id for c in order])
        self.seconds_evaluating += time.perf_counter() - started
        waiting = self._waiting = [c.id for c in order if outcomes[c.id].skipped]
        if waiting:
            budget = self.sandbox.limits.tick_seconds
            self.notices.append(f"At {self.clock.now():%H:%M:%S} the tick used its {budget:g} s before it could "
                                f"check {', '.join(waiting)}; they go first at the next tick.")
        rising = []
        for condition in active:
            outcome = outcomes[condition.id]
            check = Check(self.clock.now(), self.clock.seconds, condition.id, outcome.value, error=outcome.error,
                          steps=outcome.steps, skipped=outcome.skipped)
            self.timeline.append(check)
            if outcome.skipped:
                continue  # no fault of its own: no failure counted, and the last value stays
            if outcome.error:
                self._failed(condition, outcome.error)
                continue  # the last good value stays: a failure is no evidence of an edge
            condition.errors = 0
            if outcome.value and not condition.value and condition.action is not None:
                rising.append((condition, check))
            condition.value = outcome.value
        return [self._fire(condition, check) for condition, check in rising]

    def _fire(self, condition: Condition, check: Check) -> Firing:
        action = condition.action
        check.fired = True
        condition.fired += 1
        firing = Firing(self.clock.now(), condition.id, action.instruction, condition.description, condition.owner,
                        source=condition.source)
        callback = action.callback or self.on_fire
        if callback is not None:
            try:
                firing.result = callback(firing)
            except Exception as exc:  # an action's failure is reported; the poller goes on
                firing.error = f"{type(exc).__name__}: {exc}"
                self.notices.append(f"At {self.clock.now():%H:%M:%S} the action of {condition.id!r} "
                                    f"({action.instruction!r}) failed: {firing.error}")
        self.firings.append(firing)
        if action.once and condition.id in self.conditions:
            self.cancel(condition.id)
        return firing

    def _failed(self, condition: Condition, error: str) -> None:
        condition.errors += 1
        condition.last_error = error
        when = f"{self.clock.now():%H:%M:%S}"
        if condition.errors >= self.max_errors:
            condition.enabled = False
            self.notices.append(f"At {when} the condition {condition.id!r} failed {condition.errors} times in a "
                                f"row and was disabled: {error}")
        else:
            self.notices.append(f"At {when} the condition {condition.id!r} failed: {error}")

    # ---------------------------------------------------------------- helpers
    def _get(self, condition_id: str) -> Condition:
        if condition_id in self.conditions:
            return self.conditions[condition_id]
        ids = list(self.conditions)
        raise ConditionError(f"There is no condition {condition_id!r}.{did_you_mean(condition_id, ids)} "
                             f"Conditions: {', '.join(ids) or 'none yet'}.")

    def _free_id(self, name: str) -> str:
        n, candidate = 1, name
        while candidate in self.conditions:
            n += 1
            candidate = f"{name}_{n}"
        return candidate

    def _states(self) -> dict[str, dict[str, Any]]:
        # A copy of the device states, and the time as the device "clock" (unless the home has a device of that id)
        states = self.home.device_states()
        return states if CLOCK_ID in states else {**states, CLOCK_ID: self.clock.reading()}

    def _check_reads(self, reads: list[tuple[str, str | None]]) -> None:
        # Every literal get/state is checked, even in a branch the test run did not take.
        for device_id, attribute in reads:
            if device_id == CLOCK_ID and device_id not in self.home.devices:
                if attribute is not None and attribute not in CLOCK_ATTRIBUTES:
                    raise ConditionError(f"The clock has no {attribute!r}; it has: {', '.join(CLOCK_ATTRIBUTES)}.")
                continue
            dev = self.home.devices.get(device_id)
            if dev is None:
                ids = list(self.home.devices)
                raise ConditionError(f"The condition reads a device {device_id!r} that is not in the home."
                                     f"{did_you_mean(device_id, ids)} {choices('Devices', device_id, ids)}")
            if attribute is not None and attribute not in dev.state:
                raise ConditionError(f"The condition reads {attribute!r} of {device_id!r}, which it does not have; "
                                     f"{device_id} has: {', '.join(dev.state) or 'nothing to read'}.")

    def close(self) -> None:
        """Stop the sandbox's worker process."""
        self.sandbox.close()

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        on = sum(c.enabled for c in self.conditions.values())
        return f"<Monitor: {on} active conditions at {self.clock.now():%Y-%m-%d %H:%M:%S}, {len(self.firings)} firings>"


# ---------------------------------------------------------------------- tools
def _need(monitor: Monitor | None) -> Monitor:
    if monitor is None:
        raise ToolError("Persistent commands are not available here: this Toolbox has no monitor "
                        "(Toolbox(home, monitor=Monitor(home))).")
    return monitor


def create_condition(monitor: Monitor, code: str, description: str, source: str | None = None) -> str:
    """Write a condition to watch for, as a Python function with no arguments that returns True or False. It is
    checked and test-run now; use its id with notify_on_condition. Read devices only with get(device_id, attribute)
    and state(device_id), and the time with get("clock", "time") ("19:00"), get("clock", "weekday") ("monday") or
    get("clock", "minutes") (minutes since the home's clock started); use comparisons, and/or/not, if/return,
    assignments, + - * /, abs, min, max, round, len, any, all, int, float, str, bool. No imports, loops, attribute
    access or names starting with _.

    Args:
        code: The function's source, e.g. "def fridge_is_open():\\n    return get('fridge', 'door') == 'open'".
        description: What the condition means, in words, e.g. "the fridge door is open".
    """
    monitor = _need(monitor)
    try:
        condition_id = monitor.register(code, None, description, source=source)  # source: the Toolbox's
    except ConditionError as exc:
        raise ToolError(str(exc)) from None
    value = monitor.conditions[condition_id].value
    return (f"Condition {condition_id!r} ({description}) is ready; it is {value} now. "
            f"Call notify_on_condition with condition_id {condition_id!r} to act when it turns True.")


def notify_on_condition(monitor: Monitor, condition_id: str, instruction: str, source: str | None = None) -> str:
    """Run an instruction as a new command each time a condition turns from False to True (not while it stays True).

    Args:
        condition_id: The id create_condition returned.
        instruction: The command to carry out then, e.g. "turn on the dining room light".
    """
    monitor = _need(monitor)
    registered = monitor.conditions.get(condition_id)
    if registered is not None and registered.source != source:
        # The action runs as the condition's source: someone else's instruction must not borrow it.
        who = registered.source or "an unknown source"
        raise ToolError(f"Condition {condition_id!r} was set up on an instruction from {who}, and this one comes "
                        f"from {source or 'an unknown source'}: only the same source can attach an action to it. "
                        "Create a new condition with create_condition.")
    try:
        condition = monitor.notify(condition_id, Action(instruction))
    except ConditionError as exc:
        raise ToolError(str(exc)) from None
    return (f"When {condition.description or condition_id}, I will: {instruction}. "
            f"The condition is checked every {monitor.interval:g} seconds.")


def list_conditions(monitor: Monitor) -> str:
    """List the conditions being watched, with their current values and the instructions they trigger."""
    monitor = _need(monitor)
    if not monitor.conditions:
        return "No conditions are being watched."
    lines = []
    for c in monitor.list():
        then = f"then: {c.action.instruction}" if c.action else "no action yet"
        status = "" if c.enabled else f" [disabled: {c.last_error}]"
        lines.append(f"- {c.id} ({c.description}): now {c.value}, fired {c.fired} times; {then}{status}")
    return "Conditions:\n" + "\n".join(lines)


def cancel_condition(monitor: Monitor, condition_id: str, source: str | None = None) -> str:
    """Stop watching a condition, so its instruction will not run again.

    Args:
        condition_id: The id of the condition, as list_conditions shows it.
    """
    monitor = _need(monitor)
    registered = monitor.conditions.get(condition_id)
    if registered is not None and registered.source != source and source != "owner":
        # Only whoever set it up (or the owner of the home) may take it away: a note in the letterbox
        # must not switch off the owner's "when the smoke alarm sounds, unlock the door".
        who = registered.source or "an unknown source"
        raise ToolError(f"Condition {condition_id!r} was set up on an instruction from {who}, and this one comes "
                        f"from {source or 'an unknown source'}: only the same source or the owner can cancel it.")
    try:
        condition = monitor.cancel(condition_id)
    except ConditionError as exc:
        raise ToolError(str(exc)) from None
    return f"Condition {condition.id!r} ({condition.description}) is cancelled."


PERSISTENT_TOOLS: list[Callable[..., str]] = [create_condition, notify_on_condition, list_conditions, cancel_condition]
