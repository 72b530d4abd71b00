"""How long ``import lares_kit`` takes (beside ``import networkx``), and a full run of the notebooks.

Measured in one run:

* **import time**: the median wall time of ``python -c "import lares_kit"``
  in fresh processes, minus that of ``python -c "pass"``, beside the same for
  ``import networkx`` -- a dependency ``lares_kit`` cannot avoid, so the ratio
  says what the toolkit adds on top of it (DESIGN.md: openai, matplotlib and
  ipywidgets are imported lazily);
* **notebooks**: every ``notebooks/*.ipynb`` run by nbval exactly as
  ``tests/system/test_notebooks.py`` runs them (its ``LOCAL_NOTEBOOKS``, which need a
  real local model, left out as there), on a copy in a temporary folder (the
  saved notebooks are never re-written). ``--no-notebooks`` skips it.

    .venv/bin/python benchmarks/bench_import.py [--repeat N] [--no-notebooks]
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 120  # tests/system/test_notebooks.py's budget for all notebooks


def process_seconds(code: str, repeat: int) -> float:
    """Median wall time of a fresh ``python -c code``.

    Args:
        code: The Python code to run, e.g. ``"import lares_kit"``.
        repeat: How many fresh processes to time; the median is returned.
    """
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def local_notebooks() -> set[str]:
    """The notebooks the test leaves out of its timed run (they run a real local model: minutes)."""
    text = (ROOT / "tests" / "test_notebooks.py").read_text(encoding="utf-8")
    m = re.search(r"^LOCAL_NOTEBOOKS\s*=\s*(\{.*?\})", text, re.M)
    return set(ast.literal_eval(m.group(1))) if m else set()


def notebooks_seconds() -> tuple[float, int, bool]:
    """Run nbval over a copy of every notebook the test times; (seconds, notebooks, passed)."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "notebooks"
        shutil.copytree(ROOT / "notebooks", copy)
        shutil.copytree(ROOT / "tests" / "fixtures", Path(folder) / "tests" / "fixtures")  # notebook 17's dataset
        skip = local_notebooks()
        notebooks = sorted(p for p in copy.glob("*.ipynb") if p.stem not in skip)
        env = {**os.environ, "LARES_PROGRESS": "0", "TQDM_DISABLE": "1", "LARES_MODEL": "offline",
               "PYTHONPATH": str(ROOT)}
        env.pop("MPLBACKEND", None)
        cmd = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
               "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
               "-p", "no:cacheprovider", "-q", "--rootdir", folder, *map(str, notebooks)]
        start = time.perf_counter()
        run = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            print(run.stdout[-3000:], file=sys.stderr)
        return seconds, len(notebooks), run.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per import measurement")
    parser.add_argument("--no-notebooks", action="store_true", help="only the import times")
    args = parser.parse_args(argv)
    empty = process_seconds("pass", args.repeat)
    ours = process_seconds("import lares_kit", args.repeat) - empty
    networkx = process_seconds("import networkx", args.repeat) - empty
    heavy = subprocess.run([sys.executable, "-c", "import sys, lares_kit; print(' '.join(m for m in "
                            "('openai', 'matplotlib', 'ipywidgets', 'tiktoken') if m in sys.modules) or 'none')"],
                           capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    print(f"import lares_kit: {1000 * ours:6.0f} ms   import networkx: {1000 * networkx:6.0f} ms   "
          f"ratio {ours / networkx:.2f}x  (medians of {args.repeat} fresh processes, interpreter start-up "
          f"of {1000 * empty:.0f} ms taken off)")
    print(f"heavy modules loaded by `import lares_kit`: {heavy}")
    if not args.no_notebooks:
        seconds, count, passed = notebooks_seconds()
        print(f"notebooks: {count} run by nbval in {seconds:.0f} s ({'passed' if passed else 'FAILED'}; "
              f"the test budget is {BUDGET_SECONDS} s: {'met' if seconds < BUDGET_SECONDS else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
