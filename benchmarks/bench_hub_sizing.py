"""How big a JupyterHub must be for a class: each lesson's wall time, CPU seconds and peak memory, measured.

Each lesson notebook runs top to bottom in a fresh kernel started with nbclient, from a copy in a temporary
folder, with ``LARES_PROGRESS=0``, ``TQDM_DISABLE=1``, ``LARES_MODEL=offline`` and this checkout on
``PYTHONPATH``. Measured per notebook:

* **wall s**: from starting the kernel to the end of the last cell;
* **CPU s**: user + system seconds of the kernel process and its children (live ones, and the ones it has
  waited for), read from ``/proc`` through psutil before the kernel is shut down; also per cell, so the
  heaviest cell is known;
* **peak MB**: the resident memory (RSS) summed over the kernel and its children, sampled every 0.2 s in a
  thread, or the kernel's own high-water mark (``VmHWM``) if that is larger;
* **set-up MB** and **end MB**: that sum after the first code cell and after the last one.

Also measured: an idle kernel's RSS, bare and after ``import lares_kit`` (what an open notebook costs while
its student reads). Then the sizing for a class (60 students unless ``--students``): memory for the worst
case (every student at the heaviest lesson's peak) and for ``k`` students running a cell at the same moment
(``--busy``, 20 % unless told), and the cores for the average load (each lesson's CPU seconds spread over its
minutes in ``docs/course/syllabus.md``) plus the burst of ``k`` students running the heaviest cell at once.

    .venv/bin/python benchmarks/bench_hub_sizing.py [NOTEBOOK ...] [--all] [--students 60] [--busy 0.2]

The default set is 00, 05, 08, 16 and 18; ``--all`` runs every notebook but 14 (it runs a real local model
and needs the ``[local]`` extra). Notebooks are run one after another, never two at once.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["00_start_here", "05_world_knowledge", "08_evaluation", "16_scaling_up", "18_a_real_home"]
LOCAL = {"14_a_small_local_model"}  # runs a real local model: minutes, and the [local] extra
MB = 1024 * 1024


def kernel_env() -> dict[str, str]:
    """The environment a lesson's kernel gets: offline model, no progress bars, this checkout importable."""
    env = {**os.environ, "LARES_PROGRESS": "0", "TQDM_DISABLE": "1", "LARES_MODEL": "offline"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env.pop("MPLBACKEND", None)  # the kernel chooses its inline backend
    return env


def syllabus_minutes() -> dict[str, int]:
    """Minutes in class per notebook, from the syllabus tables (``| notebooks/NAME | 30 |``)."""
    text = (ROOT / "docs" / "course" / "syllabus.md").read_text(encoding="utf-8")
    return {m[1]: int(m[2]) for m in re.finditer(r"^\|\s*notebooks/(\S+?)\s*\|\s*(\d+)\s*\|", text, re.M)}


def tree(pid: int) -> list[psutil.Process]:
    """The process and its live descendants (an empty list once it has gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def tree_rss(pid: int) -> int:
    """Bytes resident, summed over the process and its children (shared pages are counted once per process)."""
    total = 0
    for proc in tree(pid):
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total


def tree_cpu(pid: int) -> float:
    """User + system seconds of the process and its children, the waited-for ones included."""
    total = 0.0
    for proc in tree(pid):
        try:
            t = proc.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass
    return total


def high_water_mark(pid: int) -> int:
    """The kernel process's own peak RSS in bytes (``VmHWM``; 0 where /proc does not say)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    m = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return int(m[1]) * 1024 if m else 0


class Sampler(threading.Thread):
    """Samples the kernel tree's summed RSS every ``interval`` seconds and keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak = pid, interval, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self.done.wait(self.interval)

    def stop(self) -> int:
        self.done.set()
        self.join()
        return max(self.peak, tree_rss(self.pid))


@dataclass
class Lesson:
    name: str
    minutes: int | None
    cells: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    peak: int = 0
    setup: int = 0
    end: int = 0
    cell_cpu: list[float] = field(default_factory=list)
    cell_wall: list[float] = field(default_factory=list)
    error: str = ""


def quiet_kernel(client: NotebookClient, folder: str):
    """``client.setup_kernel`` with the lesson's environment; the kernel's own stderr (a TCP warning) is dropped."""
    return client.setup_kernel(env=kernel_env(), cwd=folder, stderr=subprocess.DEVNULL)


def kernel_pid(client: NotebookClient) -> int:
    """The pid of the kernel process nbclient started."""
    return client.km.provisioner.process.pid


def run_lesson(path: Path, minutes: int | None) -> Lesson:
    """Run one notebook in a fresh kernel from a copy in a temporary folder, measuring as the docstring says."""
    lesson = Lesson(path.stem, minutes)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(shutil.copy(path, folder))
        nb = nbformat.read(copy, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": folder}})
        start = time.perf_counter()
        with quiet_kernel(client, folder):
            pid = kernel_pid(client)
            sampler = Sampler(pid)
            sampler.start()
            try:
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    cpu, t0 = tree_cpu(pid), time.perf_counter()
                    client.execute_cell(cell, index)
                    lesson.cell_wall.append(time.perf_counter() - t0)
                    lesson.cell_cpu.append(tree_cpu(pid) - cpu)
                    if len(lesson.cell_cpu) == 1:
                        lesson.setup = tree_rss(pid)
            except CellExecutionError as exc:
                lesson.error = str(exc).strip().splitlines()[-1][:100]
            lesson.wall = time.perf_counter() - start
            lesson.cpu = tree_cpu(pid)
            lesson.end = tree_rss(pid)
            lesson.peak = max(sampler.stop(), high_water_mark(pid))
        lesson.cells = len(lesson.cell_cpu)
    return lesson


def idle_rss(code: str, settle: float = 3.0) -> int:
    """RSS of a kernel tree that ran ``code`` and then sat idle for ``settle`` seconds (largest of 5 samples)."""
    with tempfile.TemporaryDirectory() as folder:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)] if code else [])
        client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": folder}})
        with quiet_kernel(client, folder):
            pid = kernel_pid(client)
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            time.sleep(settle)
            samples = []
            for _ in range(5):
                samples.append(tree_rss(pid))
                time.sleep(0.2)
            return max(samples)


def notebook_paths(names: list[str], every: bool) -> list[Path]:
    """The notebooks to run: the ones named (paths or stems), all but the local-model one, or the default set."""
    folder = ROOT / "notebooks"
    if every:
        return sorted(p for p in folder.glob("*.ipynb") if p.stem not in LOCAL)
    paths = []
    for name in names or DEFAULT:
        given = Path(name)
        path = given if given.is_file() else folder / (given.stem + ".ipynb")
        if not path.is_file():
            raise SystemExit(f"no such notebook: {name}")
        paths.append(path)
    return paths


def machine() -> str:
    """Cores, CPU model and memory of this machine, and its load now."""
    model = "unknown CPU"
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        model = m[1].strip() if m else model
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} cores ({model}), {psutil.virtual_memory().total / 1024**3:.1f} GiB memory, "
            f"load average {load}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebook paths or names (default: 00, 05, 08, 16 and 18)")
    parser.add_argument("--all", action="store_true", help="every notebook but 14_a_small_local_model")
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--busy", type=float, default=0.2,
                        help="share of the students running a cell at the same moment (default 0.2)")
    parser.add_argument("--wait", type=float, default=5.0,
                        help="seconds a student may wait for the heaviest cell in a burst (default 5)")
    args = parser.parse_args(argv)
    minutes = syllabus_minutes()
    paths = notebook_paths(args.notebooks, args.all)
    print(f"machine: {machine()}")

    bare = idle_rss("")
    idle = idle_rss("import lares_kit")
    print(f"idle kernel RSS: {bare / MB:.0f} MB bare, {idle / MB:.0f} MB after `import lares_kit`")

    lessons = []
    for path in paths:
        lesson = run_lesson(path, minutes.get(path.stem))
        lessons.append(lesson)
        print(f"  ran {lesson.name}: {lesson.wall:.1f} s" + (f"  ERROR: {lesson.error}" if lesson.error else ""),
              flush=True)

    print()
    header = (f"{'notebook':<34}{'min':>5}{'cells':>6}{'wall s':>8}{'CPU s':>8}{'top cell':>10}"
              f"{'set-up MB':>11}{'peak MB':>9}{'end MB':>8}")
    print(header)
    print("-" * len(header))
    for s in lessons:
        top = max(s.cell_cpu, default=0.0)
        print(f"{s.name:<34}{s.minutes if s.minutes is not None else '-':>5}{s.cells:>6}{s.wall:>8.1f}{s.cpu:>8.1f}"
              f"{top:>10.1f}{s.setup / MB:>11.0f}{s.peak / MB:>9.0f}{s.end / MB:>8.0f}")
    print("(top cell: CPU s of the lesson's heaviest cell; MB are MiB of RSS summed over the kernel and its children)")

    n = args.students
    k = max(1, round(args.busy * n))
    heavy = max(lessons, key=lambda s: s.peak)
    gib = 1024**3
    print(f"\nsizing for {n} students (k = {k} running a cell at the same moment, {args.busy:.0%}):")
    print(f"memory, worst case: {n} x {heavy.peak / MB:.0f} MB (peak of {heavy.name}) = {n * heavy.peak / gib:.1f} GiB")
    opened = max(lessons, key=lambda s: s.setup)
    print(f"memory, every student has just run the set-up cell: {n} x {opened.setup / MB:.0f} MB "
          f"(after the set-up cell of {opened.name}) = {n * opened.setup / gib:.1f} GiB")
    typical = (n - k) * idle + k * heavy.peak
    print(f"memory, {k} running: ({n} - {k}) x {idle / MB:.0f} MB idle + {k} x {heavy.peak / MB:.0f} MB peak "
          f"= {typical / gib:.1f} GiB")
    held = max(lessons, key=lambda s: s.end)
    print(f"memory, every kernel still holding what the heaviest lesson left: {n} x {held.end / MB:.0f} MB "
          f"(end of {held.name}) = {n * held.end / gib:.1f} GiB")

    timed = [s for s in lessons if s.minutes]
    per_student = statistics.mean(s.cpu / (60 * s.minutes) for s in timed) if timed else 0.0
    if timed:
        spread = ", ".join(f"{s.name[:2]}: {s.cpu:.1f} s / {s.minutes} min" for s in timed)
        print(f"CPU, average: mean of (CPU s / class seconds) over the lessons ({spread}) = "
              f"{per_student:.4f} cores per student; x {n} = {per_student * n:.2f} cores")
    cell_cpu, number, where = max((c, i + 1, s.name) for s in lessons for i, c in enumerate(s.cell_cpu))
    wait = max(args.wait, cell_cpu)
    burst = k * cell_cpu / wait
    print(f"CPU, burst: {k} students run the heaviest cell ({cell_cpu:.1f} CPU s, code cell {number} of {where}) "
          f"at once; to finish within {wait:.1f} s: {k} x {cell_cpu:.1f} / {wait:.1f} = {burst:.1f} cores "
          f"(with C cores each waits about {k} x {cell_cpu:.1f} / C s: "
          + ", ".join(f"{c} cores {max(cell_cpu, k * cell_cpu / c):.0f} s" for c in (2, 4, 8)) + ")")
    print(f"cores: average + burst = {per_student * n:.2f} + {burst:.1f} -> {math.ceil(per_student * n + burst)}")
    cells = [(w, 60 * s.minutes / s.cells) for s in timed for w in s.cell_wall if s.cells]
    if cells:
        share = statistics.mean(w / gap for w, gap in cells)
        print(f"(if students ran cells at random moments, {share:.1%} of them would be running one at any moment: "
              f"mean cell wall time / class seconds per cell; k = {args.busy:.0%} allows for a class running "
              f"together)")
    print(f"machine at the end: {machine()}")
    return 0 if not any(s.error for s in lessons) else 1


if __name__ == "__main__":
    sys.exit(main())
