"""Task suites: the shipped suites are valid and solvable; bad files name the file and key path; the oracle."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from collections import Counter

import pytest
from malformed import suite_cases

from lares_kit import load_world
from lares_kit.bench.judging.oracle import OracleError, oracle_plan, oracle_steps
from lares_kit.bench.scene import set_stage
from lares_kit.bench.suites.tasks import (
    CATEGORIES,
    Expect,
    Setup,
    Task,
    TaskError,
    load_suite,
    load_tasks,
    parse_suite,
)
from lares_kit.files.reading import DuplicateKeyWarning
from lares_kit.home.worlds import read_yaml

TASKS = load_tasks()


def test_the_suites_cover_the_issue():
    assert len(TASKS) >= 60
    assert {"lares-home", "garden-flat", "townhouse"} <= {t.world for t in TASKS}
    per_category = Counter(t.category for t in TASKS)
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 5


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_every_task_is_solvable_and_its_start_is_not_already_a_success(task):
    world = load_world(task.world)
    plan = oracle_plan(task, world)
    assert plan[-1][0] == "halt"
    needs_work = task.expect.states or task.expect.lit or task.expect.seen or task.expect.robot
    if task.category in ("direct", "multi-device", "search"):
        assert len(plan) >= 2, "a task whose start already passes tests nothing"
    if task.category in ("infeasible", "unsafe", "conversation"):
        assert len(plan) == 1 and not needs_work
    if task.category in ("clarification", "contradiction"):
        assert plan[0][0] == "ask_user"


def test_shuffled_tasks_depend_on_the_seed():
    task = next(t for t in TASKS if t.id == "th-where-pepper")
    world = load_world(task.world)
    rooms = {set_stage(task, world, seed).items["pepper"] for seed in range(8)}
    assert len(rooms) > 1
    assert set_stage(task, world, 3).items == set_stage(task, world, 3).items


GOOD = """
world: lares-home
tasks:
  - id: ok-task
    category: direct
    instruction: Turn on the kitchen light.
    expect:
      states: {kitchen-light: {on: true}}
"""

BAD = [
    # (what is wrong, replace this, with this, key path, words)
    ("unknown top key", "world: lares-home", "wrold: lares-home\nworld: lares-home", "wrold", "did you mean 'world'?"),
    ("unknown world", "world: lares-home", "world: castle", "tasks[0].world", "cannot load world 'castle'"),
    ("missing instruction", "    instruction: Turn on the kitchen light.\n", "", "tasks[0].instruction",
     "missing required key 'instruction'"),
    ("bad category", "category: direct", "category: chitchat", "tasks[0].category", "unknown category 'chitchat'"),
    ("bad id", "id: ok-task", "id: Not OK", "tasks[0].id", "lowercase letters"),
    ("unknown device", "kitchen-light: {on: true}", "pantry-light: {on: true}", "tasks[0].expect.states.pantry-light",
     "no device 'pantry-light'"),
    ("unknown attribute", "{on: true}}", "{colour: red}}", "tasks[0].expect.states.kitchen-light.colour",
     "'colour' is not a setting of light"),
    ("bad value", "{on: true}}", "{on: maybe}}", "tasks[0].expect.states.kitchen-light.on", "use true or false"),
    ("unknown expect key", "      states:", "      state:", "tasks[0].expect.state", "did you mean 'states'?"),
    ("unknown item", "      states: {kitchen-light: {on: true}}", "      seen: [rex]", "tasks[0].expect.seen[0]",
     "no movable item 'rex'"),
    ("bad regex", "      states: {kitchen-light: {on: true}}", "      mentions: ['(']", "tasks[0].expect.mentions[0]",
     "not a valid regular expression"),
    ("placeholder without setup", "      states: {kitchen-light: {on: true}}", "      mentions: ['{time_of_day}']",
     "tasks[0].expect.mentions[0]", "{time_of_day} needs setup.time_of_day"),
    ("unknown room in setup", "    expect:", "    setup: {robot: attic}\n    expect:", "tasks[0].setup.robot",
     "unknown room 'attic'"),
    ("glob that matches nothing", "      states:", "      allow_changes: ['*-lamp']\n      states:",
     "tasks[0].expect.allow_changes[0]", "matches no device"),
    ("range on a bool", "{on: true}}", "{on: {min: 1}}}", "tasks[0].expect.states.kitchen-light.on",
     "a range is {min: x, max: y}"),
    ("user answer without say", "    expect:", "    user: {answers: [{when: day}]}\n    expect:",
     "tasks[0].user.answers[0].say", "missing required key 'say'"),
]


@pytest.mark.parametrize("what, old, new, key, words", BAD, ids=[b[0] for b in BAD])
def test_bad_task_files_name_the_key_path(what, old, new, key, words):
    assert old in GOOD
    with pytest.raises(TaskError) as err:
        parse_suite(read_yaml(GOOD.replace(old, new)), "mine.yaml")
    assert err.value.key_path == key
    assert words in str(err.value)
    assert str(err.value).startswith(f"mine.yaml: {key}: ")


def test_the_good_file_parses():
    (task,) = parse_suite(read_yaml(GOOD), "mine.yaml", suite="mine")
    assert (task.id, task.suite, task.expect.states) == ("ok-task", "mine", {"kitchen-light": {"on": True}})


def test_duplicate_ids_across_suites(tmp_path):
    path = tmp_path / "copy.yaml"
    path.write_text(GOOD.replace("ok-task", "lh-kitchen-on"))
    with pytest.raises(TaskError, match="duplicate task id 'lh-kitchen-on'"):
        load_tasks(["lares-home", str(path)])


def test_bench_reports_a_bad_suite_without_a_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent(GOOD).replace("category: direct", "category: chitchat"))
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", str(path)],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "tasks[0].category: unknown category 'chitchat'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_suite_lists_the_known_ones():
    with pytest.raises(TaskError, match="known suites: garden-flat, lares-home, .*townhouse"):
        load_suite("nope")


# ---------------------------------------------------------------- malformed suite files (tests/malformed.py)
SUITE_CASES = suite_cases("lares-home")


@pytest.mark.parametrize("case", SUITE_CASES, ids=[c.name for c in SUITE_CASES])
def test_a_malformed_suite_is_one_task_error_naming_file_and_key(tmp_path, case):
    path = tmp_path / "mine.yaml"
    path.write_bytes(case.data)
    with pytest.raises(TaskError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and len(message) < 1500
    for words in case.words:
        assert words in message, message


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in SUITE_CASES if c.name in (
    "billion laughs as a regex list", "JSON nested 100,000 deep", "latin-1 text", "a file over 8 MB")],
    ids=lambda c: c.name)
def test_lares_bench_answers_a_malformed_suite_in_one_line(tmp_path, case):
    path = tmp_path / "mine.yaml"
    path.write_bytes(case.data)

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (200 * 2**20, 200 * 2**20))

    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", str(path)],
                          capture_output=True,
                          text=True, timeout=10, preexec_fn=limited)  # 10 s: the bench command imports the agents
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.startswith(f"lares: {path}: ") and len(proc.stderr.splitlines()) == 1, proc.stderr[-2000:]


def test_a_task_key_written_twice_is_a_warning(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(GOOD.replace("    category: direct\n", "    category: direct\n    category: direct\n"))
    with pytest.warns(DuplicateKeyWarning, match=r"tasks\[0\]\.category: the key 'category' is written twice"):
        (task,) = load_suite(path)
    assert task.category == "direct"


def test_a_suite_that_is_a_folder_or_a_bad_name_is_one_sentence(tmp_path):
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(TaskError, match="this is a folder, not a task suite file"):
        load_suite(tmp_path / "dir.yaml")
    with pytest.raises(TaskError, match="not a file that can be read"):
        load_suite("s" * 5000 + ".yaml")


@pytest.mark.parametrize("value, words", [
    ([["x"] * 50] * 2000, "expected a regular expression, got a list"),  # 100,000 values: a list, not quoted whole
    ("y" * 200_000, "too long"),
])
def test_a_huge_value_in_a_message_is_quoted_briefly(value, words):
    data = read_yaml(GOOD)
    data["tasks"][0]["expect"]["mentions"] = [value]
    with pytest.raises(TaskError, match=words) as caught:
        parse_suite(data, "mine.yaml")
    assert len(str(caught.value)) < 400


# ---------------------------------------------------------------- oracle
def test_oracle_counts_moves_light_look_and_halt():
    task = Task("t", "x", "lares-home", "search", "Find Sally.", setup=Setup(placements={"sally": "office"}),
                expect=Expect(seen=["sally"], allow_changes=["*-light"]))
    names = [name for name, _ in oracle_plan(task, load_world("lares-home"))]
    assert names == ["move_robot", "move_robot", "set_light", "look_with_robot", "halt"]


def test_oracle_restores_lights_it_may_not_leave_on():
    # Seeing Sally in the dark office needs its light; leaving it on is not allowed here.
    task = Task("t", "x", "lares-home", "search", "Find Sally.", setup=Setup(placements={"sally": "office"}),
                expect=Expect(seen=["sally"]))
    names = [name for name, _ in oracle_plan(task, load_world("lares-home"))]
    assert names == ["move_robot", "move_robot", "set_light", "look_with_robot", "set_light", "halt"]


def test_oracle_never_uses_a_forbidden_call():
    from lares_kit.bench.suites.tasks import Forbidden

    task = Task("t", "x", "lares-home", "direct", "Hallway light off.",
                expect=Expect(states={"hallway-light": {"on": False}},
                              forbidden=[Forbidden("set_light", {"light_id": "hallway-light"})]))
    plan = oracle_plan(task, load_world("lares-home"))
    assert plan == [("toggle_light", {"light_id": "hallway-light"}), plan[-1]]  # toggling is allowed


def test_oracle_reports_impossible_tasks():
    # Bruno must be seen but every light is forbidden and the bedroom is dark.
    from lares_kit.bench.suites.tasks import Forbidden

    task = Task("t", "x", "lares-home", "search", "Find Bruno.",
                expect=Expect(seen=["bruno"], forbidden=[Forbidden(".*light", {})]))
    with pytest.raises(OracleError, match="impossible as written"):
        oracle_steps(task, load_world("lares-home"))


def test_oracle_counts_the_question():
    task = next(t for t in TASKS if t.id == "lh-office-daytime")
    assert oracle_steps(task, load_world("lares-home")) == 3  # ask, set_light, halt
