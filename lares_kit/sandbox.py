"""Condition code for persistent commands: check it, then run it in a sandbox.

Taught in ``notebooks/13_persistent_commands.ipynb``. "Turn on the dining
light when I open the fridge": the agent writes the condition as a small
Python function, and the poller (:mod:`lares_kit.monitor`) runs it every tick.
That is model-written code running in our process, so it goes through three
layers, each enough on its own for the attacks in
``lares_kit/data/sandbox_attacks.yaml``:

1. **The checker** (:func:`check_condition`) reads the code as a syntax tree
   and allows a short list of node types: one ``def name():`` with no
   arguments; ``if``/``return``/assignments to plain names; comparisons,
   ``and``/``or``/``not``, ``+ - * / // % **``, literals; calls to the names in
   :data:`ALLOWED_FUNCTIONS` only. No imports, no attribute access at all,
   no names starting with ``_``, no loops, comprehensions, lambdas,
   f-strings, ``try`` or ``:=``. With no loops and no way to call itself, a
   condition runs each line at most once. Checking takes one pass over the
   tree (:class:`Limits` bounds its size), so it is linear in the code.
2. **The guards and the step budget**: every operator, comparison,
   subscript, literal and allowed call is rewritten into a call that refuses
   a result over :class:`Limits` *before* building it (``'a' * 10**10`` never
   allocates; a whole number never grows past ``max_int_bits``, whatever the
   operator) and counts the *steps* it costs: one per item, character or
   64-bit digit it handles. A condition that needs more than
   ``max_steps``, or more than ``time_seconds`` of wall clock, is stopped and
   told so; a tick stops starting conditions after ``tick_seconds``. The
   evaluator does the counting, so the budgets hold in every isolation mode.
   Constant expressions are folded through the same guards at check time,
   and the function runs in an explicit namespace whose ``__builtins__`` is
   an empty dict.
3. **The jail** (``isolation="process"``, the default on POSIX): conditions
   live in one persistent worker process that never sees the Home -- it gets a
   copy of the device states each tick -- under ``RLIMIT_AS`` (memory),
   ``RLIMIT_CPU``, ``RLIMIT_FSIZE=0``, ``RLIMIT_NOFILE`` (no new files or
   sockets) and ``RLIMIT_NPROC=0``; the host kills and restarts it if it stops
   answering. One round trip per tick, not per condition, keeps it cheap.
   ``isolation="inline"`` runs layers 1-2 in this process, for places with no
   subprocesses (JupyterLite) and for the benchmark.

Why a step budget and not a thread or a signal for the inline mode: a thread
cannot be stopped from outside in Python (abandoning it leaves it running),
and a signal reaches only the main thread. The guards already sit in front of
every operation whose cost depends on the data, so counting there stops a
condition between two operations, and each operation is small: a value can
only hold what earlier, counted steps built or read.

This module knows nothing of Homes, clocks or agents: device states are plain
``{device_id: {attribute: value}}`` dicts. It imports only the standard
library because it is also the worker's script (``python -I -S sandbox.py``),
which is also why it is one file, longer than the others.
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import math
import operator
import os
import re
import select
import subprocess
import sys
import time
import tokenize
import warnings
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ConditionError", "Limits", "CheckedCondition", "Outcome", "ALLOWED_FUNCTIONS", "check_condition",
           "run_condition", "Sandbox"]

# What a condition may call. get/state read the tick's device states; the rest
# are builtins behind guards (round(5, -10**9) would build 10**(10**9)).
ALLOWED_FUNCTIONS = ("get", "state", "abs", "min", "max", "round", "len", "any", "all", "int", "float", "str", "bool")
EXAMPLE = "def fridge_is_open():\n    return get('fridge', 'door') == 'open'"


class ConditionError(ValueError):
    """Condition code that cannot be registered or that failed to run; ``str()`` is for the model."""


class _TooBig(ArithmeticError):
    # Raised by a guard; its message is the sentence the model reads.
    pass


class _OutOfBudget(Exception):
    # Raised by the step meter: the condition used its steps or its time.
    pass


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


# ------------------------------------------------------------------ checking
_STATEMENTS = (ast.Return, ast.If, ast.Assign, ast.AugAssign, ast.Pass, ast.Expr)
_EXPRESSIONS = (ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Constant, ast.Name, ast.List,
                ast.Tuple, ast.Dict, ast.Set, ast.Subscript, ast.Slice, ast.IfExp)
_OPERATORS = (ast.And, ast.Or, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.Not,
              ast.USub, ast.UAdd, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is,
              ast.IsNot, ast.Load, ast.Store)
_READ_HINT = "use get(device_id, attribute) or state(device_id) to read devices"
_NO_LOOPS = ("loops are not allowed in a condition; it is checked again every tick, so say what must be true "
             "now, e.g. any([get('lamp', 'on'), get('tv', 'on')])")
# node type -> why it is refused, in words for the model
_REFUSED = {
    ast.Import: f"imports are not allowed in a condition; {_READ_HINT}",
    ast.ImportFrom: f"imports are not allowed in a condition; {_READ_HINT}",
    ast.Attribute: f"attribute access (a dot after a value) is not allowed in a condition; {_READ_HINT}",
    ast.While: _NO_LOOPS, ast.For: _NO_LOOPS, ast.AsyncFor: _NO_LOOPS,
    ast.ListComp: "comprehensions are not allowed in a condition; list the values, e.g. all([get('a', 'on'), get('b', 'on')])",
    ast.SetComp: "comprehensions are not allowed in a condition; list the values instead",
    ast.DictComp: "comprehensions are not allowed in a condition; list the values instead",
    ast.GeneratorExp: "generator expressions are not allowed in a condition; list the values instead",
    ast.Lambda: "lambdas are not allowed in a condition; write the test inline",
    ast.FunctionDef: "a condition is one function; nested functions are not allowed",
    ast.AsyncFunctionDef: "async functions are not allowed in a condition",
    ast.ClassDef: "classes are not allowed in a condition",
    ast.NamedExpr: "the walrus operator := is not allowed in a condition; use a plain assignment",
    ast.JoinedStr: "f-strings are not allowed in a condition; it returns True or False and needs no text formatting",
    ast.Starred: "* unpacking is not allowed in a condition; pass the values one by one",
    ast.Yield: "yield is not allowed in a condition; return True or False",
    ast.YieldFrom: "yield is not allowed in a condition; return True or False",
    ast.Await: "await is not allowed in a condition",
    ast.Global: "global and nonlocal are not allowed in a condition",
    ast.Nonlocal: "global and nonlocal are not allowed in a condition",
}


def _refusal(node: ast.AST) -> str:
    for kind, why in _REFUSED.items():
        if isinstance(node, kind):
            return why
    if isinstance(node, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift, ast.Invert, ast.MatMult)):
        return "bitwise operators (& | ^ << >> ~ @) are not allowed in a condition"
    if isinstance(node, ast.stmt):
        word = type(node).__name__.lower()
        return f"'{word}' statements are not allowed in a condition; use if, return and assignments"
    return f"{type(node).__name__} is not allowed in a condition; use comparisons, and/or/not and arithmetic"


def check_condition(code: str, limits: Limits | None = None) -> CheckedCondition:
    """Check condition code without running it; raise :class:`ConditionError` saying what to fix.

    One pass over the syntax tree: the time it takes grows with the length
    of the code (at most ``Limits.max_code_chars``), never faster.

    Examples:
        >>> check_condition("def fridge_open():\\n    return get('fridge', 'door') == 'open'").reads
        [('fridge', 'door')]
        >>> check_condition("import os\\ndef f():\\n    return True")
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: Line 1: imports are not allowed in a condition; use get(device_id, attribute) or state(device_id) to read devices.
        >>> check_condition("def f():\\n    return ().__class__")
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: Line 2: attribute access (a dot after a value) is not allowed in a condition; use get(device_id, attribute) or state(device_id) to read devices.
        >>> check_condition("def f():\\n    return len('a' * 10**10) > 3")
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: Line 2: 'a' * 10 ** 10 is too big: it would hold 10000000000 items; the limit is 10000.
    """
    limits = limits or Limits()
    if not isinstance(code, str):
        raise ConditionError(f"The condition must be Python source text, e.g.\n{EXAMPLE}")
    if len(code) > limits.max_code_chars:
        raise ConditionError(f"The condition is {len(code)} characters long; keep it under "
                             f"{limits.max_code_chars}: a few lines that read devices and compare.")
    _check_text(code)
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: the checker says what matters
            warnings.simplefilter("ignore")
            tree = ast.parse(code, "<condition>")
    except SyntaxError as exc:
        where = f"Line {exc.lineno}: " if exc.lineno else ""
        raise ConditionError(f"{where}{exc.msg}. A condition looks like:\n{EXAMPLE}") from None
    except (RecursionError, MemoryError):
        raise ConditionError("The condition is nested too deeply to read; write it as a few short lines.") from None
    except ValueError as exc:  # what _check_text did not foresee; say what Python said, no traceback
        raise ConditionError(f"The condition could not be read: {_clip(str(exc), 120)}.") from None
    _check_depth(tree, limits.max_depth)
    func = _the_function(tree)
    problems: list[tuple[int, str]] = []  # (line, sentence)
    idle: list[tuple[int, str]] = []  # lines that do nothing: worth saying only when nothing else is wrong
    assigned = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    reads: list[tuple[str, str | None]] = []
    folding = _Folding(limits)  # constant values, each node folded once: checking stays linear
    # An explicit stack, not recursion: deep input cannot overflow the checker.
    # The parts of a refused node are not checked: one sentence per mistake.
    stack: list[tuple[ast.AST, ast.AST | None]] = [(node, None) for node in reversed(func.body)]
    while stack:
        node, parent = stack.pop()
        problem = _check_node(node, parent, func, assigned, reads, folding)
        line = getattr(node, "lineno", None) or getattr(parent, "lineno", None) or func.lineno
        if problem == _IDLE:
            idle.append((line, problem))
        elif problem:
            problems.append((line, problem))
            continue
        stack.extend((child, node) for child in reversed(list(ast.iter_child_nodes(node))))
    if problems or idle:
        shown = sorted(set(problems or idle))[:3]  # the first few, in source order: enough to fix in one go
        raise ConditionError(" ".join(f"Line {n}: {why}." for n, why in shown))
    return CheckedCondition(func.name, code, reads, _guarded(tree))


def _check_text(code: str) -> None:
    # Characters Python cannot compile: say which and where, before the parser
    # gives a message with no line ("source code string cannot contain null bytes").
    for line_number, line in enumerate(code.splitlines() or [""], 1):
        for char in line:
            if char == "\0" or "\ud800" <= char <= "\udfff":
                what = "a NUL character" if char == "\0" else f"U+{ord(char):04X}, half of a surrogate pair"
                raise ConditionError(f"Line {line_number}: the condition contains {what}, which is not text "
                                     "Python can read; remove it.")
    # Python folds lookalike letters (NFKC: 'ｅｖａｌ' -> 'eval') before the tree is
    # built, so the checker would catch them anyway; plain ASCII names also
    # keep conditions readable for the people who review them.
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii():
                raise ConditionError(f"Line {tok.start[0]}: use plain ASCII letters in names; {tok.string!r} is not.")
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # ast.parse reports syntax errors with a better message


def _check_depth(tree: ast.Module, most: int) -> None:
    stack = [(tree, 0, 1)]  # node, depth, line of the closest node that has one
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", None) or line
        if depth > most:
            raise ConditionError(f"Line {line}: the condition is nested too deeply; "
                                 "split it into a few assignments.")
        stack.extend((child, depth + 1, line) for child in ast.iter_child_nodes(node))


def _the_function(tree: ast.Module) -> ast.FunctionDef:
    body = tree.body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef):
        first = next((s for s in body if not isinstance(s, ast.FunctionDef)), None)
        if isinstance(first, (ast.Import, ast.ImportFrom)):
            raise ConditionError(f"Line {first.lineno}: {_refusal(first)}.")
        line = first.lineno if first is not None else (body[1].lineno if len(body) > 1 else 1)
        raise ConditionError(f"Line {line}: a condition is exactly one function with no arguments "
                             f"and nothing around it, e.g.\n{EXAMPLE}")
    func = body[0]
    a = func.args
    if a.args or a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults or a.kw_defaults:
        raise ConditionError(f"Line {func.lineno}: the function {func.name}() must take no arguments (no defaults "
                             f"either); {_READ_HINT} inside it.")
    if func.decorator_list:
        raise ConditionError(f"Line {func.decorator_list[0].lineno}: decorators are not allowed in a condition.")
    if func.returns is not None and not (isinstance(func.returns, ast.Name) and func.returns.id == "bool"):
        raise ConditionError(f"Line {func.lineno}: the only return annotation allowed is '-> bool'.")
    if func.name.startswith("_") or func.name in ALLOWED_FUNCTIONS:
        raise ConditionError(f"Line {func.lineno}: name the function for what it checks, e.g. fridge_is_open; "
                             f"{func.name!r} is not allowed.")
    return func


_IDLE = "a line that only computes a value does nothing here; assign it or return it"


def _check_node(node: ast.AST, parent: ast.AST | None, func: ast.FunctionDef, assigned: set[str], reads: list,
                folding: _Folding) -> str | None:
    if not isinstance(node, (*_STATEMENTS, *_EXPRESSIONS, *_OPERATORS)):
        return _refusal(node)
    if isinstance(node, (ast.BinOp, ast.UnaryOp)) and not isinstance(node.op, _OPERATORS):
        return _refusal(node.op)  # said here, where the line number is
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            return f"names starting with an underscore ({node.id}) are not allowed in a condition"
        if isinstance(node.ctx, ast.Store) and node.id in (*ALLOWED_FUNCTIONS, func.name):
            return f"{node.id!r} is already the name of a function; pick another name for your value"
        if node.id == func.name:
            return f"a condition cannot call itself or use its own name {node.id!r}"
        if isinstance(node.ctx, ast.Load) and node.id not in assigned and node.id not in ALLOWED_FUNCTIONS:
            return (f"{node.id!r} is not available in a condition; the functions you can call are "
                    f"{', '.join(ALLOWED_FUNCTIONS)}")
    elif isinstance(node, ast.Constant):
        if not (node.value is None or isinstance(node.value, (bool, int, float, str))):
            return "only numbers, text, True, False and None can be written in a condition"
    elif isinstance(node, ast.Expr):
        if not (node is func.body[0] and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return _IDLE
    elif isinstance(node, ast.Return):
        if node.value is None:
            return "every return must give True or False"
    elif isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            return "you can only assign to a plain name, e.g. door = get('fridge', 'door')"
    elif isinstance(node, ast.Dict) and any(key is None for key in node.keys):
        return "** unpacking is not allowed in a condition; write the keys out"
    elif isinstance(node, ast.Slice) and not (isinstance(parent, ast.Subscript) and parent.slice is node):
        return "a slice (a:b) goes inside square brackets right after a value, e.g. text[0:3]"
    elif isinstance(node, ast.Compare):
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (isinstance(right, ast.Constant) and right.value is None):
                return "use == and != to compare values; 'is' only with None"
    elif isinstance(node, ast.Call):
        return _check_call(node, func.name, reads)
    elif isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return "'%' formatting of text is not allowed in a condition; compare values instead"
        return folding.check(node)
    return None


def _check_call(node: ast.Call, own_name: str, reads: list) -> str | None:
    allowed = ", ".join(ALLOWED_FUNCTIONS)
    if isinstance(node.func, ast.Attribute):
        return (f"methods (.{node.func.attr}(...)) are not available in a condition; the functions you can "
                f"call are {allowed}")
    if isinstance(node.func, ast.Name) and node.func.id == own_name:
        return "a condition cannot call itself; it is checked again every tick anyway"
    if isinstance(node.func, ast.Name) and node.func.id not in ALLOWED_FUNCTIONS:
        return f"{node.func.id!r} is not available in a condition; the functions you can call are {allowed}"
    if not isinstance(node.func, ast.Name):
        return f"only these functions can be called in a condition, by name: {allowed}"
    if node.keywords:
        return "keyword arguments are not allowed in a condition; pass plain values, e.g. get('fridge', 'door')"
    name, args = node.func.id, node.args
    wanted = {"get": 2, "state": 1}.get(name)
    if wanted is not None:
        if len(args) != wanted:
            return ("get takes two values: get(device_id, attribute)" if name == "get"
                    else "state takes one value: state(device_id)")
        if all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
            reads.append((args[0].value, args[1].value if name == "get" else None))
    return None


class _NotConstant(Exception):
    pass


class _Folding:
    """Constant arithmetic folded through the runtime guards, so 2 ** 10 ** 10 or
    'a' * 10 ** 10 is refused before anything runs.

    Each node is folded once and remembered (folding every BinOp's subtree
    again made checking quadratic), and the folds share a step budget: past
    it, nothing more is folded and the run's own budget has the last word.
    """

    def __init__(self, limits: Limits) -> None:
        self.meter = _Meter()
        self.meter.start(limits.max_steps // 10, None)
        self.guards = _guards(limits, self.meter)
        self.known: dict[int, tuple[bool, Any]] = {}  # id(node) -> (True, value) or (False, (exception type, args))

    def check(self, node: ast.BinOp) -> str | None:
        try:
            self.fold(node)
        except _TooBig as exc:
            return f"{_clip(ast.unparse(node), 40)} is too big: {exc}"
        except Exception:  # not constant, out of folding steps, or an error the run reports with its line
            pass
        return None

    def fold(self, node: ast.AST) -> Any:
        known = self.known.get(id(node))
        if known is not None:
            if known[0]:
                return known[1]
            kind, args = known[1]
            raise kind(*args)  # a fresh exception: re-raising one object would grow its traceback
        try:
            value = self._fold(node)
        except Exception as exc:
            self.known[id(node)] = (False, (type(exc), exc.args))
            raise
        self.known[id(node)] = (True, value)
        return value

    def _fold(self, node: ast.AST) -> Any:
        guards = self.guards
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return guards[_LITERALS[type(node)]](*[self.fold(e) for e in node.elts])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.fold(node.operand)
            self.meter.charge(_size(value))
            return -value if isinstance(node.op, ast.USub) else +value
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return guards[_ARITHMETIC[type(node.op)]](self.fold(node.left), self.fold(node.right))
        raise _NotConstant


def _clip(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 3] + "..."


# ------------------------------------------------------------------- guards
# Sizes are bounded two ways. Every text, list and tuple a condition builds is
# at most max_length long, every whole number at most max_int_bits, and every
# list, tuple, set or dict it builds is *flat* (holds plain values only).
# Without flatness, [[1] * 9999] * 9999 is small to build but str() of it is
# 10**8 characters. Time is bounded by the step meter: each guard charges what
# its operation handles (_size of its operands or result) before doing it.
_ARITHMETIC = {ast.Add: "_add", ast.Sub: "_sub", ast.Mult: "_mul", ast.Div: "_div", ast.FloorDiv: "_floordiv",
               ast.Mod: "_mod", ast.Pow: "_pow"}
_LITERALS = {ast.List: "_list", ast.Tuple: "_tuple", ast.Set: "_set"}
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)
_COMPARE = (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
            lambda a, b: a in b, lambda a, b: a not in b, operator.is_, operator.is_not)
_SEQUENCES = (str, list, tuple)
_PLAIN = (bool, int, float, str, type(None))
_PLAIN_TYPES = frozenset(_PLAIN)
_is_text = str.__instancecheck__  # C-level predicates: sizing a 10,000-item list stays fast
_is_whole = int.__instancecheck__


def _size(value: Any) -> int:
    """Steps to handle a value: 1, plus its characters, its 64-bit digits, or what its items hold.

    Containers built by a condition are flat, so this is C-level work; nested
    ones come only from device data, at most ``_NESTING`` deep.
    """
    kind = type(value)
    if kind is str:
        return 1 + len(value)
    if kind is int:
        return 1 + (value.bit_length() >> 6)
    if kind in (list, tuple, set, frozenset):
        return 1 + _items_size(value)
    if kind is dict:
        return 1 + _items_size(value.keys()) + _items_size(value.values())
    return 1


def _items_size(items: Any) -> int:
    kinds = set(map(type, items))
    total = len(items)
    if str in kinds:
        total += sum(map(len, filter(_is_text, items)))
    if int in kinds:
        total += sum(map(int.bit_length, filter(_is_whole, items))) >> 6
    if not kinds <= _PLAIN_TYPES:
        total += sum(_size(item) for item in items if type(item) not in _PLAIN_TYPES)
    return total


class _Meter:
    """The step budget of one run: ``charge(n)`` before an operation that handles n things."""

    __slots__ = ("budget", "left", "seconds", "deadline")

    def __init__(self) -> None:
        self.budget = self.left = 0
        self.seconds: float | None = None
        self.deadline: float | None = None

    def start(self, budget: int, seconds: float | None) -> None:
        self.budget = self.left = budget
        self.seconds = seconds
        self.deadline = None if seconds is None else time.perf_counter() + seconds

    @property
    def used(self) -> int:
        return min(self.budget - self.left, self.budget)

    def charge(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise _OutOfBudget(f"it needs more than {self.budget:,} steps, the budget of one condition in one "
                               "tick (a step is one item, character or 64-bit digit handled); it works on values "
                               "that are too large -- read a few devices and compare them")
        # The clock is read at every charge: the wall-clock budget holds even where no process can be killed.
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _OutOfBudget(f"it ran for more than {self.seconds:g} s, the time budget of one condition "
                               "in one tick")


def _guards(limits: Limits, meter: _Meter) -> dict[str, Any]:
    """The checked operations the guarded tree calls, bound to ``limits`` and ``meter``."""
    charge = meter.charge

    def too_long(n: int) -> None:
        if n > limits.max_length:
            raise _TooBig(f"it would hold {n} items; the limit is {limits.max_length}")

    def too_wide(bits: float) -> None:
        if bits > limits.max_int_bits:
            raise _TooBig(f"the number would need {_bits(bits)} (about {_digits(bits)} digits); the limit is "
                          f"{_bits(limits.max_int_bits)}")

    def whole(result: Any) -> Any:
        # Every arithmetic result passes here: no operator (+, -, abs...) grows a number past the limit.
        if type(result) is int:
            too_wide(result.bit_length())
        return result

    def flat(items: Any) -> Any:
        if isinstance(items, str) or set(map(type, items)) <= _PLAIN_TYPES:
            return items
        bad = next(item for item in items if type(item) not in _PLAIN_TYPES)
        raise TypeError(f"lists, tuples, sets and dicts in a condition hold plain values (numbers, text, "
                        f"True/False/None), not a {type(bad).__name__}")

    def numbers(a: Any, b: Any) -> bool:
        # Cost of whole-number arithmetic: the digits of one times the digits of the other, at worst.
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            charge(_size(a) * _size(b))
            return True
        return False

    def _add(a: Any, b: Any) -> Any:
        if numbers(a, b):
            return whole(a + b)
        if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES) and type(a) is type(b):
            too_long(len(a) + len(b))
            flat(a), flat(b)
            charge(len(a) + len(b))
        return a + b

    def _sub(a: Any, b: Any) -> Any:
        if numbers(a, b):
            return whole(a - b)
        charge(_size(a) + _size(b))  # set difference
        return a - b

    def _mul(a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, _SEQUENCES):
            a, b = b, a
        if isinstance(a, _SEQUENCES) and isinstance(b, int):
            too_long(len(a) * b)
            flat(a)
            charge(1 + max(len(a) * b, 0))
            return a * b
        if isinstance(a, int) and isinstance(b, int):
            too_wide(a.bit_length() + b.bit_length())
        if numbers(a, b):
            return whole(a * b)
        return a * b

    def _div(a: Any, b: Any) -> Any:
        numbers(a, b)
        return a / b

    def _floordiv(a: Any, b: Any) -> Any:
        numbers(a, b)
        return whole(a // b)

    def _mod(a: Any, b: Any) -> Any:
        # '%' on text is formatting: '%0999999999d' % 1 is a memory bomb.
        if isinstance(a, str):
            raise TypeError("'%' formatting of text is not allowed in a condition; compare values instead")
        numbers(a, b)
        return whole(a % b)

    def _pow(a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
            bits = b * math.log2(abs(a))
            too_wide(bits)
            charge((1 + int(bits) // 64) ** 2)  # repeated squaring up to the result's size
        else:
            numbers(a, b)
        return whole(a ** b)

    def _cmp(a: Any, op: int, b: Any) -> Any:
        # Equal values are compared item by item, character by character: the sizes of both sides.
        steps = _size(a) + _size(b)
        if op in (6, 7) and type(a) is str and type(b) is str:
            steps += len(b) * min(len(a), 100) // 4  # a substring search can retry at every position
        charge(steps)
        return _COMPARE[op](a, b)

    def _item(value: Any, key: Any) -> Any:
        charge(_size(key))
        try:
            result = value[key]
        except KeyError:
            keys = ", ".join(_shown(k) for k in list(value)[:20]) if isinstance(value, dict) else ""
            raise _Said(f"there is no key {_shown(key)}" + (f"; the keys are: {keys}" if keys else "")) from None
        if type(key) is slice:
            charge(_size(result))
        return result

    def _list(*items: Any) -> list:
        charge(1 + len(items))
        return list(flat(items))

    def _tuple(*items: Any) -> tuple:
        charge(1 + len(items))
        return flat(items)

    def _set(*items: Any) -> set:
        charge(1 + _items_size(flat(items)))  # hashing text reads it all
        return set(items)

    def _dict(*pairs: Any) -> dict:  # key, value, key, value...
        charge(1 + _items_size(flat(pairs)))
        return dict(zip(pairs[::2], pairs[1::2]))

    def checked_round(number: Any, ndigits: Any = None) -> Any:
        # round(5, -10**9) would compute 10**(10**9) first.
        charge(_size(number))
        if ndigits is None:
            return whole(round(number))
        if not isinstance(ndigits, int) or abs(ndigits) > 30:
            raise ValueError("round(x, n) needs a whole number n between -30 and 30")
        return whole(round(number, ndigits))

    def checked_int(value: Any, *base: Any) -> int:
        # Text to number is quadratic in the digits; a reading never has 100.
        if isinstance(value, str) and len(value) > 100:
            raise ValueError("int() reads at most 100 characters of text")
        charge(_size(value))
        return whole(int(value, *base))

    def checked_str(value: Any) -> str:
        if not isinstance(value, _PLAIN):
            raise TypeError(f"str() turns a number or True/False/None into text, not a {type(value).__name__}")
        charge(_size(value) ** 2 if type(value) is int else _size(value))  # number to text: quadratic in digits
        return str(value)

    def charged(function: Any) -> Any:
        def call(*args: Any) -> Any:
            charge(1 + sum(map(_size, args)))
            return whole(function(*args))
        call.__name__ = function.__name__
        return call

    return {"_add": _add, "_sub": _sub, "_mul": _mul, "_div": _div, "_floordiv": _floordiv, "_mod": _mod,
            "_pow": _pow, "_cmp": _cmp, "_item": _item, "_slice": slice, "_list": _list, "_tuple": _tuple,
            "_set": _set, "_dict": _dict, "round": checked_round, "int": checked_int, "str": checked_str,
            "float": charged(float), "abs": charged(abs), "min": charged(min), "max": charged(max),
            "any": charged(any), "all": charged(all), "len": len, "bool": bool}


def _shown(value: Any) -> str:
    # A value in a sentence: short, and never a memory address ('<function get at 0x7f...>').
    if type(value) is int and value.bit_length() > 200:
        return f"a number of about {int(value.bit_length() * 0.30103)} digits"
    if isinstance(value, _PLAIN):
        return _clip(repr(value), 40)
    return f"a {type(value).__name__}"


def _call(name: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), like)


class _Guard(ast.NodeTransformer):
    # a * b -> _mul(a, b); x *= y -> x = _mul(x, y); [a, b] -> _list(a, b);
    # a < b < c -> _cmp(a, 2, (_t0 := b)) and _cmp(_t0, 2, c); x[k] -> _item(x, k).
    # The _ names cannot be written by the condition: the checker refuses
    # every name that starts with an underscore.
    def __init__(self) -> None:
        self.temps = 0

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        return _call(_ARITHMETIC[type(node.op)], [node.left, node.right], node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        value = ast.copy_location(ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value), node)
        assign = ast.Assign([ast.Name(node.target.id, ast.Store())], self.visit(value))
        return ast.copy_location(assign, node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        # A chain keeps Python's meaning: each middle value is computed once, and
        # the chain stops at the first False.
        self.generic_visit(node)
        left, calls = node.left, []
        for n, (op, right) in enumerate(zip(node.ops, node.comparators)):
            following = right
            if n < len(node.ops) - 1:
                name = f"_t{self.temps}"
                self.temps += 1
                right = ast.NamedExpr(ast.Name(name, ast.Store()), right)
                following = ast.Name(name, ast.Load())
            calls.append(_call("_cmp", [left, ast.Constant(_COMPARISONS.index(type(op))), right], node))
            left = following
        return calls[0] if len(calls) == 1 else ast.copy_location(ast.BoolOp(ast.And(), calls), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        return _call("_item", [node.value, node.slice], node)

    def visit_Slice(self, node: ast.Slice) -> ast.AST:
        self.generic_visit(node)
        parts = [part or ast.Constant(None) for part in (node.lower, node.upper, node.step)]
        return _call("_slice", parts, node)

    def _literal(self, node: ast.List | ast.Tuple | ast.Set) -> ast.AST:
        self.generic_visit(node)
        return _call(_LITERALS[type(node)], node.elts, node)

    visit_List = visit_Tuple = visit_Set = _literal

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        self.generic_visit(node)
        return _call("_dict", [part for pair in zip(node.keys, node.values) for part in pair], node)


def _guarded(tree: ast.Module) -> ast.Module:
    return ast.fix_missing_locations(_Guard().visit(tree))


# ------------------------------------------------------------------ running
class _Said(LookupError):
    # A failure whose message is already the sentence for the model (no such device, no such key).
    pass


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


def _bits(bits: float) -> str:
    return f"{math.ceil(bits):,} bits"


def _digits(bits: float) -> str:
    return f"{math.ceil(bits * 0.30103):,}"


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

    Examples:
        >>> states = {"fridge": {"door": "open", "temperature": 4}}
        >>> run_condition("def f():\\n    return get('fridge', 'door') == 'open'", states)
        True
        >>> run_condition("def f():\\n    return get('fridge', 'door')", states)
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: The condition returned 'open', not True or False; compare it, e.g. get('fridge', 'door') == 'open'.
        >>> run_condition("def f():\\n    return 'x' * 10000 == 'y' * 10000", states, Limits(max_steps=5000))
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: Line 2: it needs more than 5,000 steps, the budget of one condition in one tick (a step is one item, character or 64-bit digit handled); it works on values that are too large -- read a few devices and compare them.
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


# ------------------------------------------------------------------ sandbox
class Sandbox:
    """Conditions loaded by key, evaluated together against one tick's device states.

    ``isolation`` is ``"process"`` (a persistent jailed worker, see the module
    docstring), ``"inline"`` (this process, checker, guards and budgets) or
    ``"auto"`` (process where the OS has ``resource`` limits, else inline).
    ``jail`` lists the OS limits the worker really got.

    Examples:
        >>> with Sandbox() as box:
        ...     box.load("fridge_open", "def fridge_open():\\n    return get('fridge', 'door') == 'open'").name
        ...     box.evaluate({"fridge": {"door": "open"}})
        ...     box.evaluate({"fridge": {"door": "closed"}})["fridge_open"].value
        'fridge_open'
        {'fridge_open': Outcome(value=True, error=None, steps=15, skipped=False)}
        False
    """

    def __init__(self, limits: Limits | None = None, isolation: str = "auto",
                 worker_command: list[str] | None = None) -> None:
        self.limits = limits or Limits()
        if isolation == "auto":
            isolation = "process" if resource is not None else "inline"
        if isolation not in ("process", "inline"):
            raise ValueError(f"unknown isolation {isolation!r}; use 'process', 'inline' or 'auto'")
        self.isolation = isolation
        self.restarts = 0  # how often the worker was killed and started again
        self._codes: dict[str, str] = {}  # key -> source, in load order; reloads a restarted worker
        self._inline: dict[str, _Loaded] = {}
        self._worker = _Worker(self.limits, worker_command) if isolation == "process" else None

    @property
    def jail(self) -> list[str]:
        return self._worker.jail if self._worker else []

    def load(self, key: str, code: str, checked: CheckedCondition | None = None) -> CheckedCondition:
        """Check ``code`` and keep it under ``key``; raise :class:`ConditionError` if it is refused.

        ``checked`` is what :func:`check_condition` already returned for this
        code, so the host does not check it twice (the worker still does: it
        trusts nothing it is sent).
        """
        if checked is None or checked.code != code:
            checked = check_condition(code, self.limits)
        if self._worker is None:
            self._inline[key] = _compile(checked, self.limits)
        else:
            try:
                self._worker.ensure(self._codes)
                reply = self._worker.request({"op": "load", "id": key, "code": code}, self._worker.load_seconds)
            except _Stopped as exc:
                self._restart()
                raise ConditionError(f"The condition could not be loaded: {exc}.") from None
            if "error" in reply:
                raise ConditionError(reply["error"])
        self._codes[key] = code
        return checked

    def drop(self, key: str) -> None:
        """Forget a condition (unknown keys are ignored)."""
        self._codes.pop(key, None)
        self._inline.pop(key, None)
        if self._worker is not None and self._worker.running:
            try:
                self._worker.request({"op": "drop", "id": key}, self._worker.load_seconds)
            except _Stopped:
                self._restart()

    def evaluate(self, states: dict[str, dict[str, Any]], keys: list[str] | None = None) -> dict[str, Outcome]:
        """Run conditions (all, or ``keys``, in that order) on ``{device_id: state}``; every key gets an Outcome.

        Each condition gets ``Limits.max_steps`` and ``time_seconds``; after
        ``tick_seconds`` the rest are skipped (``Outcome.skipped``).
        """
        _check_states(states)
        keys = list(self._codes) if keys is None else list(keys)
        unknown = [k for k in keys if k not in self._codes]
        if unknown:
            raise KeyError(f"no condition loaded as {unknown[0]!r}")
        if self._worker is None:
            return dict(_run_all(self._inline, keys, states, {}, self.limits))
        text, unreadable = _encode_states(states, self.limits)
        results: dict[str, Outcome] = {}
        pending = keys  # answered in order, so pending[0] is the one running
        started = time.perf_counter()
        while pending:
            if results and time.perf_counter() - started > self.limits.tick_seconds:
                results.update((key, _skipped(self.limits)) for key in pending)  # after a restart
                break
            try:
                self._worker.ensure(self._codes)
                self._worker.send_line(f'{{"op": "eval", "ids": {json.dumps(pending)}, "unreadable": '
                                       f'{json.dumps(unreadable)}, "states": {text}}}')
                while pending:
                    reply = self._worker.receive(self._worker.answer_seconds)
                    if not isinstance(reply, dict) or reply.get("id") != pending[0]:
                        raise _Stopped("the worker answered out of turn, so it was stopped and restarted")
                    results[pending[0]] = Outcome(reply.get("value"), reply.get("error"), reply.get("steps", 0),
                                                  bool(reply.get("skipped")))
                    pending = pending[1:]
            except _Stopped as exc:
                # Kill and restart the worker; the culprit gets the error, the rest run again.
                results[pending[0]] = Outcome(None, f"The sandbox stopped this condition: {exc}.")
                pending = pending[1:]
                self._restart()
        return results

    def _restart(self) -> None:
        self._worker.stop()
        self.restarts += 1

    def close(self) -> None:
        """Stop the worker process (a garbage-collected Sandbox stops it too)."""
        if self._worker is not None:
            self._worker.stop()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _encode_states(states: dict[str, Any], limits: Limits) -> tuple[str, list[list]]:
    """The states as JSON for the worker, and ``[device_id, attribute, why]`` for values JSON cannot carry.

    One ``json.dumps`` in the usual case. A value that cannot be encoded (a
    number of 4,300+ digits, a value that holds itself) is sent as None and
    named in the second list, so only the conditions that read it fail, with
    the same sentence as inline -- not the whole tick.
    """
    try:
        return json.dumps(states, default=str), []
    except (ValueError, TypeError, RecursionError):
        pass
    clean: dict[str, Any] = {}
    unreadable: list[list] = []
    for device_id, state in states.items():
        if not isinstance(state, dict):
            clean[str(device_id)] = state if _encodable(state) else None
            continue
        clean[str(device_id)] = fixed = {}
        for attribute, value in state.items():
            if not _encodable(value):
                unreadable.append([str(device_id), str(attribute), _why_unreadable(value, limits)])
                value = None
            fixed[str(attribute)] = value
    return json.dumps(clean, default=str), unreadable


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, default=str)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _why_unreadable(value: Any, limits: Limits) -> str:
    meter = _Meter()
    meter.start(limits.max_steps, None)  # a value that holds itself is infinitely large
    try:
        _readable(value, limits, meter.charge)
    except _Unreadable as exc:
        return str(exc)
    except _OutOfBudget:
        return f"it is larger than a condition may read in one tick ({limits.max_steps:,} steps)"
    return "it cannot be copied for a condition"


class _Stopped(Exception):
    # The worker did not answer in time or died; the message says why, for the model.
    pass


def _stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)  # its own session: the group is the worker and anything it started
        except (ProcessLookupError, PermissionError):
            pass
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class _Worker:
    """The host's end of the jailed worker: JSON lines over its stdin/stdout."""

    def __init__(self, limits: Limits, command: list[str] | None) -> None:
        self.limits = limits
        self.command = command
        self.proc: subprocess.Popen | None = None
        self.jail: list[str] = []
        self._buffer = b""
        self._finalizer: weakref.finalize | None = None
        # The worker stops a condition itself at time_seconds; the host waits
        # longer than that before it kills the worker (a backstop for a stuck one).
        self.answer_seconds = limits.time_seconds + max(1.0, limits.time_seconds)
        self.load_seconds = max(5.0, self.answer_seconds)  # a check of the largest condition takes well under 1 s

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self, codes: dict[str, str]) -> None:
        if self.running:
            return
        self.stop()
        command = self.command or [sys.executable, "-I", "-S", "-B", os.path.abspath(__file__), "--worker",
                                   json.dumps(asdict(self.limits))]
        # No secrets reach the worker: API keys live in the environment.
        env = {k: os.environ[k] for k in ("PATH", "LD_LIBRARY_PATH", "SYSTEMROOT") if k in os.environ}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        self._finalizer = weakref.finalize(self, _stop_process, self.proc)
        self._buffer = b""
        hello = self.receive(max(10.0, self.answer_seconds))  # a cold interpreter start can be slow
        self.jail = list(hello.get("jail", []))
        for key, code in codes.items():
            self.request({"op": "load", "id": key, "code": code}, self.load_seconds)

    def send_line(self, text: str) -> None:
        try:
            self.proc.stdin.write(text.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Stopped(self._death()) from None

    def receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Stopped(f"the worker did not answer within {timeout:g} s, so it was stopped and restarted")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _Stopped(self._death())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            raise _Stopped("the worker answered something that is not JSON, so it was stopped and restarted") from None

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send_line(json.dumps(message))
        return self.receive(timeout)

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "the worker process stopped reading its input, so it was stopped and restarted"
        if code == -24:  # SIGXCPU: RLIMIT_CPU
            return f"the worker process ended: it used more than {self.limits.cpu_seconds} s of CPU in one tick"
        if code < 0:
            return f"the worker process ended on signal {-code}"
        return f"the worker process ended with exit code {code}"

    def stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _stop_process once
            self._finalizer = None
        self.proc = None


# ------------------------------------------------------------------- worker
try:
    import resource
except ImportError:  # Windows: no rlimits, so "auto" isolation means inline
    resource = None


def _jail(limits: Limits) -> list[str]:
    """Lower this process's OS limits for good; return the ones that took effect."""
    applied = []
    for name, value in (("RLIMIT_AS", limits.memory_bytes), ("RLIMIT_FSIZE", 0), ("RLIMIT_CORE", 0),
                        ("RLIMIT_NPROC", 0), ("RLIMIT_NOFILE", 3)):  # NOFILE 3: stdin/out/err, nothing new
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            resource.setrlimit(which, (value, value))
            applied.append(f"{name}={value}")
        except (ValueError, OSError):
            pass  # e.g. macOS refuses RLIMIT_AS; the checker and guards still hold
    return applied


def _cpu_budget(limits: Limits) -> None:
    # RLIMIT_CPU counts the worker's whole life, so raise the soft limit to
    # "used so far + budget" before each tick; SIGXCPU ends the worker past it.
    # cpu_seconds is above tick_seconds + time_seconds, so the step meter and
    # the tick's budget always stop things first.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + limits.cpu_seconds
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _worker_main(limits_json: str) -> None:
    limits = Limits(**json.loads(limits_json))
    jail = _jail(limits)
    out = sys.stdout.buffer

    def reply(message: dict[str, Any]) -> None:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()

    reply({"jail": jail})
    loaded: dict[str, _Loaded] = {}
    for line in sys.stdin.buffer:  # ends when the host closes the pipe
        message = json.loads(line)
        op = message["op"]
        if op == "load":
            try:  # checked again here: the worker trusts nothing it is sent
                loaded[message["id"]] = _compile(check_condition(message["code"], limits), limits)
                reply({"ok": True})
            except ConditionError as exc:
                reply({"error": str(exc)})
        elif op == "drop":
            loaded.pop(message["id"], None)
            reply({"ok": True})
        elif op == "eval":
            _cpu_budget(limits)
            unreadable = {(device, attribute): why for device, attribute, why in message["unreadable"]}
            for key, outcome in _run_all(loaded, message["ids"], message["states"], unreadable, limits):
                reply({"id": key, "value": outcome.value, "error": outcome.error, "steps": outcome.steps,
                       "skipped": outcome.skipped})


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    _worker_main(sys.argv[2])
