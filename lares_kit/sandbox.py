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
   condition runs at most as many steps as it has nodes: termination is by
   construction, and the time limit is only a backstop.
2. **The guards**: ``*``, ``**``, ``+`` and ``%`` are rewritten into calls that
   refuse a result over :class:`Limits` *before* building it (``'a' * 10**10``
   never allocates), constant expressions are folded through the same guards
   at check time, and the function runs in an explicit namespace whose
   ``__builtins__`` is an empty dict.
3. **The jail** (``isolation="process"``, the default on POSIX): conditions
   live in one persistent worker process that never sees the Home -- it gets a
   copy of the device states each tick -- under ``RLIMIT_AS`` (memory),
   ``RLIMIT_CPU``, ``RLIMIT_FSIZE=0``, ``RLIMIT_NOFILE`` (no new files or
   sockets) and ``RLIMIT_NPROC=0``; the host kills and restarts it when a
   condition takes longer than the time limit. One round trip per tick, not
   per condition, keeps it cheap. ``isolation="inline"`` runs layers 1-2 in
   this process, for places with no subprocesses (JupyterLite).

This module knows nothing of Homes, clocks or agents: device states are plain
``{device_id: {attribute: value}}`` dicts. It imports only the standard
library because it is also the worker's script (``python -I -S sandbox.py``).
"""

from __future__ import annotations

import ast
import difflib
import io
import json
import math
import os
import select
import subprocess
import sys
import time
import tokenize
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ConditionError", "Limits", "CheckedCondition", "Outcome", "ALLOWED_FUNCTIONS", "check_condition",
           "run_condition", "Sandbox"]

# What a condition may call. get/state read the tick's device states; the rest
# are pure builtins (round is wrapped: round(5, -10**9) would build 10**(10**9)).
ALLOWED_FUNCTIONS = ("get", "state", "abs", "min", "max", "round", "len", "any", "all", "int", "float", "str", "bool")
EXAMPLE = "def fridge_is_open():\n    return get('fridge', 'door') == 'open'"


class ConditionError(ValueError):
    """Condition code that cannot be registered or that failed to run; ``str()`` is for the model."""


class _TooBig(ArithmeticError):
    # Raised by a guard; its message is the sentence the model reads.
    pass


@dataclass(frozen=True)
class Limits:
    """How much one condition may use. Generous for a predicate over a few devices."""

    max_code_chars: int = 4000  # a condition is a few lines; this also bounds how many steps it runs
    max_length: int = 10_000  # longest text, list or tuple a condition may build
    max_int_bits: int = 4096  # largest whole number, about 1233 digits
    max_depth: int = 100  # nesting of the syntax tree; keeps the checker and compiler far from stack limits
    time_seconds: float = 1.0  # wall clock for one condition in one tick (process isolation)
    memory_bytes: int = 256 * 2**20  # address space of the worker process (RLIMIT_AS)
    cpu_seconds: int = 5  # CPU per tick before the kernel stops the worker (RLIMIT_CPU)


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
    """One evaluation: ``value`` is True/False, or None with a sentence in ``error``."""

    value: bool | None
    error: str | None = None


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
    _check_ascii_names(code)
    try:
        tree = ast.parse(code, "<condition>")
    except SyntaxError as exc:
        raise ConditionError(f"Line {exc.lineno}: {exc.msg}. A condition looks like:\n{EXAMPLE}") from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ConditionError(f"The condition could not be read ({type(exc).__name__}); it is nested too deeply. "
                             "Write it as a few short lines.") from None
    _check_depth(tree, limits.max_depth)
    func = _the_function(tree)
    problems: list[tuple[int, str]] = []  # (line, sentence)
    idle: list[tuple[int, str]] = []  # lines that do nothing: worth saying only when nothing else is wrong
    assigned = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    reads: list[tuple[str, str | None]] = []
    # An explicit stack, not recursion: deep input cannot overflow the checker.
    # The parts of a refused node are not checked: one sentence per mistake.
    stack: list[ast.AST] = list(reversed(func.body))
    while stack:
        node = stack.pop()
        problem = _check_node(node, func, assigned, reads, limits)
        line = getattr(node, "lineno", func.lineno)
        if problem == _IDLE:
            idle.append((line, problem))
        elif problem:
            problems.append((line, problem))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    if problems or idle:
        shown = sorted(set(problems or idle))[:3]  # the first few, in source order: enough to fix in one go
        raise ConditionError(" ".join(f"Line {n}: {why}." for n, why in shown))
    return CheckedCondition(func.name, code, reads, _guarded(tree))


def _check_ascii_names(code: str) -> None:
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
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > most:
            raise ConditionError(f"Line {getattr(node, 'lineno', 1)}: the condition is nested too deeply; "
                                 "split it into a few assignments.")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


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


def _check_node(node: ast.AST, func: ast.FunctionDef, assigned: set[str], reads: list, limits: Limits) -> str | None:
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
    elif isinstance(node, ast.Compare):
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (isinstance(right, ast.Constant) and right.value is None):
                return "use == and != to compare values; 'is' only with None"
    elif isinstance(node, ast.Call):
        return _check_call(node, func.name, reads)
    elif isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            return "'%' formatting of text is not allowed in a condition; compare values instead"
        return _check_constant(node, limits)
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


def _check_constant(node: ast.BinOp, limits: Limits) -> str | None:
    # Fold constant arithmetic through the runtime guards, so 2 ** 10 ** 10 or
    # 'a' * 10 ** 10 is refused before anything runs.
    try:
        _fold(node, _guards(limits))
    except _TooBig as exc:
        text = ast.unparse(node)
        return f"{text if len(text) <= 40 else text[:37] + '...'} is too big: {exc}"
    except (_NotConstant, ArithmeticError, TypeError, ValueError):
        pass  # not constant, or an ordinary error the run will report with its line
    return None


class _NotConstant(Exception):
    pass


def _fold(node: ast.AST, guards: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_fold(e, guards) for e in node.elts]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _fold(node.operand, guards)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _fold(node.left, guards), _fold(node.right, guards)
        if type(node.op) in _GUARDED:
            return guards[_GUARDED[type(node.op)]](left, right)
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):
            return left / right if isinstance(node.op, ast.Div) else left // right
    raise _NotConstant


# ------------------------------------------------------------------- guards
# Sizes are bounded two ways. Every text, list and tuple a condition builds is
# at most max_length long, and every list, tuple, set or dict it builds is
# *flat* (holds plain values only). Without flatness, [[1] * 9999] * 9999
# is small to build but str() of it is 10**8 characters, and comparing two of
# them takes 10**8 steps. With it, each operation costs at most about
# max_length steps and a condition runs at most one per node of its code.
_GUARDED = {ast.Mult: "_mul", ast.Pow: "_pow", ast.Add: "_add", ast.Mod: "_mod"}
_LITERALS = {ast.List: "_list", ast.Tuple: "_tuple", ast.Set: "_set"}
_SEQUENCES = (str, list, tuple)
_PLAIN = (bool, int, float, str, type(None))


def _guards(limits: Limits) -> dict[str, Any]:
    """The checked operations the guarded tree calls, bound to ``limits``."""

    def too_long(n: int) -> None:
        if n > limits.max_length:
            raise _TooBig(f"it would hold {n} items; the limit is {limits.max_length}")

    def too_wide(bits: float) -> None:
        if bits > limits.max_int_bits:
            raise _TooBig(f"the number would have about {int(bits * 0.30103)} digits; the limit is "
                          f"{int(limits.max_int_bits * 0.30103)}")

    def flat(items: Any) -> Any:
        if isinstance(items, str):
            return items
        for item in items:
            if not isinstance(item, _PLAIN):
                raise TypeError(f"lists, tuples, sets and dicts in a condition hold plain values (numbers, text, "
                                f"True/False/None), not a {type(item).__name__}")
        return items

    def _mul(a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, int):
            too_wide(a.bit_length() + b.bit_length())
        elif isinstance(a, _SEQUENCES) and isinstance(b, int):
            too_long(len(a) * b)
            flat(a)
        elif isinstance(b, _SEQUENCES) and isinstance(a, int):
            too_long(len(b) * a)
            flat(b)
        return a * b

    def _pow(a: Any, b: Any) -> Any:
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
            too_wide(b * math.log2(abs(a)))
        return a ** b

    def _add(a: Any, b: Any) -> Any:
        if isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
            too_long(len(a) + len(b))
            flat(a), flat(b)
        return a + b

    def _mod(a: Any, b: Any) -> Any:
        # '%' on text is formatting: '%0999999999d' % 1 is a memory bomb.
        if isinstance(a, (str, bytes)):
            raise TypeError("'%' formatting of text is not allowed in a condition; compare values instead")
        return a % b

    def safe_round(number: Any, ndigits: Any = None) -> Any:
        # round(5, -10**9) would compute 10**(10**9) first.
        if ndigits is None:
            return round(number)
        if not isinstance(ndigits, int) or abs(ndigits) > 30:
            raise ValueError("round(x, n) needs a whole number n between -30 and 30")
        return round(number, ndigits)

    def safe_int(value: Any, *base: Any) -> int:
        # Text to number is quadratic in the digits; a reading never has 100.
        if isinstance(value, str) and len(value) > 100:
            raise ValueError("int() reads at most 100 characters of text")
        return int(value, *base)

    def safe_str(value: Any) -> str:
        if not isinstance(value, _PLAIN):
            raise TypeError(f"str() turns a number or True/False/None into text, not a {type(value).__name__}")
        return str(value)

    def _list(*items: Any) -> list:
        return list(flat(items))

    def _tuple(*items: Any) -> tuple:
        return flat(items)

    def _set(*items: Any) -> set:
        return set(flat(items))

    def _dict(*pairs: Any) -> dict:  # key, value, key, value...
        return dict(zip(flat(pairs)[::2], pairs[1::2]))

    return {"_mul": _mul, "_pow": _pow, "_add": _add, "_mod": _mod, "_list": _list, "_tuple": _tuple,
            "_set": _set, "_dict": _dict, "round": safe_round, "int": safe_int, "str": safe_str}


def _call(name: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), like)


class _Guard(ast.NodeTransformer):
    # a * b -> _mul(a, b); x *= y -> x = _mul(x, y); [a, b] -> _list(a, b).
    # The _ names cannot be written by the condition: the checker refuses
    # every name that starts with an underscore.
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        name = _GUARDED.get(type(node.op))
        return _call(name, [node.left, node.right], node) if name else node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        value = ast.copy_location(ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value), node)
        assign = ast.Assign([ast.Name(node.target.id, ast.Store())], self.visit(value))
        return ast.copy_location(assign, node)

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
class _DeviceError(LookupError):
    pass


def _compile(checked: CheckedCondition, limits: Limits) -> tuple[Any, list]:
    """The condition's function, and the one-item list its get/state read from."""
    tick: list[dict[str, dict[str, Any]]] = [{}]  # tick[0]: this tick's device states

    def device(device_id: Any) -> dict[str, Any]:
        states = tick[0]
        if device_id not in states:
            close = difflib.get_close_matches(str(device_id), list(states), n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            # Only the closest few in a big home (as lares_kit.errors.choices; this module is stdlib-only).
            listed = (", ".join(states) if len(states) <= 30 else "the 30 closest of %d: %s" % (
                len(states), ", ".join(difflib.get_close_matches(str(device_id), list(states), n=30, cutoff=0))))
            raise _DeviceError(f"There is no device {device_id!r}.{hint} Devices: {listed}.")
        return states[device_id]

    def get(device_id: str, attribute: str) -> Any:
        dev = device(device_id)
        if attribute not in dev:
            raise _DeviceError(f"The device {device_id!r} has no attribute {attribute!r}; it has: "
                               f"{', '.join(dev)}.")
        return dev[attribute]

    def state(device_id: str) -> dict[str, Any]:
        return dict(device(device_id))  # a copy: reading never changes a device

    names = {"__builtins__": {}, "get": get, "state": state, "abs": abs, "min": min, "max": max, "len": len,
             "any": any, "all": all, "float": float, "bool": bool, **_guards(limits)}
    code = compile(checked.tree, "<condition>", "exec")
    exec(code, names)  # defines the function, nothing else: the checker allows one def and no decorators
    return names[checked.name], tick


def _run(compiled: tuple[Any, list], states: dict[str, dict[str, Any]]) -> Outcome:
    function, tick = compiled
    tick[0] = states
    try:
        value = function()
    except Exception as exc:  # any failure is a sentence for the model, never a crash of the poller
        line = _line_of(exc)
        why = str(exc) if isinstance(exc, (_DeviceError, _TooBig)) else f"{type(exc).__name__}: {exc}"
        if isinstance(exc, _TooBig):
            why = f"a value is too big: {why}"
        if isinstance(exc, MemoryError):
            why = "it ran out of memory"
        if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
            why = "a number has too many digits (more than 4300)"
        why = why.rstrip(".")
        return Outcome(None, f"Line {line}: {why}." if line else f"{why}.")
    finally:
        tick[0] = {}
    if not isinstance(value, bool):
        shown = repr(value) if isinstance(value, (int, float, str, type(None))) else f"a {type(value).__name__}"
        return Outcome(None, f"The condition returned {shown[:60]}, not True or False; compare it, "
                             "e.g. get('fridge', 'door') == 'open'.")
    return Outcome(value)


def _line_of(exc: BaseException) -> int | None:
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<condition>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def run_condition(code: str, states: dict[str, dict[str, Any]], limits: Limits | None = None) -> bool:
    """Check and run a condition once in this process (layers 1-2); raise :class:`ConditionError` on failure.

    For trying a condition in a notebook; the poller uses a :class:`Sandbox`.

    Examples:
        >>> states = {"fridge": {"door": "open", "temperature": 4}}
        >>> run_condition("def f():\\n    return get('fridge', 'door') == 'open'", states)
        True
        >>> run_condition("def f():\\n    return get('fridge', 'door')", states)
        Traceback (most recent call last):
        ...
        lares_kit.sandbox.ConditionError: The condition returned 'open', not True or False; compare it, e.g. get('fridge', 'door') == 'open'.
    """
    limits = limits or Limits()
    outcome = _run(_compile(check_condition(code, limits), limits), states)
    if outcome.error:
        raise ConditionError(outcome.error)
    return outcome.value


# ------------------------------------------------------------------ sandbox
class Sandbox:
    """Conditions loaded by key, evaluated together against one tick's device states.

    ``isolation`` is ``"process"`` (a persistent jailed worker, see the module
    docstring), ``"inline"`` (this process, checker and guards only) or
    ``"auto"`` (process where the OS has ``resource`` limits, else inline).
    ``jail`` lists the OS limits the worker really got.

    Examples:
        >>> with Sandbox() as box:
        ...     box.load("fridge_open", "def fridge_open():\\n    return get('fridge', 'door') == 'open'").name
        ...     box.evaluate({"fridge": {"door": "open"}})
        ...     box.evaluate({"fridge": {"door": "closed"}})["fridge_open"].value
        'fridge_open'
        {'fridge_open': Outcome(value=True, error=None)}
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
        self._inline: dict[str, tuple[Any, list]] = {}
        self._worker = _Worker(self.limits, worker_command) if isolation == "process" else None

    @property
    def jail(self) -> list[str]:
        return self._worker.jail if self._worker else []

    def load(self, key: str, code: str) -> CheckedCondition:
        """Check ``code`` and keep it under ``key``; raise :class:`ConditionError` if it is refused."""
        checked = check_condition(code, self.limits)
        if self._worker is None:
            self._inline[key] = _compile(checked, self.limits)
        else:
            try:
                self._worker.ensure(self._codes)
                reply = self._worker.request({"op": "load", "id": key, "code": code}, self.limits.time_seconds)
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
                self._worker.request({"op": "drop", "id": key}, self.limits.time_seconds)
            except _Stopped:
                self._restart()

    def evaluate(self, states: dict[str, dict[str, Any]], keys: list[str] | None = None) -> dict[str, Outcome]:
        """Run conditions (all, or ``keys``) on ``{device_id: state}``; every key gets an Outcome."""
        keys = list(self._codes) if keys is None else list(keys)
        unknown = [k for k in keys if k not in self._codes]
        if unknown:
            raise KeyError(f"no condition loaded as {unknown[0]!r}")
        if self._worker is None:
            return {k: _run(self._inline[k], states) for k in keys}
        results: dict[str, Outcome] = {}
        pending = keys  # answered in order, so pending[0] is the one running
        while pending:
            try:
                self._worker.ensure(self._codes)
                self._worker.send({"op": "eval", "states": states, "ids": pending})
                while pending:
                    reply = self._worker.receive(self.limits.time_seconds)
                    results[reply["id"]] = Outcome(reply["value"], reply["error"])
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
        hello = self.receive(max(10.0, self.limits.time_seconds))  # a cold interpreter start can be slow
        self.jail = list(hello.get("jail", []))
        for key, code in codes.items():
            self.request({"op": "load", "id": key, "code": code}, self.limits.time_seconds)

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.proc.stdin.write(json.dumps(message, default=str).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _Stopped(self._death()) from None

    def receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Stopped(f"it took longer than {timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _Stopped(self._death())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send(message)
        return self.receive(timeout)

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        if code == -24:  # SIGXCPU: RLIMIT_CPU
            return "it used more CPU time than allowed"
        return "it needed more memory or time than allowed, and the worker process ended"

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
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + limits.cpu_seconds
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
    loaded: dict[str, tuple[Any, list]] = {}
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
            for key in message["ids"]:
                outcome = _run(loaded[key], message["states"]) if key in loaded else \
                    Outcome(None, f"The condition {key!r} is not loaded.")
                reply({"id": key, "value": outcome.value, "error": outcome.error})


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    _worker_main(sys.argv[2])
