"""Sentences built from world-file names read as English: capitals, articles, agreement.

Glitches seen in transcripts, each a class rather than one sentence:
"It is night, so The user wants me" (a clause joined to a sentence),
"Keys, a keys" and "a oven" (articles), "The spotlights ... is now on"
(agreement), "the door of fridge" and "the tv" (a name inside a sentence).
The tests use the tools and the offline model end to end, plus the rules of
:mod:`lares_kit.sentences.wording` on words of their own.
"""

from __future__ import annotations

import re

import pytest

from lares_kit import ScriptedUser, load_world
from lares_kit.agents import run_agent
from lares_kit.sentences.wording import agree, in_sentence, is_plural, join_clauses, with_article
from lares_kit.tools.toolbox import Toolbox, look_with_robot, read_device, set_device, set_light, toggle_light

# A capital after a joining word, other than "I" or a name the home gave ("the Kitchen"): the glitch class.
_JOINED_CAPITAL = re.compile(r"(?:, so|, and|, but|;) (?:The|It|A|An|There|This|You|Every)\b")


@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react"])
@pytest.mark.parametrize("answer", ["no, it's the middle of the night", "yes, bright sunshine"])
def test_a_reason_joined_to_a_sentence_keeps_no_stray_capital(agent, answer):
    episode = run_agent("put the lounge light on or off depending on whether it is daytime", load_world("lares-home"),
                        agent=agent, model="offline", user=ScriptedUser(answers=[answer]))
    text = episode.transcript()
    assert "lounge" in text.lower() and not _JOINED_CAPITAL.search(text), text


def test_a_plural_light_agrees_in_every_result_and_report():
    home = load_world("garden-flat")  # the kitchen's light is called "Spotlights"
    assert "(kitchen-light) are now off." in toggle_light(home, "kitchen-light")
    assert "(kitchen-light) are already off; nothing changed." in set_light(home, "kitchen-light", False)
    assert "(kitchen-light) are now on." in set_light(home, "kitchen-light", True)
    assert " are now " in set_device(home, "kitchen-light", "on", False)
    assert "(kitchen-light) are lights: " in read_device(home, "kitchen-light")
    assert "(living-room-blinds) are blinds: " in read_device(load_world("townhouse"), "living-room-blinds")
    episode = run_agent("switch the kitchen spotlights on", home, agent="function-calling", model="offline")
    assert episode.final_message == "The spotlights in the Kitchen are now on."
    episode = run_agent("are the spotlights in the kitchen on?", home, agent="function-calling", model="offline")
    assert episode.final_message.startswith("The spotlights in the Kitchen are on")


def test_things_the_robot_sees_are_introduced_with_the_right_article():
    home = load_world("townhouse")  # Keys (type keys) start in the living room
    home.move_robot("living-room")
    home.update_device("living-room-light", {"on": True})
    seen = look_with_robot(home)
    assert "Keys (keys)" in seen and "Keys, a keys" not in seen
    home.items["keys"].type = "owl"  # a vowel: "an owl"
    assert "Keys, an owl (keys)" in look_with_robot(home)
    episode = run_agent("find my keys", load_world("townhouse"), agent="function-calling", model="offline")
    assert re.search(r"I found Keys in the \w", episode.final_message), episode.final_message


def test_a_non_light_is_named_with_its_article():
    result = Toolbox(load_world("townhouse")).dispatch("toggle_light", {"light_id": "oven"})
    assert not result.ok and "'oven' is an oven, not a light" in result.text


def test_a_condition_names_its_device_as_a_noun():
    from lares_kit.persistent.monitor import Monitor

    home = load_world("sage-home")
    monitor = Monitor(home, isolation="inline")
    episode = run_agent("when somebody opens the fridge, switch the dining room light on", home, agent="sage",
                        monitor=monitor)
    description = monitor.list()[0].description
    assert description == "the door of the fridge is open", episode.transcript()


@pytest.mark.parametrize("noun, plural", [
    ("Fairy lights", True), ("Curtains", True), ("shoes", True), ("Lamp", False), ("Bus", False),
    ("Compass", False), ("TV", False), ("the curtains by the window", True), ("the lamp in the Studios", False),
])
def test_plural_is_judged_by_the_head_word(noun, plural):
    assert is_plural(noun) is plural
    assert agree(noun, "is") == ("are" if plural else "is")


@pytest.mark.parametrize("noun, expected", [
    ("cat", "a cat"), ("egg timer", "an egg timer"), ("iron", "an iron"), ("useful box", "a useful box"),
    ("slippers", "slippers"), ("HDMI switch", "an HDMI switch"), ("USB hub", "a USB hub"),
])
def test_articles(noun, expected):
    assert with_article(noun) == expected


def test_names_inside_a_sentence_and_joined_clauses():
    assert in_sentence("Smart TV") == "smart TV" and in_sentence("Hall Lamp") == "hall lamp"
    assert join_clauses("It is late, so ", "There is nothing to do.") == "It is late, so there is nothing to do."
    assert join_clauses("I looked. ", "the hall is empty.") == "I looked. The hall is empty."
    assert join_clauses("You asked, so ", "Bruno stays in.") == "You asked, so Bruno stays in."  # a name keeps it


def test_a_refusal_and_a_room_name_read_as_english():
    home = load_world("townhouse")
    episode = run_agent("put the oven on full and leave it on overnight", home, agent="function-calling",
                        model="offline")
    assert "an oven left with nobody watching it" in episode.final_message, episode.final_message
    assert set_light(home, "stairs-light", True).endswith("The Stairs are lit.")  # a room called "Stairs"
