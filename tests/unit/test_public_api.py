"""The public API the lessons use: a few package paths, each handing on its names (lares_kit.lazy_exports)."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "lares_kit"
MAX_PATHS = 15  # module paths the notebooks import from
IMPORT = re.compile(r"^\s*(?:from\s+(lares_kit[\w.]*)\s+import|import\s+(lares_kit[\w.]*))", re.M)


def _lazy_tables() -> dict[str, dict[str, str]]:
    """Each package with a ``_LAZY`` table -> the table, read from its ``__init__.py`` without importing it."""
    tables = {}
    for init in sorted(PACKAGE.rglob("__init__.py")):
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_LAZY" for t in node.targets):
                package = ".".join(init.parent.relative_to(ROOT).parts)
                tables[package] = ast.literal_eval(node.value)
    return tables


def _notebook_imports(folder: str) -> dict[str, set[str]]:
    """lares_kit module path -> the notebooks of ``folder`` that import from it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / folder).glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                for match in IMPORT.finditer("".join(cell["source"])):
                    found.setdefault(match.group(1) or match.group(2), set()).add(path.name)
    return found


def test_the_packages_hand_on_names():
    tables = _lazy_tables()
    assert {"lares_kit", "lares_kit.home", "lares_kit.tools", "lares_kit.bench", "lares_kit.models"} <= set(tables)


@pytest.mark.parametrize("package", sorted(_lazy_tables()))
def test_every_lazy_name_is_public_and_defined_where_the_table_says(package):
    module = importlib.import_module(package)
    for name, source in _lazy_tables()[package].items():
        assert name in module.__all__, f"{package}: {name} is in _LAZY but not in __all__"
        assert getattr(module, name) is getattr(importlib.import_module(source), name), f"{package}.{name}"
        assert name in dir(module)


def test_an_unknown_name_is_an_attribute_error_that_names_the_package():
    import lares_kit.home

    with pytest.raises(AttributeError, match="module 'lares_kit.home' has no attribute 'Clocks'"):
        lares_kit.home.Clocks  # noqa: B018


def test_the_notebooks_import_from_a_few_paths():
    paths = _notebook_imports("notebooks")
    assert len(paths) <= MAX_PATHS, (f"the notebooks import from {len(paths)} module paths (at most {MAX_PATHS}): "
                                     f"hand the names on from a package's _LAZY table instead: {sorted(paths)}")
    for path in paths:
        importlib.import_module(path)


def test_importing_one_module_of_a_package_runs_none_of_the_rest():
    # A package's __init__.py imports nothing: the names load when first asked for.
    code = ("import sys, lares_kit.home.clock; "
            "print(sorted(m for m in sys.modules if m.startswith('lares_kit.home.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         check=True)
    loaded = set(ast.literal_eval(out.stdout))
    assert "lares_kit.home.clock" in loaded and "lares_kit.home.generator" not in loaded
