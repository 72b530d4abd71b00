"""Exercise 10, memory recall by date: what was said, and when.

Notebook: ``exercises/10_memory_by_date.ipynb`` (for ``notebooks/10_memory``).
The checks build a :class:`~lares_kit.memory.store.MemoryStore` in memory
with a fixed clock (30 November 2026), so "yesterday" never moves.
"""

from __future__ import annotations

from datetime import date, datetime

from ....memory.store import MemoryStore
from ...checking import PLACEHOLDER, Exercise, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "q3", "sample_store", "TODAY", "bind", "____", "PLACEHOLDER"]

TODAY = date(2026, 11, 30)
SAID = [("2026-11-20 08:00:00", "ana", "Please keep the office at 21 degrees"),
        ("2026-11-27 18:30:00", "ben", "Turn the lobby lights off at night"),
        ("2026-11-29 09:14:00", "ana", "My name is Ana and the meeting room is too warm"),
        ("2026-11-29 17:02:00", "ben", "Open the window in meeting room 2"),
        ("2026-11-30 07:45:00", "ana", "Set the office to 22 degrees today")]


def sample_store() -> MemoryStore:
    """A store of five things said between 20 and 30 November 2026; "today" is 30 November.

    Examples:
        >>> [t.date for t in sample_store().turns(date="yesterday")]
        ['2026-11-29', '2026-11-29']
    """
    store = MemoryStore(":memory:", clock=lambda: datetime(2026, 11, 30, 12, 0))
    for at, user, text in SAID:
        store.add("user", text, user=user, at=at)
    return store


def _test_in_span(in_span) -> str:
    span = (date(2026, 11, 24), date(2026, 11, 30))
    for at, want in [("2026-11-24 00:00:01", True), ("2026-11-30 23:59:59", True), ("2026-11-23 23:59:59", False),
                     ("2026-12-01 00:00:00", False)]:
        expect_equal(call(in_span, at, span, case=f"{at} in the last 7 days"), want, f"{at!r} in {span[0]}..{span[1]}")
    return "Both ends included, whatever the time of day."


def _test_said_on(said_on) -> str:
    for when, want in [("yesterday", [SAID[2][2], SAID[3][2]]), ("2026-11-20", [SAID[0][2]]),
                       ("last 7 days", [s[2] for s in SAID[1:]]), ("2026-11-01", [])]:
        expect_equal(call(said_on, sample_store(), when, case=repr(when)), want, f"date {when!r}")
    return "Dates in words and in numbers, read by the store, oldest first."


def _test_first_mention(first_mention) -> str:
    for word, want in [("office", "2026-11-20"), ("meeting", "2026-11-29"), ("lights", "2026-11-27"),
                       ("garden", None)]:
        expect_equal(call(first_mention, sample_store(), word, case=repr(word)), want, f"the word {word!r}")
    return "The first day each word was said, or None."


q1 = Problem("Inside the span?", ("in_span",), _test_in_span, hints=[
    "A stored time is text like '2026-11-29 09:14:00'; its first 10 characters are the day.",
    "date.fromisoformat(at[:10]) gives a date; compare first <= day <= last.",
])
q2 = Problem("What was said that day", ("said_on",), _test_said_on, hints=[
    "store.turns(date=when) already reads 'yesterday', 'last 7 days' and ranges (parse_date_span).",
    "Return [turn.text for turn in store.turns(date=when)] -- they come oldest first.",
])
q3 = Problem("When was it first said?", ("first_mention",), _test_first_mention, hints=[
    "store.search(word, limit=100) finds the turns with the word, best match first -- not oldest first.",
    "Take min(turn.at for turn in found)[:10], or None when nothing was found.",
])
EXERCISE = Exercise("10_memory_by_date", [q1, q2, q3])
bind = EXERCISE.bind
