"""The house rules a newcomer relies on: short modules, and public functions that document their arguments."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lares_kit.tools.schema import INJECTED

PACKAGE = Path(__file__).resolve().parents[2] / "lares_kit"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 450


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_is_over_450_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{_rel(path)} has {lines} lines: split it by concept (at most {MAX_LINES})"


MAX_ROOT_MODULES = 12  # the public entry points; everything else lives in a package named by its concept
MAX_FOLDER_MODULES = 15  # a folder a newcomer can read at a glance (its __init__.py not counted)


def test_the_root_keeps_only_the_entry_points_and_no_folder_is_too_flat():
    root = [p.name for p in PACKAGE.glob("*.py")]
    assert len(root) <= MAX_ROOT_MODULES, f"lares_kit/ has {len(root)} modules (at most {MAX_ROOT_MODULES}): {root}"
    for folder in sorted({p.parent for p in MODULES}):
        modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= MAX_FOLDER_MODULES, (
            f"{_rel(folder)} has {len(modules)} modules (at most {MAX_FOLDER_MODULES}): group them by concept")


def _public_functions(tree: ast.Module):
    """Functions a module lists in __all__ (the names it promises to the reader)."""
    exported: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            exported = set(ast.literal_eval(node.value))
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in exported]


def _agent_tools(tree: ast.Module) -> set[str]:
    """Functions a module lists in a ``*_TOOLS`` list: the agent-facing tools, whose docstring is the schema."""
    tools: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign):
            target = node.targets[0]
        else:
            continue
        if isinstance(target, ast.Name) and target.id.endswith("_TOOLS") and isinstance(node.value, ast.List):
            tools |= {item.id for item in node.value.elts if isinstance(item, ast.Name)}
    return tools


def _parameters(fn: ast.FunctionDef, tool: bool = False) -> list[str]:
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    # A tool's injected parameters (home, user, memory, monitor, source) are filled in by the toolkit and never
    # shown to the model: its Args section is the schema the model reads, so it describes only the others.
    skip = {"self", "cls"} | (set(INJECTED) if tool else set())
    return [n for n in names if n not in skip]


def _undocumented(path: Path) -> list[str]:
    problems = []
    tree = ast.parse(path.read_text())
    tools = _agent_tools(tree)
    for fn in _public_functions(tree):
        params = _parameters(fn, fn.name in tools)
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


def test_the_argument_rule_exempts_only_a_tools_injected_parameters(tmp_path):
    module = tmp_path / "sample.py"
    module.write_text('''
__all__ = ["toggle", "helper", "SAMPLE_TOOLS"]


def toggle(home, light_id: str) -> str:
    """Toggle a light.

    Args:
        light_id: ID of the light.
    """


def helper(home, light_id):
    """Not a tool: every argument is the reader's business.

    Args:
        light_id: ID of the light.
    """


SAMPLE_TOOLS: list = [toggle]
''')
    assert _undocumented(module) == ["helper: Args does not describe home"]
    module.write_text(module.read_text().replace("light_id: ID of the light.\n    \"\"\"\n\n\ndef helper",
                                                 "\"\"\"\n\n\ndef helper"))
    assert _undocumented(module) == ["toggle: Args does not describe light_id", "helper: Args does not describe home"]
