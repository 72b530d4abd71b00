"""Every hint ``lares run`` prints under a transcript is a command line that works: each is run here.

``lares_kit.agents.hints`` writes them: after a persistent command is registered, the ``--event`` that makes its
condition turn True; after an agent used up its steps, the ``--max-steps`` that gives it more.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from lares_kit.cli.commands import main


def lares(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("world, instruction, fires", [
    ("sage-home", "when the dishwasher is done, switch on the den lamp", "den-lamp"),
    ("sage-home", "as soon as somebody opens the fridge, turn the backlight on", "tv-strip"),
    ("sage-home", "whenever the front door is unlocked, switch the hallway light off", "hallway-light"),
    # a device with no capability documents: its own attributes
    ("townhouse", "whenever the back door is locked, switch on the utility light", "utility-light"),
    ("garden-flat", "whenever the garage door opens, switch on the corridor light", None),
    ("townhouse", "whenever the kettle switches off, turn off the kitchen light", "kitchen-light"),
    ("smart-building", "when the window in office 3 opens, switch on the desk fan in office 3", "office-3-fan"),
    # a time, on the home's clock
    ("townhouse", "every evening at 7 turn on the landing light", "landing-light"),
    ("townhouse", "at 6:30 on weekdays turn on the bedside lamp", "bedside-lamp"),
    ("townhouse", "every saturday at 9am switch the kettle on", "kettle"),
    ("garden-flat", "in twenty minutes turn the study light on", "study-light"),
    ("lares-home", "switch on the lounge light at 11pm", "lounge-light"),
])
def test_the_hint_makes_the_condition_fire(capsys, world, instruction, fires):
    code, out = lares(capsys, "run", instruction, "--world", world, "--agent", "sage")
    assert code == 0
    hint = re.search(r"play what happens next: ((?:--(?:event|at) (?:\"[^\"]+\"|\S+) ?)+) \(",
                     out.replace("\n    ", " "))
    if fires is None:  # a device the home does not have: no condition, and no hint
        assert "No persistent command was registered" in out and hint is None, out
        return
    assert hint and "VALUE" not in hint.group(1) and "HH:MM" not in hint.group(1), out
    code, out = lares(capsys, "run", instruction, "--world", world, "--agent", "sage", "--json",
                      *shlex.split(hint.group(1)))
    data = json.loads(out)
    assert code == 0 and len(data["firings"]) == 1, data["firings"]
    assert data["firings"][0]["status"] == "done" and data["state_after_events"][fires] != data["state"][fires]


def test_the_step_limit_hint_gives_the_agent_the_steps_it_needs(capsys):
    # the offline model finds the dog in more than 2 steps: the hint's limit lets it finish
    code, out = lares(capsys, "run", "find my dog and switch on the light where he is", "--max-steps", "2")
    assert code == 0 and "= step_limit" in out
    more = re.search(r"give it more with --max-steps (\d+)\.", out)
    assert more, out
    for _ in range(4):  # each hint at most doubles: a few rounds reach any limit the search needs
        code, out = lares(capsys, "run", "find my dog and switch on the light where he is", "--max-steps",
                          more.group(1))
        if "= step_limit" not in out:
            break
        more = re.search(r"give it more with --max-steps (\d+)\.", out)
    assert code == 0 and "= done" in out and "--max-steps" not in out.split("= done")[1]
