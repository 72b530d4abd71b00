"""The sentences the home side writes and the models read back: each marker, from its real writer to its reader.

The writers are the real ones -- the safety gate refusing or holding back a
call, ``run_agent`` writing its goal prompt -- and the readers are the ones
the models use (:mod:`lares_kit.sentences.markers`, :func:`lares_kit.safety.confirmation.question_in`).
A change of wording on either side fails here, not silently in a transcript.
The last test keeps each marker in one place: no other module of lares_kit
spells one out in a string literal (docstrings may quote them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lares_kit import Toolbox, load_world, run_agent
from lares_kit.memory.agent_memory import Memory
from lares_kit.memory.store import MemoryStore
from lares_kit.run_context import RunContext
from lares_kit.safety.confirmation import CONFIRM_MARK, confirmation_text, question_for, question_in
from lares_kit.safety.gate import SafetyGate
from lares_kit.safety.policy import changes_of
from lares_kit.sentences.markers import (
    ANSWER_MARK,
    NO_WAY_TO_ASK,
    REFUSED_MARK,
    answer_in,
    answered,
    cannot_ask,
    cannot_ask_in,
    is_refusal,
    light_to_switch,
    refusal,
    relayed,
    relayed_in,
    room_in,
    room_line,
    source_line,
    speaker_in,
    speaker_line,
    too_dark,
)

PACKAGE = Path(__file__).resolve().parents[3] / "lares_kit"
UNLOCK = {"device_id": "front-door-lock", "attribute": "locked", "value": False}
LAMP = {"light_id": "hall-light", "on": True}


# ------------------------------------------------------------------ refusal
@pytest.mark.parametrize("source, time_of_day, tool, args, rule", [
    ("letterbox", None, "set_device", UNLOCK, "unlocking a door"),  # sensitive, and nobody trusted to confirm it
    ("letterbox", "4am", "set_light", LAMP, "night"),  # at night an untrusted voice changes nothing at all
    ("", "23:30", "set_light", LAMP, "night"),  # an empty source is nobody we know
], ids=["sensitive", "night", "no-source"])
def test_the_gate_s_refusal_reads_as_a_refusal(source, time_of_day, tool, args, rule):
    gate = SafetyGate.for_home(load_world("townhouse"), source, time_of_day)
    verdict = gate.check(tool, args)
    assert (verdict.action, verdict.rule) == ("refuse", rule)
    assert verdict.text.startswith(REFUSED_MARK) and is_refusal(verdict.text)


def test_a_refused_call_reads_as_a_refusal_in_the_observation_the_model_gets():
    box = Toolbox(load_world("townhouse"), source="letterbox")
    refused = box.dispatch("set_device", UNLOCK)
    assert not refused.ok and refused.content.startswith("Error: ") and is_refusal(refused.content)
    allowed = box.dispatch("read_device", {"device_id": "front-door-lock"})
    assert allowed.ok and not is_refusal(allowed.content)


def test_a_confirmation_question_is_not_a_refusal():
    verdict = SafetyGate.for_home(load_world("townhouse")).check("set_device", UNLOCK)
    assert verdict.action == "confirm" and not is_refusal(verdict.text) and not is_refusal("Error: " + verdict.text)


# ----------------------------------------------------- speaker and source
@pytest.mark.parametrize("person", ["amal", "Ana Lima", "o'neill"])
@pytest.mark.parametrize("source", ["owner", "guest", "letterbox"])
def test_run_agent_s_goal_prompt_names_the_speaker_the_models_read(person, source):
    memory = Memory(MemoryStore(":memory:"), user=person)
    episode = run_agent("turn on the light in the kitchen", load_world("lares-home"), "function-calling",
                        memory=memory, context=RunContext(source=source))
    goal = episode.goal_prompt
    assert speaker_line(person) in goal and speaker_in(goal) == person
    assert source_line(source) in goal
    assert ("not from the owner of the home" in goal) == (source != "owner")
    sent = [m["content"] for m in episode.messages(load_world("lares-home")) if m["role"] == "system"]
    assert goal in sent  # what the model is sent, not only what the episode keeps


@pytest.mark.parametrize("tool_set", ["lares", "ha"])
def test_the_room_the_person_speaks_from_is_the_one_the_models_read(tool_set):
    from lares_kit.models.offline.request import read

    home = load_world("townhouse")
    episode = run_agent("is the light on?", home, "function-calling", tool_set=tool_set,
                        context=RunContext(room="main-bedroom"))
    assert "main-bedroom" not in str(home.extra)  # the run's context, not the world's data
    assert room_in(episode.goal_prompt) == "main-bedroom" and room_in(episode.goal_prompt, name=True) == "Main bedroom"
    sent = episode.messages(home)
    assert read(sent).place in ("main-bedroom", "main_bedroom")  # the map's id for it, in either dialect
    assert room_in(run_agent("hello", load_world("townhouse"), "function-calling").goal_prompt) == ""


def test_a_goal_prompt_without_a_person_names_nobody():
    episode = run_agent("turn on the light in the kitchen", load_world("lares-home"), "function-calling")
    assert speaker_in(episode.goal_prompt) == "" and "You are talking to" not in episode.goal_prompt


# ------------------------------------------------------------ confirmation
@pytest.mark.parametrize("world, tool, args, question", [
    ("townhouse", "set_device", UNLOCK,
     "Shall I unlock the front door lock (front-door-lock)? Please answer yes or no."),
    ("townhouse", "set_device", {"device_id": "oven", "attribute": "temperature", "value": 250},
     "Shall I set the temperature of the oven (oven) to 250? Please answer yes or no."),
])
def test_the_gate_s_question_is_the_one_the_models_read(world, tool, args, question):
    home = load_world(world)
    box = Toolbox(home)
    held = box.dispatch(tool, args)
    assert not held.ok and held.content.startswith("Error: " + CONFIRM_MARK)
    assert question_in(held.content) == question == question_for(changes_of(home, tool, args))
    assert question_in(held.content.removeprefix("Error: ")) == question  # read with or without the prefix


def test_a_look_in_the_dark_names_the_light_the_models_read():
    home = load_world("lares-home")
    toolbox = Toolbox(home)
    toolbox.dispatch("move_robot", {"destination_room_id": "bedroom"})
    seen = toolbox.dispatch("look_with_robot", {})
    assert light_to_switch(seen.content) == "bedroom-light"
    home.devices.pop("bedroom-light")  # a dark room with no light: the sentence names none
    assert light_to_switch(toolbox.dispatch("look_with_robot", {}).content) is None


def test_the_user_s_answer_is_the_one_the_models_read():
    from lares_kit.tools.users import ScriptedUser

    toolbox = Toolbox(load_world("lares-home"), user=ScriptedUser(answers=["Yes: the one by the sofa."]))
    result = toolbox.dispatch("ask_user", {"question": "Which lamp?"})
    assert answer_in(result.content) == "Yes: the one by the sofa."


def test_a_question_the_device_agent_cannot_ask_goes_to_sage_s_coordinator_and_back():
    # SAGE's device agent (here with the home's tools) halts with the question; the coordinator asks the person
    # and hands the task back with the answer, which the device agent reads as the person's.
    from lares_kit.tools.toolbox import default_tools
    from lares_kit.tools.users import ScriptedUser

    home = load_world("lares-home")
    episode = run_agent("set the office light depending on whether it's daytime", home, "sage",
                        tools=default_tools(home), user=ScriptedUser(answers=["No, it is night."]))
    first, again = [s.result for s in episode.tool_calls if s.tool == "device_agent"]
    assert cannot_ask_in(first) == episode.asked[0] == "Is it daytime right now?"
    assert relayed_in(episode.tool_calls[2].arguments["request"]) == (
        "set the office light depending on whether it's daytime", ("Is it daytime right now?", "No, it is night."))
    assert home.devices["office-light"].state == {"on": True} and "night" in again


# ------------------------------------------------------ one place per marker
# The opening words of each contract sentence; the tests above show each comes out of its writer.
MARKERS = [REFUSED_MARK, "You are talking to", "not from the owner of the home", CONFIRM_MARK, "in exactly these words",
           ANSWER_MARK, "too dark to see anything", "The person is in the", NO_WAY_TO_ASK, "the person answered:"]
HOMES = {"sentences/markers.py", "safety/confirmation.py"}  # where the markers are written and parsed


def test_the_markers_are_the_writers_words():
    written = [refusal("no."), speaker_line("amal"), source_line("guest"), confirmation_text(["x"], "Shall I?"),
               confirmation_text(["x"], "Shall I?"), answered("yes"), too_dark("Hall", "hall-light"),
               room_line("Hall", "hall"), cannot_ask("Is it day?"), relayed("x", "Is it day?", "No.")]
    assert [marker in text for marker, text in zip(MARKERS, written)] == [True] * len(MARKERS)


def _docstrings(tree: ast.AST) -> set[int]:
    # ids of the string constants that are docstrings: the first statement of a module, class or function
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def marker_literals(path: Path) -> list[str]:
    """``"line N: marker"`` for each string literal (f-string parts included) that spells out a marker."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            hits += [f"line {node.lineno}: {m!r}" for m in MARKERS if m in node.value]
    return hits


def test_the_scan_finds_a_marker_in_code_and_not_in_a_docstring(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Says: Refused by the home\'s safety policy."""\n\n'
                      'def f(x):\n    """You are talking to x."""\n    return f"Confirmation needed: {x}"\n')
    assert marker_literals(module) == ["line 5: 'Confirmation needed:'"]


def test_no_module_but_the_contract_spells_out_a_marker():
    found = {str(p.relative_to(PACKAGE.parent)): hits for p in sorted(PACKAGE.rglob("*.py"))
             if p.relative_to(PACKAGE).as_posix() not in HOMES for hits in [marker_literals(p)] if hits}
    assert not found, ("write and read these sentences with lares_kit.sentences.markers / "
                       "lares_kit.safety.confirmation:\n"
                       + "\n".join(f"  {path}: {', '.join(hits)}" for path, hits in found.items()))
