"""The three scenarios of the Lares demo, each with a check on the true end state.

Used by ``lares demo``, ``benchmarks/bench_loops.py`` and the tests:

1. "turn on the light in the kitchen" -- direct control: the kitchen light
   ends on and nothing else changed;
2. "turn on the light for my dog" -- search: the light ends on in the room
   where Bruno truly is (the agent must find him with the robot); run twice,
   with Bruno where the world file puts him and moved by a seeded reset;
3. "set the office light depending on whether it's daytime" -- the agent
   must ask; the office light ends off if the answer says it is day, on if not.

A check reads only the Episode (its initial and final true state and the
questions asked), so it works on a saved episode too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..episode import Episode

__all__ = ["Scenario", "LARES_SCENARIOS", "kitchen_light_only", "light_where_dog_is", "office_light_by_answer",
           "says_daytime"]


@dataclass(frozen=True)
class Scenario:
    """An instruction, the user's replies (if it asks), a seed for the hidden things, and a check."""

    name: str
    instruction: str
    check: Callable[[Episode], bool]
    answers: tuple[str, ...] = ()
    seed: int | None = None  # None: items where the world file puts them
    world: str = "lares-home"


def _changed(ep: Episode) -> dict[str, dict[str, Any]]:
    # device id -> final state, for devices whose state differs from the start
    before, after = ep.initial_state.get("devices", {}), ep.final_state.get("devices", {})
    return {dev: state for dev, state in after.items() if before.get(dev) != state}


def kitchen_light_only(ep: Episode) -> bool:
    """The kitchen light is on and no other device changed.

    Args:
        ep: A finished Episode of "turn on the light in the kitchen" in lares-home, with its true states.

    Examples:
        >>> ep = Episode("x", "lares-home", "a", "m", status="done",
        ...              initial_state={"devices": {"kitchen-light": {"on": False}}},
        ...              final_state={"devices": {"kitchen-light": {"on": True}}})
        >>> kitchen_light_only(ep)
        True
    """
    return ep.status == "done" and _changed(ep) == {"kitchen-light": {"on": True}}


def light_where_dog_is(ep: Episode, dog: str = "bruno") -> bool:
    """A light is on in the room where the dog truly is, and the robot saw the dog there.

    Args:
        ep: A finished Episode with its true final state and its tool calls (what the robot saw).
        dog: The dog's item id in the world file.

    Examples:
        >>> ep = Episode("x", "lares-home", "a", "m", status="done",
        ...              initial_knowledge={"rooms": [{"id": "bedroom",
        ...                                           "devices": [{"id": "bedroom-light", "type": "light"}]}]},
        ...              final_state={"items": {"bruno": {"room": "bedroom"}},
        ...                           "devices": {"bedroom-light": {"on": True}}})
        >>> light_where_dog_is(ep)  # on, but nothing shows the robot looked
        False
    """
    room = ep.final_state.get("items", {}).get(dog, {}).get("room")
    lights = [d["id"] for r in ep.initial_knowledge.get("rooms", []) if r["id"] == room
              for d in r["devices"] if d["type"] == "light"]
    lit = any(ep.final_state.get("devices", {}).get(light, {}).get("on") is True for light in lights)
    seen = any(s.after.get("seen", {}).get(dog, {}).get("room") == room for s in ep.tool_calls)
    return ep.status == "done" and lit and seen


_DAY = re.compile(r"\b(yes|yeah|yep|day|daytime|daylight|sunny|morning|afternoon|light outside)\b", re.I)
_NIGHT = re.compile(r"\b(no|nope|night|evening|dark)\b", re.I)


def says_daytime(answer: str) -> bool | None:
    """Read a yes/no answer to "is it daytime?": True, False, or None if unclear.

    Args:
        answer: The user's reply, in their words ("No, it is night.").

    Examples:
        >>> says_daytime("Yes, it's a sunny day."), says_daytime("No, it is night."), says_daytime("hmm")
        (True, False, None)
    """
    night, day = bool(_NIGHT.search(answer)), bool(_DAY.search(answer))
    if night and day:  # "no, it's not daytime" -- the first yes/no word wins
        return _DAY.search(answer).start() < _NIGHT.search(answer).start()
    return True if day else False if night else None


def office_light_by_answer(ep: Episode) -> bool:
    """The agent asked; the office light is off if the answer says daytime, on if not; nothing else changed.

    Args:
        ep: A finished Episode of the daytime scenario: its question steps hold the user's answers.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> from lares_kit.tools.users import ScriptedUser
        >>> ep = run_agent("set the office light depending on whether it's daytime", load_world("lares-home"),
        ...                user=ScriptedUser(answers=["Yes, it's sunny."]))
        >>> office_light_by_answer(ep)
        True
    """
    answers = [s.answer for s in ep.steps if getattr(s, "kind", "") == "question" and s.answer]
    if ep.status != "done" or not answers:
        return False
    day = says_daytime(answers[-1])
    if day is None:
        return False
    changed = _changed(ep)
    office_on = ep.final_state.get("devices", {}).get("office-light", {}).get("on")
    return office_on is (not day) and set(changed) <= {"office-light"}


LARES_SCENARIOS: list[Scenario] = [
    Scenario("kitchen", "turn on the light in the kitchen", kitchen_light_only),
    Scenario("dog", "turn on the light for my dog", light_where_dog_is),
    # seed 5 hides Bruno in the office, the room farthest from the robot's hallway
    Scenario("dog-moved", "turn on the light for my dog", light_where_dog_is, seed=5),
    Scenario("daytime", "set the office light depending on whether it's daytime", office_light_by_answer,
             answers=("No, it's night time here.",)),
]
