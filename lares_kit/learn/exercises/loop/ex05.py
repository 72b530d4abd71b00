"""Exercise 05, the initial knowledge mode: build its message, then rebuild what changed since.

Notebook: ``exercises/05_initial_knowledge.ipynb`` (after ``notebooks/05_world_knowledge.ipynb``).
In mode ``initial`` the world knowledge is the state at the start of the
task; every change since is only in the history, in the tool results
(``"... (<light-id>) is now on."``, the contract of :mod:`lares_kit.tools.toolbox`).
The checks compare with :meth:`~lares_kit.episode.Episode.messages` and with the true home.
"""

from __future__ import annotations

from ....agents import run_agent
from ....agents.prompts import GOAL_PROMPT, ROLE_PROMPT
from ....episode import Episode
from ....home.worlds import load_world
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]

DOG = "turn on the light for my dog"


def _test_message(knowledge_message) -> str:
    home = load_world("lares-home")
    initial = home.knowledge()
    home.update_device("kitchen-light", {"on": True})  # a change after the start
    for mode in ["latest", "initial"]:
        episode = Episode("x", home.id, "intent-action", "offline", knowledge=mode, system_prompt=ROLE_PROMPT,
                          goal_prompt=GOAL_PROMPT, initial_knowledge=initial)
        want = episode.messages(home)[1]
        case = f"mode {mode!r} after the kitchen light went on"
        expect_equal(call(knowledge_message, mode, home, initial, case=case), want, case)
    got = call(knowledge_message, "none", home, initial, case="mode 'none'")
    if got is not None:
        raise Incorrect(f"For mode 'none', expected None (no knowledge message at all) but got {got!r}.")
    return "latest shows the home now; initial shows it as it was at the start; none shows nothing."


def _dog_run(knowledge: str):
    home = load_world("lares-home")
    episode = run_agent(DOG, home, model="offline", knowledge=knowledge)
    return home, episode, episode.messages(home)


def _test_switched(lights_switched) -> str:
    home, episode, messages = _dog_run("initial")
    want = {}
    for step in episode.tool_calls:
        for dev, state in step.after.get("devices", {}).items():
            if home.devices[dev].type == "light":
                want[dev] = state["on"]
    expect_equal(call(lights_switched, messages, case="the dog search's messages"), want,
                 "the messages of the dog search (initial mode)")
    off = [{"role": "tool", "tool_call_id": "a",
            "content": "The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit."},
           {"role": "tool", "tool_call_id": "b",
            "content": "Error: No light found with the ID 'attic-light'."},
           {"role": "tool", "tool_call_id": "c",
            "content": "The light in the Kitchen (kitchen-light) is now off. The Kitchen is dark."}]
    expect_equal(call(lights_switched, off, case="on, an error, then off"), {"kitchen-light": False},
                 "a light switched on, an error, then the light switched off")
    return f"From the history alone: {want}."


def _test_states(light_states) -> str:
    home, episode, messages = _dog_run("initial")
    want = {d.id: d.state["on"] for d in home.lights()}
    got = call(light_states, episode.initial_knowledge, messages, case="the dog search")
    expect_equal(got, want, "the end of the dog search (initial mode)")
    return "Start plus history equals the truth: the agent still knows which lights it turned on."


q1 = Problem("The knowledge message", ("knowledge_message",), _test_message, hints=[
    "The content is a header line, a newline, then the knowledge as JSON. knowledge_header(mode) gives the header.",
    "latest: home.render_knowledge('json'), the home as it is now. initial: json.dumps(initial, indent=2).",
    'Return {"role": "system", "content": ...}, or None for mode "none".',
])
q2 = Problem("What the history says", ("lights_switched",), _test_switched, hints=[
    "Only messages with role 'tool' hold results; a result that starts with 'Error: ' changed nothing.",
    r"re.findall(r'\(([\w-]+)\) (?:is|are) now (on|off)\.', content) finds every light change in one result.",
    "Go through the messages in order and overwrite: the last change of a light wins.",
])
q3 = Problem("Start plus history", ("light_states",), _test_states, hints=[
    "initial['rooms'] is a list of rooms; each has 'devices' with 'id', 'type' and 'state'.",
    "Start from {light id: state['on']} for the lights, then update it with lights_switched(messages).",
])
EXERCISE = Exercise("05_initial_knowledge", [q1, q2, q3])
bind = EXERCISE.bind
