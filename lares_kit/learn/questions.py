"""Conceptual questions per lesson, graded by hand: nbgrader assignments ``questions_NN`` with their rubrics.

The questions and their rubrics are data (``lares_kit/data/questions.yaml``): two or three a lesson, each with its
points and a rubric that ends with a model answer. :func:`questions_notebook` makes one lesson's nbgrader source:
a read-only cell per question, then a markdown answer cell that nbgrader grades by hand (``grade`` and
``solution``, its points). The rubric sits in the answer cell between nbgrader's solution markers, so the
teacher's source and the formgrader show it, and ``nbgrader generate_assignment`` replaces it with "YOUR ANSWER
HERE" in the students' copy. ``lares course build DIR --questions`` writes them beside the exercises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import LaresError
from .nbgrader_cells import BEGIN, END, grading

__all__ = ["QUESTIONS_FILE", "load_questions", "questions_notebook"]

QUESTIONS_FILE = Path(__file__).resolve().parent.parent / "data" / "questions.yaml"


def load_questions(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Lesson number ("00") -> {"notebook": name, "questions": [{id, points, question, rubric}, ...]}, checked.

    Args:
        path: The questions file; None: the package's.

    Raises:
        LaresError: the file is missing or a lesson or question is malformed (one sentence naming where).

    Examples:
        >>> lessons = load_questions()
        >>> all(2 <= len(lesson["questions"]) <= 3 for lesson in lessons.values())
        True
    """
    from ..errors import DataFileError
    from ..files.yamldata import read_yaml_data

    source = Path(path) if path is not None else QUESTIONS_FILE
    try:
        data = read_yaml_data(source.read_text(encoding="utf-8"), str(source), DataFileError)
    except OSError as exc:
        raise LaresError(f"{source}: cannot read the questions ({exc.strerror or exc})") from None
    lessons = data.get("lessons") if isinstance(data, dict) else None
    if not isinstance(lessons, dict) or not lessons:
        raise LaresError(f"{source}: expected a mapping 'lessons:' of lesson numbers")
    for number, lesson in lessons.items():
        where = f"{source}: lessons.{number}"
        if not isinstance(lesson, dict) or not isinstance(lesson.get("questions"), list) or not lesson["questions"]:
            raise LaresError(f"{where}: expected 'notebook:' and a list 'questions:'")
        seen = set()
        for i, question in enumerate(lesson["questions"]):
            keys = {"id", "points", "question", "rubric"}
            if not isinstance(question, dict) or set(question) != keys:
                raise LaresError(f"{where}.questions[{i}]: expected exactly the keys {', '.join(sorted(keys))}")
            if question["id"] in seen or not isinstance(question["points"], int) or question["points"] < 1:
                raise LaresError(f"{where}.questions[{i}]: a repeated id or points that are not a positive number")
            seen.add(question["id"])
    return {str(number): lesson for number, lesson in lessons.items()}


def questions_notebook(number: str, lessons: dict[str, dict[str, Any]] | None = None):
    """The nbgrader source of one lesson's questions (an ``nbformat`` notebook).

    Args:
        number: The lesson's number, e.g. ``"05"``.
        lessons: What :func:`load_questions` read; None: the package's questions.

    Raises:
        LaresError: the lesson has no questions.
    """
    import nbformat

    lessons = lessons if lessons is not None else load_questions()
    if number not in lessons:
        raise LaresError(f"lesson {number!r} has no questions; the lessons with questions: {', '.join(lessons)}")
    lesson = lessons[number]
    total = sum(q["points"] for q in lesson["questions"])
    nb = nbformat.v4.new_notebook()
    intro = nbformat.v4.new_markdown_cell(
        f"# Questions on `notebooks/{lesson['notebook']}.ipynb`\n\nAnswer each question in the cell below it, in a "
        f"few sentences of your own, from what the notebook showed you ({total} points, graded by your teacher).")
    intro.metadata["nbgrader"] = grading("intro", locked=True)
    nb.cells.append(intro)
    for n, question in enumerate(lesson["questions"], 1):
        ask = nbformat.v4.new_markdown_cell(f"**Question {n}** ({question['points']} point"
                                            f"{'s' if question['points'] > 1 else ''}). {question['question'].strip()}")
        ask.metadata["nbgrader"] = grading(f"question-{question['id']}", locked=True)
        answer = nbformat.v4.new_markdown_cell(f"{BEGIN}\n**Rubric** (the teacher's copy: nbgrader removes it from "
                                               f"the students' version)\n\n{question['rubric'].strip()}\n{END}")
        answer.metadata["nbgrader"] = grading(f"answer-{question['id']}", solution=True, points=question["points"])
        nb.cells += [ask, answer]
    return nb
