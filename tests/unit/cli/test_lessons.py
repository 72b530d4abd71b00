"""``lares lessons DIR``: the notebooks and exercises copied into a learner's folder, their own files kept."""

from __future__ import annotations

from pathlib import Path

from lares_kit.cli.commands import main
from lares_kit.learn.lessons import LESSONS_ROOT

REPO = Path(__file__).resolve().parents[3]


def test_the_lessons_are_copied_and_a_learners_file_is_kept(tmp_path, capsys):
    course = tmp_path / "my course"  # a learner's folder may have a space
    mine = course / "notebooks" / "00_start_here.ipynb"
    mine.parent.mkdir(parents=True)
    mine.write_text("my notes", encoding="utf-8")
    assert main(["lessons", str(course)]) == 0
    said = capsys.readouterr().out
    assert "kept 1 file(s) already there" in said and "00_start_here.ipynb to begin" in said
    assert mine.read_text(encoding="utf-8") == "my notes"  # never overwritten
    copied = sorted(p.name for p in (course / "notebooks").glob("*.ipynb"))
    assert copied == sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
    assert (course / "exercises" / "README.md").exists()
    # in a checkout, the package's lessons are the checkout's notebooks (one copy in git)
    assert (LESSONS_ROOT / "notebooks").resolve() == (REPO / "notebooks").resolve()


def test_a_folder_that_cannot_be_made_is_one_sentence(tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert main(["lessons", str(tmp_path / "a-file")]) == 2
    assert capsys.readouterr().err.strip().endswith("this is a file, not a folder; name a folder for the lessons")
    assert main(["lessons", str(tmp_path / "a-file" / "inside")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lares: ") and "cannot write the lessons there" in err and "\n" not in err
