"""Helpers for tests that install the toolkit as a learner gets it, and stop the servers they start.

* :func:`build_wheel` -- a wheel of this checkout, built from a copy of its sources (setuptools writes ``build/``
  and ``*.egg-info`` beside the sources, and a stale ``build/lib`` would put deleted files in the wheel; the links
  of ``lares_kit/data/`` are copied as links, and the wheel holds the files);
* :func:`venv_with_wheel` -- a new venv holding that wheel alone, which borrows the test environment's other
  packages through a path line to its site-packages (whose ``.pth`` files, the checkout's editable installs among
  them, are not read), so nothing is downloaded;
* :func:`stop` -- end a server process: terminate, then kill if it does not stop in time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "build", "dist", "runs", "course", "*.egg-info", "__pycache__",
                                     ".*_cache", "tmp")


def build_wheel(folder: Path) -> tuple[Path, Path]:
    """(the wheel, the copy of the sources it was built from), both in ``folder``."""
    source = Path(shutil.copytree(ROOT, folder / "source", symlinks=True, ignore=NOT_SOURCES))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(folder)],
                           capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return next(folder.glob("lares_kit-*.whl")), source


def venv_with_wheel(base_python: Path | str, venv: Path, wheel: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """(the venv's python, its site-packages): a venv made by ``base_python`` holding ``wheel`` alone."""
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=300, check=False, env=env, cwd=venv.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return python, site


def stop(process: subprocess.Popen, timeout: float = 30) -> None:
    """Terminate ``process`` and wait for it; kill it if it has not stopped within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
