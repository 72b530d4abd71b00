"""A checked condition compiled and run in this process, within its step and time budgets (layers 1-2).

:func:`run_condition` tries a condition once, for a notebook. The inline
:class:`~lares_kit.persistent.sandbox.Sandbox` and the worker process run conditions
with ``_compile`` and ``_run_all``; a device value is given to a condition as
the worker would get it through JSON (``_readable``), so both isolation modes
see the same values and count the same steps. Standard library only.
"""

from __future__ import annotations

import difflib
import json
import re
import time
import warnings
from typing import Any

from .checker import check_condition
from .guards import _PLAIN_TYPES, _guards, _is_text, _is_whole, _Meter, _OutOfBudget, _Said, _size, _TooBig
from .limits import CheckedCondition, ConditionError, Limits, Outcome, _bits, _clip, _digits, _shown

__all__ = ["run_condition"]


class _Unreadable(ValueError):
    # A device value a condition cannot be given; the message says why.
    pass


_NESTING = 20  # deepest device data a condition may read; device states are flat in practice
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # '<function get at 0x7f...>': no memory addresses in sentences


def _readable(value: Any, limits: Limits, charge: Any) -> Any:
    """A device value as a condition gets it in every isolation mode; raise :class:`_Unreadable` if it cannot.

    Plain values pass as they are. Containers (and anything else) become the
    copy the worker would get through JSON -- tuples as lists, a date as its
    text -- after a walk that charges their size and refuses numbers over
    ``max_int_bits`` and nesting deeper than ``_NESTING`` (a value that holds
    itself is infinitely deep).
    """
    kind = type(value)
    if kind in (str, float, bool, type(None)):
        charge(_size(value))
        return value
    if kind is int:
        if value.bit_length() > limits.max_int_bits:
            raise _Unreadable(_too_many_digits(value.bit_length(), limits))
        charge(_size(value))
        return value
    if not isinstance(value, (list, tuple, dict)):  # a date, a set...: the text the worker would get
        copy = json.loads(json.dumps(value, default=str))
        charge(_size(copy))
        return copy
    stack = [(value, 1)]
    native = True  # lists, str-keyed dicts and plain values only: what JSON gives back unchanged
    while stack:
        item, depth = stack.pop()
        if depth > _NESTING:
            raise _Unreadable(f"it is nested more than {_NESTING} levels deep (or holds itself)")
        charge(1 + 2 * len(item))
        if isinstance(item, dict):
            native = native and type(item) is dict and set(map(type, item)) <= {str}
            parts = [*item.keys(), *item.values()]
        else:
            native = native and type(item) is list
            parts = item
        kinds = set(map(type, parts))
        if int in kinds:
            bits = max(map(int.bit_length, filter(_is_whole, parts)))
            if bits > limits.max_int_bits:
                raise _Unreadable(_too_many_digits(bits, limits).replace("it is", "it holds", 1))
        if str in kinds:
            charge(sum(map(len, filter(_is_text, parts))))
        if not kinds <= _PLAIN_TYPES:
            nested = [part for part in parts if isinstance(part, (list, tuple, dict))]
            native = native and len(nested) == sum(type(part) not in _PLAIN_TYPES for part in parts)
            stack.extend((part, depth + 1) for part in nested)
    if native:
        return value  # a condition cannot change it: no methods, no item assignment
    try:
        return json.loads(json.dumps(value, default=str))
    except (ValueError, TypeError, RecursionError) as exc:
        if isinstance(exc, TypeError) and "keys must be" in str(exc):
            raise _Unreadable("it has keys that are not text, numbers, True/False or None") from None
        raise _Unreadable(f"it cannot be copied for a condition ({type(exc).__name__})") from None


def _too_many_digits(bits: int, limits: Limits) -> str:
    return (f"it is a whole number of about {_digits(bits)} digits ({_bits(bits)}); a condition may hold "
            f"{_bits(limits.max_int_bits)} at most")



class _Loaded:
    """A compiled condition: its function, the tick its reads come from, and its step meter."""

    __slots__ = ("function", "tick", "meter", "limits")

    def __init__(self, function: Any, tick: list, meter: _Meter, limits: Limits) -> None:
        self.function, self.tick, self.meter, self.limits = function, tick, meter, limits


def _compile(checked: CheckedCondition, limits: Limits) -> _Loaded:
    """The condition's function, with get/state reading ``tick`` and every guard charging ``meter``."""
    # tick[0]: this tick's {device_id: state}; tick[1]: {(device_id, attribute): why the host could not send it}
    tick: list[dict] = [{}, {}]
    meter = _Meter()
    charge = meter.charge

    def device(device_id: Any) -> dict[str, Any]:
        states = tick[0]
        if type(device_id) is not str:
            raise _Said(f"A device id is text, e.g. get('fridge', 'door'), not {_shown(device_id)}.")
        if device_id not in states:
            charge(len(states))  # the suggestions read every id
            close = difflib.get_close_matches(device_id[:100], list(states), n=30, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            # Only the closest few in a big home (as lares_kit.errors.choices; this module is stdlib-only).
            listed = ", ".join(states) if len(states) <= 30 else \
                f"{len(states)}, of which the closest are {', '.join(close) or 'none'}"
            raise _Said(f"There is no device {_shown(device_id)}.{hint} Devices: {listed}.")
        state = states[device_id]
        if not isinstance(state, dict):
            raise _Said(f"The device {device_id!r} has a state that is not a mapping of attributes, so a "
                        "condition cannot read it.")
        return state

    def read(device_id: str, attribute: str, value: Any) -> Any:
        why = tick[1].get((device_id, attribute))
        if why is None:
            try:
                return _readable(value, limits, charge)
            except _Unreadable as exc:
                why = str(exc)
        raise _Said(f"The device {device_id!r} has a value for {_shown(attribute)} that a condition cannot read: "
                    f"{why}.")

    def get(device_id: str, attribute: str) -> Any:
        dev = device(device_id)
        if attribute not in dev:
            has = ", ".join(_clip(str(a), 40) for a in list(dev)[:30]) or "nothing to read"
            raise _Said(f"The device {device_id!r} has no attribute {_shown(attribute)}; it has: {has}.")
        return read(device_id, attribute, dev[attribute])

    def state(device_id: str) -> dict[str, Any]:
        # A copy: reading never changes a device.
        return {attribute: read(device_id, attribute, value) for attribute, value in device(device_id).items()}

    names = {"__builtins__": {}, "get": get, "state": state, **_guards(limits, meter)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = compile(checked.tree, "<condition>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ConditionError(f"The condition could not be compiled: {_clip(str(exc), 120)}.") from None
    exec(code, names)  # defines the function, nothing else: the checker allows one def and no decorators
    return _Loaded(names[checked.name], tick, meter, limits)


def _run(loaded: _Loaded, states: dict[str, dict[str, Any]], unreadable: dict | None = None,
         seconds: float | None = None) -> Outcome:
    loaded.tick[0], loaded.tick[1] = states, unreadable or {}
    loaded.meter.start(loaded.limits.max_steps, seconds)
    try:
        value = loaded.function()
    except Exception as exc:  # any failure is a sentence for the model, never a crash of the poller
        return Outcome(None, _failure(exc), loaded.meter.used)
    finally:
        loaded.tick[0], loaded.tick[1] = {}, {}
    if not isinstance(value, bool):
        shown = repr(value) if isinstance(value, (int, float, str, type(None))) else f"a {type(value).__name__}"
        return Outcome(None, f"The condition returned {_clip(shown, 60)}, not True or False; compare it, "
                             "e.g. get('fridge', 'door') == 'open'.", loaded.meter.used)
    return Outcome(value, None, loaded.meter.used)


def _failure(exc: BaseException) -> str:
    if isinstance(exc, (_Said, _OutOfBudget)):
        why = str(exc)
    elif isinstance(exc, _TooBig):
        why = f"a value is too big: {exc}"
    elif isinstance(exc, MemoryError):
        why = "it ran out of memory"
    else:
        why = f"{type(exc).__name__}: {exc}"
    why = _clip(_ADDRESS.sub("", why), 300).rstrip(".")
    line = _line_of(exc)
    return f"Line {line}: {why}." if line else f"{why[:1].upper()}{why[1:]}."


def _line_of(exc: BaseException) -> int | None:
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<condition>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _run_all(loaded: dict[str, _Loaded], keys: list[str], states: dict, unreadable: dict, limits: Limits):
    """Run conditions in order, each within its budgets; yield ``(key, Outcome)`` as each ends.

    The tick's budget is looked at *between* conditions: one that starts
    gets its full ``time_seconds``, and the ones left when the tick's time is
    used are skipped, not blamed (the first always runs, so every tick does
    some work).
    """
    started = time.perf_counter()
    for n, key in enumerate(keys):
        if n and time.perf_counter() - started > limits.tick_seconds:
            yield key, _skipped(limits)
        elif key not in loaded:
            yield key, Outcome(None, f"The condition {key!r} is not loaded.")
        else:
            yield key, _run(loaded[key], states, unreadable, limits.time_seconds)


def _skipped(limits: Limits) -> Outcome:
    return Outcome(None, f"Not checked this tick: the conditions before it used the tick's {limits.tick_seconds:g} s.",
                   skipped=True)


def run_condition(code: str, states: dict[str, dict[str, Any]], limits: Limits | None = None) -> bool:
    """Check and run a condition once in this process (layers 1-2); raise :class:`ConditionError` on failure.

    For trying a condition in a notebook; the poller uses a :class:`Sandbox`.
    The step and time budgets of :class:`Limits` apply.

    Args:
        code: The condition's source: one ``def`` with no arguments that returns True or False.
        states: Device id -> its state, e.g. ``{"fridge": {"door": "open"}}``: what ``get`` and ``state`` read.
        limits: The budgets of the check and the run (steps, time, sizes); None: ``Limits()``.

    Examples:
        >>> states = {"fridge": {"door": "open", "temperature": 4}}
        >>> run_condition("def f():\\n    return get('fridge', 'door') == 'open'", states)
        True
        >>> run_condition("def f():\\n    return get('fridge', 'door')", states)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.persistent.sandbox.ConditionError: The condition returned 'open', not True or False;
        compare it, e.g. get('fridge', 'door') == 'open'.
        >>> run_condition("def f():\\n    return 'x' * 10000 == 'y' * 10000", states,
        ...               Limits(max_steps=5000))  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.persistent.sandbox.ConditionError: Line 2: it needs more than 5,000 steps, the budget of one condition
        in one tick (a step is one item, character or 64-bit digit handled); it works on values that are too
        large -- read a few devices and compare them.
    """
    limits = limits or Limits()
    _check_states(states)
    outcome = _run(_compile(check_condition(code, limits), limits), states, None, limits.time_seconds)
    if outcome.error:
        raise ConditionError(outcome.error)
    return outcome.value


def _check_states(states: Any) -> None:
    if not isinstance(states, dict):
        raise ConditionError(f"Device states are a dict {{device_id: {{attribute: value}}}}, not "
                             f"{_shown(states)}.")

