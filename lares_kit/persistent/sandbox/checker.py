"""Layer 1 of the sandbox: read condition code as a syntax tree and refuse what a condition must not do.

:func:`check_condition` allows a short list of node types (see
:mod:`lares_kit.persistent.sandbox`) in one pass over the tree, folds constant
arithmetic through the guards of layer 2 so that ``'a' * 10**10`` is refused
before anything runs, and hands on the guarded tree, ready to compile.
Standard library only.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from typing import Any

from .guards import _ARITHMETIC, _LITERALS, _guarded, _guards, _Meter, _size, _TooBig
from .limits import ALLOWED_FUNCTIONS, EXAMPLE, CheckedCondition, ConditionError, Limits, _clip

__all__ = ["check_condition"]


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
    ast.ListComp: "comprehensions are not allowed in a condition; list the values, e.g. "
                  "all([get('a', 'on'), get('b', 'on')])",
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

    Args:
        code: The condition's source: one ``def`` with no arguments that returns True or False.
        limits: The budgets it is checked against (length, nesting, sizes of constants); None: ``Limits()``.

    Examples:
        >>> check_condition("def fridge_open():\\n    return get('fridge', 'door') == 'open'").reads
        [('fridge', 'door')]
        >>> check_condition("import os\\ndef f():\\n    return True")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.persistent.sandbox.ConditionError: Line 1: imports are not allowed in a condition;
        use get(device_id, attribute) or state(device_id) to read devices.
        >>> check_condition("def f():\\n    return ().__class__")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.persistent.sandbox.ConditionError: Line 2: attribute access (a dot after a value)
        is not allowed in a condition;
        use get(device_id, attribute) or state(device_id) to read devices.
        >>> check_condition("def f():\\n    return len('a' * 10**10) > 3")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.persistent.sandbox.ConditionError: Line 2: 'a' * 10 ** 10 is too big:
        it would hold 10000000000 items; the limit is 10000.
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

