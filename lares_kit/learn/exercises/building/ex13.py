"""Exercise 13, a safe condition for a persistent command.

Notebook: ``exercises/13_safe_condition.ipynb`` (for ``notebooks/13_persistent_commands``).
A condition is Python source for one function with no arguments, checked by
:func:`~lares_kit.persistent.sandbox.check_condition` and run by
:func:`~lares_kit.persistent.sandbox.run_condition` over plain device states. The
checks run the student's code through the same sandbox, on every row of a
truth table.
"""

from __future__ import annotations

from ....persistent.sandbox import ConditionError, check_condition, run_condition
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____

__all__ = ["q1", "q2", "q3", "BROKEN", "bind", "____", "PLACEHOLDER"]

BROKEN = "def any_light_on():\n    return any(get(light, 'on') for light in ['hall-light', 'kitchen-light'])"


def _table(code: object, rows: list[tuple[dict, bool]], what: str) -> str:
    if not isinstance(code, str):
        raise Incorrect(f"The condition is source text (a string with a def in it); got {type(code).__name__}.")
    try:
        checked = check_condition(code)
    except ConditionError as exc:
        raise Incorrect(f"The sandbox refuses it: {exc}") from None
    for states, want in rows:
        try:
            got = run_condition(code, states)
        except ConditionError as exc:
            raise Incorrect(f"With {states}, it failed to run: {exc}") from None
        if got is not want:
            raise Incorrect(f"With {states}, {what} is {want}, but your condition returned {got}.")
    return f"The sandbox accepts {checked.name}(); it reads {checked.reads} and is right on all {len(rows)} cases."


def _test_fridge(fridge_open) -> str:
    rows = [({"fridge": {"door": "open", "temperature": 4}}, True),
            ({"fridge": {"door": "closed", "temperature": 4}}, False)]
    return _table(fridge_open, rows, "'the fridge is open'")


def _test_too_warm(too_warm) -> str:
    rows = []
    for temp, window, want in [(26.5, False, True), (26.5, True, False), (25, False, False), (19, False, False)]:
        rows.append(({"meeting-2-sensor": {"temperature": temp}, "meeting-2-window": {"open": window}}, want))
    return _table(too_warm, rows, "'warmer than 25 °C with the window shut'")


def _test_any_light(any_light_on) -> str:
    rows = [({"hall-light": {"on": a}, "kitchen-light": {"on": b}}, a or b)
            for a in (False, True) for b in (False, True)]
    return _table(any_light_on, rows, "'any light on'")


q1 = Problem("The fridge is open", ("fridge_open",), _test_fridge, hints=[
    "One function, no arguments: def fridge_is_open():, and inside it get('fridge', 'door') reads the door.",
    "\"def fridge_is_open():\\n    return get('fridge', 'door') == 'open'\"",
])
q2 = Problem("Too warm, window shut", ("too_warm",), _test_too_warm, hints=[
    "Two readings: get('meeting-2-sensor', 'temperature') and get('meeting-2-window', 'open').",
    "'Warmer than 25' is > 25 (25 itself is not too warm); combine with and not.",
])
q3 = Problem("Fix a refused condition", ("any_light_on",), _test_any_light, hints=[
    "Run check_condition(BROKEN) and read the refusal: generator expressions are not allowed (no loops at all).",
    "List the values instead: any([get('hall-light', 'on'), get('kitchen-light', 'on')]).",
])
EXERCISE = Exercise("13_safe_condition", [q1, q2, q3])
bind = EXERCISE.bind
