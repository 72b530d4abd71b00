"""Self-checking exercises: ``q1.check()``, ``q1.hint()``, ``q1.solution()``.

Used by the notebooks in ``exercises/``, in the style of Kaggle's learntools.
An exercise module (``lares_kit/learn/exercises/loop/ex01.py``...) defines one
:class:`Exercise` and its :class:`Problem` objects ``q1``, ``q2``...; the
notebook's first cell runs::

    from lares_kit.learn.exercises.loop.ex01 import *   # q1, q2, ..., bind and the placeholder ____
    bind(globals())                      # checks read your answers from this notebook

A problem names the variable or function it reads (``reads``), and its
``test`` function receives that value and either returns a sentence of
praise or raises :class:`Incorrect` (which case failed, what was expected,
what came back) or :class:`NotAttempted`. An answer that is still the
placeholder ``____`` -- or a function that returns it -- is "not attempted",
never "wrong", so a fresh notebook reads kindly. An exception in the
student's code is caught and reported as incorrect with its case: a check
never crashes its cell.

Output is a :class:`Message`: short HTML in Jupyter (``_repr_html_``), plain
text elsewhere, and nothing random or timed in either, so nbval can compare
a check cell's output. The reference solutions live apart from the starter
notebooks, in ``lares_kit_solutions/exNN.py`` (one ``# %% qN``
section per problem); ``q1.solution()`` shows that section on request.

This module knows nothing about homes or agents: it runs tests and words
their verdicts. A test that reads a student's sentence matches it by words
(:mod:`lares_kit.learn.matching`), never with ``in``.
"""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["NO_SOLUTIONS", "SOLUTIONS_PACKAGE", "solutions_folder",
           "PLACEHOLDER", "____", "NotAttempted", "Incorrect", "CheckFailed", "Message", "Problem", "Exercise",
           "call", "expect_equal", "solution_sections", "OUTCOMES"]


class _Placeholder:
    # The one value that means "not attempted yet". Falsy, so `if ____:` in a starter does nothing.
    def __repr__(self) -> str:
        return "____"

    def __bool__(self) -> bool:
        return False


PLACEHOLDER = _Placeholder()
____ = PLACEHOLDER  # the name starter code uses, as in learntools

# outcome -> (symbol, HTML colour); the symbol starts the plain text so a test can read it.
OUTCOMES = {"correct": ("✓ Correct", "#2e7d32"), "incorrect": ("✗ Not yet", "#c62828"),
            "not attempted": ("… Not attempted", "#9a6700"), "hint": ("Hint", "#1565c0"),
            "solution": ("Solution", "#6a1b9a")}


class NotAttempted(Exception):
    """The answer is still the placeholder (or missing); the message says what to fill in."""


class Incorrect(Exception):
    """The answer ran and is wrong; the message says which case, what was expected, what came back."""


# nbgrader validate shows an error's lines indented by 4 and cut past 87 characters (its Validator.width, 90, less
# the "..." it adds): a verdict wrapped at 80 is shown whole.
VERDICT_WIDTH = 80


class CheckFailed(AssertionError):
    """Raised by :meth:`Problem.assert_correct`: the answer is not correct yet (the verdict is the message).

    An nbgrader "autograder tests" cell gives its points only when it raises
    nothing. In a notebook the error shows as the verdict alone, with no
    traceback (IPython calls ``_render_traceback_``). The verdict is wrapped
    in lines of at most :data:`VERDICT_WIDTH` characters, because ``nbgrader
    validate`` cuts every longer line of an error it shows.

    Examples:
        >>> verdict = "… Not attempted (q1): " + "the answer is still ____ " * 6
        >>> failed = CheckFailed.of(verdict)
        >>> max(len(line) for line in str(failed).splitlines()) <= VERDICT_WIDTH
        True
        >>> str(failed).split() == verdict.split()  # every word kept, in order
        True
    """

    @classmethod
    def of(cls, verdict: str) -> CheckFailed:
        """The error for ``verdict``, each of its lines wrapped at :data:`VERDICT_WIDTH` (no word is lost).

        Args:
            verdict: The verdict as the check shows it (``str(Message)``).
        """
        return cls("\n".join(textwrap.fill(line, VERDICT_WIDTH, break_on_hyphens=False) or line
                             for line in verdict.splitlines()))

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


@dataclass
class Message:
    """What a check, a hint or a solution shows: one outcome, one sentence, maybe some code.

    Examples:
        >>> m = Message("q1", "correct", "Three rooms, in order.")
        >>> print(m)
        ✓ Correct (q1): Three rooms, in order.
        >>> m.passed, Message("q1", "not attempted", "Fill in ____.").passed
        (True, False)
        >>> "<b>✓ Correct</b>" in m._repr_html_()
        True
    """

    problem: str
    outcome: str  # one of OUTCOMES
    text: str
    code: str = ""  # a solution's code, shown as a block

    @property
    def passed(self) -> bool:
        return self.outcome == "correct"

    def __str__(self) -> str:
        head = f"{OUTCOMES[self.outcome][0]} ({self.problem}): {self.text}"
        return f"{head}\n\n{self.code}" if self.code else head

    __repr__ = __str__  # Jupyter's text/plain, and what a terminal shows

    def _repr_html_(self) -> str:
        word, colour = OUTCOMES[self.outcome]
        body = f'<b>{html.escape(word)}</b> ({html.escape(self.problem)}): {html.escape(self.text)}'
        code = f'<pre style="margin:0.4em 0 0 0">{html.escape(self.code)}</pre>' if self.code else ""
        return f'<div style="border-left:4px solid {colour};padding:0.2em 0.6em;color:{colour}">{body}{code}</div>'

    def show(self) -> None:
        """Display in a Jupyter kernel (HTML and text), print elsewhere."""
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            get_ipython = None
        shell = get_ipython() if get_ipython is not None else None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            display(self)
        else:
            print(self)


# ------------------------------------------------------------ test helpers
def _is_placeholder(value: Any) -> bool:
    if value is PLACEHOLDER:
        return True
    if isinstance(value, (list, tuple, set)):
        return any(v is PLACEHOLDER for v in value)
    if isinstance(value, dict):
        return any(v is PLACEHOLDER for v in value.values())
    return False


def call(fn: Any, *args: Any, case: str, **kwargs: Any) -> Any:
    """Call the student's function on one case; a placeholder result or an exception says which case.

    Args:
        fn: The student's function, as the notebook defined it (anything else is :class:`Incorrect`).
        *args: The case's positional arguments, passed to ``fn`` as they are.
        case: The case in words, for the verdict ("For the kitchen to the office, ...").
        **kwargs: The case's keyword arguments, passed to ``fn`` as they are.

    Examples:
        >>> call(lambda a, b: a + b, 2, 3, case="2 and 3")
        5
        >>> call(lambda: ____, case="anything")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.learn.checking.NotAttempted: Your function still returns ____ (tried on anything).
        Replace ____ with your code.
        >>> call(lambda: 1 / 0, case="an empty list")
        Traceback (most recent call last):
        ...
        lares_kit.learn.checking.Incorrect: For an empty list, your function raised ZeroDivisionError: division by zero.
    """
    if not callable(fn):
        raise Incorrect(f"Expected a function here, but it is {_short(fn)}. Define it with def.")
    try:
        result = fn(*args, **kwargs)
    except (NotAttempted, Incorrect):
        raise
    except Exception as exc:
        raise Incorrect(f"For {case}, your function raised {type(exc).__name__}: {exc}.") from None
    if _is_placeholder(result):
        raise NotAttempted(f"Your function still returns ____ (tried on {case}). Replace ____ with your code.")
    return result


def expect_equal(got: Any, want: Any, case: str) -> None:
    """Raise :class:`Incorrect` naming the case, the expected value and the one that came back.

    A number matches another number of equal value (``2 == 2.0``); anything
    else must also have the same type (a tuple is not the list it holds).

    Args:
        got: What the student's code gave.
        want: The reference answer.
        case: The case in words, for the verdict.

    Examples:
        >>> expect_equal(["a", "b"], ["a", "b"], "a to b")
        >>> expect_equal(["a"], ["a", "b"], "a to b")
        Traceback (most recent call last):
        ...
        lares_kit.learn.checking.Incorrect: For a to b, expected ['a', 'b'] but got ['a'].
    """
    if got != want or type(got) is not type(want) and not (_number(got) and _number(want)):
        raise Incorrect(f"For {case}, expected {_short(want)} but got {_short(got)}.")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value: Any, limit: int = 160) -> str:
    # A repr for messages: no memory addresses (nbval compares them), not too long.
    if callable(value) and hasattr(value, "__name__"):
        text = f"the function {value.__name__}"
    else:
        text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------- solutions
SOLUTIONS_PACKAGE = "lares_kit_solutions"  # the [solutions] extra: its own distribution, lares-kit-solutions
NO_SOLUTIONS = ("The reference solutions are not installed here. For self-study, add them with "
                "pip install \"lares-kit[solutions]\" (in a checkout: make); in a class, your teacher hands them out "
                "after grading. The hints are all here: try .hint().")


def solutions_folder() -> Path | None:
    """Where the ``[solutions]`` extra's answer files are, found without importing it; None when not installed.

    Examples:
        >>> folder = solutions_folder()
        >>> folder is None or (folder / "ex01.py").exists()
        True
    """
    import importlib.util

    spec = importlib.util.find_spec(SOLUTIONS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def solution_sections(path: str | Path) -> dict[str, str]:
    """Split a solution file into its ``# %% qN`` sections: {"q1": code, ...}.

    The text before the first marker (docstring, shared imports) is left out,
    and so is a section with another name (``# %% wrong answers``, for tests).

    Args:
        path: The solution file, e.g. ``lares_kit_solutions/ex01.py``.

    Examples:
        >>> import tempfile, os
        >>> src = ('import math\\n\\n# %% q1\\nanswer = 42\\n\\n'
        ...        '# %% q2\\ndef f():\\n    return 1\\n# %% notes\\nx = 0\\n')
        >>> with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        ...     _ = f.write(src)
        >>> solution_sections(f.name)
        {'q1': 'answer = 42', 'q2': 'def f():\\n    return 1'}
        >>> os.remove(f.name)
    """
    sections: dict[str, list[str]] = {}
    current = None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        marker = re.fullmatch(r"# %%\s*(.*?)\s*", line)
        if marker:  # any "# %%" ends a section; only "# %% qN" starts one that is kept
            current = marker.group(1) if re.fullmatch(r"q\d+", marker.group(1)) else None
            if current is not None:
                sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {name: "\n".join(lines).strip("\n") for name, lines in sections.items()}


# --------------------------------------------------------------- problems
@dataclass
class Problem:
    """One question of an exercise.

    ``reads``: the names in the notebook the answer lives in (a variable or a
    function), passed to ``test`` in that order. ``test`` returns a sentence
    of praise, or raises :class:`Incorrect` / :class:`NotAttempted`.
    ``hints`` are shown one at a time, gentlest first.
    """

    title: str
    reads: tuple[str, ...]
    test: Callable[..., str]
    hints: list[str] = field(default_factory=list)
    points: int = 1  # what its autograder test is worth in an nbgrader course (lares_kit.learn.course)
    name: str = ""  # "q1": set by Exercise
    exercise: Exercise | None = field(default=None, repr=False)
    _hints_shown: int = field(default=0, repr=False)

    # ----------------------------------------------------- what students call
    def check(self) -> None:
        """Check your answer and show the verdict."""
        self.verdict().show()

    def assert_correct(self) -> None:
        """Check your answer, show the verdict, and raise :class:`CheckFailed` unless it is correct.

        The same check as :meth:`check`; the raise is what nbgrader's
        autograder counts (``lares course build`` writes these cells).
        """
        verdict = self.verdict()
        verdict.show()
        if not verdict.passed:
            raise CheckFailed.of(str(verdict))

    def hint(self, number: int | None = None) -> None:
        """Show the next hint (or hint ``number``); each call gives one more."""
        self.hint_message(number).show()

    def solution(self) -> None:
        """Show the reference solution. Try the hints first!"""
        self.solution_message().show()

    # ------------------------------------------------- the same, as values
    def verdict(self, namespace: dict[str, Any] | None = None) -> Message:
        """The check's verdict as a Message; ``namespace`` defaults to the bound notebook's globals."""
        if namespace is None:
            namespace = self.exercise.namespace if self.exercise is not None else None
        if namespace is None:
            return Message(self.name, "not attempted", "Run the first cell of the notebook (it calls "
                           "bind(globals())), so the check can read your answers.")
        try:
            values = []
            for name in self.reads:
                if name not in namespace:
                    raise NotAttempted(f"There is no {name} yet: run the cell that defines it.")
                if _is_placeholder(namespace[name]):
                    raise NotAttempted(f"{name} is still ____: replace ____ with your answer and run the cell.")
                values.append(namespace[name])
            praise = self.test(*values)
        except NotAttempted as exc:
            return Message(self.name, "not attempted", str(exc))
        except Incorrect as exc:
            return Message(self.name, "incorrect", str(exc))
        except Exception as exc:  # the student's value broke the test itself: still a verdict, never a crash
            return Message(self.name, "incorrect", f"Checking your answer raised {type(exc).__name__}: "
                           f"{_short(str(exc))}. Look at the type and shape the question asks for.")
        return Message(self.name, "correct", praise)

    def hint_message(self, number: int | None = None) -> Message:
        if not self.hints:
            return Message(self.name, "hint", "There is no hint for this one; try q.solution().")
        if number is None:
            self._hints_shown = min(self._hints_shown + 1, len(self.hints))
            number = self._hints_shown
        number = max(1, min(number, len(self.hints)))
        shown = self.exercise is None or self.exercise.show_solutions
        last = (" (the last one; .solution() shows the answer)" if shown else " (the last one)") \
            if number == len(self.hints) else ""
        return Message(self.name, "hint", f"{number} of {len(self.hints)}{last}: {self.hints[number - 1]}")

    def solution_message(self) -> Message:
        if self.exercise is not None and not self.exercise.show_solutions:
            return Message(self.name, "solution", "This is a graded copy: the reference solutions come from your "
                           "teacher after grading. The hints are all here: try .hint().")
        if self.exercise is not None and solutions_folder() is None:
            return Message(self.name, "solution", NO_SOLUTIONS)
        code = self.exercise.solutions().get(self.name, "") if self.exercise is not None else ""
        if not code:
            return Message(self.name, "solution", "No reference solution is stored for this problem.")
        return Message(self.name, "solution", "One way to do it (yours may differ and still pass):", code)


@dataclass
class Exercise:
    """The problems of one exercise notebook and the notebook globals they read.

    Examples:
        >>> def test_double(double):
        ...     expect_equal(call(double, 2, case="2"), 4, case="2")
        ...     return "It doubles."
        >>> ex = Exercise("99_demo", [Problem("Double it", ("double",), test_double)])
        >>> q1, = ex.problems
        >>> q1.verdict().outcome
        'not attempted'
        >>> ex.bind({"double": ____})
        >>> print(q1.verdict())
        … Not attempted (q1): double is still ____: replace ____ with your answer and run the cell.
        >>> ex.bind({"double": lambda x: x + 1})
        >>> print(q1.verdict())
        ✗ Not yet (q1): For 2, expected 4 but got 3.
        >>> ex.bind({"double": lambda x: 2 * x})
        >>> q1.check()
        ✓ Correct (q1): It doubles.
        >>> q1.hint()
        Hint (q1): There is no hint for this one; try q.solution().
        >>> ex.bind({"double": lambda x: x - 2}, solutions=False)  # a graded copy (lares course build)
        >>> q1.assert_correct()
        Traceback (most recent call last):
        ...
        lares_kit.learn.checking.CheckFailed: ✗ Not yet (q1): For 2, expected 4 but got 0.
        >>> print(q1.solution_message().text)  # doctest: +ELLIPSIS
        This is a graded copy: the reference solutions come from your teacher after grading. ...
    """

    notebook: str  # "01_shortest_route": the file in exercises/
    problems: list[Problem]
    namespace: dict[str, Any] | None = field(default=None, repr=False)
    show_solutions: bool = field(default=True, repr=False)

    def __post_init__(self) -> None:
        for number, problem in enumerate(self.problems, 1):
            problem.name, problem.exercise = f"q{number}", self

    def bind(self, namespace: dict[str, Any], *, solutions: bool = True) -> None:
        """Read answers from ``namespace`` -- call ``bind(globals())`` in the notebook's first cell.

        Args:
            namespace: The notebook's globals, where the answers live.
            solutions: False in a graded copy (``lares course build``): ``qN.solution()`` then says the
                teacher hands the solutions out after grading. Hints stay available.
        """
        self.namespace, self.show_solutions = namespace, solutions
        for problem in self.problems:
            problem._hints_shown = 0

    @property
    def solution_path(self) -> Path | None:
        """``lares_kit_solutions/exNN.py``: the reference answers, one ``# %% qN`` section each; None: not installed."""
        folder = solutions_folder()
        return None if folder is None else folder / f"ex{self.notebook[:2]}.py"

    def solutions(self) -> dict[str, str]:
        path = self.solution_path
        if path is None:
            return {}
        return solution_sections(path) if path.exists() else {}
