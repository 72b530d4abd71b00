"""Times of day as people and files write them: "4am", "04:00:00", "4:00 AM", "0400", "late at night".

Taught with the safety policy in ``notebooks/15_safety_and_failure.ipynb``:
a home refuses every change on an untrusted voice's say-so *at night*, so
"is it night?" must not depend on how the time was typed. A rule that only
knew ``HH:MM`` let "4am" through as daytime. This module turns a time of day
into minutes after midnight, or says in one sentence why it cannot.

It is only about times of day: no dates are kept, no time zones, and it
never reads the wall clock (the poller's simulated clock gives a ``datetime``,
whose time this module reads like any other).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, time

from ..errors import LaresError

__all__ = ["WORD_TIMES", "TimeError", "clock_text", "in_span", "minutes_of_day", "parse_span"]


class TimeError(LaresError, ValueError):
    """A time of day that cannot be read; the message says what would be understood."""


# Words for a time of day -> a typical minute after midnight, so a policy's clock span ("22:00-07:00")
# can judge them too ("early morning" is 05:00, before 07:00). A policy may also list words as night.
WORD_TIMES = {
    "midnight": 0, "night": 0, "nighttime": 0, "overnight": 0, "late night": 60, "small hours": 180,
    "wee hours": 180, "early morning": 300, "dawn": 360, "morning": 540, "daytime": 720, "day": 720,
    "noon": 720, "midday": 720, "lunchtime": 750, "afternoon": 900, "evening": 1140, "dusk": 1200,
    "late evening": 1290,
}
_FILLER = re.compile(r"^(?:at|it is|it's|its|around|about|in the|during the|the)\s+")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:t|\s+)")  # 2024-05-01T04:00:00 / 2024-05-01 04:00
_CLOCK = re.compile(r"^(\d{1,2})(?:\s*(?::|\.|h)\s*(\d{2})(?:\s*:\s*(\d{2})(?:\.\d+)?)?)?\s*"
                    r"(am|pm|a\.m\.?|p\.m\.?|o'?clock|hours?|hrs?)?"
                    r"(?:\s+(in the morning|in the afternoon|in the evening|at night|tonight))?$")
_MILITARY = re.compile(r"^(\d{2})(\d{2})(?:\s*(?:hours?|hrs?|h))?$")  # 0400, 2330 hours
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
# "twenty five" before "twenty", so the longest number is read
_NUMBER_WORDS = {**{f"{t} {u}": n + i for t, n in _TENS.items() for i, u in enumerate(_UNITS[1:10], 1)},
                 **_TENS, **{u: i for i, u in enumerate(_UNITS)}}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(sorted(_NUMBER_WORDS, key=lambda w: (-len(w), w))) + r")\b")
_PAST_TO = re.compile(r"^(half|quarter|\d{1,2})(?: minutes?)? (past|after|to|before|till?) (\d{1,2}|midnight|noon)\b")


def _clean(text: str) -> str:
    # Full-width digits and odd spaces become plain ones; case and padding do not matter.
    text = unicodedata.normalize("NFKC", text).strip().lower().replace("\u2009", " ")
    text = re.sub(r"\s+", " ", text.replace("-", " ") if not re.search(r"\d", text) else text)
    while True:
        shorter = _FILLER.sub("", text)
        if shorter == text:
            return text.rstrip(".!")
        text = shorter


def _spoken(text: str) -> str:
    # "half past three in the morning" -> "3:30 in the morning"; "four am" -> "4 am"
    text = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS[m.group(1)]), text)
    said = _PAST_TO.match(text)
    if said is None:
        return re.sub(r"^(\d{1,2}) (\d{2})(?=\s|$)", r"\1:\2", text)  # "four fifteen am" -> "4:15 am"
    minutes = {"half": 30, "quarter": 15}.get(said[1]) or int(said[1])
    hour = {"midnight": 0, "noon": 12}.get(said[3], None)
    hour = int(said[3]) if hour is None else hour
    if said[2] in ("to", "before", "til", "till"):
        minutes, hour = 60 - minutes, (hour - 1 if hour > 1 else (12 if hour == 1 else 23))
    return f"{hour}:{minutes:02d}{text[said.end():]}" if 0 < minutes < 60 else text


def minutes_of_day(when: str | datetime | time) -> int:
    """Minutes after midnight (0-1439) for a clock time or a word; a TimeError says why not.

    Args:
        when: A time of day as text ("04:00", "4am", "0400", "half past three", "evening", a date-time
            string), or a ``datetime``/``time`` whose hour and minute are used (seconds are dropped).

    Examples:
        >>> [minutes_of_day(t) for t in ("04:00", "4am", "4:00 AM", "04:00:00", "0400", "23:30:00", "4 p.m.")]
        [240, 240, 240, 240, 240, 1410, 960]
        >>> minutes_of_day("12am"), minutes_of_day("12pm"), minutes_of_day("2024-05-01T04:10:00")
        (0, 720, 250)
        >>> minutes_of_day("late at night"), minutes_of_day("11 at night"), minutes_of_day("evening")
        (0, 1380, 1140)
        >>> minutes_of_day("half past three in the morning"), minutes_of_day("quarter to midnight")
        (210, 1425)
        >>> minutes_of_day("25:00")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.sentences.times.TimeError: '25:00' is not a time of day:
        the hour must be 0-23 (1-12 with am/pm) and minutes 0-59.
    """
    if isinstance(when, datetime):
        when = when.time()
    if isinstance(when, time):
        return when.hour * 60 + when.minute
    if not isinstance(when, str) or not when.strip():
        raise TimeError(f"{when!r} is not a time of day: give a clock time like 04:00, 4am or 23:30:00, "
                        "or a word such as night, evening, morning or midnight.")
    text = _DATE.sub("", _clean(when))
    word = re.sub(r"^(?:late at|middle of the) night$", "night", text)
    for candidate in (word, word.replace(" ", "")):  # "night time" is "nighttime"
        if candidate in WORD_TIMES:
            return WORD_TIMES[candidate]
    text = _spoken(text)
    military = _MILITARY.match(text)
    clock = _CLOCK.match(text)
    if military:
        hour, minute, second, suffix, part = int(military[1]), int(military[2]), 0, None, None
    elif clock:
        hour, minute, second = int(clock[1]), int(clock[2] or 0), int(clock[3] or 0)
        suffix, part = (clock[4] or "").replace(".", ""), clock[5]
    else:
        raise TimeError(f"{when!r} is not a time of day: give a clock time like 04:00, 4am or 23:30:00, or a "
                        "word such as night, evening, morning or midnight.")
    twelve = suffix in ("am", "pm") or part is not None
    if (twelve and not 1 <= hour <= 12) or hour > 23 or minute > 59 or second > 59:
        raise TimeError(f"{when!r} is not a time of day: the hour must be 0-23 (1-12 with am/pm) and minutes 0-59.")
    if suffix == "am" or part == "in the morning":
        hour %= 12
    elif suffix == "pm" or part in ("in the afternoon", "in the evening"):
        hour = hour % 12 + 12
    elif part in ("at night", "tonight"):
        hour = 0 if hour == 12 else hour + (12 if hour >= 6 else 0)  # "11 at night" is 23:00, "2 at night" 02:00
    return hour * 60 + minute


def clock_text(when: datetime | time) -> str:
    """A poller's time as the policy reads it: ``HH:MM:SS``.

    Args:
        when: The simulated clock's ``datetime`` (its date is ignored) or a ``time``.

    Examples:
        >>> clock_text(datetime(2024, 1, 1, 22, 0, 40))
        '22:00:40'
    """
    return f"{when:%H:%M:%S}"


def parse_span(text: str) -> tuple[int, int] | None:
    """A span of the day ``"22:00-07:00"`` (or ``"10pm to 7am"``) as (start, end) minutes; None if it is no span.

    A TimeError when it looks like a span but one end is not a time.

    Args:
        text: Two times joined by "-", an en or em dash, "to", "until" or "till"; both ends need a digit.

    Examples:
        >>> parse_span("22:00-07:00"), parse_span("10pm to 7am"), parse_span("22:00 \u2013 07:00"), parse_span("night")
        ((1320, 420), (1320, 420), (1320, 420), None)
    """
    parts = re.split(r"\s*(?:-|\u2013|\u2014|\bto\b|\buntil\b|\btill\b)\s*",
                     unicodedata.normalize("NFKC", text).strip())
    if len(parts) != 2 or not all(re.search(r"\d", p) for p in parts):
        return None
    return minutes_of_day(parts[0]), minutes_of_day(parts[1])


def in_span(minute: int, span: tuple[int, int]) -> bool:
    """True when ``minute`` is in ``[start, end)``; a span whose end is before its start crosses midnight.

    Args:
        minute: Minutes after midnight, 0-1439 (see :func:`minutes_of_day`).
        span: (start, end) in minutes after midnight, as :func:`parse_span` gives; end is not included.

    Examples:
        >>> night = (22 * 60, 7 * 60)
        >>> in_span(23 * 60, night), in_span(4 * 60, night), in_span(7 * 60, night), in_span(12 * 60, night)
        (True, True, False, False)
    """
    start, end = span
    return start <= minute < end if start < end else (minute >= start or minute < end)
