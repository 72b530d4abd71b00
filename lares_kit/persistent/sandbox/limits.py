"""What a condition may use and what comes back: the terms every layer of the sandbox keeps.

:data:`ALLOWED_FUNCTIONS` are the names a condition may call, :class:`Limits`
how much one condition may use, :class:`CheckedCondition` what the checker
hands on, :class:`Outcome` one evaluation and :class:`ConditionError` a
refusal or a failure, whose ``str()`` is a sentence for the model. The helpers
at the end name values in those sentences. Standard library only, like the
whole of :mod:`lares_kit.persistent.sandbox`.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALLOWED_FUNCTIONS", "EXAMPLE", "CheckedCondition", "ConditionError", "Limits", "Outcome"]

# What a condition may call. get/state read the tick's device states; the rest
# are builtins behind guards (round(5, -10**9) would build 10**(10**9)).
ALLOWED_FUNCTIONS = ("get", "state", "abs", "min", "max", "round", "len", "any", "all", "int", "float", "str", "bool")
EXAMPLE = "def fridge_is_open():\n    return get('fridge', 'door') == 'open'"


class ConditionError(ValueError):
    """Condition code that cannot be registered or that failed to run; ``str()`` is for the model."""

    __module__ = "lares_kit.persistent.sandbox"  # tracebacks name it where it is imported from, not this file


@dataclass(frozen=True)
class Limits:
    """How much one condition may use. Generous for a predicate over a few devices.

    Examples:
        >>> Limits().max_steps
        1000000
        >>> Limits(time_seconds=0)
        Traceback (most recent call last):
        ...
        ValueError: Limits.time_seconds must be a number above 0, not 0.
    """

    max_code_chars: int = 4000  # a condition is a few lines; this also bounds how long checking takes
    max_length: int = 10_000  # longest text, list or tuple a condition may build
    max_int_bits: int = 4096  # largest whole number, about 1233 digits
    max_depth: int = 100  # nesting of the syntax tree; keeps the checker and compiler far from stack limits
    max_steps: int = 1_000_000  # work of one condition in one tick: items, characters and 64-bit digits handled
    time_seconds: float = 1.0  # wall clock for one condition in one tick, in every isolation mode
    tick_seconds: float = 2.0  # wall clock for one tick: later conditions wait for the next tick
    memory_bytes: int = 256 * 2**20  # address space of the worker process (RLIMIT_AS)
    cpu_seconds: int = 5  # CPU per tick before the kernel stops the worker (RLIMIT_CPU), a backstop

    def __post_init__(self) -> None:
        for name in ("max_code_chars", "max_length", "max_int_bits", "max_depth", "max_steps", "memory_bytes",
                     "cpu_seconds"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"Limits.{name} must be a whole number above 0, not {value!r}.")
        for name in ("time_seconds", "tick_seconds"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not 0 < value < math.inf:
                raise ValueError(f"Limits.{name} must be a number above 0, not {value!r}.")
        if self.cpu_seconds < self.tick_seconds + self.time_seconds + 1:
            raise ValueError(f"Limits.cpu_seconds ({self.cpu_seconds}) must be at least tick_seconds + "
                             f"time_seconds + 1 ({self.tick_seconds + self.time_seconds + 1:g}): it is the backstop "
                             "behind them, and must never fire first.")


@dataclass
class CheckedCondition:
    """Code that passed the checker: the function's name and the devices it reads."""

    name: str
    code: str
    # reads: (device_id, attribute or None for state()) for every get/state call with literal arguments
    reads: list[tuple[str, str | None]] = field(default_factory=list)
    tree: ast.Module | None = field(default=None, repr=False)  # guarded tree, ready to compile


@dataclass
class Outcome:
    """One evaluation: ``value`` is True/False, or None with a sentence in ``error``.

    ``steps`` is the work it did (see :class:`Limits`); ``skipped`` means it
    was not run this tick because the tick's time ran out first -- no fault of
    its own.
    """

    value: bool | None
    error: str | None = None
    steps: int = 0
    skipped: bool = False


# ------------------------------------------------------- values in sentences
_PLAIN = (bool, int, float, str, type(None))


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


def _shown(value: Any) -> str:
    # A value in a sentence: short, and never a memory address ('<function get at 0x7f...>').
    if type(value) is int and value.bit_length() > 200:
        return f"a number of about {int(value.bit_length() * 0.30103)} digits"
    if isinstance(value, _PLAIN):
        return _clip(repr(value), 40)
    return f"a {type(value).__name__}"


def _bits(bits: float) -> str:
    return f"{math.ceil(bits):,} bits"


def _digits(bits: float) -> str:
    return f"{math.ceil(bits * 0.30103):,}"
