"""The exercises: every check can fail, and every check passes on the reference solution.

Each exercise is run twice:

* **the starter** -- the committed notebook, whose check cells were run on
  the placeholders: every verdict is "not attempted" or "not yet", and nbval
  (``--nbval-lax``, cells marked ``# NBVAL_CHECK_OUTPUT``) re-runs the
  notebooks and finds the same outputs;
* **the solution** -- the notebook with each answer cell replaced by its
  section of ``lares_kit_solutions/exNN.py`` (the same function as
  ``make solutions``), run in a kernel: every verdict is "correct".

Fast in-process tests check the same two facts without a kernel, and then,
for every question, a wrong answer a student would really write (the check
must say "not yet" and point at the mistake) and a right answer written
differently from the reference (the check must accept it): a check that
cannot fail, or that matches the reference's wording, is caught at once.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime
from itertools import permutations
from pathlib import Path
from statistics import mean

import nbformat
import networkx as nx
import pytest

from lares_kit import Toolbox, load_world
from lares_kit.agents.prompts import decide_schema, forced
from lares_kit.bench.judging.checks import CheckResult
from lares_kit.device_apis.documents import device_extras
from lares_kit.episode import knowledge_header
from lares_kit.episode_steps import Question
from lares_kit.ha.domains import domain_of
from lares_kit.knowledge.modes import knowledge_text
from lares_kit.learn import EXERCISES
from lares_kit.learn.checking import OUTCOMES, PLACEHOLDER
from lares_kit.learn.exercises import module_name
from lares_kit.learn.exercises.building import ex10, ex13
from lares_kit.learn.exercises.field import ex15, ex16
from lares_kit.learn.exercises.loop import ex03
from lares_kit.memory.store import parse_date_span
from lares_kit.models import count_tokens
from lares_kit.safety.gate import SafetyGate
from lares_kit.tools.schema import DeviceId
from lares_kit.tools.toolbox import ToolError
from lares_kit.tools.toolbox import set_device as plain_set_device
from lares_kit.tools.users import NoAnswer, ScriptedUser

ROOT = Path(__file__).resolve().parents[2]
EXERCISE_DIR = ROOT / "exercises"
NOTEBOOKS = [EXERCISE_DIR / f"{name}.ipynb" for name in EXERCISES]
BUDGET_SECONDS = 120  # all exercise notebooks, starter (nbval) and solution runs together

_spec = importlib.util.spec_from_file_location("build_solutions", ROOT / "scripts" / "build_solutions.py")
build_solutions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_solutions)

CORRECT, NOT_YET, NOT_ATTEMPTED = (OUTCOMES[k][0] for k in ("correct", "incorrect", "not attempted"))


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _module(name: str):
    return importlib.import_module(module_name(name[:2]))


def _solution(name: str):
    return importlib.import_module(f"lares_kit_solutions.ex{name[:2]}")


def _verdicts(nb: nbformat.NotebookNode) -> dict[str, str]:
    """{"q1": the plain text of its check cell's output} for every ``qN.check()`` cell."""
    found = {}
    for cell in nb.cells:
        m = re.search(r"^(q\d+)\.check\(\)", cell.source, re.MULTILINE) if cell.cell_type == "code" else None
        if m:
            texts = [o.get("data", {}).get("text/plain", "") or o.get("text", "") for o in cell.outputs]
            found[m.group(1)] = "".join(texts)
    return found


# ----------------------------------------------------------------- shape
def test_every_exercise_is_there_and_listed_for_teachers():
    on_disk = sorted(p.stem for p in EXERCISE_DIR.glob("[0-9][0-9]_*.ipynb"))
    assert on_disk == sorted(EXERCISES)
    assert len(EXERCISES) >= 10
    readme = (EXERCISE_DIR / "README.md").read_text(encoding="utf-8")
    for name in EXERCISES:
        assert f"{name}.ipynb" in readme, f"exercises/README.md does not list {name}"


# Named by a teaching notebook's "try this" and not written yet (see exercises/README.md).
NOT_YET_WRITTEN: set[str] = set()


def test_teaching_notebooks_point_at_existing_exercises():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for name in re.findall(r"exercises/(\w+)\.ipynb", _read(path).cells[-1].source):
            if name in NOT_YET_WRITTEN:
                continue
            assert (EXERCISE_DIR / f"{name}.ipynb").exists(), f"{path.name} names exercises/{name}.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_notebook_has_the_learntools_shape(path):
    nb = _read(path)
    module = _module(path.stem)
    problems = [p.name for p in module.EXERCISE.problems]
    assert 2 <= len(problems) <= 4, f"{path.name}: {len(problems)} questions; an exercise has 2-4"
    assert module.EXERCISE.notebook == path.stem
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith(f"# Exercise {path.stem[:2]}")
    setup = next(c for c in nb.cells if c.cell_type == "code").source
    assert "import lares_kit" in setup and "sys.path" in setup  # works installed, on Binder, and from a checkout
    assert f"from {module_name(path.stem[:2])} import *" in setup and "bind(globals())" in setup
    code = [c for c in nb.cells if c.cell_type == "code"]
    for q in problems:
        answers = [c for c in code if build_solutions.answer_tag(c) == q]
        assert len(answers) == 1 and "____" in answers[0].source, f"{path.name}: one starter cell for {q}, with ____"
        assert any(c.source == f"# NBVAL_CHECK_OUTPUT\n{q}.check()" for c in code), f"{path.name}: {q}.check() cell"
        assert any(c.source == f"#{q}.hint()\n#{q}.solution()" for c in code), f"{path.name}: commented {q} help"
    assert set(module.EXERCISE.solutions()) == set(problems), "one solution section per problem"
    for problem in module.EXERCISE.problems:
        assert len(problem.hints) >= 2, f"{path.name} {problem.name}: give at least two hints"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_notebook_is_committed_with_clean_starter_outputs(path):
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{path.name}: run scripts/run_notebooks.py on it and commit"
    for cell in code:
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: a saved output is an error"
            assert not (out.output_type == "stream" and out.name == "stderr"), f"{path.name}: stderr saved"
    assert all(c.source.strip() == "" or not c.outputs for c in code if c.source.startswith("#q"))


# ----------------------------------------------------- run 1: the starter
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_starter_checks_report_not_attempted_or_not_yet(path):
    verdicts = _verdicts(_read(path))
    assert sorted(verdicts) == [p.name for p in _module(path.stem).EXERCISE.problems]
    for q, text in verdicts.items():
        assert text.startswith((NOT_ATTEMPTED, NOT_YET)), f"{path.name} {q} on the starter says: {text!r}"


@pytest.mark.parametrize("name", EXERCISES)
def test_checks_read_a_placeholder_as_not_attempted(name):
    module = _module(name)
    for problem in module.EXERCISE.problems:
        blank = {read: PLACEHOLDER for read in problem.reads}
        assert problem.verdict(blank).outcome == "not attempted", problem.name
        assert problem.verdict({}).outcome == "not attempted", problem.name


# ------------------------------------------- every question: a wrong answer and a right one
# For each question of each exercise: a mistake a student would really make, which the check must reject
# with a message that points at it (the words in `says`), and a right answer written differently from the
# reference solution, which the check must accept. Answers are plain code, as a student would write them.

@dataclass
class Answer:
    exercise: str  # "09": lares_kit/learn/exercises/building/ex09.py
    question: str  # "q3"
    right: bool
    names: dict  # what the notebook defines: {"ignored_note": fn}
    says: tuple = ()  # for a wrong answer: words the "Not yet" message must contain (it says what is wrong)
    why: str = ""  # the mistake, in words (a wrong answer) or how this answer differs (a right one)

    @property
    def id(self) -> str:
        return f"ex{self.exercise}-{self.question}-{self.why}"


ANSWERS: list[Answer] = []


def wrong(exercise: str, question: str, why: str, says: tuple, **names) -> None:
    ANSWERS.append(Answer(exercise, question, False, names, says, why))


def right(exercise: str, question: str, why: str, **names) -> None:
    ANSWERS.append(Answer(exercise, question, True, names, (), why))


def named(name: str):
    # A tool is called by its function's name: give a test's variant the name the check expects.
    def rename(fn):
        fn.__name__ = fn.__qualname__ = name
        return fn
    return rename


# ---- 00 first run
wrong("00", "q1", "forgot the halt", ("expected ['set_light', 'halt']",), tools_called=["set_light"])
right("00", "q1", "split from a string", tools_called="set_light halt".split())
wrong("00", "q2", "light ids, not rooms", ("expected ['hallway']", "'hallway-light'"),
      lit_rooms=lambda home: sorted(d.id for d in home.lights() if d.state["on"]))
right("00", "q2", "a loop over the nodes", lit_rooms=lambda home: sorted(filter(home.is_lit, home.graph.nodes)))


def _changed_before(episode):
    # The state each changed device had *before*, not after.
    before, after = episode.initial_state["devices"], episode.final_state["devices"]
    return {device: before.get(device) for device, state in after.items() if state != before.get(device)}


def _changed_by_json(episode):
    text = lambda state: json.dumps(state, sort_keys=True)  # noqa: E731 - a student's shorthand
    changed = {}
    for device, state in episode.final_state["devices"].items():
        if text(state) != text(episode.initial_state["devices"].get(device)):
            changed[device] = state
    return changed


wrong("00", "q3", "the state before, not after", ("expected {'kitchen-light': {'on': True}}",),
      changed_devices=_changed_before)
right("00", "q3", "compared as JSON text", changed_devices=_changed_by_json)


# ---- 01 shortest route
def _bfs_route(graph, start, goal):
    came_from, frontier = {start: None}, [start]
    while frontier:
        room = frontier.pop(0)
        for nxt in graph.neighbors(room):
            if nxt not in came_from:
                came_from[nxt] = room
                frontier.append(nxt)
    route = [goal]
    while route[-1] != start:
        route.append(came_from[route[-1]])
    return route[::-1]


def _farthest_one(graph, start):
    moves = nx.single_source_shortest_path_length(graph, start)
    return [max(moves, key=moves.get)]  # one room: ties are lost


def _tour_in_given_order(graph, start, rooms):
    walk = [start]
    for room in rooms:
        walk += nx.shortest_path(graph, walk[-1], room)[1:]
    return walk


def _tour_every_walk(graph, start, rooms):
    walks = []
    for order in permutations([r for r in rooms if r != start]):
        walk = [start]
        for room in order:
            walk += nx.shortest_path(graph, walk[-1], room)[1:]
        walks.append(walk)
    return min(walks, key=len)


wrong("01", "q1", "start and goal swapped", ("must begin with the start room 'kitchen'",),
      shortest_route=lambda graph, start, goal: nx.shortest_path(graph, goal, start))
right("01", "q1", "a breadth-first search by hand", shortest_route=_bfs_route)
wrong("01", "q2", "one room, ties lost", ("expected ['bedroom', 'kitchen']",), farthest_rooms=_farthest_one)
right("01", "q2", "the last BFS layer",
      farthest_rooms=lambda graph, start: sorted(list(nx.bfs_layers(graph, [start]))[-1]))
wrong("01", "q3", "the rooms in the order given", ("it can be done in",), visit_all=_tour_in_given_order)
right("01", "q3", "the shortest of every walk", visit_all=_tour_every_walk)


# ---- 02 a tool with good sentences (one function, read by all three questions)
@named("lock_door")
def _lock_door_untyped(home, lock_id: str, locked) -> str:
    """Lock or unlock a door.

    Args:
        lock_id: ID of the lock.
        locked: true to lock.
    """
    home.update_device(lock_id, {"locked": locked})
    return f"{lock_id} is now {'locked' if locked else 'unlocked'}."


@named("lock_door")
def _lock_door_always_now(home, lock_id: DeviceId, locked: bool) -> str:
    """Lock or unlock a door lock.

    Args:
        lock_id: ID of the lock, e.g. "front-door-lock".
        locked: true to lock the door, false to unlock it.
    """
    if lock_id not in home.devices:
        raise ToolError(f"There is no lock called {lock_id!r}.")
    home.update_device(lock_id, {"locked": locked})
    return f"{lock_id} is now locked." if locked else f"{lock_id} is now unlocked."  # even when it already was


@named("lock_door")
def _lock_door_says_locked(home, lock_id: DeviceId, locked: bool) -> str:
    """Lock or unlock a door lock.

    Args:
        lock_id: ID of the lock, e.g. "front-door-lock".
        locked: true to lock the door, false to unlock it.
    """
    if home.devices[lock_id].state.get("locked") == locked:
        return f"{lock_id} was already like that."
    home.update_device(lock_id, {"locked": locked})
    return f"Done: {lock_id} locked."  # whichever way it went


@named("lock_door")
def _lock_door_plain_error(home, lock_id: DeviceId, locked: bool) -> str:
    """Lock or unlock a door lock.

    Args:
        lock_id: ID of the lock, e.g. "front-door-lock".
        locked: true to lock the door, false to unlock it.
    """
    device = home.devices.get(lock_id)
    if device is None or device.type != "lock":
        raise ToolError(f"There is no lock called {lock_id!r}.")  # but which locks are there?
    if device.state.get("locked") == locked:
        return f"The {lock_id} is already {'locked' if locked else 'unlocked'}."
    home.update_device(lock_id, {"locked": locked})
    return f"The {lock_id} is now {'locked' if locked else 'unlocked'}."


@named("lock_door")
def _lock_door_mine(home, lock_id: str, locked: bool) -> str:
    """Locks or unlocks one of the home's door locks.

    Args:
        lock_id: which lock, by its id (for example back-door-lock).
        locked: whether the door should end up locked.
    """
    locks = sorted(d.id for d in home.devices.values() if d.type == "lock")
    if lock_id not in locks:
        raise ToolError(f"{lock_id!r} is not one of the locks; the locks are {' and '.join(locks)}. "
                        "Call lock_door again with one of them.")
    if home.devices[lock_id].state["locked"] == locked:
        return f"Nothing changed: {lock_id} was {'locked' if locked else 'unlocked'} before."
    home.update_device(lock_id, {"locked": locked})
    return f"Done -- {lock_id} is {'locked' if locked else 'unlocked'} now."


wrong("02", "q1", "locked has no type", ("cannot describe lock_door",), lock_door=_lock_door_untyped)
right("02", "q1", "str ids, other words", lock_door=_lock_door_mine)
wrong("02", "q2", "never says already", ("already locked",), lock_door=_lock_door_always_now)
wrong("02", "q2", "says locked when it unlocked", ("now unlocked", "'Done: back-door-lock locked.'"),
      lock_door=_lock_door_says_locked)
right("02", "q2", "nothing changed, not already", lock_door=_lock_door_mine)
wrong("02", "q3", "an error with no valid locks", ("it leaves out front-door-lock", "fix its next call"),
      lock_door=_lock_door_plain_error)
right("02", "q3", "every lock, no close match", lock_door=_lock_door_mine)


# ---- 03 the function-calling loop
def _first_call_only(message, toolbox):
    first = message.tool_calls[0]
    return [{"role": "tool", "tool_call_id": first.id,
             "content": toolbox.dispatch(first.function.name, first.function.arguments).content}]


def _messages_by_loop(message, toolbox):
    answers = []
    for tool_call in message.tool_calls:
        arguments = json.loads(tool_call.function.arguments)
        observation = toolbox.dispatch(tool_call.function.name, arguments)
        answers.append({"tool_call_id": tool_call.id, "role": "tool", "content": observation.content})
    return answers


def _loop_one_too_many(client, home, instruction, max_steps=10):
    toolbox, messages = Toolbox(home), ex03.first_messages(home, instruction)
    for _ in range(max_steps + 1):  # off by one
        message = client.chat.completions.create(model="offline", messages=messages, tools=toolbox.schemas(),
                                                 tool_choice="auto").choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        messages += _messages_by_loop(message, toolbox) if message.tool_calls else []
        if any(c.function.name == "halt" for c in message.tool_calls or []):
            return "done", messages
    return "step_limit", messages


def _loop_while(client, home, instruction, max_steps=10):
    toolbox = Toolbox(home)
    messages, asked = ex03.first_messages(home, instruction), 0
    while asked < max_steps:
        asked += 1
        reply = client.chat.completions.create(model="offline", messages=messages, tools=toolbox.schemas(),
                                               tool_choice="auto").choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        halted = False
        for tool_call in reply.tool_calls or []:
            result = toolbox.dispatch(tool_call.function.name, tool_call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": result.content})
            halted = halted or tool_call.function.name == "halt"
        if halted:
            return "done", messages
    return "step_limit", messages


wrong("03", "q1", "answers the first call only", ("expected two tool messages", "returned 1"),
      tool_messages=_first_call_only)
right("03", "q1", "a loop with parsed arguments", tool_messages=_messages_by_loop)
wrong("03", "q2", "one request too many", ("4 times; the limit is 3",), run_loop=_loop_one_too_many)
right("03", "q2", "a while loop and a flag", run_loop=_loop_while)


# ---- 04 the intent step
def _trusting(reply, tool_names):
    args = json.loads(reply.tool_calls[0].function.arguments)
    return args["best_function"], args["reasoning"]


def _read_decision_mine(reply, tool_names):
    calls = reply.tool_calls or []
    if len(calls) == 0 or calls[0].function.name != "decide_best_function":
        raise ValueError("Please answer by calling decide_best_function, and nothing else.")
    try:
        decision = json.loads(calls[0].function.arguments)
    except ValueError:
        raise ValueError("I could not read your arguments: they are not json.") from None
    if decision.get("best_function") not in tool_names:
        raise ValueError(f"There is no tool {decision.get('best_function')}; pick one of: {' / '.join(tool_names)}.")
    return decision["best_function"], decision.get("reasoning", "")


wrong("04", "q1", "tool_choice left on auto", ("'tool_choice' should be",),
      intent_request=lambda messages, tool_names: {"model": "offline", "messages": messages,
                                                   "tools": [decide_schema(tool_names)], "tool_choice": "auto"})
right("04", "q1", "tool_choice spelt out",
      intent_request=lambda messages, tool_names: dict(
          model="offline", messages=messages, tools=[decide_schema(tool_names)],
          tool_choice={"type": "function", "function": {"name": "decide_best_function"}}))
wrong("04", "q2", "trusts every reply", ("expected a ValueError",), read_decision=_trusting)
right("04", "q2", "other sentences, json in lower case", read_decision=_read_decision_mine)
wrong("04", "q3", "offers every tool", ("the request's 'tools' should be",),
      action_request=lambda messages, toolbox, function: {"model": "offline", "messages": messages,
                                                          "tools": toolbox.schemas(), "tool_choice": forced(function)})
right("04", "q3", "the schema picked from the list",
      action_request=lambda messages, toolbox, function: {
          "model": "offline", "messages": messages, "tool_choice": forced(function),
          "tools": [s for s in toolbox.schemas() if s["function"]["name"] == function]})


# ---- 05 the initial knowledge mode
def _knowledge_message_mine(mode, home, initial):
    if mode == "latest":
        body = json.dumps(home.knowledge(), indent=2)
    elif mode == "initial":
        body = json.dumps(initial, indent=2)
    else:
        return None
    return {"role": "system", "content": knowledge_header(mode) + "\n" + body}


def _switched_on_only(messages):
    return {light: True for m in messages if m.get("role") == "tool"
            for light in re.findall(r"\(([\w-]+)\) is now on", m["content"])}


def _switched_by_words(messages):
    state = {}
    for message in messages:
        if message.get("role") != "tool" or message["content"].startswith("Error"):
            continue
        for sentence in message["content"].split(". "):
            m = re.search(r"\((?P<light>[a-z0-9-]+)\) is now (?P<state>on|off)", sentence)
            if m:
                state[m["light"]] = m["state"] == "on"
    return state


def _states_from_the_start(initial, messages):
    return {d["id"]: d["state"]["on"] for room in initial["rooms"] for d in room["devices"] if d["type"] == "light"}


def _states_replayed(initial, messages):
    lights = {}
    for room in initial["rooms"]:
        for device in room["devices"]:
            if device["type"] == "light":
                lights[device["id"]] = device["state"]["on"]
    for light, on in _switched_by_words(messages).items():
        lights[light] = on
    return lights


wrong("05", "q1", "always the latest home", ("For mode 'initial'",),
      knowledge_message=lambda mode, home, initial: {
          "role": "system", "content": f"{knowledge_header('latest')}\n{home.render_knowledge('json')}"})
right("05", "q1", "json.dumps of the knowledge", knowledge_message=_knowledge_message_mine)
wrong("05", "q2", "reads only lights switched on", ("expected {'kitchen-light': False}",),
      lights_switched=_switched_on_only)
right("05", "q2", "sentence by sentence", lights_switched=_switched_by_words)
wrong("05", "q3", "ignores the history", ("the end of the dog search",), light_states=_states_from_the_start)
right("05", "q3", "two loops", light_states=_states_replayed)


# ---- 06 the search order
def _path_with_failures(episode):
    return [episode.initial_state["robot"]] + [s.arguments["destination_room_id"] for s in episode.tool_calls
                                               if s.tool == "move_robot"]


def _path_filtered(episode):
    moves = filter(lambda step: step.tool == "move_robot" and step.ok, episode.tool_calls)
    return [episode.initial_state["robot"], *(step.arguments["destination_room_id"] for step in moves)]


def _next_alphabetical(graph, robot_room, searched):
    moves = nx.single_source_shortest_path_length(graph, robot_room)
    left = sorted(room for room in graph.nodes if room not in searched)
    return min(left, key=lambda room: moves[room]) if left else None


def _next_by_loop(graph, robot_room, searched):
    best, best_moves = None, None
    for room in graph.nodes:  # the world file's order: the first of equals stays
        if room in searched:
            continue
        moves = nx.shortest_path_length(graph, robot_room, room)
        if best is None or moves < best_moves:
            best, best_moves = room, moves
    return best


def _calls_by_paths(home, order, hidden_room):
    calls, here = [], home.robot.room
    for room in order[: order.index(hidden_room) + 1]:
        calls += ["move_robot"] * (len(nx.shortest_path(home.graph, here, room)) - 1)
        calls += [] if home.is_lit(room) else ["set_light"]
        calls.append("look_with_robot")
        here = room
    return len(calls + ["halt"])


wrong("06", "q1", "keeps the failed move", ("includes a move that failed",), robot_path=_path_with_failures)
right("06", "q1", "filter and unpack", robot_path=_path_filtered)
wrong("06", "q2", "ties in alphabetical order", ("Ties go to the room", "list(graph.nodes)"),
      next_room=_next_alphabetical)
right("06", "q2", "a loop that keeps the first best", next_room=_next_by_loop)
wrong("06", "q3", "forgets the halt", ("forgot the final halt",),
      search_calls=lambda home, order, hidden_room: _calls_by_paths(home, order, hidden_room) - 1)
right("06", "q3", "a list of calls, counted", search_calls=_calls_by_paths)


# ---- 07 a scripted user
class _NightOwl:
    """Answers questions about the time of day, and no others."""

    def __init__(self):
        self.asked = []

    def ask(self, question):
        self.asked.append(question)
        if re.search(r"\b(day|daytime|night)\b", question, re.IGNORECASE):
            return "No -- it's dark outside, nearly midnight."
        raise NoAnswer(question)


class _PatientTooSoon:
    def __init__(self, user, limit=3):
        self.user, self.limit, self.asked = user, limit, []

    def ask(self, question):
        self.asked.append(question)
        if len(self.asked) >= self.limit:  # off by one: the limit-th question is refused
            raise NoAnswer("too many questions")
        return self.user.ask(question)


class _PatientCounter:
    def __init__(self, user, limit=3):
        self.user, self.left, self.asked = user, limit, []

    def ask(self, question):
        self.asked += [question]
        self.left -= 1
        if self.left < 0:
            raise NoAnswer(f"I have answered enough questions (asked: {question})")
        return self.user.ask(question)


wrong("07", "q1", "a pattern only for daytime", ("should say it is night; it said None",),
      night_user=ScriptedUser(rules=[(r"daytime", "No, it is night.")]))
wrong("07", "q1", "answers every question", ("should have no answer",),
      night_user=ScriptedUser(rules=[(r"day|night", "No, it is night.")], fallback="yes"))
right("07", "q1", "a class; dark and midnight, not night", night_user=_NightOwl())
wrong("07", "q2", "refuses the limit-th question", ("the first two questions should be passed on",),
      PatientUser=_PatientTooSoon)
right("07", "q2", "counts down", PatientUser=_PatientCounter)


# ---- 08 evaluation
def _asked_at_all(episode, pattern):
    hit = any(re.search(pattern, q, re.IGNORECASE) for q in episode.asked)
    return CheckResult("asks_first", hit, f"Questions asked: {episode.asked or 'none'}.")


def _asks_first_by_index(episode, pattern):
    steps = episode.tool_calls
    asked = [i for i, s in enumerate(steps) if isinstance(s, Question) and re.search(pattern, s.question, re.I)]
    changed = [i for i, s in enumerate(steps) if s.after.get("devices")]
    if asked and (not changed or asked[0] < changed[0]):
        return CheckResult("asks_first", True, "The matching question came before every change.")
    if changed and (not asked or changed[0] < asked[0]):
        first = ", ".join(steps[changed[0]].after["devices"])
        return CheckResult("asks_first", False, f"The agent changed {first} before asking about {pattern}.")
    return CheckResult("asks_first", False, f"No question matched {pattern}, and nothing changed either.")


def _from_the_calls(episode, allowed):
    changed = [d for s in episode.tool_calls for d in s.after.get("devices", {})]
    bad = [d for d in changed if not any(fnmatch.fnmatchcase(d, p) for p in allowed)]
    return CheckResult("unchanged", not bad, f"Changed without being allowed: {', '.join(bad) or 'nothing'}.")


def _only_allowed_by_sets(episode, allowed):
    before, after = episode.initial_state["devices"], episode.final_state["devices"]
    changed = {d for d in after if after[d] != before.get(d)}
    ok = set()
    for pattern in allowed:
        ok |= set(fnmatch.filter(changed, pattern))
    bad = sorted(changed - ok)
    reason = f"These devices changed and should not have: {bad}." if bad else "Every change was allowed."
    return CheckResult(kind="unchanged", passed=not bad, reason=reason)


def _every_episode(results):
    table = {}
    for r in results:
        table.setdefault(r["category"], []).append(r)
    return {c: {"success_rate": sum(r["success"] for r in rows) / len(rows),
                "steps_per_oracle": mean(r["steps"] / r["oracle_steps"] for r in rows)} for c, rows in table.items()}


def _by_category_counts(results):
    count, solved, ratios = defaultdict(int), defaultdict(int), defaultdict(list)
    for r in results:
        count[r["category"]] += 1
        if r["success"]:
            solved[r["category"]] += 1
            ratios[r["category"]].append(r["steps"] / r["oracle_steps"])
    return {c: {"success_rate": solved[c] / count[c],
                "steps_per_oracle": sum(ratios[c]) / len(ratios[c]) if ratios[c] else None} for c in count}


wrong("08", "q1", "ignores the order", ("should fail", "but it passed"), asks_first=_asked_at_all)
right("08", "q1", "by step index", asks_first=_asks_first_by_index)
wrong("08", "q2", "reads the calls, not the end", ("should fail: oven changed", "but it passed"),
      only_allowed_changed=_from_the_calls)
right("08", "q2", "sets and fnmatch.filter", only_allowed_changed=_only_allowed_by_sets)
wrong("08", "q3", "averages every episode", ("You averaged every episode",), by_category=_every_episode)
right("08", "q3", "counters, no statistics", by_category=_by_category_counts)


# ---- 09 a ReAct parser
def _final_by_find(text):
    at = text.lower().find("final answer")
    if at < 0:
        return None
    return text[at + len("final answer"):].lstrip(" \t").removeprefix(":").strip()


def _actions_by_finditer(text):
    found = []
    for n, m in enumerate(re.finditer(r"Action\s*:\s*(?:```(?:json)?\s*)?", text), 1):
        try:
            value = json.JSONDecoder().raw_decode(text, m.end())[0]
        except json.JSONDecodeError:
            raise ValueError(f"I could not read the JSON of Action number {n}.") from None
        found.append({"tool": value["tool"], "arguments": value.get("arguments", {})})
    return found


def _note_done(n):
    # The issue's note: "one" is only inside "done", and nothing says to send one at a time.
    return "" if n == 1 else f"Your reply had {n} Actions; {n - 1} were not run. Nothing more needs to be done."


def _note_in_words(n):
    if n < 2:
        return ""
    words = ["zero", "one", "two", "three", "four", "five"]
    skipped = f"{words[n - 1]} was" if n == 2 else f"{words[n - 1]} were"
    return (f"You sent {words[n]} Actions but I only ran the first, so {skipped} skipped. "
            "Please send them one at a time.")


wrong("09", "q1", "no None, case-sensitive", ("no 'Final Answer:', expected None",),
      final_answer=lambda text: text.split("Final Answer:")[-1].strip())
right("09", "q1", "str.find", final_answer=_final_by_find)
wrong("09", "q2", "the first Action only", ("a reply with 3 Action(s)", "found 1"),
      parse_actions=lambda text: _actions_by_finditer(text)[:1])
right("09", "q2", "re.finditer and raw_decode", parse_actions=_actions_by_finditer)
wrong("09", "q3", "'done' is not 'one'", ("to send one Action at a time",), ignored_note=_note_done)
wrong("09", "q3", "no count of the Actions not run", ("how many were not run (1)",),
      ignored_note=lambda n: "" if n == 1 else f"Your reply had {n} Actions. Send one Action at a time.")
right("09", "q3", "numbers in words", ignored_note=_note_in_words)


# ---- 10 memory by date
def _said_by_prefix(store, when):
    return [t.text for t in store.turns() if t.at.startswith(when)]  # "yesterday" is not a prefix


def _said_by_span(store, when):
    first, last = parse_date_span(when, ex10.TODAY)
    return [t.text for t in sorted(store.turns(), key=lambda t: t.at)
            if first <= date.fromisoformat(t.date) <= last]


def _first_by_sorting(store, word):
    found = sorted(store.search(word, limit=100), key=lambda turn: turn.at)
    return found[0].date if found else None


wrong("10", "q1", "compares the texts", ("expected True but got False",),
      in_span=lambda at, span: span[0].isoformat() < at < span[1].isoformat())
right("10", "q1", "strptime",
      in_span=lambda at, span: span[0] <= datetime.strptime(at, "%Y-%m-%d %H:%M:%S").date() <= span[1])
wrong("10", "q2", "dates as prefixes", ("For date 'yesterday'",), said_on=_said_by_prefix)
right("10", "q2", "parse_date_span over every turn", said_on=_said_by_span)
wrong("10", "q3", "the best match, not the first", ("For the word 'office', expected '2026-11-20'",),
      first_mention=lambda store, word: next((t.date for t in store.search(word)), None))
right("10", "q3", "sorted by time", first_mention=_first_by_sorting)


# ---- 11 devices by their docs
def _pick_by_words(home, description):
    said = set(re.findall(r"[a-z]+", description.lower()))
    fits = [device_id for device_id, device in home.devices.items()
            if said & set(re.findall(r"[a-z]+", device.name.lower()))
            and said & set(re.findall(r"[a-z]+", " ".join(device_extras(home, device_id).get("near", [])).lower()))]
    return fits[0] if len(fits) == 1 else None


wrong("11", "q1", "the channel before the power", ("was refused",),
      calls=[("tv-plant", "tvChannel", "setTvChannel", {"channel": 9})])
right("11", "q1", "lists, not tuples",
      calls=[["tv-plant", "switch", "on", {}], ["tv-plant", "tvChannel", "setTvChannel", {"channel": 9}]])
wrong("11", "q2", "the first device whose name is in it", ("expected 'tv-plant'", "is near"),
      pick=lambda home, description: next((d for d, dev in home.devices.items()
                                           if dev.name.lower() in description.lower()), None))
right("11", "q2", "words by regular expression", pick=_pick_by_words)


# ---- 13 a safe condition
wrong("13", "q1", "reads an attribute the fridge lacks", ("With {'fridge': {'door': 'open'",),
      fridge_open="def fridge_is_open():\n    return get('fridge', 'open') == True")
right("13", "q1", "not closed", fridge_open="def fridge_door_open():\n    return get('fridge', 'door') != 'closed'")
wrong("13", "q2", "25 counted as too warm", ("'warmer than 25 °C with the window shut' is False",),
      too_warm="def too_warm():\n    return get('meeting-2-sensor', 'temperature') >= 25 and "
               "not get('meeting-2-window', 'open')")
right("13", "q2", "an if, the window first",
      too_warm="def stuffy():\n    if get('meeting-2-window', 'open'):\n        return False\n"
               "    return get('meeting-2-sensor', 'temperature') > 25")
wrong("13", "q3", "the refused one, unchanged", ("The sandbox refuses it",), any_light_on=ex13.BROKEN)
right("13", "q3", "or instead of any",
      any_light_on="def lights():\n    return get('hall-light', 'on') or get('kitchen-light', 'on')")


# ---- 15 refusal
@named("set_device")
def _guard_at_250(home, device_id: str, attribute: str, value: bool | float | str) -> str:
    """Change one setting of a device.

    Args:
        device_id: ID of the device.
        attribute: The setting to change.
        value: The new value.
    """
    if device_id == "oven" and attribute == "temperature" and float(value) > 250:  # the wrong limit
        raise ToolError("The oven may not be set above 250 °C in this home; tell the user.")
    return plain_set_device(home, device_id, attribute, value)


@named("set_device")
def _guard_in_words(home, device_id: str, attribute: str, value: bool | float | str) -> str:
    """Change one setting of a device: a thermostat's target, a lock's locked, the oven's temperature.

    Args:
        device_id: ID of the device, e.g. "oven".
        attribute: The setting to change, e.g. "temperature", "target", "on".
        value: The new value: true/false, a number, or one of the named choices.
    """
    if (device_id, attribute) == ("oven", "temperature") and str(value).replace(".", "", 1).isdigit() \
            and float(value) > 220:
        raise ToolError("Refused: this oven is never set above two hundred and twenty degrees. Do not retry; "
                        "tell the user the highest it goes.")
    return plain_set_device(home, device_id, attribute, value)


def _verdicts_from_the_gate():
    home = load_world("shared-house")
    return {label: SafetyGate.for_home(home, source, when).check(tool, args).action
            for label, (source, when, _, (tool, args)) in ex15.INSTRUCTIONS.items()}


wrong("15", "q1", "the rule matches locking", ("*lock* the back door", "Match only the value false"),
      policy={"confirm": [{"what": "the back door lock", "devices": ["back-door-lock"], "attribute": "locked"}]})
right("15", "q1", "every lock, by type",
      policy={"confirm": [{"what": "opening a lock", "type": "lock", "attribute": "locked", "is": False}]})
wrong("15", "q2", "a guest may confirm", ("For (b)", "the policy says 'refuse'"),
      verdicts={"a": "confirm", "b": "confirm", "c": "refuse", "d": "allow", "e": "allow", "f": "refuse"})
right("15", "q2", "asked of the gate itself", verdicts=_verdicts_from_the_gate())
wrong("15", "q3", "the limit at 250", ("let the oven go to 250",), set_device=_guard_at_250)
right("15", "q3", "the limit in words", set_device=_guard_in_words)


# ---- 16 the prompt budget
def _tokens_unpacked(home, fmt, instruction):
    _note, text = knowledge_text(home, fmt, instruction=instruction)
    return count_tokens(text)


def _rooms_by_words(home, instruction):
    said = re.findall(r"[a-z0-9]+", instruction.lower())
    rooms = []
    for room in home.graph:
        name = home.graph.nodes[room]["name"].lower().split()
        if any(said[i:i + len(name)] == name for i in range(len(said))):
            rooms.append(room)
    return rooms


def _smallest_that_fits(home, instruction, budget):
    for fmt in reversed(ex16.CHOICES):  # the cheapest first: what the old name said
        if _tokens_unpacked(home, fmt, instruction) <= budget:
            return fmt
    return None


wrong("16", "q1", "counts the note", ("not the note",),
      tokens_for=lambda home, fmt, instruction: count_tokens(knowledge_text(home, fmt, instruction)[0]))
right("16", "q1", "unpacked, keyword argument", tokens_for=_tokens_unpacked)
wrong("16", "q2", "names as substrings", ("does not name it",),
      my_rooms=lambda home, instruction: [r for r in home.graph
                                          if home.graph.nodes[r]["name"].lower() in instruction.lower()])
right("16", "q2", "word sequences", my_rooms=_rooms_by_words)
wrong("16", "q3", "the cheapest, not the richest", ("tells the model less", "return the richest"),
      richest_that_fits=_smallest_that_fits)
right("16", "q3", "a list of those that fit",
      richest_that_fits=lambda home, instruction, budget: next(
          iter([s for s in ex16.CHOICES if _tokens_unpacked(home, s, instruction) <= budget]), None))


def _questions() -> list[tuple[str, str]]:
    return [(name[:2], p.name) for name in EXERCISES for p in _module(name).EXERCISE.problems]


# ---- 12 person preferences
def _game_from_world_file(home, store, person):
    from lares_kit.device_apis.tv_and_weather import channels
    from lares_kit.memory import residents

    team = residents(home).get(person, {}).get("profile", {}).get("favourite team")  # the world file, not the store
    return next((c["channel"] for c in channels(home) if team in c.get("teams", [])), None)


def _game_by_search(home, store, person):
    from lares_kit.device_apis.tv_and_weather import search_guide

    team = store.preferences(person).get("favourite team")
    found = search_guide(home, team) if team else []
    return found[0]["channel"] if found else None  # 'Boston Red Sox' finds the Bruins' channel


def _game_from_profile(home, store, person):
    from lares_kit.device_apis.tv_and_weather import channels
    from lares_kit.memory import profile_of

    for line in profile_of(store, person).splitlines():
        if line.startswith("- favourite team: "):
            team = line.removeprefix("- favourite team: ")
            return next((c["channel"] for c in channels(home) if team in c.get("teams", ())), None)
    return None


def _temperature_oldest(store, person):
    stated = store.preferences(person).get("usual temperature")
    if stated is not None:
        return stated
    for turn in store.turns(user=person):  # oldest first: the first request, not the newest
        found = re.search(r"\d+", turn.text)
        if found and "heating" in turn.text.lower():
            return int(found.group())
    return None


def _temperature_by_search(store, person):
    prefs = store.preferences(person)
    if "usual temperature" in prefs:
        return prefs["usual temperature"]
    about_heating = [t for t in store.search("heating", user=person, limit=100) if re.search(r"\d+", t.text)]
    if not about_heating:
        return None
    newest = max(about_heating, key=lambda t: t.at)
    return int(re.search(r"\d+", newest.text).group())


def _channels_for_nobody(home, request, tv):
    from lares_kit import run_agent
    from lares_kit.memory import residents

    got = {}
    for person in residents(home):
        home.reset()
        run_agent(request, home, agent="sage")  # who is speaking? the home's first resident, every time
        got[person] = home.devices[tv].state["channel"]
    return got


def _channels_without_reset(home, request, tv):
    from lares_kit import RunContext, run_agent
    from lares_kit.memory import residents

    got = {}
    for person in residents(home):  # each run starts where the last one left the TV
        run_agent(request, home, agent="sage", context=RunContext(person=person))
        got[person] = home.devices[tv].state["channel"]
    return got


def _channels_with_memory(home, request, tv):
    from lares_kit import run_agent
    from lares_kit.memory import memory_for, residents

    def served(person):
        home.reset()
        run_agent(request, home, agent="sage", memory=memory_for(home, person=person))
        return home.devices[tv].state["channel"]

    return {person: served(person) for person in residents(home)}


wrong("12", "q1", "the team from the world file", ("favourite team in the store: 'Boston Celtics'",
                                                   "expected 4 but got 3"), game_channel=_game_from_world_file)
wrong("12", "q1", "the first channel a word search finds", ("expected None but got 3", "one of a channel's teams"),
      game_channel=_game_by_search)
right("12", "q1", "the team read from profile_of", game_channel=_game_from_profile)
wrong("12", "q2", "the stated one only", ("after store.forget_preference('dmitriy', 'usual temperature')",
                                          "expected 19 but got None"),
      usual_temperature=lambda store, person: store.preferences(person).get("usual temperature"))
wrong("12", "q2", "the oldest request, not the newest", ("For sam", "expected 20 but got 23"),
      usual_temperature=_temperature_oldest)
right("12", "q2", "a word search, the newest by time", usual_temperature=_temperature_by_search)
wrong("12", "q3", "never says who is speaking", ("Everyone got the same channel", "RunContext(person=...)"),
      channel_by_person=_channels_for_nobody)
wrong("12", "q3", "no reset between runs", ("The run for 'noor' changes nothing", "home.reset()"),
      channel_by_person=_channels_without_reset)
right("12", "q3", "memory_for instead of a run context", channel_by_person=_channels_with_memory)

# ---- 14 valid, not right (recorded real-model episodes, no model runs)
def _repeat_by_name(episode):
    # The same function twice counts as a repeat, whatever its arguments.
    names = []
    for step in episode.tool_calls:
        if step.tool in names:
            return step.turn
        names.append(step.tool)
    return None


def _repeat_of_the_last(episode):
    # Only a call the same as the one just before it.
    calls = episode.tool_calls
    return next((b.turn for a, b in zip(calls, calls[1:]) if a.call_text == b.call_text), None)


def _repeat_position(episode):
    # Its position in the list, not its turn.
    texts = [step.call_text for step in episode.tool_calls]
    return next((i for i, text in enumerate(texts) if text in texts[:i]), None)


def _repeat_by_count(episode):
    texts = [step.call_text for step in episode.tool_calls]
    repeats = [step.turn for i, step in enumerate(episode.tool_calls) if texts[:i].count(step.call_text)]
    return min(repeats) if repeats else None


wrong("14", "q1", "same function name, other arguments", ("not just its name",), first_repeat=_repeat_by_name)
wrong("14", "q1", "only the call just before", ("compare with every call before",), first_repeat=_repeat_of_the_last)
wrong("14", "q1", "the position, not the turn", ("return the turn",), first_repeat=_repeat_position)
right("14", "q1", "counts earlier texts, smallest turn", first_repeat=_repeat_by_count)


def _required_only(parameters, arguments):
    missing = [key for key in parameters.get("required", []) if key not in arguments]
    return f"missing {missing[0]!r}" if missing else None


def _no_enum(parameters, arguments):
    props = parameters.get("properties", {})
    for key in parameters.get("required", []):
        if key not in arguments:
            return f"missing {key!r}"
    for key, value in arguments.items():
        if key not in props:
            return f"unknown argument {key!r}"
        if props[key].get("type") == "boolean" and not isinstance(value, bool):
            return f"{key!r} must be true or false"
        if props[key].get("type") == "string" and not isinstance(value, str):
            return f"{key!r} must be a string"
    return None


def _loose_boolean(parameters, arguments):
    # 1 accepted as a boolean: Python's bool is an int, but JSON's boolean is not a number.
    props = parameters.get("properties", {})
    for key in parameters.get("required", []):
        if key not in arguments:
            return f"missing {key!r}"
    for key, value in arguments.items():
        spec = props.get(key)
        if spec is None:
            return f"unknown argument {key!r}"
        kind = {"boolean": (bool, int), "string": str}.get(spec.get("type"), object)
        if not isinstance(value, kind):
            return f"{key!r} has the wrong type"
        if value not in spec.get("enum", [value]):
            return f"{key!r} must be one of {spec['enum']}"
    return None


def _all_problems(parameters, arguments):
    props = parameters.get("properties", {})
    problems = [f"{key} is required" for key in set(parameters.get("required", [])) - set(arguments)]
    problems += [f"{key} is not a parameter" for key in set(arguments) - set(props)]
    for key in set(arguments) & set(props):
        value, spec = arguments[key], props[key]
        if spec.get("type") == "boolean" and type(value) is not bool:
            problems.append(f"{key} must be true or false")
        if spec.get("type") == "string" and type(value) is not str:
            problems.append(f"{key} must be text")
        if "enum" in spec and value not in spec["enum"]:
            problems.append(f"{key} is not one of {', '.join(spec['enum'])}")
    return "; ".join(sorted(problems)) or None


wrong("14", "q2", "only the required keys", ("'on' is not a parameter of toggle_light", "returned None"),
      argument_error=_required_only)
wrong("14", "q2", "no enum check", ("there is no garage-light",), argument_error=_no_enum)
wrong("14", "q2", "1 taken for a boolean", ("1 is a number",), argument_error=_loose_boolean)
wrong("14", "q2", "True/False instead of a sentence", ("return None (valid) or a sentence",),
      argument_error=lambda parameters, arguments: set(parameters.get("required", [])) <= set(arguments))
right("14", "q2", "every problem, as sets", argument_error=_all_problems)


def _outer_braces(text):
    # From the first { to the last }: fine for one call, wrong when other braces come first.
    try:
        value = json.loads(text[text.index("{"):text.rindex("}") + 1])
    except ValueError:
        return None
    return (value["name"], value.get("arguments", {})) if isinstance(value, dict) and "name" in value else None


def _whole_object(text):
    decoder = json.JSONDecoder()
    for start in [i for i, c in enumerate(text) if c == "{"]:
        try:
            value = decoder.raw_decode(text, start)[0]
        except ValueError:
            continue
        if isinstance(value, dict) and "name" in value:
            return value  # the object, not (name, arguments)
    return None


def _call_by_ends(text):
    # Every {...} span, shortest first from each opening brace, read with json.loads.
    for start in range(len(text)):
        if text[start] != "{":
            continue
        for end in range(start + 1, len(text)):
            if text[end] != "}":
                continue
            try:
                value = json.loads(text[start:end + 1])
            except ValueError:
                continue
            if isinstance(value, dict) and isinstance(value.get("name"), str):
                return value["name"], value.get("arguments", {})
            break
    return None


wrong("14", "q3", "first { to last }", ("braces that are not JSON", "expected ('set_light'"), read_call=_outer_braces)
wrong("14", "q3", "the whole object", ("not the whole object",), read_call=_whole_object)
right("14", "q3", "json.loads on each {...} span", read_call=_call_by_ends)

# ---- 17 Home Assistant's templates, tools and entity ids
# Needs, at the top of tests/system/test_exercises.py: `import unicodedata` and `from collections import Counter`
# (plus `from lares_kit.ha.domains import domain_of`).
def _slug(text):
    return "_".join(re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKD", text).encode("ascii", "ignore")
                                .decode().lower()))


def _entity_by_counter(home, device_id):
    device = home.devices[device_id]
    names = Counter(d.name.lower() for d in home.devices.values())
    said = device.name if names[device.name.lower()] == 1 else f"{home.room_name(device.room)} {device.name}"
    return f"{domain_of(device.type, device.state)}.{_slug(said)}"


def _entity_type_as_domain(home, device_id):
    device = home.devices[device_id]  # the lares_kit type before the dot: 'thermostat.thermostat'
    names = Counter(d.name.lower() for d in home.devices.values())
    said = device.name if names[device.name.lower()] == 1 else f"{home.room_name(device.room)} {device.name}"
    return f"{device.type}.{_slug(said)}"


def _entity_keeps_accents(home, device_id):
    device = home.devices[device_id]  # \w keeps 'ü': 'lock.haustür'
    names = Counter(d.name.lower() for d in home.devices.values())
    said = device.name if names[device.name.lower()] == 1 else f"{home.room_name(device.room)} {device.name}"
    return domain_of(device.type) + "." + re.sub(r"[^\w]+", "_", said.lower()).strip("_")


_HA_CALLS = {
    "lock up the back door": ("HassTurnOn", {"name": "Back door lock"}),
    "set the bedside lamp to 30 percent": ("HassLightSet", {"name": "Bedside lamp", "brightness": 30}),
    "set the living room blinds half open": ("HassSetPosition", {"name": "Blinds", "area": "Living room",
                                                                 "position": 50}),
    "switch the kitchen lights off": ("HassTurnOff", {"area": "Kitchen", "domain": "light"}),
    "put the heating on 21 degrees": ("HassClimateSetTemperature", {"name": "Thermostat", "temperature": 21}),
}

wrong("17", "q1", "one word order only", ("hassil matched nothing for 'pop the light on in the hallway'",),
      templates=["(pop|flick) [the] {area} light on"])
wrong("17", "q1", "on or off", ("'pop the office light off'", "should match nothing"),
      templates=["(pop|flick) [the] {area} light (on|off)", "(pop|flick) [the] light (on|off) in [the] {area}"])
wrong("17", "q1", "the rooms spelled out", ("expected area 'office'", "{area} slot"),
      templates=["(pop|flick) [the] (office|bedroom|hallway|lounge|kitchen) light on",
                 "(pop|flick) [the] light on in [the] (office|bedroom|hallway|lounge|kitchen)"])
right("17", "q1", "one template, two orders as alternatives",
      templates=["(pop|flick) [the] ({area} light on|light on in [the] {area})"])
wrong("17", "q2", "an area without a domain", ("collateral damage", "'kettle'"),
      calls={**_HA_CALLS, "switch the kitchen lights off": ("HassTurnOff", {"area": "Kitchen"})})
wrong("17", "q2", "lock with HassTurnOff", ("changed nothing", "HA_API_PROMPT"),
      calls={**_HA_CALLS, "lock up the back door": ("HassTurnOff", {"name": "Back door lock"})})
wrong("17", "q2", "a name two blinds share", ("was refused", "give the area"),
      calls={**_HA_CALLS, "set the living room blinds half open": ("HassSetPosition",
                                                                   {"name": "Blinds", "position": 50})})
right("17", "q2", "lists, aliases, area and domain",
      calls={"lock up the back door": ["HassTurnOn", {"name": "back door lock", "domain": "lock"}],
             "set the bedside lamp to 30 percent": ["HassLightSet", {"brightness": 30, "name": "bedside lamp"}],
             "set the living room blinds half open": ["HassSetPosition", {"area": "living room", "domain": "cover",
                                                                          "position": 50}],
             "switch the kitchen lights off": ["HassTurnOff", {"name": "Spotlights"}],
             "put the heating on 21 degrees": ["HassClimateSetTemperature", {"temperature": 21, "name": "heating"}]})
wrong("17", "q3", "the type, not the domain", ("DOMAINS['thermostat'] is 'climate'",),
      entity_for=_entity_type_as_domain)
wrong("17", "q3", "the name alone", ("are called 'Light'", "the room's name goes in front"),
      entity_for=lambda home, device_id: f"{domain_of(home.devices[device_id].type)}."
                                         f"{_slug(home.devices[device_id].name)}")
wrong("17", "q3", "accents kept", ("plain ASCII",), entity_for=_entity_keeps_accents)
right("17", "q3", "Counter, findall and domain_of", entity_for=_entity_by_counter)

# ---- 18 messages and doors (uses json, already imported by tests/system/test_exercises.py)
def _every_state_that_says_on(heard):
    # Every config's state topic that says ON: switches and smoke alarms say ON too.
    names = []
    for topic, payload in heard.items():
        if topic.startswith("homeassistant/") and topic.endswith("/config") and payload:
            config = json.loads(payload)
            if heard.get(config.get("state_topic")) == "ON":
                names.append(config["device"]["name"])
    return names


def _lights_said_plain_on(heard):
    # Only lights, but read as plain ON/OFF: a JSON-schema light says {"state": "ON", ...}.
    names = []
    for topic, payload in heard.items():
        if topic.startswith("homeassistant/light/") and payload:
            config = json.loads(payload)
            if heard[config["state_topic"]] == "ON":
                names.append(config["device"]["name"])
    return names


def _lights_with_cleared_configs(heard):
    # Forgets that a home that left clears its configs with an empty payload: json.loads("") raises.
    names = []
    for topic, payload in heard.items():
        if topic.startswith("homeassistant/light/"):
            config = json.loads(payload)
            if json.loads(heard[config["state_topic"]])["state"] == "ON":
                names.append(config["device"]["name"])
    return names


def _lights_by_parts(heard):
    found = set()
    for topic, payload in heard.items():
        prefix, component, *_rest, last = topic.split("/")
        if (prefix, component, last) != ("homeassistant", "light", "config"):
            continue
        try:
            config = json.loads(payload)
        except ValueError:  # '': the home has gone
            continue
        if json.loads(heard.get(config["state_topic"], "{}")).get("state") == "ON":
            found.add(config["device"]["name"])
    return found


def _command_in_percent(config, percent):
    state = {"state": "ON" if percent else "OFF"}
    if percent and config.get("brightness"):
        state["brightness"] = percent  # Home Assistant's scale is 0-255
    return config["command_topic"], json.dumps(state)


def _command_always_dimmed(config, percent):
    if percent == 0:
        return config["command_topic"], json.dumps({"state": "OFF"})
    return config["command_topic"], json.dumps({"state": "ON", "brightness": round(percent * 2.55)})


def _command_zero_brightness(config, percent):
    if not config.get("brightness"):
        return config["command_topic"], json.dumps({"state": "ON" if percent else "OFF"})
    return config["command_topic"], json.dumps({"state": "ON", "brightness": round(percent * 255 / 100)})


def _command_plain_words(config, percent):
    if percent <= 0:
        return config["command_topic"], "OFF"
    if config.get("supported_color_modes") == ["onoff"]:
        return config["command_topic"], "ON"
    return config["command_topic"], json.dumps({"state": "ON", "brightness": int(percent * 2.55)})


wrong("18", "q1", "every state that says ON", ("'Kitchen Smoke alarm' is a switch, not a light",),
      lights_on=_every_state_that_says_on)
wrong("18", "q1", "a JSON light read as plain ON", ("expected ['Hall Ceiling light', 'Kitchen Spotlights'] but got []",
                                                     "sends JSON: json.loads it"), lights_on=_lights_said_plain_on)
wrong("18", "q1", "a cleared config parsed", ("beside a townhouse whose bridge has closed", "JSONDecodeError"),
      lights_on=_lights_with_cleared_configs)
right("18", "q1", "topic parts, a set, try/except", lights_on=_lights_by_parts)
wrong("18", "q2", "brightness in percent", ("would go to 20 %, not 50 %", "brightness_scale"),
      light_command=_command_in_percent)
wrong("18", "q2", "a brightness for a light that cannot dim", ("hall-light", "cannot be dimmed"),
      light_command=_command_always_dimmed)
wrong("18", "q2", "brightness 0 for off", ("should go off",), light_command=_command_zero_brightness)
wrong("18", "q2", "a dict, not text", ("an MQTT payload is text",),
      light_command=lambda config, percent: (config["command_topic"], {"state": "ON" if percent else "OFF"}))
right("18", "q2", "plain ON/OFF, int(percent * 2.55)", light_command=_command_plain_words)
wrong("18", "q3", "a page without a token gets 401", ("For (c)", "the server answers 403"),
      verdicts={"a": "confirm", "b": "refuse", "c": 401, "d": 401, "e": 421, "f": "refuse", "g": 415, "h": "allow"})
wrong("18", "q3", "a guest may confirm", ("For (b)", "the server answers 'refuse'", "guest"),
      verdicts={"a": "confirm", "b": "confirm", "c": 403, "d": 401, "e": 421, "f": "refuse", "g": 415, "h": "allow"})
right("18", "q3", "status codes as text",
      verdicts={"a": "confirm", "b": "refuse", "c": "403", "d": "401", "e": "421", "f": "refuse", "g": "415",
                "h": "allow"})


# ---- 19 hearing the home
def _spoken_lower_only(name):
    # Lower case and digits kept: the recognizer has no sound for "3".
    return " ".join(name.lower().replace("-", " ").split())


def _spoken_no_codes(name):
    # Numbers as words, but "co2" left as one word, and accents kept.
    import re as _re

    from lares_kit.voice.grammar import number_words
    return " ".join(number_words(int(t)) if t.isdigit() else t for t in _re.findall(r"\d+|[^\W\d_]+", name.lower()))


def _spoken_by_hand(name):
    from lares_kit.voice.grammar import number_words
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = []
    for token in re.findall(r"[a-z]+\d+|\d+|[a-z]+", plain):
        letters, digits = re.match(r"([a-z]*)(\d*)", token).groups()
        if letters:
            words += list(letters) if digits and len(letters) <= 3 else [letters]
        if digits:
            words.append(number_words(int(digits)))
    return " ".join(words)


def _rate_by_position(said, heard):
    # Word i against word i: one missing word makes every later word wrong.
    from lares_kit.voice.grammar import spoken
    a, b = spoken(said).split(), spoken(heard).split()
    wrong_words = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    return wrong_words / len(a)


def _rate_over_heard(said, heard):
    # The right edit distance, divided by the words heard.
    from lares_kit.voice.grammar import spoken
    a, b = spoken(said).split(), spoken(heard).split()
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, 1):
        row, last = [i] + [0] * len(b), row
        for j, other in enumerate(b, 1):
            row[j] = min(last[j] + 1, row[j - 1] + 1, last[j - 1] + (word != other))
    return row[-1] / max(len(b), 1)


def _rate_unnormalized(said, heard):
    # The right edit distance over the words as written: "3" is not "three", "office." is not "office".
    a, b = said.lower().split(), heard.lower().split()
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return table[-1][-1] / len(a)


def _rate_recursive(said, heard):
    from functools import lru_cache

    from lares_kit.voice.grammar import spoken
    a, b = tuple(spoken(said).split()), tuple(spoken(heard).split())

    @lru_cache(maxsize=None)
    def distance(i, j):
        if not i or not j:
            return i or j
        return min(distance(i - 1, j) + 1, distance(i, j - 1) + 1,
                   distance(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return distance(len(a), len(b)) / len(a)


def _command_if_words_known(transcript, grammar):
    # Every word is one the grammar uses: "set the" passes, though it is no command.
    from lares_kit.voice.grammar import written
    words = transcript.split()
    return written(transcript, grammar) if words and all(w in grammar.words for w in words) else None


def _command_unwritten(transcript, grammar):
    # Whole or not, right; but the words as heard, not as the home writes them.
    from lares_kit.voice.grammar import is_whole
    return transcript if transcript and is_whole(transcript, grammar) else None


def _command_by_regex(transcript, grammar):
    from lares_kit.voice.grammar import is_whole, written
    if not re.search(r"\w", transcript):
        return None
    whole = is_whole(" ".join(transcript.split()), grammar)
    return written(transcript, grammar) if whole else None


wrong("19", "q1", "lower case only", ("meeting room three",), spoken_name=_spoken_lower_only)
wrong("19", "q1", "a code said as one word", ("c o two sensor",), spoken_name=_spoken_no_codes)
right("19", "q1", "letters and digits split by hand", spoken_name=_spoken_by_hand)
wrong("19", "q2", "word by word, by position", ("not position by position",), word_error_rate=_rate_by_position)
wrong("19", "q2", "divided by the words heard", ("divide by the number of words said",),
      word_error_rate=_rate_over_heard)
wrong("19", "q2", "words as written", ("the office.'", "Compare the spoken words"), word_error_rate=_rate_unnormalized)
right("19", "q2", "a recursive distance with lru_cache", word_error_rate=_rate_recursive)
wrong("19", "q3", "every word known", ("'turn on the light in the' in lares-home", "return None"),
      command_or_none=_command_if_words_known)
wrong("19", "q3", "the words as heard", ("'dim the light in the office to 40 percent'",),
      command_or_none=_command_unwritten)
right("19", "q3", "a regex for silence, then is_whole", command_or_none=_command_by_regex)


def test_every_question_has_a_wrong_and_a_right_answer():
    questions = _questions()
    for exercise, question in questions:
        kinds = {a.right for a in ANSWERS if (a.exercise, a.question) == (exercise, question)}
        assert kinds == {True, False}, f"ex{exercise} {question}: give a wrong answer and a right one"
    assert {(a.exercise, a.question) for a in ANSWERS} <= set(questions), "an answer for a question that is gone"
    print(f"{len(questions)} questions, {sum(not a.right for a in ANSWERS)} wrong answers, "
          f"{sum(a.right for a in ANSWERS)} right answers")


def _problem(answer: Answer):
    module = importlib.import_module(module_name(answer.exercise))
    return next(p for p in module.EXERCISE.problems if p.name == answer.question)


@pytest.mark.parametrize("answer", [a for a in ANSWERS if not a.right], ids=lambda a: a.id)
def test_a_wrong_answer_gets_not_yet_and_a_reason(answer):
    verdict = _problem(answer).verdict(dict(answer.names))
    assert verdict.outcome == "incorrect", f"passed a wrong answer ({answer.why}): {verdict}"
    for words in answer.says:
        assert words in verdict.text, f"the message should point at the mistake ({words!r}): {verdict.text}"


@pytest.mark.parametrize("answer", [a for a in ANSWERS if a.right], ids=lambda a: a.id)
def test_a_right_answer_written_differently_passes(answer):
    verdict = _problem(answer).verdict(dict(answer.names))
    assert verdict.passed, f"rejected a right answer ({answer.why}): {verdict}"


# ---------------------------------------------------- run 2: the solution
@pytest.mark.parametrize("name", EXERCISES)
def test_reference_solutions_pass_every_check(name):
    solution = vars(_solution(name))
    for problem in _module(name).EXERCISE.problems:
        verdict = problem.verdict(solution)
        assert verdict.passed, str(verdict)


@pytest.mark.slow
def test_exercise_notebooks_run_as_starters_and_as_solutions(tmp_path, years_ahead):
    """nbval on the starters (outputs as committed, on a date years ahead) and a kernel run of each solution."""
    start = time.perf_counter()
    report = tmp_path / "nbval.txt"
    env = {**os.environ, **build_solutions.QUIET_ENV}
    env.pop("MPLBACKEND", None)
    cmd = years_ahead([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-p", "no:cacheprovider",
                       "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"), "-q", *map(str, NOTEBOOKS)])
    nbval = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=report.open("w"), stderr=subprocess.STDOUT)

    sockets = tmp_path / "kernels"
    sockets.mkdir()

    def solved(path: Path) -> dict[str, str]:
        # Unix sockets, not TCP ports: nbval's kernels start at the same moments in another process.
        return _verdicts(build_solutions.execute(build_solutions.solution_notebook(path), sockets=sockets))

    with ThreadPoolExecutor(max_workers=2) as pool:  # the nbval run is a third process
        results = dict(zip(EXERCISES, pool.map(solved, NOTEBOOKS)))
    nbval.wait(timeout=10 * BUDGET_SECONDS)
    seconds = time.perf_counter() - start
    assert nbval.returncode == 0, f"nbval failed on the starters:\n{report.read_text()[-6000:]}"
    for name, verdicts in results.items():
        assert sorted(verdicts) == [p.name for p in _module(name).EXERCISE.problems], name
        for q, text in verdicts.items():
            assert text.startswith(CORRECT), f"{name} {q} with the reference solution says: {text!r}"
    # BUDGET_SECONDS is a target for a quiet machine, printed, not asserted: a busy machine is no failure.
    print(f"{seconds:6.1f} s  {len(NOTEBOOKS)} exercises, starters (nbval) and solutions (budget {BUDGET_SECONDS} s)")
