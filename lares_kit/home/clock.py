"""The toolkit's one clock: the time of day in the home, and the steps taken in it.

Taught with the safety policy in ``notebooks/15_safety_and_failure.ipynb``
and with the poller in ``notebooks/13_persistent_commands.ipynb``. Every
:class:`~lares_kit.home.graph.Home` owns one (``home.clock``); whoever needs the
time asks it, when they need it:

* the safety gate (:mod:`lares_kit.safety.gate`) asks at every check whether it is
  night, so a home whose clock moves past 22:00 turns strict on the spot;
* the poller (:mod:`lares_kit.persistent.monitor`) moves it, interval by interval, and a
  command it fires runs at the time the clock then says;
* Home Assistant's ``GetDateTime`` (:mod:`lares_kit.ha.context`) reads it;
* every tool call ticks it: ``steps`` is what the world knowledge calls
  ``"time"`` (one per action), so an event can later be set "at a step or a
  time" of the same clock.

A clock is of one of three kinds:

* **fixed** -- the time of day never moves (``Clock.fixed("04:00")``, or a
  word: ``Clock.fixed("night")``);
* **simulated** -- it moves only when told (:meth:`Clock.advance`), so a
  lesson, the benchmark and persistent commands repeat exactly. A home's
  clock is simulated from 08:00 unless a task's ``setup.time_of_day``,
  ``lares run --time-of-day`` or a world file's ``time_of_day:`` starts it
  elsewhere;
* **local** -- this machine's local time, read at every question (a served
  home that should follow the day). Tests give it their own ``now``.

A time of day is kept *as it was written* ("04:00", "4am", "night") until the
clock moves, and the policy judges those words (a policy may call "night"
night whatever the hour); once moved, the time is ``HH:MM:SS``. A time that
cannot be read at all ("teatime") is kept too -- the safety gate then
refuses to start and says why, the audit counts it as night -- and the
clock reads 08:00; :func:`make_clock`, for command lines, refuses it at once.

A copy of a home (``Home.copy``, ``copy.deepcopy``) gets a copy of the clock
at the same time and step: after that, each moves on its own. This module
never reads the wall clock except for a ``local`` clock.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable

from ..errors import LaresError
from ..sentences.times import TimeError, clock_text, minutes_of_day

__all__ = ["CLOCK_ATTRIBUTES", "CLOCK_ID", "Clock", "ClockError", "DEFAULT_START", "KINDS", "make_clock"]

# A persistent command's condition reads the time as a device of this id (a home with a device of that id keeps
# its own): get("clock", "time") == "19:00" (lares_kit.persistent.monitor).
CLOCK_ID = "clock"
CLOCK_ATTRIBUTES = {"time": "the time of day as 'HH:MM', e.g. '19:00'",
                    "weekday": "the day of the week in lower case, e.g. 'monday'",
                    "minutes": "whole minutes since the home's clock started, for 'in ten minutes'"}

# Where a home's clock is when nobody said: a Monday morning, the same in every run.
DEFAULT_START = datetime(2024, 1, 1, 8, 0)
KINDS = ("fixed", "simulated", "local")


class ClockError(LaresError, ValueError):
    """A clock asked to do what its kind cannot (a fixed clock to move), or moved backwards."""


@dataclass
class Clock:
    """A time of day and a count of steps; see the module docstring for the three kinds.

    Build one with :meth:`fixed`, :meth:`simulated` or :meth:`local` (or :func:`make_clock` from command-line
    options) rather than field by field.

    Examples:
        >>> clock = Clock.simulated(start="21:59")
        >>> clock.time_of_day(), clock.advance(90), clock.time_of_day()
        ('21:59', datetime.datetime(2024, 1, 1, 22, 0, 30), '22:00:30')
        >>> clock.tick(), clock.tick(), clock.steps
        (1, 2, 2)
        >>> Clock.fixed("4am").describe()
        'clock: fixed at 4am (04:00)'
    """

    kind: str = "simulated"  # one of KINDS
    start: datetime = DEFAULT_START  # fixed: the time it stays at; simulated: where it started; local: unused
    seconds: float = 0.0  # simulated: seconds moved since start (the poller's timeline counts from it)
    written: str | None = None  # the time of day as given ("04:00", "night"), said back while the clock has not moved
    steps: int = 0  # actions taken in the home: one tick per tool call
    read_now: Callable[[], datetime] | None = None  # local: what tells the time; None is this machine's clock

    # ------------------------------------------------------------ the three kinds
    @classmethod
    def fixed(cls, when: str | datetime) -> Clock:
        """A clock whose time of day never moves.

        Args:
            when: A time of day as people write it ("04:00", "4am", "night"), or a datetime.

        Examples:
            >>> Clock.fixed("night").time_of_day(), Clock.fixed("night").now()
            ('night', datetime.datetime(2024, 1, 1, 0, 0))
        """
        start, written = _start(when)
        return cls("fixed", start, written=written)

    @classmethod
    def simulated(cls, start: str | datetime | None = None) -> Clock:
        """A clock that moves only with :meth:`advance`: exact and repeatable.

        Args:
            start: Where it starts: a time of day ("08:00", "9:45 pm") on 2024-01-01, or a datetime; None: 08:00.

        Examples:
            >>> Clock.simulated().describe(), Clock.simulated("9:45 pm").now()
            ('clock: simulated, starting at 08:00', datetime.datetime(2024, 1, 1, 21, 45))
        """
        begin, written = _start(DEFAULT_START if start is None else start)
        return cls("simulated", begin, written=written)

    @classmethod
    def local(cls, now: Callable[[], datetime] | None = None) -> Clock:
        """A clock that reads this machine's local time at every question.

        Args:
            now: What tells the time, e.g. ``lambda: datetime(2024, 1, 1, 3, 5)`` in a test; None: the machine's.

        Examples:
            >>> Clock.local(now=lambda: datetime(2024, 1, 1, 3, 5)).time_of_day()
            '03:05:00'
        """
        return cls("local", read_now=now)

    # ------------------------------------------------------------- questions
    def now(self) -> datetime:
        """The date and time on this clock."""
        if self.kind == "local":
            return (self.read_now or datetime.now)()
        return self.start + timedelta(seconds=self.seconds)

    def time_of_day(self) -> str:
        """The time of day the safety policy judges: as it was written until the clock moves, then ``HH:MM:SS``.

        Examples:
            >>> clock = Clock.simulated("04:00")
            >>> clock.time_of_day(), (clock.advance(10), clock.time_of_day())[1]
            ('04:00', '04:00:10')
        """
        if self.written is not None and self.kind != "local" and not self.seconds:
            return self.written  # "at night (04:00)": the gate says the time as the task wrote it
        return clock_text(self.now())

    def reading(self) -> dict[str, Any]:
        """What a persistent command's condition reads as ``get("clock", ...)``: :data:`CLOCK_ATTRIBUTES`.

        Examples:
            >>> clock = Clock.simulated("18:59")
            >>> clock.reading(), (clock.advance(90), clock.reading())[1]
            ({'time': '18:59', 'weekday': 'monday', 'minutes': 0}, {'time': '19:00', 'weekday': 'monday', 'minutes': 1})
        """
        now = self.now()
        return {"time": f"{now:%H:%M}", "weekday": f"{now:%A}".lower(), "minutes": int(self.seconds // 60)}

    def describe(self) -> str:
        """One line saying what this clock is, as a served home prints it when it starts.

        Examples:
            >>> Clock.local(now=lambda: datetime(2024, 1, 1, 14, 5)).describe()
            "clock: this machine's local time, now 14:05"
            >>> clock = Clock.simulated("08:00")
            >>> clock.describe(), (clock.advance(3600), clock.describe())[1]
            ('clock: simulated, starting at 08:00', 'clock: simulated, starting at 08:00, now 09:00:00')
        """
        if self.kind == "local":
            return f"clock: this machine's local time, now {self.now():%H:%M}"
        at = f"{self.start:%H:%M}"
        said = at if self.written in (None, at) else f"{self.written} ({at})"
        if self.kind == "fixed":
            return f"clock: fixed at {said}"
        return f"clock: simulated, starting at {said}" + (f", now {self.now():%H:%M:%S}" if self.seconds else "")

    # ---------------------------------------------------------------- changes
    def advance(self, seconds: float) -> datetime:
        """Move a simulated clock forward; return the new time. A fixed or local clock cannot be moved.

        Args:
            seconds: How far, in seconds (not negative).

        Examples:
            >>> Clock.simulated().advance(-1)
            Traceback (most recent call last):
            ...
            lares_kit.home.clock.ClockError: A clock only moves forward: -1 seconds is not a way to move it.
        """
        if self.kind != "simulated":
            moves = "follows this machine" if self.kind == "local" else f"stays at {self.time_of_day()}"
            raise ClockError(f"The home's clock is {self.kind} and {moves}: only a simulated clock can be moved "
                             "(home.clock = Clock.simulated(start=...)).")
        if seconds < 0:
            raise ClockError(f"A clock only moves forward: {seconds:g} seconds is not a way to move it.")
        self.seconds += float(seconds)
        return self.now()

    def tick(self) -> int:
        """Count one more step (an action taken in the home); return the new count."""
        self.steps += 1
        return self.steps

    def reset(self) -> None:
        """Back to the start: no steps, and a simulated clock at the time it started from."""
        self.steps = 0
        self.seconds = 0.0

    def __deepcopy__(self, memo: dict[int, Any]) -> Clock:
        # Every field is immutable (or a function), so a shallow copy is already a whole one: cheap for the
        # thousands of home copies the oracle makes.
        return copy.copy(self)


def make_clock(kind: str | None, time_of_day: str | None, *, default: Clock | None = None,
               now: Callable[[], datetime] | None = None) -> Clock:
    """The clock command-line options ask for (``--clock fixed|simulated|local``, ``--time-of-day T``).

    ``--time-of-day`` alone means fixed. Neither option gives a copy of ``default``, and ``--clock simulated``
    without a time starts where ``default`` is (a served home passes its own clock, so a world file's
    ``time_of_day:`` counts); with no default, both are a simulated clock at 08:00. A LaresError says what is
    wrong in one sentence.

    Args:
        kind: ``--clock``: "fixed", "simulated", "local", or None when not given.
        time_of_day: ``--time-of-day``: a time as people write it ("04:00", "4am", "night"), or None.
        default: The home's own clock, for what the options leave open; None: a simulated clock at 08:00.
        now: For a local clock, what tells the time (tests); None: this machine's clock.

    Examples:
        >>> make_clock(None, "04:00").describe()
        'clock: fixed at 04:00'
        >>> make_clock("simulated", "9pm").describe()
        'clock: simulated, starting at 9pm (21:00)'
        >>> make_clock("local", "4am")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --clock local reads this machine's time, so --time-of-day cannot be given
        with it: leave it out, or use --clock fixed or --clock simulated.
    """
    if kind is not None and kind not in KINDS:
        raise LaresError(f"--clock must be one of {', '.join(KINDS)}, not {kind!r}.")
    if time_of_day is not None:
        if kind == "local":
            raise LaresError("--clock local reads this machine's time, so --time-of-day cannot be given with it: "
                             "leave it out, or use --clock fixed or --clock simulated.")
        try:
            minutes_of_day(time_of_day)
        except TimeError as exc:
            raise TimeError(f"--time-of-day: {exc}") from None
    if kind == "local":
        return Clock.local(now)
    if kind == "fixed":
        if time_of_day is None:
            raise LaresError("--clock fixed needs --time-of-day, the time it stays at (04:00, 4am, night...).")
        return Clock.fixed(time_of_day)
    if kind is None and time_of_day is not None:
        return Clock.fixed(time_of_day)
    if time_of_day is None and default is not None:
        if kind is None:
            return copy.copy(default)
        if default.kind != "local":  # simulated from where the home's own clock is
            unmoved = default.written is not None and not default.seconds
            return Clock.simulated(default.written if unmoved else default.now())
    return Clock.simulated(time_of_day)


def _start(when: Any) -> tuple[datetime, str | None]:
    # (the datetime it stands for, the text as written). Text that is no time of day is kept as written -- the
    # safety policy names what is wrong with it -- and stands for 08:00, where the poller always started then.
    if isinstance(when, datetime):
        return when, None
    text = str(when)
    try:
        minute = minutes_of_day(text)
    except TimeError:
        return DEFAULT_START, text
    return DEFAULT_START.replace(hour=minute // 60, minute=minute % 60), text
