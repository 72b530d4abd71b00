"""docs/course/: the syllabus's minutes add up, every session fits 90 minutes, and every lesson is planned once."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "docs" / "course"
SESSION_MINUTES = 90


def sessions() -> dict[str, dict[str, list[tuple[str, int]]]]:
    """Session title -> {"in class": [(item, minutes)], "after class": [...], "in class total": [("", n)], ...}."""
    found: dict[str, dict[str, list[tuple[str, int]]]] = {}
    text = (COURSE / "syllabus.md").read_text(encoding="utf-8")
    for block in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        title, _, body = block.partition("\n")
        tables: dict[str, list[tuple[str, int]]] = {}
        part = None
        for line in body.splitlines():
            header = re.fullmatch(r"\| (in class|after class) \| minutes \|", line)
            row = re.fullmatch(r"\| (\S+) \| (\d+) \|", line)
            total = re.fullmatch(r"\| \*\*(in class|after class)\*\* \| \*\*(\d+)\*\* \|", line)
            if header:
                part = header.group(1)
                tables[part] = []
            elif total:
                tables[f"{total.group(1)} total"] = [("", int(total.group(2)))]
            elif row and part:
                tables[part].append((row.group(1), int(row.group(2))))
        found[title.strip()] = tables
    return found


def test_every_session_fits_its_time_and_its_totals_add_up():
    plan = sessions()
    assert len(plan) >= 7
    for title, tables in plan.items():
        for part in ("in class", "after class"):
            stated = tables[f"{part} total"][0][1]
            assert sum(m for _, m in tables[part]) == stated, f"{title}: the {part} minutes do not add up to {stated}"
        assert 0 < tables["in class total"][0][1] <= SESSION_MINUTES, f"{title}: more than {SESSION_MINUTES} minutes"


def test_every_notebook_and_exercise_is_planned_once():
    planned = [item for tables in sessions().values() for part in ("in class", "after class")
               for item, _ in tables[part]]
    lessons = [f"notebooks/{p.stem}" for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    exercises = [f"exercises/{p.stem}" for p in sorted((ROOT / "exercises").glob("*.ipynb"))]
    assert sorted(planned) == sorted(lessons + exercises)


def test_every_lesson_has_an_answer_key_and_outcomes():
    outcomes = (COURSE / "outcomes.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        key = path.stem.partition("_")[0]  # "08", "08b", "app"
        assert (COURSE / "answers" / f"{key}.md").exists(), f"no answer key for {path.name}'s Try this"
        assert re.search(rf"^## {re.escape(key)} · ", outcomes, re.MULTILINE), f"no outcomes for {path.name}"
