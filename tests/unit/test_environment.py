"""Binder's environment.yml installs what pyproject.toml says the notebooks need."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ENV = yaml.safe_load((ROOT / "environment.yml").read_text())


def _pip_lines() -> list[str]:
    return [line for dep in ENV["dependencies"] if isinstance(dep, dict) for line in dep.get("pip", [])]


def _version(spec: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", spec)[:2])


def test_python_satisfies_requires_python():
    python = next(d for d in ENV["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert _version(python.split("=", 1)[1]) >= _version(PYPROJECT["project"]["requires-python"])


def test_pip_installs_this_package_editable_with_the_lab_extra():
    # Editable, so worlds/ beside the package is found (lares_kit.home.worlds.WORLD_DIRS).
    local = [line for line in _pip_lines() if re.match(r"-e \.(\[|$)", line)]
    assert local, f"environment.yml must install the repo with `-e .[...]`; pip section: {_pip_lines()}"
    extras = set(re.search(r"\[([^\]]*)\]", local[0]).group(1).split(","))
    assert "lab" in extras
    assert extras <= set(PYPROJECT["project"]["optional-dependencies"])


def test_the_lab_extra_and_core_dependencies_cover_what_notebooks_import():
    project = PYPROJECT["project"]
    names = {re.split(r"[<>=!\[ ;]", req)[0].lower()
             for req in project["dependencies"] + project["optional-dependencies"]["lab"]}
    # The notebooks import these; jupyterlab brings ipykernel, voila serves the app notebook.
    for needed in ["networkx", "pyyaml", "openai", "matplotlib", "ipywidgets", "tqdm", "jupyterlab", "voila"]:
        assert needed in names, f"{needed} is missing from pyproject's dependencies or the lab extra"


def test_no_package_is_pinned_twice():
    conda = {re.split(r"[<>=]", d)[0] for d in ENV["dependencies"] if isinstance(d, str)}
    assert conda <= {"python", "pip"}, "pin Python packages in pyproject.toml, not here, so there is one source"
