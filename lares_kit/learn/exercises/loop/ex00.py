"""Exercise 00, a first run: run an instruction, then check the home yourself.

Notebook: ``exercises/00_first_run.ipynb`` (after ``notebooks/00_start_here.ipynb``).
The checks run the offline model themselves (``model="offline"``), so they
give the same verdict whatever ``LARES_MODEL`` says.
"""

from __future__ import annotations

from ....agents import run_agent
from ....home.worlds import load_world
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]

KITCHEN = "turn on the light in the kitchen"


def _test_tools(tools_called) -> str:
    episode = run_agent(KITCHEN, load_world("lares-home"), model="offline")
    want = [step.tool for step in episode.tool_calls]
    if not isinstance(tools_called, list):
        raise Incorrect(f"tools_called should be a list of tool names, like ['halt']; got {tools_called!r}.")
    expect_equal(tools_called, want, f"{KITCHEN!r} with the offline model")
    return f"The agent called {', then '.join(want)}: the change, then the report to the user."


def _test_lit(lit_rooms) -> str:
    home = load_world("lares-home")
    expect_equal(call(lit_rooms, home, case="the Lares home as loaded"), ["hallway"], "the Lares home as loaded")
    home.update_device("kitchen-light", {"on": True})
    home.update_device("office-light", {"on": True})
    case = "the Lares home with the kitchen and office lights on"
    expect_equal(call(lit_rooms, home, case=case), ["hallway", "kitchen", "office"], case)
    home.update_device("hallway-light", {"on": False})
    expect_equal(call(lit_rooms, home, case="only the hallway light off"), ["kitchen", "office"],
                 "only the kitchen and office lights on")
    return "You read the truth of the home, room by room."


def _test_changed(changed_devices) -> str:
    for instruction, world in [(KITCHEN, "lares-home"), ("turn on the light for my dog", "lares-home"),
                               ("Set the heating to 21 degrees.", "townhouse")]:
        episode = run_agent(instruction, load_world(world), model="offline")
        before, after = episode.initial_state["devices"], episode.final_state["devices"]
        want = {dev: state for dev, state in after.items() if state != before.get(dev)}
        expect_equal(call(changed_devices, episode, case=repr(instruction)), want, repr(instruction))
    return "You compared the start and the end of the episode: what changed, and nothing else."


q1 = Problem("Which tools were called?", ("tools_called",), _test_tools, hints=[
    "Every call is in episode.tool_calls; each has a .tool (its name).",
    "tools_called = [step.tool for step in episode.tool_calls] -- then copy the list it prints, "
    "or keep the expression.",
])
q2 = Problem("Which rooms are lit?", ("lit_rooms",), _test_lit, hints=[
    "home.graph has the rooms as nodes; home.is_lit(room) says whether a room is lit.",
    "Return sorted(room for room in home.graph if home.is_lit(room)).",
])
q3 = Problem("What changed?", ("changed_devices",), _test_changed, hints=[
    "episode.initial_state['devices'] and episode.final_state['devices'] map each device id to its state.",
    "Keep the devices whose final state differs from their initial state, with the final state as the value.",
])
EXERCISE = Exercise("00_first_run", [q1, q2, q3])
bind = EXERCISE.bind
