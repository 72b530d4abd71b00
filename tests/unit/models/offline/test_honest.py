"""The honest stand-in on sentences of our own (not the learner corpus's): it reads the whole sentence, or refuses.

Each kind of clause the corpus's last silent wrong actions taught the offline model to read -- a greeting before
the request, an exception after a floor, the word that names some of a kind, a mode beside a value, a refused
clause among others, a time on what it would not do anyway -- is tried here in other words and other homes.
"""

from __future__ import annotations

import pytest

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.run_context import RunContext
from lares_kit.sentences.understood import NOT_UNDERSTOOD_MARK
from lares_kit.tools.users import ScriptedUser


def _run(world: str, instruction: str, agent: str = "intent-action", tools: str = "lares"):
    home = load_world(world)
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    extra = {"tool_set": tools} if tools != "lares" else {}
    episode = run_agent(instruction, home, agent=agent, model="offline", user=ScriptedUser(answers=[]), **extra)
    changed = {d: {k: v for k, v in dev.state.items() if before[d].get(k) != v}
               for d, dev in home.devices.items() if dev.state != before[d]}
    return episode, changed


@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react"])
@pytest.mark.parametrize("world, instruction, want", [
    # a greeting, then the request: the request is carried out
    ("townhouse", "Morning! Could you turn on the bedside lamp", {"bedside-lamp": {"on": True}}),
    ("garden-flat", "thanks, now switch the study light on", {"study-light": {"on": True}}),
    # a floor with a room left out: every other room of that floor, in a home too big to show whole
    ("smart-building", "switch off every light downstairs apart from the staff kitchen",
     {"lobby-light": {"on": False}, "corridor-0-light": {"on": False}, "stairs-0-light": {"on": False},
      "office-1-light": {"on": False}}),
    # a word of the name picks some of a kind
    ("townhouse", "turn on the ceiling lights upstairs",
     {"landing-light": {"on": True}, "main-bedroom-light": {"on": True}, "spare-room-light": {"on": True}}),
    ("garden-flat", "put the floor lamp in the living room on", {"living-room-lamp": {"on": True}}),
    # ...but not when the sentence names more than one thing: each is meant
    ("townhouse", "turn on the ceiling light and the lamp in the living room",
     {"living-room-light": {"on": True}, "living-room-lamp": {"on": True}}),
    # a sentence that asks nothing, then a request naming two things: both are meant (the first was once dropped)
    ("townhouse", "I am home. Turn on the mirror light and the extractor fan in the bathroom",
     {"bathroom-light": {"on": True}, "bathroom-fan": {"on": True}}),
    ("garden-flat", "The guests have arrived. Switch on the study light and the floor lamp in the living room",
     {"study-light": {"on": True}, "living-room-lamp": {"on": True}}),
    # a mode said beside the value
    ("smart-building", "put the thermostat in office 3 on cool at 18",
     {"office-3-thermostat": {"mode": "cool", "target": 18}}),
])
def test_a_sentence_is_read_whole(world, instruction, want, agent):
    episode, changed = _run(world, instruction, agent)
    assert episode.status == "done" and changed == want, (episode.final_message, changed)


@pytest.mark.parametrize("world, instruction, quoted", [
    # a clause it cannot read among others: nothing at all is done, and the words are quoted
    ("smart-building", "close the window in office 3 and switch on the desk fan but not the heating",
     "the heating"),
    ("townhouse", "switch off the hall light and in twenty minutes turn off the landing light", "in twenty minutes"),
])
def test_a_clause_it_cannot_read_means_no_change_and_a_quote(world, instruction, quoted):
    episode, changed = _run(world, instruction)
    assert changed == {} and episode.status == "not_understood"
    assert episode.final_message.startswith(NOT_UNDERSTOOD_MARK) and f'"{quoted}"' in episode.final_message


def test_a_time_on_what_it_would_not_do_anyway_gets_that_answer():
    episode, changed = _run("garden-flat", "bake me some bread for tomorrow morning")
    assert changed == {} and episode.status == "done" and NOT_UNDERSTOOD_MARK not in episode.final_message
    assert "I can't" in episode.final_message


@pytest.mark.parametrize("tools", ["lares", "ha"])
def test_at_night_an_untrusted_voice_hears_the_house_rules_whatever_its_words(tools):
    from lares_kit.home.clock import Clock

    home = load_world("shared-house")  # its policy: at night nothing changes on an untrusted instruction
    home.clock = Clock.simulated(start="03:30")
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    extra = {"tool_set": tools} if tools != "lares" else {}
    episode = run_agent("crank every light up to the max and then flicker them", home, agent="intent-action",
                        model="offline", context=RunContext(source="letterbox"), **extra)
    assert {d: dev.state for d, dev in home.devices.items()} == before
    assert episode.status == "done" and "house rules" in episode.final_message, episode.final_message


@pytest.mark.parametrize("world, has, lacks", [
    ("townhouse", ["lights", "blinds", "locks", "robot"], ["window", "air condition", "sensor"]),
    ("smart-building", ["windows", "air conditioners", "sensors"], ["blinds", "kettle"]),
    ("lares-home", ["lights", "robot"], ["window", "thermostat", "air condition", "sensor"]),
])
def test_what_it_can_do_is_said_from_the_home_and_its_tools(world, has, lacks):
    for question in ("what can you do?", "Hi there"):
        episode, changed = _run(world, question)
        said = episode.final_message.lower()
        assert changed == {} and all(w in said for w in has) and not any(w in said for w in lacks), said


@pytest.mark.parametrize("instruction, want, status", [
    ("Mach den Fernseher lauter", {"wohnzimmer-fernseher": {"volume": 30}}, "done"),  # "den" is an article here
    ("Jeden Morgen um 6 Uhr das Licht im Flur einschalten", {}, "not_understood"),  # a time: never read
])
def test_a_german_home_reads_its_own_words(instruction, want, status):
    episode, changed = _run("wohnung", instruction)
    assert (changed, episode.status) == (want, status), episode.final_message
    assert "There is no den" not in episode.final_message
