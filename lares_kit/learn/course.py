"""Teachers: the exercises as an nbgrader course (``lares course build DIR``, ``make course``).

nbgrader hands out assignments, collects them, grades them in a kernel and
keeps the scores in a gradebook. This module turns each exercise notebook of
``exercises/`` into one of its *source* assignments, from the same two
sources of truth the self-checking notebooks use -- the starter notebook and
``lares_kit_solutions/exNN.py`` (the ``[solutions]`` extra) -- so there is no second copy of any
exercise or solution to keep in sync:

* an answer cell (tag ``answer-qN``) becomes an nbgrader **autograded
  answer**: the starter code as students know it, then the reference
  solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION``.
  ``nbgrader generate_assignment`` removes what is between the markers, and
  the course's ``nbgrader_config.py`` tells it to leave nothing there, so the
  students' copy is the starter with its placeholder ``____``;
* a check cell (``qN.check()``) becomes an **autograder tests** cell worth the
  problem's points: ``qN.assert_correct()`` runs the very check the student
  runs while working, shows the same verdict, and raises unless it is
  correct -- which is what nbgrader counts;
* the first code cell calls ``bind(globals(), solutions=False)``: the hints
  stay, and ``qN.solution()`` says the teacher hands the solutions out after
  grading. (They ship with the package, so this is a nudge, not a lock.)

The course directory holds ``nbgrader_config.py`` (written once, then the
teacher's to edit) and ``source/<exercise>/<exercise>.ipynb``; everything
else (``release/``, ``submitted/``, ``autograded/``, ``feedback/``,
``gradebook.db``) is nbgrader's. Building again rewrites only ``source/``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DataFileError, LaresError, brief, clip
from ..files.atomic import unwritable, write_atomic
from ..files.reading import parse_json, path_kind, read_text_file
from . import EXERCISES
from .exercises import module_name
from .nbgrader_cells import BEGIN, END, grading

__all__ = ["COURSE_ID", "CONFIG", "answer_tag", "course_notebook", "build_course", "exercises_dir", "read_notebook",
           "Assignment"]

COURSE_ID = "lares_kit"
SETUP_BIND = "bind(globals())"
CHECK_CELL = re.compile(r"(?:# NBVAL_CHECK_OUTPUT\n)?(q\d+)\.check\(\)")
HELP_CELL = re.compile(r"#(q\d+)\.hint\(\)\n#q\d+\.solution\(\)")

# nbgrader's settings for the course, written by build_course when the folder has none yet.
CONFIG = '''\
# nbgrader's settings for this course. Written once by `lares course build`; yours to edit (it is not
# overwritten). Run nbgrader's commands from this folder: nbgrader generate_assignment 01_shortest_route ...
c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "{course_id}"
# Where the reference answer was, the students' copy keeps nothing: the starter code above it, with its
# placeholder ____, is what they fill in.
c.ClearSolutions.code_stub = {{"python": ""}}
# The exercises run the built-in offline model: no key, no network. Two minutes is plenty for a cell.
c.Execute.timeout = 120
'''


@dataclass(frozen=True)
class Assignment:
    """One source assignment written by :func:`build_course`."""

    name: str  # "01_shortest_route": the assignment, its folder and its notebook
    path: Path  # source/<name>/<name>.ipynb
    points: int  # the sum of its autograder tests' points


def answer_tag(cell: dict) -> str | None:
    """``"q2"`` for a cell tagged ``answer-q2``, else None.

    Args:
        cell: A notebook cell (an nbformat node or a plain dict).

    Examples:
        >>> answer_tag({"metadata": {"tags": ["answer-q2"]}}), answer_tag({"metadata": {}})
        ('q2', None)
    """
    for tag in cell.get("metadata", {}).get("tags", []):
        m = re.fullmatch(r"answer-(q\d+)", tag)
        if m:
            return m.group(1)
    return None


def exercises_dir() -> Path:
    """The exercise notebooks the package carries (``lares_kit/data/lessons/exercises``; a checkout's ``exercises/``).

    Raises:
        LaresError: the package carries none (a damaged install); pass the folder yourself.
    """
    from .lessons import LESSONS_ROOT

    folder = LESSONS_ROOT / "exercises"
    if not (folder / f"{EXERCISES[0]}.ipynb").exists():
        raise LaresError(f"found no exercise notebooks in {folder}: reinstall lares_kit, or pass the folder: "
                         "lares course build DIR --exercises FOLDER")
    return folder


def read_notebook(path: str | Path):
    """An exercise notebook as an ``nbformat`` node (version 4), or a LaresError naming the file and what is wrong.

    The file is read within :mod:`lares_kit.files.reading`' limits (a regular file, UTF-8, at most 8 MB, JSON
    nested at most 50 deep, so a notebook of 100,000 brackets is a sentence, not a RecursionError) and its
    shape checked before nbformat sees it (nbformat answers a malformed notebook with whatever exception
    its code happens to hit); then nbformat's own schema is checked.

    Args:
        path: A ``.ipynb`` file.

    Examples:
        >>> import json, tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "01_shortest_route.ipynb"
        >>> _ = bad.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": {}}))
        >>> read_notebook(bad)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: .../01_shortest_route.ipynb: cells: expected a list of cells, got {}
    """
    import nbformat

    source = str(path)
    data = parse_json(read_text_file(path), source, strict=True)
    if not isinstance(data, dict) or data.get("nbformat") != 4:
        raise DataFileError(source, "", "not a Jupyter notebook of nbformat 4 (an object with nbformat: 4 and "
                            f"cells), got {brief(data)}")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise DataFileError(source, "cells", f"expected a list of cells, got {brief(cells)}")
    for n, cell in enumerate(cells):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise DataFileError(source, f"cells[{n}]", f"expected a cell with a cell_type, got {brief(cell)}")
    try:
        nb = nbformat.reads(json.dumps(data), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 -- nbformat's errors for a malformed notebook have no common type
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        first = clip((message.splitlines() or [""])[0], 200)
        raise DataFileError(source, "", f"not a notebook Jupyter can open: {first}") from None
    return nb


def course_notebook(path: str | Path):
    """The nbgrader source version of one exercise notebook (an ``nbformat`` node; outputs cleared).

    Args:
        path: An exercise notebook, e.g. ``exercises/01_shortest_route.ipynb``; its problems and
            solutions come from its checks' module (:func:`lares_kit.learn.exercises.module_name`) and
            ``lares_kit_solutions/exNN.py``.

    Raises:
        LaresError: A problem has no answer cell, no check cell or no reference solution, or the reference
            solutions are not installed (the ``[solutions]`` extra).
    """
    path = Path(path)
    try:
        module = module_name(path.name[:2])
    except ValueError:
        module = ""
    if not (module and importlib.util.find_spec(module)):
        raise LaresError(f"{clip(str(path), 300)}: not one of the exercises (their names start with their number: "
                         f"{', '.join(EXERCISES)})")
    exercise = importlib.import_module(module).EXERCISE
    if exercise.solution_path is None:
        raise LaresError("the course's source needs the reference solutions, which are not installed here: "
                         "pip install \"lares-kit[solutions]\" on the teacher's machine (in a checkout: make)")
    problems = {p.name: p for p in exercise.problems}
    sections = exercise.solutions()
    nb = read_notebook(path)
    seen: dict[str, set[str]] = {"answer": set(), "check": set()}
    setup_done = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        name = answer_tag(cell)
        check = CHECK_CELL.fullmatch(cell.source.strip())
        helper = HELP_CELL.fullmatch(cell.source.strip())
        if not setup_done:
            if SETUP_BIND not in cell.source:
                raise LaresError(f"{path.name}: the first code cell does not call {SETUP_BIND}")
            cell.source = cell.source.replace(SETUP_BIND, "bind(globals(), solutions=False)")
            cell.metadata["nbgrader"] = grading("setup", locked=True)
            setup_done = True
        elif name is not None:
            if name not in sections:
                raise LaresError(f"{exercise.solution_path.name} has no '# %% {name}' section for {path.name}")
            cell.source = (f"{cell.source.rstrip()}\n{BEGIN}\n# The reference answer: nbgrader generate_assignment "
                           f"removes it from the students' copy.\n{sections[name]}\n{END}")
            cell.metadata["nbgrader"] = grading(f"answer-{name}", solution=True)
            seen["answer"].add(name)
        elif check is not None and check.group(1) in problems:
            problem = problems[check.group(1)]
            # two short comment lines: `nbgrader validate` shows a failing cell's lines cut at about 80 characters
            cell.source = (f"# {problem.points} point{'s' if problem.points != 1 else ''}: the check you ran while "
                           f"working;\n# nbgrader counts it when it raises nothing.\n{problem.name}.assert_correct()")
            cell.metadata["nbgrader"] = grading(f"check-{problem.name}", points=problem.points, locked=True)
            seen["check"].add(problem.name)
        elif helper is not None:
            cell.source = f"#{helper.group(1)}.hint()"
    for kind, names in seen.items():
        missing = sorted(set(problems) - names)
        if missing:
            raise LaresError(f"{path.name}: {missing[0]} has no {kind} cell, so it cannot be graded")
    return nb


def build_course(directory: str | Path, exercises: str | Path | None = None,
                 names: list[str] | None = None, questions: bool = False) -> list[Assignment]:
    """Write an nbgrader course made from the exercises: ``nbgrader_config.py`` and ``source/``.

    Args:
        directory: The course folder (created if needed). An existing ``nbgrader_config.py`` is kept, and
            nothing of nbgrader's own (``release/``, ``submitted/``, ``gradebook.db``...) is touched.
        exercises: The folder of exercise notebooks (default: this checkout's ``exercises/``).
        names: Only these exercises ("01_shortest_route", or just "01"); default: all of them.
        questions: Also write each lesson's conceptual questions, graded by hand (``questions_NN``:
            :mod:`lares_kit.learn.questions`), for the lessons of ``names`` (default: every lesson); an exercise
            number names every lesson it follows ("08": ``questions_08`` and ``questions_08b``).

    Raises:
        LaresError: An unknown exercise name, or a notebook that cannot be made gradable.
    """
    import nbformat

    folder = Path(exercises) if exercises is not None else exercises_dir()
    if path_kind(folder) != "folder":
        raise LaresError(f"{clip(str(folder), 300)} is not a folder of exercise notebooks: pass the exercises folder "
                         "with --exercises")
    chosen = list(EXERCISES)
    if names:
        chosen = []
        for wanted in names:
            found = [n for n in EXERCISES if n == wanted or n[:2] == wanted]
            if not found:
                raise LaresError(f"there is no exercise {clip(repr(wanted), 80)}: choose from {', '.join(EXERCISES)}")
            chosen += [n for n in found if n not in chosen]
    root = Path(directory)
    config = root / "nbgrader_config.py"
    targets = {name: root / "source" / name / f"{name}.ipynb" for name in chosen}
    problem = unwritable(root, folder=True)
    if problem is not None:
        raise LaresError(f"cannot build the course in {clip(str(root), 300)}: {problem}; name a folder you can write "
                         "to (it is made if missing)")
    for target in targets.values():  # a folder or a read-only file in the way: said before anything is written
        problem = unwritable(target)
        if problem is not None:
            raise LaresError(f"cannot write {clip(str(target), 300)}: {problem}; move it away or build the course "
                             "in another folder")
    notebooks = {}  # every notebook made before any is written: a bad one leaves the course folder as it was
    for name in chosen:
        source = folder / f"{name}.ipynb"
        if path_kind(source) == "missing":
            raise LaresError(f"{clip(str(source), 300)} does not exist: pass the exercises folder with --exercises")
        notebooks[name] = course_notebook(source)
    if questions:
        from .questions import load_questions, questions_notebook

        lessons = load_questions()
        for number in lessons:
            if not names or any(number[:2] == w[:2] for w in names):  # exercise 08: questions_08 and _08b
                name = f"questions_{number}"
                notebooks[name] = questions_notebook(number, lessons)
                targets[name] = root / "source" / name / f"{name}.ipynb"
    built = []
    try:
        for name, nb in notebooks.items():
            target = targets[name]
            text = nbformat.writes(nb)
            write_atomic(target, text if text.endswith("\n") else text + "\n")
            points = sum(c.metadata.get("nbgrader", {}).get("points", 0) for c in nb.cells)
            built.append(Assignment(name, target, points))
        if path_kind(config) == "missing":
            write_atomic(config, CONFIG.format(course_id=COURSE_ID))
    except OSError as exc:
        raise LaresError(f"cannot write the course in {clip(str(root), 300)} ({exc.strerror or type(exc).__name__}); "
                         "name a folder you can write to") from None
    return built


def cli_course(args) -> int:
    """``lares course build DIR [--exercises DIR] [--only NAME ...] [--questions]``: print what was written.

    Args:
        args: The parsed command line (``directory``, ``exercises``, ``only``, ``questions``).
    """
    built = build_course(args.directory, args.exercises, args.only, questions=args.questions)
    for assignment in built:
        print(f"{assignment.points:3d} points  source/{assignment.name}/{assignment.name}.ipynb")
    total = sum(a.points for a in built)
    print(f"{len(built)} assignments, {total} points, in {args.directory}. Next, from that folder: "
          f"nbgrader generate_assignment {built[0].name}  (docs/teaching.md walks through the rest)")
    return 0
