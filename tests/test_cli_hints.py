"""Every hint ``lares run`` prints under a transcript is a command line that works: each is run here.

``lares_kit.agents.hints`` writes them: after a persistent command is registered, the ``--event`` that makes its
condition turn True; after an agent used up its steps, the ``--max-steps`` that gives it more.
"""

from __future__ import annotations

import re
import shlex

import pytest

from lares_kit.cli import main


def lares(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


@pytest.mark.parametrize("world, instruction", [
    ("sage-home", "when the dishwasher is done, switch on the den lamp"),
    ("sage-home", "as soon as somebody opens the fridge, turn the backlight on"),
    ("sage-home", "whenever the front door is unlocked, put the hallway light on"),
])
def test_the_event_hint_makes_the_condition_fire(capsys, world, instruction):
    code, out = lares(capsys, "run", instruction, "--world", world, "--agent", "sage")
    assert code == 0
    hint = re.search(r'play what happens next: (--event "[^"]+")', out.replace("\n    ", " "))
    assert hint, out
    (event,) = shlex.split(hint.group(1))[1:]
    assert "VALUE" not in event
    code, out = lares(capsys, "run", instruction, "--world", world, "--agent", "sage", "--event", event)
    assert code == 0 and re.search(r"\b1 firing\b", out), out


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
