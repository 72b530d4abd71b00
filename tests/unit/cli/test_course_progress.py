"""``lares course progress``: a fake class's saved notebooks read back as who has run which check."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import networkx as nx

from lares_kit.cli.commands import main
from lares_kit.learn.exercises.loop import ex01
from lares_kit.learn.progress import read_progress

STARTER = Path(__file__).resolve().parents[3] / "exercises" / "01_shortest_route.ipynb"


def _verdicts(**answers) -> dict[str, str]:
    # the real checks' verdicts, as a student's kernel would show them
    ex01.bind(answers)
    return {q.name: str(q.verdict()) for q in ex01.EXERCISE.problems}


def _saved(path: Path, verdicts: dict[str, str], run: set[str]) -> Path:
    nb = nbformat.read(STARTER, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []  # a fresh copy: nothing run yet
        for q in run:
            if cell.cell_type == "code" and cell.source.endswith(f"{q}.check()"):
                cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": verdicts[q],
                                                                             "text/html": "<div>...</div>"})]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def _class(tmp_path: Path) -> Path:
    room = tmp_path / "home"
    wrong = _verdicts(shortest_route=lambda g, a, b: nx.shortest_path(g, a, b), farthest_rooms=lambda g, s: [s])
    right = _verdicts(shortest_route=lambda g, a, b: nx.shortest_path(g, a, b),
                      farthest_rooms=lambda g, s: sorted(r for r, n in nx.single_source_shortest_path_length(g, s)
                                                         .items() if n == max(nx.single_source_shortest_path_length(
                                                             g, s).values())))
    _saved(room / "ada" / "exercises" / "01_shortest_route.ipynb", wrong, {"q1", "q2"})
    old = _saved(room / "bo" / "old" / "01_shortest_route.ipynb", wrong, set())
    os.utime(old, (1_000_000_000, 1_000_000_000))  # an older copy: the newest save counts
    _saved(room / "bo" / "lares-course" / "exercises" / "01_shortest_route.ipynb", right, {"q1", "q2"})
    (room / "cy" / "exercises").mkdir(parents=True)
    (room / "cy" / "exercises" / "01_shortest_route.ipynb").write_text("{not json", encoding="utf-8")
    (room / "dee").mkdir()
    return room


def test_a_fake_class_reads_back_as_each_students_last_saved_verdicts(tmp_path, capsys):
    room = _class(tmp_path)
    progress = read_progress(room)
    assert progress.students == ["ada", "bo", "cy", "dee"] and progress.exercises == ["01_shortest_route"]
    assert progress.marks["ada", "01_shortest_route"] == {"q1": "correct", "q2": "incorrect", "q3": "not run"}
    assert progress.marks["bo", "01_shortest_route"] == {"q1": "correct", "q2": "correct", "q3": "not run"}
    assert progress.stuck() == [("ada", "01_shortest_route", "q2")]
    assert main(["course", "progress", str(room)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[:5] == ["student  01", "ada      ✓✗·", "bo       ✓✓·", "cy       ?", "dee      --"]
    assert "stuck (last saved verdict \"not yet\"): ada 01_shortest_route q2" in table
    assert any(line.startswith("could not read cy: ") for line in table)  # the broken notebook, in one sentence


def test_a_missing_folder_or_an_unknown_exercise_is_one_sentence(tmp_path, capsys):
    assert main(["course", "progress", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err
    assert main(["course", "progress", str(tmp_path), "--only", "99"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lares: no exercise is named 99") and "\n" not in err
