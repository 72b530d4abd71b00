"""What a release carries besides the code: its licence, one version, and a changelog that names it."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

import lares_kit

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_file_is_the_mit_licence_pyproject_names():
    project = _pyproject()["project"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT" and text.startswith("MIT License\n")
    assert "Permission is hereby granted, free of charge" in text and project["license-files"] == ["LICENSE"]


def test_the_version_is_written_once_and_the_metadata_reads_it():
    config = _pyproject()
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "lares_kit.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", lares_kit.__version__)
    assert version("lares-kit") == lares_kit.__version__  # the installed metadata, as pip shows it


def test_the_changelogs_newest_entry_is_this_version():
    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert headings and headings[0] == lares_kit.__version__


def test_the_solutions_extra_is_built_from_this_repository_at_this_version():
    # The reference answers are their own distribution (solutions/), named by the [solutions] extra at the
    # toolkit's own version: a wheel of one release never pairs with another's answers.
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = _pyproject()
    answers = tomllib.loads((ROOT / "solutions" / "pyproject.toml").read_text(encoding="utf-8"))
    assert answers["project"]["name"] == "lares-kit-solutions"
    assert answers["project"]["version"] == lares_kit.__version__
    assert config["project"]["optional-dependencies"]["solutions"] == [f"lares-kit-solutions=={lares_kit.__version__}"]
    assert not (ROOT / "lares_kit" / "learn" / "solutions").exists(), "the answers left the core package"


def test_without_the_answers_a_solution_is_one_sentence_and_the_checks_still_work(monkeypatch):
    from lares_kit.learn import checking
    from lares_kit.learn.exercises.loop import ex01

    monkeypatch.setattr(checking, "solutions_folder", lambda: None)
    ex01.bind({"shortest_route": lambda graph, start, goal: __import__("networkx").shortest_path(graph, start, goal)})
    said = ex01.q1.solution_message().text
    assert said == checking.NO_SOLUTIONS and 'pip install "lares-kit[solutions]"' in said
    assert ex01.q1.verdict().passed  # a check needs no answer text
