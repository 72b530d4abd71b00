"""The house rules a newcomer relies on: short modules, and public functions that document their arguments."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lares_kit"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 450


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_is_over_450_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{_rel(path)} has {lines} lines: split it by concept (at most {MAX_LINES})"


def _public_functions(tree: ast.Module):
    """Functions a module lists in __all__ (the names it promises to the reader)."""
    exported: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            exported = set(ast.literal_eval(node.value))
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in exported]


def _parameters(fn: ast.FunctionDef) -> list[str]:
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [n for n in names if n not in {"self", "cls"}]


def _undocumented(path: Path) -> list[str]:
    problems = []
    for fn in _public_functions(ast.parse(path.read_text())):
        params = _parameters(fn)
        if not params:
            continue
        doc = ast.get_docstring(fn) or ""
        if "Args:" not in doc:
            problems.append(f"{fn.name}: no Args section")
            continue
        section = doc.split("Args:", 1)[1].split("Returns:", 1)[0].split("Examples:", 1)[0]
        documented = {line.strip().split(":", 1)[0].lstrip("*").split(" ")[0] for line in section.splitlines()
                      if ":" in line}
        missing = [p for p in params if p not in documented]
        if missing:
            problems.append(f"{fn.name}: Args does not describe {', '.join(missing)}")
    return problems


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_public_functions_document_their_arguments(path):
    # Google style, as the agent-facing tools already are (their Args become the schema's descriptions).
    problems = _undocumented(path)
    assert not problems, f"{_rel(path)}: " + "; ".join(problems)
