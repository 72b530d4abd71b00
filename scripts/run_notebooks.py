"""Re-execute the teaching notebooks and save them with their outputs.

Usage (from the repo root; ``make notebooks`` does this)::

    .venv/bin/python scripts/run_notebooks.py                 # every notebooks/*.ipynb
    .venv/bin/python scripts/run_notebooks.py notebooks/06_robot_search.ipynb

Notebooks are committed *with* outputs so readers see them on GitHub, and
nbval compares the outputs of cells marked ``# NBVAL_CHECK_OUTPUT`` against
what is saved. Run this after changing a notebook or the library, read the
diff, and commit the notebooks.

Each notebook runs in a fresh kernel with its own folder as the working
directory, with progress bars off (LARES_PROGRESS=0, TQDM_DISABLE=1) -- the
same settings the tests use. Volatile metadata (timings, widget state, widget
ids) is not saved, so re-running an unchanged notebook gives an unchanged
file; a widget is saved as the picture it sends beside itself.

Why progress bars need both: in a kernel, ``tqdm.auto`` draws its bar as an
ipywidget, and a saved notebook keeps only the text it was displayed with --
the first frame, "bench:   0%|          | 0/202" -- frozen for every reader.
A notebook run any other way (JupyterLab's "Run All" then save, ``jupyter
nbconvert --execute``) has neither variable set and shows one, so this script
also drops any progress-bar output it finds before saving.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
QUIET_ENV = {"LARES_PROGRESS": "0", "TQDM_DISABLE": "1"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT = 120  # seconds; a cell that takes longer is a bug in a teaching notebook...
# ...except where a real model runs on the CPU (the [local] extra): minutes on a busy 2-core machine.
LOCAL_CELL_TIMEOUT = {"14_a_small_local_model": 1800}
# A tqdm bar as text: "bench:  40%|####      | 80/202 [00:03<00:05, 24.1episode/s]" (desc optional).
PROGRESS_BAR = re.compile(r"^(?:[^\n|]*: *)?\d{1,3}%\|[^|\n]*\| *\d+/\d*")


def notebook_paths(args: list[str]) -> list[Path]:
    """The notebooks named on the command line, or every notebooks/*.ipynb in order.

    Args:
        args: Notebook paths from the command line; empty: every notebook.
    """
    if args:
        return [Path(a).resolve() for a in args]
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def execute(path: Path, cell_timeout: int | None = None) -> float:
    """Run one notebook in place; return the seconds it took. Raises on a failing cell.

    Args:
        path: The notebook; its outputs are saved back into it.
        cell_timeout: Seconds one cell may take; None: the notebook's own limit (120 s, longer for the local model's).
    """
    nb = nbformat.read(path, as_version=4)
    timeout = cell_timeout or LOCAL_CELL_TIMEOUT.get(path.stem, CELL_TIMEOUT)
    os.environ.update(QUIET_ENV)  # the kernel inherits this process's environment
    os.environ.pop("MPLBACKEND", None)  # let the kernel pick its inline backend
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            record_timing=False, store_widget_state=False)
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    _tidy(nb)
    nbformat.write(nb, path)
    return seconds


def _tidy(nb: nbformat.NotebookNode) -> None:
    # Keep files stable across machines: one kernelspec, no per-run metadata.
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata.get("language_info", {}).pop("version", None)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = _coalesce([out for out in cell.outputs if not is_progress_bar(out)])
            for out in cell.outputs:
                # A widget view cannot render from a file (its state is not saved) and its id
                # changes every run; our widgets also send a PNG, which GitHub and Lab show.
                out.get("data", {}).pop(WIDGET_VIEW, None)


def is_progress_bar(output: nbformat.NotebookNode) -> bool:
    """Whether a saved output is only a progress bar: a tqdm widget's frozen text, or bar lines on stderr.

    Args:
        output: One saved output of a code cell.

    Examples:
        >>> bar = nbformat.v4.new_output("display_data",
        ...                              data={"text/plain": "bench:   0%|          | 0/202 [00:00<?, ?episode/s]"})
        >>> is_progress_bar(bar), is_progress_bar(nbformat.v4.new_output("stream", name="stdout", text="50%|x| done"))
        (True, False)
    """
    if output.output_type == "stream":
        lines = [line for line in re.split(r"[\r\n]+", output.text) if line.strip()]
        return output.name == "stderr" and bool(lines) and all(PROGRESS_BAR.match(line.strip()) for line in lines)
    if output.output_type != "display_data":
        return False
    data = output.get("data", {})
    text = data.get("text/plain", "")
    text = "".join(text) if isinstance(text, list) else text
    return set(data) <= {"text/plain", WIDGET_VIEW} and bool(PROGRESS_BAR.match(text.strip()))


def _coalesce(outputs: list) -> list:
    # One print can arrive as several stream chunks; join neighbours as nbval compares them.
    merged: list = []
    for out in outputs:
        if (out.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == out.name):
            merged[-1].text += out.text
        else:
            merged.append(out)
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebook files (default: notebooks/*.ipynb)")
    parser.add_argument("--cell-timeout", type=int, default=None,
                        help=f"seconds a cell may take (default {CELL_TIMEOUT}; the local-model notebook "
                             f"{max(LOCAL_CELL_TIMEOUT.values())})")
    args = parser.parse_args(argv)
    total = 0.0
    for path in notebook_paths(args.notebooks):
        seconds = execute(path, args.cell_timeout)
        total += seconds
        print(f"{seconds:6.1f} s  {path.relative_to(ROOT)}")
    print(f"{total:6.1f} s  total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
