"""The teaching notebooks: their shape, and a timed nbval run of all of them.

nbval runs in ``--nbval-lax`` mode: every cell must run without error, and
only cells marked ``# NBVAL_CHECK_OUTPUT`` have their output compared with
the saved one (after ``tests/nbval_sanitize.cfg``). Those are the cells whose
output teaches something -- transcripts, tables, checks. Full ``--nbval``
would also pin every repr, figure size and widget placeholder, so an
unrelated library change would break a lesson without teaching anything.

The run happens in one subprocess so it can be timed as a whole: the budget
is two minutes for every notebook on a 2-core machine. It runs the notebooks as a
learner gets them: a wheel built from this checkout, installed in a new venv,
the lessons copied out with ``lares lessons`` into a folder outside the
repository, and run from there (nothing may reach back into the checkout).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from installs import build_wheel, venv_with_wheel  # tests/installs.py

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
PLANNED = ["00_start_here", "01_the_home_as_a_graph", "02_agent_facing_tools", "03_function_calling_loop",
           "04_intent_and_action", "05_world_knowledge", "06_robot_search", "07_asking_the_user", "08_evaluation",
           "08b_comparing_agents", "09_react_two_models", "10_memory", "11_device_apis_and_disambiguation",
           "12_personalization", "13_persistent_commands", "14_a_small_local_model", "15_safety_and_failure",
           "16_scaling_up", "17_home_assistant", "18_a_real_home",
           "19_talk_to_the_home", "app"]
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
# Notebooks that run a real model (the [local] extra): minutes, not seconds, so outside the budget run;
# tests/system/test_local_model.py runs them under nbval when the extra is installed.
LOCAL_NOTEBOOKS = {"14_a_small_local_model"}
BUDGET_SECONDS = 120
# Two notebooks at a time, each in its own kernel (pytest-xdist keeps a notebook's cells on one worker, in order)
TWO_AT_A_TIME = ["-n", "2", "--dist", "loadfile"] if importlib.util.find_spec("xdist") else []


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def test_the_planned_notebooks_are_there():
    assert sorted(p.stem for p in NOTEBOOKS) == sorted(PLANNED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_opens_and_closes_like_a_lesson(path):
    cells = _read(path).cells
    assert 10 <= len(cells) <= 25, f"{path.name} has {len(cells)} cells; a lesson has 10-25"
    first, last = cells[0], cells[-1]
    assert first.cell_type == "markdown" and "what you will learn" in first.source.lower()
    assert last.cell_type == "markdown" and "## What you saw" in last.source and "## Try this" in last.source
    saw, _, tried = last.source.partition("## What you saw")[2].partition("## Try this")
    bullets = [line for line in saw.splitlines() if line.startswith("- ")]
    assert 3 <= len(bullets) <= 6 and tried.strip(), "a short 'What you saw' (3-6 bullets), then 'Try this'"
    assert re.search(r"exercises/\w+\.ipynb", last.source), "the closing cell names an exercise file"
    assert "offline model" in "".join(c.source for c in cells if c.cell_type == "markdown").lower()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_first_code_cell_works_from_the_repo_and_on_binder(path):
    code = next(c for c in _read(path).cells if c.cell_type == "code")
    # The set-up cell imports the installed package, else falls back to the checkout.
    assert "import lares_kit" in code.source and "sys.path" in code.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_with_clean_outputs(path):
    code_cells = [c for c in _read(path).cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code_cells), f"{path.name}: run `make notebooks` and commit"
    counts = [c.execution_count for c in code_cells]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: cells were run out of order"
    for cell in code_cells:
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: a saved output is an error"
            assert not (out.output_type == "stream" and out.name == "stderr"), \
                f"{path.name}: stderr in a saved output: {out.text[:200]!r}"
    assert any("# NBVAL_CHECK_OUTPUT" in c.source for c in code_cells), f"{path.name}: nothing is output-checked"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The toolkit as a learner gets it: a wheel built from this checkout, installed in a new venv, the lessons copied.

    The venv borrows the test environment's other packages (a path line to its site-packages, whose ``.pth`` files,
    the checkout's editable install among them, are not read), so no dependency is downloaded; ``lares_kit`` itself
    is the wheel's copy. ``lares lessons`` copies the notebooks and exercises into a folder outside the repository.
    """
    tmp = tmp_path_factory.mktemp("installed")
    wheel, _ = build_wheel(tmp)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LARES_WORLDS", "VIRTUAL_ENV")}
    venv = tmp / "venv"
    python, site = venv_with_wheel(sys.executable, venv, wheel, env)
    lessons = tmp / "lessons"
    copied = subprocess.run([str(venv / "bin" / "lares"), "lessons", str(lessons)], capture_output=True, text=True,
                            timeout=120, check=False, env=env, cwd=tmp)
    assert copied.returncode == 0, copied.stderr
    return {"python": python, "lessons": lessons, "env": env, "said": copied.stdout, "site": site}


def test_the_wheel_carries_the_course_and_the_lessons_copy_out(installed):
    python, env = installed["python"], installed["env"]
    where = subprocess.run([str(python), "-c", "import lares_kit, lares_kit.home.worlds as w; "
                            "print(lares_kit.__file__); print(len(w.world_paths()))"],
                           capture_output=True, text=True, check=True, env=env, cwd=installed["lessons"]).stdout.split()
    assert Path(where[0]).is_relative_to(installed["site"]), f"lares_kit came from {where[0]}, not the wheel"
    assert int(where[1]) >= 7  # the world files travel in the wheel
    lessons = installed["lessons"]
    assert sorted(p.name for p in (lessons / "notebooks").glob("*.ipynb")) == sorted(p.name for p in NOTEBOOKS)
    assert sorted(p.name for p in (lessons / "exercises").glob("*.ipynb")) \
        == sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))
    assert "00_start_here.ipynb to begin" in installed["said"]


def test_a_classroom_install_has_no_answers_and_its_checks_still_work(installed):
    # The wheel alone is a classroom's install: the [solutions] extra is not in it, qN.solution() says so in one
    # sentence naming the extra, and a check still gives its verdict.
    code = ("import importlib.util, networkx as nx; from lares_kit.learn.exercises.loop import ex01; "
            "print(importlib.util.find_spec('lares_kit_solutions') is None); "
            "ex01.bind({'shortest_route': lambda g, a, b: nx.shortest_path(g, a, b)}); "
            "print(ex01.q1.verdict().passed); print(ex01.q1.solution_message().text)")
    said = subprocess.run([str(installed["python"]), "-c", code], capture_output=True, text=True, check=True,
                          env=installed["env"], cwd=installed["lessons"]).stdout.splitlines()
    assert said[:2] == ["True", "True"], said
    assert said[2].startswith("The reference solutions are not installed here") and "lares-kit[solutions]" in said[2]


@pytest.mark.slow
def test_all_notebooks_pass_nbval(installed, tmp_path, years_ahead):
    # Every notebook, copied out by `lares lessons`, run under nbval from that folder with the wheel's toolkit.
    report = tmp_path / "nbval.xml"
    env = {**installed["env"], "LARES_PROGRESS": "0", "TQDM_DISABLE": "1", "LARES_MODEL": "offline"}
    env.pop("MPLBACKEND", None)  # the kernel chooses its inline backend
    copied = installed["lessons"] / "notebooks"
    # Run from the lessons' folder with it as pytest's root: nothing of the checkout is on the command line (with
    # the sanitizer's file in the checkout, nbval named every cell by that folder and two notebooks' cells collided).
    sanitize = shutil.copy(ROOT / "tests" / "nbval_sanitize.cfg", installed["lessons"] / "nbval_sanitize.cfg")
    cmd = years_ahead([str(installed["python"]), "-m", "pytest", "--rootdir", str(installed["lessons"]),
                       "--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with", str(sanitize),
                       "-p", "no:cacheprovider", "-q", "--junitxml", str(report), *TWO_AT_A_TIME,
                       *(str(copied / p.name) for p in NOTEBOOKS if p.stem not in LOCAL_NOTEBOOKS)])
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=installed["lessons"], env=env, capture_output=True, text=True,
                         timeout=10 * BUDGET_SECONDS, check=False)
    seconds = time.perf_counter() - start
    assert run.returncode == 0, f"nbval failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"
    per_notebook: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).iter("testcase"):
        per_notebook[case.get("classname", "?").removesuffix(".ipynb").split(".")[-1]] += float(case.get("time", 0))
    print("\n".join(f"{t:6.1f} s  {name}" for name, t in sorted(per_notebook.items())))
    print(f"{seconds:6.1f} s  all notebooks, nbval included (budget {BUDGET_SECONDS} s)")
    # The budget is a performance target: benchmarks/bench_import.py measures it on a quiet machine.
    # A timed assertion here would fail whenever the machine is busy, which says nothing about the notebooks.


def test_notebook_runs_move_the_date_years_ahead(years_ahead):
    # The nbval runs above go through years_ahead(); this proves the date really moves in the kernel's
    # process tree (faketime's library is inherited by every child), so no checked output can hold today.
    import datetime

    if shutil.which("faketime") is None:
        pytest.skip("needs Debian's faketime (`make test` installs it as root; else `apt-get install faketime`): "
                    "the notebooks ran on today's date only")
    if "faketime" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("the whole run is on a moved date already (`faketime ... make test`), and faketime does not nest")
    child = "import subprocess, sys; print(subprocess.run([sys.executable, '-c', " \
            "'import datetime; print(datetime.date.today().year)'], capture_output=True, text=True).stdout)"
    shown = subprocess.run(years_ahead([sys.executable, "-c", child]), capture_output=True, text=True,
                           timeout=60, check=True).stdout
    assert int(shown) >= datetime.date.today().year + 4
