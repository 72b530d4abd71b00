"""The offline model as SAGE's condition agent for a time: "every evening at 7", "in ten minutes".

Part of :mod:`lares_kit.models.offline.designs.sage.conditions`. A condition reads the time as the device ``clock``
(:data:`lares_kit.home.clock.CLOCK_ATTRIBUTES`): a command for every day, a day of the week, weekdays or weekends waits
for the time of day::

    def every_day_at_1900():
        return get("clock", "time") == "19:00"

which is True for one minute a day, so it fires once a day. A command for once ("at 11pm", "in ten minutes")
waits for a count of minutes on the home's clock, read first with ``get_attribute("clock", ...)``; once reached,
it stays True, so it fires once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .....sentences.times import TimeError, minutes_of_day

__all__ = ["Schedule", "read_schedule", "schedule_code"]

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "fifteen": 15,
           "twenty": 20, "thirty": 30, "forty": 40, "a few": 3, "a couple of": 2}


@dataclass(frozen=True)
class Schedule:
    """When a command is for: a minute of the day (and which days), or a number of minutes from now."""

    minute: int | None = None  # minutes after midnight, for "at 7pm"; None for "in ten minutes"
    days: tuple[str, ...] = ()  # the days it is for; () every day
    repeats: bool = True  # every day (or every one of ``days``), or once
    after: int | None = None  # "in ten minutes": minutes from now

    @property
    def once(self) -> bool:
        """True for a command carried out one time only ("at 11pm", "in ten minutes")."""
        return not self.repeats


def read_schedule(trigger: str) -> Schedule | None:
    """The schedule a time trigger says (see :data:`lares_kit.persistent.phrases.TIME_TRIGGER`),
    or None when it gives no time.

    Args:
        trigger: the time part of a persistent command, e.g. "every evening at 7".

    Examples:
        >>> read_schedule("every evening at 7")
        Schedule(minute=1140, days=(), repeats=True, after=None)
        >>> read_schedule("at 6:30 on weekdays").days[-1], read_schedule("at 11pm").once
        ('friday', True)
        >>> read_schedule("in ten minutes").after, read_schedule("every morning")
        (10, None)
    """
    text = trigger.lower().strip()
    if later := re.fullmatch(r"in (a|an|\d+|one|two|three|four|five|ten|fifteen|twenty|thirty|forty|a few|a couple of)"
                             r" (minutes?|hours?)", text):
        count = int(later.group(1)) if later.group(1).isdigit() else _COUNTS[later.group(1)]
        return Schedule(after=count * (60 if later.group(2).startswith("hour") else 1), repeats=False)
    said = re.search(r"\bat (\d{1,2}(?:[:.]\d\d)?(?:\s?(?:am|pm|o'?clock))?|noon|midnight)\b", text)
    if said is None:
        return None  # "every morning": no time to wait for
    try:
        minute = minutes_of_day(said.group(1).replace("o'clock", "").replace("oclock", "").strip())
    except TimeError:
        return None
    if minute < 12 * 60 and not re.search(r"am\b", said.group(1)) and re.search(r"\b(evening|night|afternoon)", text):
        minute += 12 * 60  # "every evening at 7": 19:00
    named = tuple(d for d in _DAYS if re.search(rf"\b{d}s?\b", text))
    days = (_DAYS[:5] if re.search(r"\bweekdays?\b", text) else _DAYS[5:] if re.search(r"\bweekends?\b", text)
            else named)
    repeats = bool(re.search(r"\b(every|each|daily|on)\b", text))
    return Schedule(minute=minute, days=days, repeats=repeats)


def schedule_code(schedule: Schedule, minutes_now: int = 0, minute_of_day_now: int = 0) -> tuple[str, str]:
    """(code, description) of the condition for a schedule.

    Args:
        schedule: what :func:`read_schedule` read.
        minutes_now: ``get("clock", "minutes")`` now (for a command carried out once).
        minute_of_day_now: the time of day now, in minutes after midnight (for "at 11pm", once).

    Examples:
        >>> print(schedule_code(read_schedule("at 6:30 on weekdays"))[0])
        def weekdays_at_0630():
            return get("clock", "time") == "06:30" and get("clock", "weekday") not in ("saturday", "sunday")
        >>> schedule_code(read_schedule("in ten minutes"), minutes_now=5)[1]
        "ten minutes have passed (minute 15 on the home's clock)"
    """
    if schedule.after is not None or schedule.once:
        wait = schedule.after if schedule.after is not None else (
            (schedule.minute - minute_of_day_now) % (24 * 60) or 24 * 60)
        at = minutes_now + wait
        name = f"in_{wait}_minutes" if schedule.after is not None else f"once_at_{_hhmm(schedule.minute)}"
        said = (f"{_count(wait)} minutes have passed" if schedule.after is not None
                else f"it is {_clock(schedule.minute)}")
        return f'def {name}():\n    return get("clock", "minutes") >= {at}', f"{said} (minute {at} on the home's clock)"
    time_is = f'get("clock", "time") == "{_clock(schedule.minute)}"'
    days, which = schedule.days, "every_day"
    if days == _DAYS[:5]:
        time_is += ' and get("clock", "weekday") not in ("saturday", "sunday")'
        which = "weekdays"
    elif days == _DAYS[5:]:
        time_is += ' and get("clock", "weekday") in ("saturday", "sunday")'
        which = "weekends"
    elif days:
        time_is += (f' and get("clock", "weekday") == "{days[0]}"' if len(days) == 1 else
                    f' and get("clock", "weekday") in ({", ".join(f"{d!r}" for d in days)})'.replace("'", '"'))
        which = "_".join(days)
    description = f"it is {_clock(schedule.minute)}" + (f" on {which.replace('_', ' ')}" if days else " (every day)")
    return f"def {which}_at_{_hhmm(schedule.minute)}():\n    return {time_is}", description


def _clock(minute: int | None) -> str:
    return f"{(minute or 0) // 60:02d}:{(minute or 0) % 60:02d}"


def _hhmm(minute: int | None) -> str:
    return _clock(minute).replace(":", "")


def _count(n: int) -> str:
    return {v: k for k, v in _COUNTS.items() if not k.startswith("a")}.get(n, str(n))
