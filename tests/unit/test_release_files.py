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
