"""Who has run which check: the class's progress, read from the students' saved exercise notebooks.

``lares course progress DIR`` is for a teacher during a term, before anything is submitted: DIR holds one folder
per student (a hub's ``/home``, or nbgrader's ``submitted/``), and each student's exercise notebooks are found
anywhere inside their folder by name (``01_shortest_route.ipynb``...). A check cell's saved output is its last
verdict (``✓ Correct (q1): ...``, ``✗ Not yet (q2): ...``, ``… Not attempted (q3): ...``), so the table shows, per
student and exercise, each question as ✓ (correct), ✗ (not yet), … (not attempted) or · (not run), as of the
notebook's last save (Jupyter saves every two minutes). A notebook that cannot be read is marked ``?`` and named
below the table; nothing is written anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LaresError
from . import EXERCISES

__all__ = ["MARKS", "Progress", "read_progress", "format_progress", "cli_progress"]

MARKS = {"correct": "✓", "incorrect": "✗", "not attempted": "…", "not run": "·", "unreadable": "?"}
_VERDICT = re.compile(r"^(✓ Correct|✗ Not yet|… Not attempted) \((q\d+)\)")
_OUTCOME = {"✓ Correct": "correct", "✗ Not yet": "incorrect", "… Not attempted": "not attempted"}
_CHECK = re.compile(r"(q\d+)\.(?:check|assert_correct)\(\)")
_MAX_DEPTH = 4  # how deep inside a student's folder notebooks are looked for


@dataclass
class Progress:
    """The class's state: per student, per exercise, per question, the last saved verdict."""

    students: list[str]
    exercises: list[str]
    marks: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # (student, exercise) -> q -> outcome
    problems: list[str] = field(default_factory=list)  # notebooks that could not be read, one sentence each

    def stuck(self) -> list[tuple[str, str, str]]:
        """(student, exercise, question) whose last saved verdict is "not yet"."""
        return [(s, e, q) for (s, e), qs in sorted(self.marks.items()) for q, o in qs.items() if o == "incorrect"]


def _notebooks(folder: Path) -> dict[str, Path]:
    """Exercise name -> the most recently saved notebook of that name inside ``folder`` (hidden folders skipped)."""
    found: dict[str, Path] = {}
    names = set(EXERCISES)
    stack = [(folder, 0)]
    while stack:
        here, depth = stack.pop()
        try:
            entries = list(here.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir() and not entry.is_symlink() and depth < _MAX_DEPTH:
                stack.append((entry, depth + 1))
            elif entry.suffix == ".ipynb" and entry.stem in names and entry.is_file():
                if entry.stem not in found or entry.stat().st_mtime > found[entry.stem].stat().st_mtime:
                    found[entry.stem] = entry
    return found


def _verdicts(path: Path) -> dict[str, str]:
    """Question -> outcome, from the saved outputs of a notebook's check cells (``not run`` without output)."""
    from .course import read_notebook

    out: dict[str, str] = {}
    for cell in read_notebook(path).cells:
        if cell.cell_type != "code":
            continue
        check = _CHECK.search(cell.source)
        if not check or cell.source.lstrip().startswith("#" + check.group(1)):
            continue
        outcome = "not run"
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "") or output.get("evalue", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            for line in text.splitlines():
                found = _VERDICT.match(line.strip().strip("'\""))
                if found and found.group(2) == check.group(1):
                    outcome = _OUTCOME[found.group(1)]
        out[check.group(1)] = outcome
    return out


def read_progress(folder: str | Path, only: list[str] | None = None) -> Progress:
    """Read every student's exercise notebooks under ``folder`` (one subfolder per student).

    Args:
        folder: The class's folder: one subfolder per student.
        only: Exercise names or numbers to show (``["01", "07_scripted_user"]``); None: every exercise found.

    Raises:
        LaresError: ``folder`` is not a folder, or ``only`` names no exercise.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise LaresError(f"{root}: not a folder; name the folder that holds one folder per student")
    wanted = [e for e in EXERCISES if not only or any(e == o or e.startswith(f"{o}_") for o in only)]
    if not wanted:
        raise LaresError(f"no exercise is named {', '.join(only or [])}; they are: {', '.join(EXERCISES)}")
    students = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    progress = Progress(students, [])
    seen: set[str] = set()
    for student in students:
        for name, path in _notebooks(root / student).items():
            if name not in wanted:
                continue
            seen.add(name)
            try:
                progress.marks[student, name] = _verdicts(path)
            except LaresError as exc:
                progress.marks[student, name] = {}
                progress.problems.append(f"{student}: {exc}")
    progress.exercises = [e for e in wanted if e in seen]
    return progress


def format_progress(progress: Progress) -> str:
    """The table (a row per student, a column per exercise), then who is stuck and what could not be read.

    Args:
        progress: What :func:`read_progress` read.

    Examples:
        >>> p = Progress(["ada", "bo"], ["01_shortest_route"],
        ...              {("ada", "01_shortest_route"): {"q1": "correct", "q2": "incorrect", "q3": "not run"}})
        >>> print(format_progress(p))
        student  01
        ada      ✓✗·
        bo       --
        <BLANKLINE>
        ✓ correct  ✗ not yet  … not attempted  · not run  ? unreadable  -- no notebook
        stuck (last saved verdict "not yet"): ada 01_shortest_route q2
    """
    if not progress.students:
        return "no student folders here"
    width = max(7, *(len(s) for s in progress.students))
    lines = [f"{'student':<{width}}  " + "  ".join(f"{e[:2]:<4}" for e in progress.exercises).rstrip()]
    for student in progress.students:
        cells = []
        for exercise in progress.exercises:
            marks = progress.marks.get((student, exercise))
            ordered = sorted(marks or {}, key=lambda q: int(q[1:]))
            text = "--" if marks is None else ("".join(MARKS[marks[q]] for q in ordered) or "?")
            cells.append(f"{text:<4}")
        lines.append(f"{student:<{width}}  " + "  ".join(cells).rstrip())
    lines += ["", "✓ correct  ✗ not yet  … not attempted  · not run  ? unreadable  -- no notebook"]
    stuck = progress.stuck()
    lines.append("stuck (last saved verdict \"not yet\"): " + (", ".join(" ".join(s) for s in stuck) or "nobody"))
    lines += [f"could not read {problem}" for problem in progress.problems]
    return "\n".join(lines)


def cli_progress(args) -> int:
    """``lares course progress DIR [--only NAME ...]``: print the class's table.

    Args:
        args: The parsed command line (``directory``, ``only``).
    """
    print(format_progress(read_progress(args.directory, args.only)))
    return 0
