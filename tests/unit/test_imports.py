"""No import cycle in lares_kit: every module can be read, and loaded, after the modules it uses.

The walk is static (ast), so it sees what a run might not: imports inside
functions count as much as those at the top of a module -- a lazy import that
only dodges a cycle is still a cycle -- and ``from pkg import name`` counts as
importing the submodule ``pkg.name`` when there is one, else ``pkg`` itself
(its ``__init__``). Parent packages that Python loads on the way to a
submodule are not counted: every module would otherwise depend on
``lares_kit/__init__.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "lares_kit"


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package (``pkg/__init__.py`` is ``pkg``)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    # "from ..x import y" in a.b.c (a module) is a.x; in a/b/__init__.py (the package a.b) it is a.x as well
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The lares_kit modules ``module`` imports anywhere in its file -> the first line that does."""
    edges: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        # "import a.b.c" of a name that is not a module: keep the longest prefix that is one
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != module:
            edges.setdefault(target, line)

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                add(submodule if submodule in modules else base, node.lineno)
        elif (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_LAZY" for t in node.targets)
              and isinstance(node.value, ast.Dict)):
            # a package's lazy names (lares_kit.lazy_exports): each module in the table is imported on first use
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    add(value.value, value.lineno)
    return edges


def import_graph(root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """module -> {imported module: line}, for every module of the package."""
    modules = module_files(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted, smallest name first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative Tarjan: work holds (node, iterator over its successors)
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def one_loop(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, staying inside the component."""
    inside, start = set(component), component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt == start:
                    return paths[node] + [start]
                if nxt in inside and nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    return component


def describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """A cycle as lines a reader can follow: ``a (line 12) -> b (line 40) -> a``."""
    loop = one_loop(graph, component)
    hops = [f"{a} imports {b} (line {graph[a][b]})" for a, b in zip(loop, loop[1:])]
    return f"{len(component)} modules in one knot: {', '.join(component)}\n    one loop: " + "; ".join(hops)


# The walk itself is tested on small made-up packages, so a cycle it misses would be a failing test here.
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize("files, expected", [
    ({"__init__.py": "", "a.py": "from . import b", "b.py": "def f():\n    from .a import x"}, [["pkg.a", "pkg.b"]]),
    ({"__init__.py": "from .a import x", "a.py": "from pkg import y"}, [["pkg", "pkg.a"]]),
    ({"__init__.py": "", "s/__init__.py": "from .m import x", "s/m.py": "from ..t import y",
      "t.py": "import pkg.s.m"}, [["pkg.s.m", "pkg.t"]]),
    ({"__init__.py": "", "s/__init__.py": "from .m import x", "s/m.py": "from . import helper",
      "s/helper.py": ""}, []),
    ({"__init__.py": "", "s/__init__.py": "from .m import x\nhelper = 1", "s/m.py": "from . import helper"},
     [["pkg.s", "pkg.s.m"]]),
    ({"__init__.py": "", "a.py": "import pkg.b.c", "b/__init__.py": "", "b/c.py": "import os"}, []),
    ({"__init__.py": "", "a.py": "_LAZY = {'x': 'pkg.b'}", "b.py": "from .a import y"}, [["pkg.a", "pkg.b"]]),
], ids=["lazy-import", "init-names", "relative-up", "sibling-submodule", "own-package-names", "no-cycle", "lazy-table"])
def test_the_walk_finds_cycles_in_small_packages(tmp_path, files, expected):
    assert cycles(import_graph(_package(tmp_path, files))) == expected


def test_the_walk_sees_every_module():
    graph = import_graph()
    assert {"lares_kit", "lares_kit.tools.toolbox", "lares_kit.safety.gate", "lares_kit.agents"} <= set(graph)
    assert "lares_kit.errors" in graph["lares_kit.tools.toolbox"]


def test_no_import_cycle_in_lares_kit():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles in lares_kit:\n  " + "\n  ".join(describe(graph, c) for c in found)
