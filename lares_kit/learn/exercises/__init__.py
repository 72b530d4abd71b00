"""The exercises' checks: one module per notebook in ``exercises/``, grouped by the part of the course it follows.

* :mod:`.loop` -- ``ex00`` to ``ex08``: the home, its tools, the Lares loop, search, the user, evaluation;
* :mod:`.building` -- ``ex09`` to ``ex13``: ReAct for a building, memory, SAGE's devices, personalization,
  persistent commands;
* :mod:`.field` -- ``ex14`` to ``ex19``: a real small model, safety, scale, Home Assistant, a real home, voice.

Each module holds its problems, their checks and hints (``ex01`` for ``exercises/01_shortest_route.ipynb``); the
machinery is :mod:`lares_kit.learn.checking`. A notebook imports its own:
``from lares_kit.learn.exercises.loop.ex01 import *``.
"""

from __future__ import annotations

__all__ = ["PARTS", "module_name"]

# The parts of the course and the exercise numbers each holds
PARTS = {"loop": range(0, 9), "building": range(9, 14), "field": range(14, 20)}


def module_name(number: str) -> str:
    """The module that checks exercise ``number`` (its notebook's first two digits).

    Args:
        number: two digits, as an exercise notebook's name starts.

    Examples:
        >>> module_name("13")
        'lares_kit.learn.exercises.building.ex13'
        >>> module_name("x1")
        Traceback (most recent call last):
        ...
        ValueError: an exercise number is two digits, such as 01, not 'x1'
    """
    if not (len(number) == 2 and number.isdigit()) or not any(int(number) in span for span in PARTS.values()):
        raise ValueError(f"an exercise number is two digits, such as 01, not {number!r}")
    part = next(name for name, span in PARTS.items() if int(number) in span)
    return f"{__name__}.{part}.ex{number}"
