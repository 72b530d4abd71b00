"""Layer 2 of the sandbox: every operation of a condition goes through a guard that counts its steps.

The checked tree is rewritten (:func:`_guarded`) so that each operator,
comparison, subscript and literal is a call to a guard (:func:`_guards`),
which refuses a result over :class:`~lares_kit.persistent.sandbox.Limits` *before*
building it and charges the step meter (:class:`_Meter`) for the items,
characters and 64-bit digits it handles. The checker folds constants through
the same guards; :mod:`~lares_kit.persistent.sandbox.running` binds them to a condition.
Standard library only.
"""

from __future__ import annotations

import ast
import math
import operator
import time
from typing import Any

from .limits import _PLAIN, Limits, _bits, _digits, _shown

# Nothing here is for use outside lares_kit.persistent.sandbox: its other modules import what they need.
__all__: list[str] = []


class _TooBig(ArithmeticError):
    # Raised by a guard; its message is the sentence the model reads.
    pass


class _OutOfBudget(Exception):
    # Raised by the step meter: the condition used its steps or its time.
    pass



class _Said(LookupError):
    # A failure whose message is already the sentence for the model (no such device, no such key).
    pass



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



# ------------------------------------------------------------ the guarded tree
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
