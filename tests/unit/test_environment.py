"""Binder's environment.yml (and apt.txt) install what the notebooks import and start, as pyproject.toml declares it."""

from __future__ import annotations

import ast
import json
import re
import sys
from importlib.metadata import packages_distributions
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


def _requirement_names(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[<>=!~\[ ;]", req)[0]) for req in requirements}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503: PyYAML, pyyaml and py_yaml are one name


def _notebook_imports() -> dict[str, dict[str, bool]]:
    """top-level module -> {notebook file: imported only under an if/try (a guarded, optional import)}."""
    found: dict[str, dict[str, bool]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "exercises").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            lines = "".join(cell["source"]).splitlines()
            tree = ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines))
            guarded = {id(node) for block in ast.walk(tree) if isinstance(block, (ast.If, ast.Try))
                       for node in ast.walk(block) if node is not block}
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
                for top in {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - {"lares_kit"}:
                    seen = found.setdefault(top, {})
                    seen[path.name] = seen.get(path.name, True) and id(node) in guarded
    return found


def test_every_module_a_notebook_imports_is_declared_for_binder():
    # The distributions environment.yml installs directly: pyproject's dependencies and the extras it names.
    # A module that only came along with another package (httpx with openai 2.x) is not declared: a later
    # version of that package can drop it. A guarded import (under if/try: notebook 14's llama_cpp, when the
    # [local] extra is there) may come from any other extra instead.
    project = PYPROJECT["project"]
    local = next(line for line in _pip_lines() if re.match(r"-e \.(\[|$)", line))
    extras = re.search(r"\[([^\]]*)\]", local).group(1).split(",")
    installed = _requirement_names(project["dependencies"] + [r for e in extras
                                                              for r in project["optional-dependencies"][e]])
    optional = _requirement_names([r for reqs in project["optional-dependencies"].values() for r in reqs])
    owners = {module: {_normal(d) for d in dists} for module, dists in packages_distributions().items()}
    imports = _notebook_imports()
    assert {"yaml", "networkx", "matplotlib", "httpx"} <= set(imports)  # the scan sees real imports
    missing = []
    for module, where in sorted(imports.items()):
        dists = owners.get(module, {_normal(module)})
        if dists & installed:
            continue
        if all(where.values()) and dists & optional:
            continue
        missing.append(f"{module} ({', '.join(sorted(where))})")
    assert not missing, (f"notebooks import modules that pyproject's dependencies and environment.yml's extras "
                         f"({', '.join(extras)}) do not declare: {'; '.join(missing)}")


def test_binder_installs_the_programs_the_notebooks_start():
    from lares_kit.serve.broker import PLACES

    packages = [line.split("#")[0].strip() for line in (ROOT / "apt.txt").read_text(encoding="utf-8").splitlines()]
    packages = [p for p in packages if p]
    uses_broker = any("LocalBroker" in path.read_text(encoding="utf-8")
                      for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert uses_broker and "mosquitto" in packages and "/usr/sbin/mosquitto" in PLACES  # Debian's package's path
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in packages), packages


def test_no_package_is_pinned_twice():
    conda = {re.split(r"[<>=]", d)[0] for d in ENV["dependencies"] if isinstance(d, str)}
    assert conda <= {"python", "pip"}, "pin Python packages in pyproject.toml, not here, so there is one source"
