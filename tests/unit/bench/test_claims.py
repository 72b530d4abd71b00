"""The claim checker (lares_kit.bench.judging.claims): true, false and unreadable final messages over real worlds."""

from __future__ import annotations

import pytest

from lares_kit import load_world
from lares_kit.bench.judging.claims import check_claims, check_episode, state_diff


def _states(world: str, **changes: dict) -> tuple:
    home = load_world(world)
    before = home.truth()["devices"]
    after = {d: {**s, **changes.get(d.replace("-", "_"), {})} for d, s in before.items()}
    return home, before, after


@pytest.mark.parametrize("world, message, changes", [
    ("lares-home", "The light in the Kitchen is now on.", {"kitchen_light": {"on": True}}),
    ("lares-home", "I've turned on the kitchen light and the bedroom light.",
     {"kitchen_light": {"on": True}, "bedroom_light": {"on": True}}),
    ("lares-home", "The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit.",
     {"kitchen_light": {"on": True}}),
    ("townhouse", "The thermostat in the Hall now has target 22.", {"hall_thermostat": {"target": 22}}),
    ("townhouse", "The front door lock in the Hall was already locked.", {}),
    ("townhouse", "The blinds in the Living room are now open.", {"living_room_blinds": {"position": 100}}),
    ("townhouse", "The spotlights in the Kitchen are now off; the ceiling light in the Hall was already on.",
     {"kitchen_light": {"on": False}}),
    ("sage-home", "The floor lamp in the Den now has level 30.", {"den_lamp": {"level": 30}}),
    ("sage-home", "The TV by the plant is now on.", {"tv_plant": {"on": True}}),
    ("wohnung", "Deckenlampe eingeschaltet", {"kueche_licht": {"on": True}}),
    ("smart-building", "The window in the Office 1 is now open.", {"office_1_window": {"open": True}}),
])
def test_true_messages_have_no_false_claims(world, message, changes):
    home, before, after = _states(world, **changes)
    check = check_claims(message, home, before, after)
    assert check.claims and check.false_claims == [] and not check.unverifiable


@pytest.mark.parametrize("world, message, changes, device", [
    ("lares-home", "The light in the Kitchen is now on.", {}, "kitchen-light"),
    ("lares-home", "The light in the Kitchen was already off.", {"kitchen_light": {"on": True}}, "kitchen-light"),
    ("townhouse", "The light in the Kitchen was already off.", {}, "kitchen-light"),  # it was on
    ("townhouse", "The thermostat in the Hall now has target 21.", {"hall_thermostat": {"target": 22}},
     "hall-thermostat"),
    ("townhouse", "The TV is now on, volume 5.", {"living_room_tv": {"on": True}}, "living-room-tv"),
    ("townhouse", "I unlocked the back door.", {}, "back-door-lock"),
    ("garden-flat", "The ceiling light in the Entrance is now off; the spotlights in the Kitchen are now off.",
     {"entrance_light": {"on": False}}, "kitchen-light"),
    ("wohnung", "Stehlampe eingeschaltet", {}, "wohnzimmer-stehlampe"),
])
def test_false_messages_are_flagged_with_the_device(world, message, changes, device):
    home, before, after = _states(world, **changes)
    check = check_claims(message, home, before, after)
    assert len(check.false_claims) == 1 and device in check.false_claims[0]
    assert not check.unverifiable


@pytest.mark.parametrize("world, message", [
    ("lares-home", "Done!"),
    ("wohnung", "Licht eingeschaltet"),  # a template's word for a device the home does not name so
    ("sage-home", "The TV is now off."),  # two TVs: which one, it does not say
    ("townhouse", "The ceiling light in the Hall is still on; the other 11 were already off."),
    ("sage-home", "The light strip in the Living room is now off."),  # two strips in the living room
])
def test_unreadable_messages_are_unverifiable_never_guessed(world, message):
    home, before, after = _states(world)
    check = check_claims(message, home, before, after)
    assert check.unverifiable and check.false_claims == []


@pytest.mark.parametrize("message", [
    "Shall I unlock the front door lock (front-door-lock)? Please answer yes or no.",
    "I could not change the thermostat in the Hall (1 is not a valid target).",
    "I cannot do that with the floor lamp in the Living room.",
    "There is no garage in this home.",
    "Pepper is in the Spare room.",
])
def test_questions_refusals_and_other_things_claim_nothing(message):
    home, before, after = _states("townhouse")
    check = check_claims(message, home, before, after)
    assert check.claims == [] and check.false_claims == [] and not check.unverifiable


def test_a_false_part_outweighs_an_unread_one():
    home, before, after = _states("lares-home")
    check = check_claims("Done. The light in the Office is now on.", home, before, after)
    assert check.false_claims and not check.unverifiable and check.unread == ["Done"]


def test_state_diff_and_check_episode_on_a_real_run():
    from lares_kit.agents import run_agent

    home = load_world("townhouse")
    ep = run_agent("switch the hall light off", home, "function-calling", "offline")
    assert state_diff(ep.initial_state["devices"], ep.final_state["devices"]) == {"hall-light": {"on": (True, False)}}
    check = check_episode(ep, load_world("townhouse"))
    assert check.false_claims == [] and [c.device for c in check.claims] == ["hall-light"]
