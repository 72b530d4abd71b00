"""The architecture page's map of who imports whom is the package import graph, computed from the code."""

from __future__ import annotations

import re
from pathlib import Path

from test_imports import import_graph

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
EVERYONE = {"errors", "lazy_exports"}  # leaves every package may use; the page leaves them out
ROW = re.compile(r"^\| `(?P<package>[\w.]+)`(?: \(the root\))? \| (?P<imports>[^|]*) \|$")


def package_of(module: str) -> str:
    """The row a module belongs to: a subpackage of lares_kit, a root module, or the offline model."""
    parts = module.split(".")
    if len(parts) == 1:
        return "lares_kit"
    if parts[1] == "models" and len(parts) > 2 and parts[2] == "offline":
        return "models.offline"
    return parts[1]


def package_graph() -> dict[str, set[str]]:
    """Each package -> the packages its modules import (itself, errors and lazy_exports left out)."""
    graph: dict[str, set[str]] = {}
    for module, imported in import_graph().items():
        if module.endswith("__main__"):
            continue
        rows = graph.setdefault(package_of(module), set())
        rows |= {package_of(m) for m in imported} - {package_of(module)} - EVERYONE
    return {p: v for p, v in graph.items() if p not in EVERYONE}


def page_graph(text: str) -> dict[str, set[str]]:
    """The table between the page's ``imports: begin`` and ``imports: end`` marks, read back."""
    table = text.split("<!-- imports: begin -->", 1)[1].split("<!-- imports: end -->", 1)[0]
    graph = {}
    for line in table.strip().splitlines()[2:]:
        match = ROW.match(line.strip())
        assert match, f"docs/architecture.md: cannot read the row {line!r}"
        imports = match["imports"].strip()
        graph[match["package"]] = set() if imports == "--" else {p.strip() for p in imports.split(",")}
    return graph


def test_the_page_reads_a_row_back():
    text = "<!-- imports: begin -->\n| a | b |\n|---|---|\n| `x` | y, z |\n| `w` | -- |\n<!-- imports: end -->"
    assert page_graph(text) == {"x": {"y", "z"}, "w": set()}


def test_the_map_is_the_import_graph():
    code, page = package_graph(), page_graph(PAGE.read_text(encoding="utf-8"))
    problems = [f"{p}: the page says {sorted(page.get(p, set()))}, the code imports {sorted(code.get(p, set()))}"
                for p in sorted(set(code) | set(page)) if code.get(p) != page.get(p)]
    assert not problems, "docs/architecture.md is out of date:\n  " + "\n  ".join(problems)
