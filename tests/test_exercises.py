"""The exercises: every check can fail, and every check passes on the reference solution.

Each exercise is run twice:

* **the starter** -- the committed notebook, whose check cells were run on
  the placeholders: every verdict is "not attempted" or "not yet", and nbval
  (``--nbval-lax``, cells marked ``# NBVAL_CHECK_OUTPUT``) re-runs the
  notebooks and finds the same outputs;
* **the solution** -- the notebook with each answer cell replaced by its
  section of ``lares_kit/learn/solutions/exNN.py`` (the same function as
  ``make solutions``), run in a kernel: every verdict is "correct".

Fast in-process tests check the same two facts without a kernel, plus a
wrong answer per problem, so a check that cannot fail is caught at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from lares_kit.learn import EXERCISES
from lares_kit.learn.checking import OUTCOMES, PLACEHOLDER

ROOT = Path(__file__).resolve().parent.parent
EXERCISE_DIR = ROOT / "exercises"
NOTEBOOKS = [EXERCISE_DIR / f"{name}.ipynb" for name in EXERCISES]
BUDGET_SECONDS = 120  # all exercise notebooks, starter (nbval) and solution runs together

_spec = importlib.util.spec_from_file_location("build_solutions", ROOT / "scripts" / "build_solutions.py")
build_solutions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_solutions)

CORRECT, NOT_YET, NOT_ATTEMPTED = (OUTCOMES[k][0] for k in ("correct", "incorrect", "not attempted"))


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _module(name: str):
    return importlib.import_module(f"lares_kit.learn.ex{name[:2]}")


def _solution(name: str):
    return importlib.import_module(f"lares_kit.learn.solutions.ex{name[:2]}")


def _verdicts(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{"q1": the plain text of its check cell's output} for every ``qN.check()`` cell."""
    found = {}
    for cell in nb.cells:
        m = re.search(r"^(q\d+)\.check\(\)", cell.source, re.MULTILINE) if cell.cell_type == "code" else None
        if m:
            texts = [o.get("data", {}).get("text/plain", "") or o.get("text", "") for o in cell.outputs]
            found[m.group(1)] = "".join(texts)
    return found


# ----------------------------------------------------------------- shape
def test_every_exercise_is_there_and_listed_for_teachers():
    on_disk = sorted(p.stem for p in EXERCISE_DIR.glob("[0-9][0-9]_*.ipynb"))
    assert on_disk == sorted(EXERCISES)
    assert len(EXERCISES) >= 10
    readme = (EXERCISE_DIR / "README.md").read_text(encoding="utf-8")
    for name in EXERCISES:
        assert f"{name}.ipynb" in readme, f"exercises/README.md does not list {name}"


# Named by a teaching notebook's "try this" and not written yet (see exercises/README.md).
NOT_YET_WRITTEN: set[str] = set()


def test_teaching_notebooks_point_at_existing_exercises():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for name in re.findall(r"exercises/(\w+)\.ipynb", _read(path).cells[-1].source):
            if name in NOT_YET_WRITTEN:
                continue
            assert (EXERCISE_DIR / f"{name}.ipynb").exists(), f"{path.name} names exercises/{name}.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_notebook_has_the_learntools_shape(path):
    nb = _read(path)
    module = _module(path.stem)
    problems = [p.name for p in module.EXERCISE.problems]
    assert 2 <= len(problems) <= 4, f"{path.name}: {len(problems)} questions; an exercise has 2-4"
    assert module.EXERCISE.notebook == path.stem
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith(f"# Exercise {path.stem[:2]}")
    setup = next(c for c in nb.cells if c.cell_type == "code").source
    assert "import lares_kit" in setup and "sys.path" in setup  # works installed, on Binder, and from a checkout
    assert f"from lares_kit.learn.ex{path.stem[:2]} import *" in setup and "bind(globals())" in setup
    code = [c for c in nb.cells if c.cell_type == "code"]
    for q in problems:
        answers = [c for c in code if build_solutions.answer_tag(c) == q]
        assert len(answers) == 1 and "____" in answers[0].source, f"{path.name}: one starter cell for {q}, with ____"
        assert any(c.source == f"# NBVAL_CHECK_OUTPUT\n{q}.check()" for c in code), f"{path.name}: {q}.check() cell"
        assert any(c.source == f"#{q}.hint()\n#{q}.solution()" for c in code), f"{path.name}: commented {q} help"
    assert set(module.EXERCISE.solutions()) == set(problems), "one solution section per problem"
    for problem in module.EXERCISE.problems:
        assert len(problem.hints) >= 2, f"{path.name} {problem.name}: give at least two hints"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_notebook_is_committed_with_clean_starter_outputs(path):
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: run scripts/run_notebooks.py on it and commit"
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: a saved output is an error"
            assert not (out.output_type == "stream" and out.name == "stderr"), f"{path.name}: stderr saved"
    assert all(c.source.strip() == "" or not c.outputs for c in code if c.source.startswith("#q"))


# ----------------------------------------------------- run 1: the starter
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_starter_checks_report_not_attempted_or_not_yet(path):
    verdicts = _verdicts(_read(path))
    assert sorted(verdicts) == [p.name for p in _module(path.stem).EXERCISE.problems]
    for q, text in verdicts.items():
        assert text.startswith((NOT_ATTEMPTED, NOT_YET)), f"{path.name} {q} on the starter says: {text!r}"


@pytest.mark.parametrize("name", EXERCISES)
def test_checks_read_a_placeholder_as_not_attempted(name):
    module = _module(name)
    for problem in module.EXERCISE.problems:
        blank = {read: PLACEHOLDER for read in problem.reads}
        assert problem.verdict(blank).outcome == "not attempted", problem.name
        assert problem.verdict({}).outcome == "not attempted", problem.name


@pytest.mark.parametrize("name", EXERCISES)
def test_checks_fail_a_wrong_answer_with_a_reason(name):
    # Each solution module's WRONG maps a problem to answers that run and are wrong.
    solution = _solution(name)
    module = _module(name)
    for problem in module.EXERCISE.problems:
        assert problem.name in solution.WRONG, f"ex{name[:2]}: give WRONG answers for {problem.name}"
        namespace = {**vars(solution), **solution.WRONG[problem.name]}
        verdict = problem.verdict(namespace)
        assert verdict.outcome == "incorrect", f"{problem.name} passed a wrong answer: {verdict}"
        assert len(verdict.text) > 30 and "None" != verdict.text


# ---------------------------------------------------- run 2: the solution
@pytest.mark.parametrize("name", EXERCISES)
def test_reference_solutions_pass_every_check(name):
    solution = vars(_solution(name))
    for problem in _module(name).EXERCISE.problems:
        verdict = problem.verdict(solution)
        assert verdict.passed, str(verdict)


@pytest.mark.slow
def test_exercise_notebooks_run_twice_within_the_budget(tmp_path):
    """nbval on the starters (outputs as committed) and a kernel run of each solution notebook."""
    start = time.perf_counter()
    report = tmp_path / "nbval.txt"
    env = {**os.environ, **build_solutions.QUIET_ENV}
    env.pop("MPLBACKEND", None)
    cmd = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider",
           "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), "-q", *map(str, NOTEBOOKS)]
    nbval = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=report.open("w"), stderr=subprocess.STDOUT)

    def solved(path: Path) -> dict[str, str]:
        return _verdicts(build_solutions.execute(build_solutions.solution_notebook(path)))

    with ThreadPoolExecutor(max_workers=2) as pool:  # the nbval run is a third process
        results = dict(zip(EXERCISES, pool.map(solved, NOTEBOOKS)))
    nbval.wait(timeout=10 * BUDGET_SECONDS)
    seconds = time.perf_counter() - start
    assert nbval.returncode == 0, f"nbval failed on the starters:\n{report.read_text()[-6000:]}"
    for name, verdicts in results.items():
        assert sorted(verdicts) == [p.name for p in _module(name).EXERCISE.problems], name
        for q, text in verdicts.items():
            assert text.startswith(CORRECT), f"{name} {q} with the reference solution says: {text!r}"
    print(f"{seconds:6.1f} s  {len(NOTEBOOKS)} exercises, starters (nbval) and solutions")
    assert seconds < BUDGET_SECONDS, f"the exercise runs took {seconds:.0f} s; the budget is {BUDGET_SECONDS} s"
