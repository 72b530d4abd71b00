"""The exercises as an nbgrader course: ``lares course build`` and nbgrader's own commands on it.

The fast tests read the generated source notebooks (nbgrader's cell metadata,
and nbgrader's own ``ClearSolutions`` giving back exactly the starter a
student knows). The slow one runs a whole term in miniature on a temporary
course with nbgrader's command-line tools: the teacher generates and releases
two assignments, two students fetch them, fill them in (one from the
reference solutions, one with answers a student would really write, some
wrong) and submit; the teacher collects, autogrades and generates feedback,
and the gradebook must hold full marks for the first and the expected
partial marks for the second.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lares_kit.errors import LaresError
from lares_kit.learn import EXERCISES
from lares_kit.learn.checking import CheckFailed, solution_sections
from lares_kit.learn.course import BEGIN, COURSE_ID, END, answer_tag, build_course, course_notebook
from lares_kit.learn.exercises import module_name

ROOT = Path(__file__).resolve().parents[2]
EXERCISE_DIR = ROOT / "exercises"
BIN = Path(sys.executable).parent  # nbgrader, and the alembic it runs for its gradebook

nbgrader = pytest.importorskip("nbgrader", reason="nbgrader is not installed (the [course] extra: make installs it)")


def _starter(name: str) -> dict[str, str]:
    nb = nbformat.read(EXERCISE_DIR / f"{name}.ipynb", as_version=4)
    return {answer_tag(c): c.source for c in nb.cells if answer_tag(c)}


def _grading(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# ------------------------------------------------------------------ source notebooks
@pytest.mark.parametrize("name", EXERCISES)
def test_every_exercise_becomes_a_gradable_source_assignment(name):
    from lares_kit.learn.exercises.loop.ex00 import EXERCISE as _  # noqa: F401  (the modules import cleanly)

    nb = course_notebook(EXERCISE_DIR / f"{name}.ipynb")
    module = importlib.import_module(module_name(name[:2]))
    problems = [p.name for p in module.EXERCISE.problems]
    sections = solution_sections(module.EXERCISE.solution_path)
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    assert sorted(graded) == sorted(["setup", *(f"answer-{q}" for q in problems), *(f"check-{q}" for q in problems)])
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "outputs are cleared"
    assert "bind(globals(), solutions=False)" in graded["setup"].source and _grading(graded["setup"])["locked"]
    for q in problems:
        answer, check = graded[f"answer-{q}"], graded[f"check-{q}"]
        assert _grading(answer)["solution"] and not _grading(answer)["grade"]
        assert sections[q] in answer.source.split(BEGIN)[1].split(END)[0], "the reference solution, between markers"
        assert _grading(check) == {"grade": True, "grade_id": f"check-{q}", "locked": True, "points": 1,
                                   "schema_version": 3, "solution": False, "task": False}
        assert check.source.endswith(f"{q}.assert_correct()")
    helps = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("#q")]
    assert helps == [f"#{q}.hint()" for q in problems], "hints stay; solutions come from the teacher"


@pytest.mark.parametrize("name", EXERCISES)
def test_nbgrader_gives_students_exactly_the_starter(name):
    # nbgrader's own preprocessor, configured as the course's nbgrader_config.py configures it.
    from nbgrader.preprocessors import ClearSolutions
    from traitlets.config import Config

    config = Config()
    config.ClearSolutions.code_stub = {"python": ""}
    nb, _ = ClearSolutions(config=config).preprocess(course_notebook(EXERCISE_DIR / f"{name}.ipynb"), {})
    released = {answer_tag(c): c.source for c in nb.cells if answer_tag(c)}
    assert {q: s.rstrip("\n") for q, s in released.items()} == _starter(name)


def test_a_graded_check_shows_the_verdict_and_raises_unless_correct(capsys):
    from lares_kit.learn.exercises.loop import ex01

    ex01.bind({"shortest_route": lambda graph, start, goal: [start, goal]}, solutions=False)
    try:
        with pytest.raises(CheckFailed) as failed:
            ex01.q1.assert_correct()
        shown = capsys.readouterr().out
        assert shown.startswith("✗ Not yet (q1)") and failed.value._render_traceback_() == [str(failed.value)]
        assert str(failed.value).split() == shown.split()  # the verdict shown, wrapped for nbgrader validate
        assert "graded copy" in ex01.q1.solution_message().text
        assert "(the last one)" in ex01.q1.hint_message(2).text  # no pointer to .solution()
    finally:
        ex01.bind({})


def test_build_course_keeps_the_teachers_config_and_names_unknown_exercises(tmp_path):
    built = build_course(tmp_path, names=["01", "09_react_parser"])
    assert [(a.name, a.points) for a in built] == [("01_shortest_route", 3), ("09_react_parser", 3)]
    config = tmp_path / "nbgrader_config.py"
    assert f'course_id = "{COURSE_ID}"' in config.read_text()
    config.write_text("c = get_config()  # the teacher's own\n")
    build_course(tmp_path, names=["01"])
    assert config.read_text() == "c = get_config()  # the teacher's own\n"
    with pytest.raises(LaresError, match="there is no exercise '20'.*choose from 00_first_run"):
        build_course(tmp_path, names=["20"])
    with pytest.raises(LaresError, match="does not exist: pass the exercises folder"):
        build_course(tmp_path, exercises=tmp_path, names=["01"])


def test_make_course_builds_every_exercise(tmp_path):
    if not shutil.which("make") or not (ROOT / ".venv" / "bin" / "lares").exists():
        pytest.skip("make course runs the .venv that make installs; this run uses another environment")
    out = subprocess.run(["make", "-s", "course", f"COURSE={tmp_path / 'course'}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    built = sorted(p.parent.name for p in (tmp_path / "course" / "source").glob("*/*.ipynb"))
    assert built == sorted(EXERCISES) and f"{len(EXERCISES)} assignments" in out.stdout


def test_lares_course_build_command(tmp_path):
    out = subprocess.run([str(BIN / "lares"), "course", "build", str(tmp_path / "c"), "--only", "07"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "2 points  source/07_scripted_user/07_scripted_user.ipynb" in out.stdout
    assert "1 assignments, 2 points" in out.stdout
    assert (tmp_path / "c" / "source" / "07_scripted_user" / "07_scripted_user.ipynb").exists()


# ------------------------------------------------------------------ a term in miniature
# Answers a student would really write, some wrong: (question -> cell source), and the points expected.
WRONG = {
    "01_shortest_route": ({
        "q1": "def shortest_route(graph, start, goal):\n    return nx.shortest_path(graph, source=start, target=goal)",
        "q2": ("def farthest_rooms(graph, start):\n    moves = nx.single_source_shortest_path_length(graph, start)\n"
               "    return [max(moves, key=moves.get)]  # forgets the ties"),
        "q3": ("def visit_all(graph, start, rooms):\n    walk = [start]\n    for room in rooms:  # in the order given\n"
               "        walk += nx.shortest_path(graph, walk[-1], room)[1:]\n    return walk"),
    }, {"q1": 1, "q2": 0, "q3": 0}),
    "09_react_parser": ({
        "q1": "def final_answer(text):\n    return text.split('Final Answer:')[1].strip()  # no None",
        "q2": None,  # left as the starter: not attempted
        "q3": ("def ignored_note(n):\n    if n <= 1:\n        return ''\n"
               "    return f'Your reply had {n} Actions; the first ran and {n - 1} were not run. Send one at a time.'"),
    }, {"q1": 0, "q2": 0, "q3": 1}),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_the_students_answers_score_as_the_term_expects_in_process(name):
    import importlib

    import networkx as nx

    exercise = importlib.import_module(module_name(name[:2])).EXERCISE
    answers, expected = WRONG[name]
    for problem in exercise.problems:
        namespace = {"nx": nx}
        if answers[problem.name] is not None:
            exec(answers[problem.name], namespace)
        assert problem.verdict(namespace).passed == bool(expected[problem.name]), problem.verdict(namespace)


# The term runs nbgrader on one exercise (every command starts a process: about 2.5 s each); the other's answers
# are graded in process above, by the same checks.
TERM = ["01_shortest_route"]


def _fill(notebook: Path, answers: dict[str, str | None]) -> None:
    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        grade_id = _grading(cell).get("grade_id", "")
        if grade_id.startswith("answer-") and answers.get(grade_id[7:]) is not None:
            cell.source = answers[grade_id[7:]]
    nbformat.write(nb, notebook)


@pytest.mark.slow
def test_a_term_with_nbgrader_release_submit_autograde_feedback(tmp_path):
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    build_course(course, names=list(TERM))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path),
           "LARES_PROGRESS": "0", "TQDM_DISABLE": "1"}
    env.pop("LARES_MODEL", None)

    def nb(*args: str, cwd: Path = course) -> str:
        done = subprocess.run(["nbgrader", *args, f"--Exchange.root={exchange}"], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done.stdout + done.stderr

    solutions = {name: solution_sections(ROOT / "solutions" / "lares_kit_solutions" / f"ex{name[:2]}.py")
                 for name in TERM}
    for name in TERM:
        nb("generate_assignment", name)
        nb("release_assignment", name)
        for student, answers in (("ada", solutions[name]), ("grace", WRONG[name][0])):
            home = tmp_path / student
            home.mkdir(exist_ok=True)
            nb("fetch_assignment", name, "--course", COURSE_ID, cwd=home)
            _fill(home / name / f"{name}.ipynb", answers)
            if student == "grace":  # as a student checks before submitting: every verdict shown whole
                shown = nb("validate", f"{name}/{name}.ipynb", cwd=home)
                assert "VALIDATION FAILED" in shown and "The error was:" in shown, shown[-3000:]
                cut = [line for line in shown.splitlines() if line.endswith("...")]
                assert not cut, f"nbgrader validate cut these lines of {name}:\n" + "\n".join(cut)
            # One machine plays both students: --student names them (on a hub, nbgrader takes the login name).
            nb("submit", name, "--course", COURSE_ID, f"--student={student}", cwd=home)
        nb("collect", name)
        log = nb("autograde", name)
        assert "ERROR" not in log, log[-3000:]
        nb("generate_feedback", name)

    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name in TERM:
            expected = WRONG[name][1]
            full = gradebook.find_submission(name, "ada")
            assert (full.score, full.max_score) == (3, 3), f"{name}: the reference solutions lost points"
            partial = gradebook.find_submission(name, "grace")
            got = {q: gradebook.find_grade(f"check-{q}", name, name, "grace").score for q in expected}
            assert got == expected, f"{name}: the wrong answers scored {got}"
            scores[name] = {"ada": full.score, "grace": partial.score, "max": full.max_score}
            for student in ("ada", "grace"):
                feedback = course / "feedback" / student / name / f"{name}.html"
                assert feedback.exists(), f"no feedback for {student}"
                page = feedback.read_text(encoding="utf-8")
                assert "Not yet" in page if student == "grace" else "Correct" in page
    print(json.dumps(scores))
    shutil.rmtree(exchange, ignore_errors=True)


# ------------------------------------------------------------------ conceptual questions, graded by hand
def test_a_lessons_questions_reach_students_without_their_rubrics(tmp_path):
    from lares_kit.learn.questions import load_questions

    lessons = load_questions()
    assert len(lessons) == 21 and all(2 <= len(lesson["questions"]) <= 3 for lesson in lessons.values())
    for lesson in lessons.values():
        assert (ROOT / "notebooks" / f"{lesson['notebook']}.ipynb").exists()
        for q in lesson["questions"]:  # the rubric's points add up to the question's, and it ends with a model
            points = [int(n) for n in re.findall(r"^- (\d+) points?:", q["rubric"], re.MULTILINE)]
            assert sum(points) == q["points"] and "A model answer:" in q["rubric"], q["id"]
    course = tmp_path / "course"
    out = subprocess.run([str(BIN / "lares"), "course", "build", str(course), "--only", "05", "--questions"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "source/questions_05/questions_05.ipynb" in out.stdout
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    done = subprocess.run(["nbgrader", "generate_assignment", "questions_05"], cwd=course, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    release = nbformat.read(course / "release" / "questions_05" / "questions_05.ipynb", as_version=4)
    answers = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert len(answers) == len(lessons["05"]["questions"])
    assert all(c.source.strip() == "YOUR ANSWER HERE" for c in answers)  # the rubric stays with the teacher
    points = sum(q["points"] for q in lessons["05"]["questions"])
    assert sum(c.metadata["nbgrader"]["points"] for c in answers) == points
    assert "Rubric" not in "".join(c.source for c in release.cells)
