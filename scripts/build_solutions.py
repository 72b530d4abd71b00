"""Build the teachers' solution notebooks from the starters and one source of answers.

Usage (from the repo root; ``make solutions`` does this)::

    .venv/bin/python scripts/build_solutions.py                    # every exercises/*.ipynb
    .venv/bin/python scripts/build_solutions.py exercises/01_shortest_route.ipynb
    .venv/bin/python scripts/build_solutions.py --no-execute       # fill the cells, do not run them

Each starter notebook marks its answer cells with the cell tag ``answer-qN``;
``solutions/lares_kit_solutions/exNN.py`` holds one ``# %% qN`` section per
problem. This script pastes each section over its answer cell and writes
``exercises/solutions/<name>.ipynb`` -- executed, so the teacher sees every
check pass. Those files are generated: they are git-ignored, never edited.
The tests build the same notebooks with :func:`solution_notebook` and check
that every check passes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
OUT = EXERCISES / "solutions"
SOLUTIONS = ROOT / "solutions" / "lares_kit_solutions"  # the [solutions] extra's files, in this checkout
sys.path.insert(0, str(ROOT))  # lares_kit from this checkout, installed or not
from lares_kit.learn.course import answer_tag  # noqa: E402  (the tag rule the nbgrader course uses too)

QUIET_ENV = {"LARES_PROGRESS": "0", "TQDM_DISABLE": "1", "LARES_MODEL": "offline"}
CELL_TIMEOUT = 120  # seconds


def solution_file(notebook: Path) -> Path:
    """``exercises/01_shortest_route.ipynb`` -> ``solutions/lares_kit_solutions/ex01.py``.

    Args:
        notebook: An exercise notebook's path.
    """
    return SOLUTIONS / f"ex{notebook.name[:2]}.py"


def solution_notebook(path: Path) -> nbformat.NotebookNode:
    """The starter notebook with every answer cell replaced by its reference section, outputs cleared.

    Args:
        path: An exercise notebook's path.
    """
    from lares_kit.learn.checking import solution_sections

    nb = nbformat.read(path, as_version=4)
    sections = solution_sections(solution_file(path))
    filled = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        name = answer_tag(cell)
        if name is not None:
            if name not in sections:
                raise SystemExit(f"{solution_file(path)}: no '# %% {name}' section for {path.name}")
            cell.source = sections[name]
            filled.add(name)
    missing = sorted(set(sections) - filled)
    if missing:
        raise SystemExit(f"{path.name}: no cell tagged answer-{missing[0]} for the section in {solution_file(path)}")
    return nb


def execute(nb: nbformat.NotebookNode, cwd: Path = EXERCISES, sockets: Path | None = None) -> nbformat.NotebookNode:
    """Run a notebook in a fresh kernel with ``cwd`` as its folder, progress bars off, the offline model.

    Args:
        nb: The notebook to run (changed in place, and returned).
        cwd: The folder the kernel starts in.
        sockets: A folder (keep its path short) for the kernel's Unix sockets; the kernel then talks over them
            instead of TCP ports. Give one when other processes start kernels at the same time: jupyter_client
            chooses free TCP ports before the kernel binds them, so two kernels starting at once may be handed
            the same ports, and one dies before it replies.
    """
    os.environ.update(QUIET_ENV)  # the kernel inherits this process's environment
    os.environ.pop("MPLBACKEND", None)
    km = None
    if sockets is not None:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(tempfile.mkdtemp(dir=sockets)) / "k"))
    try:
        NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        if km is not None and km.has_kernel:  # a kernel manager given to nbclient is the giver's to stop
            km.shutdown_kernel()
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="starter notebooks (default: exercises/*.ipynb)")
    parser.add_argument("--no-execute", action="store_true", help="fill the answer cells without running them")
    args = parser.parse_args(argv)
    paths = [Path(p).resolve() for p in args.notebooks] or sorted(EXERCISES.glob("[0-9][0-9]_*.ipynb"))
    OUT.mkdir(exist_ok=True)
    for path in paths:
        start = time.perf_counter()
        nb = solution_notebook(path)
        if not args.no_execute:
            execute(nb)
        target = OUT / path.name
        nbformat.write(nb, target)
        print(f"{time.perf_counter() - start:6.1f} s  {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
