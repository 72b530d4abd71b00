"""nbgrader's marks on a cell, shared by the exercises' course (:mod:`.course`) and the lessons' questions
(:mod:`.questions`): the solution markers, and the cell metadata of an answer, a test or a read-only cell.
"""

from __future__ import annotations

__all__ = ["BEGIN", "END", "grading"]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def grading(grade_id: str, *, solution: bool = False, points: int | None = None, locked: bool = False) -> dict:
    """nbgrader's cell metadata (schema 3): an answer cell, a graded cell (with points), or a read-only cell.

    Args:
        grade_id: The cell's id in the gradebook, unique in its notebook.
        solution: An answer the student writes.
        points: What the cell is worth when graded; None: not graded.
        locked: Read-only for the student.

    Examples:
        >>> grading("answer-q1", solution=True, points=2)["grade"], grading("intro", locked=True)["grade"]
        (True, False)
    """
    meta = {"grade": points is not None, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return meta
