"""Exercise 16, what goes into the prompt of a big building.

Notebook: ``exercises/16_prompt_budget.ipynb`` (for ``notebooks/16_scaling_up``).
The checks build the same generated building as the notebook (1,000
devices, seed 3, :func:`~lares_kit.home.generator.generate_home`) and count tokens
with :func:`~lares_kit.models.count_tokens`, as the benchmarks do.
"""

from __future__ import annotations

import functools
from typing import Any

from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call

__all__ = ["q1", "q2", "q3", "building", "bind", "____", "PLACEHOLDER", "CHOICES"]

CHOICES = ("full", "compact", "retrieval")  # q3 tries them in this order: the most informative first


@functools.lru_cache(maxsize=None)
def building() -> Any:
    """The exercise's building: 200 rooms, 1,000 devices (the same every time)."""
    from ....home.generator import generate_home

    return generate_home(devices=1000, seed=3)


@functools.lru_cache(maxsize=None)
def _home(world: str) -> Any:
    from ....home.worlds import load_world

    return building() if world == "building" else load_world(world)


def _tokens(world: str, fmt: str, instruction: str) -> int:
    from ....knowledge.modes import knowledge_text
    from ....models import count_tokens

    return count_tokens(knowledge_text(_home(world), fmt, instruction)[1])


def _test_tokens(tokens_for) -> str:
    cases = [("lares-home", "full", ""), ("lares-home", "compact", ""),
             ("building", "full", "turn on the light in office 12"),
             ("building", "retrieval", "turn on the light in office 12")]
    for world, fmt, instruction in cases:
        case = f"{world}, {fmt!r}, {instruction!r}"
        got, want = call(tokens_for, _home(world), fmt, instruction, case=case), _tokens(world, fmt,
                                                                                               instruction)
        if got != want:
            raise Incorrect(f"For {case}: {want} tokens, but your function returned {got!r}. Count the JSON text "
                            "(the second item knowledge_text returns), not the note.")
    full, retrieval = (_tokens("building", s, "turn on the light in office 12") for s in ("full", "retrieval"))
    return (f"Right. In the 1,000-device building the full dump is {full:,} tokens; retrieval sends {retrieval:,}, "
            f"{full / retrieval:.0f} times fewer.")


# (world, instruction, the room it names, rooms it does not name that a careless match picks up)
ROOM_CASES = [("building", "turn on the light in office 12", "office-12", ["office-1", "office-2"]),
              ("building", "is the window in meeting room 5 open?", "meeting-room-5", ["office-5"]),
              ("building", "set the thermostat in office 40 to 21", "office-40", ["office-4", "office-21"]),
              ("lares-home", "turn on the light in the kitchen", "kitchen", ["lounge"])]
MAX_ROOMS = 10


def _test_rooms(my_rooms) -> str:
    sizes = []
    for world, instruction, room, not_named in ROOM_CASES:
        home = _home(world)
        got = call(my_rooms, home, instruction, case=repr(instruction))
        if not isinstance(got, (list, tuple, set)):
            raise Incorrect(f"For {instruction!r}: return a list of room ids; got {type(got).__name__}.")
        unknown = [r for r in got if r not in home.graph]
        if unknown:
            raise Incorrect(f"For {instruction!r}: {unknown[:3]} are not room ids of {world} (ids look like "
                            f"{list(home.graph)[:3]}).")
        if room not in got:
            raise Incorrect(f"For {instruction!r}: the room it names, {room!r}, is not in your list {list(got)[:8]}.")
        extra = [r for r in not_named if r in got and r in home.graph]
        if extra:
            raise Incorrect(f"For {instruction!r}: {extra} is in your list, but the instruction does not name it "
                            f"({home.graph.nodes[extra[0]]['name']!r} is not {home.graph.nodes[room]['name']!r}).")
        if len(got) > MAX_ROOMS:
            raise Incorrect(f"For {instruction!r}: {len(got)} rooms -- a prompt with that many does not shrink. "
                            f"Keep at most {MAX_ROOMS}: the rooms the instruction names.")
        sizes.append(len(got))
    return (f"Right: each instruction's room, and no other -- {max(sizes)} of {len(building().graph)} rooms at most. "
            "lares_kit's retrieval adds the rooms around the robot and on the way there.")


def _fitting(world: str, instruction: str, budget: int) -> list[str]:
    """The formats whose text is at most ``budget`` tokens, richest first (the order of CHOICES)."""
    return [s for s in CHOICES if _tokens(world, s, instruction) <= budget]


def _test_fit(richest_that_fits) -> str:
    cases = [("lares-home", "turn on the light in the kitchen", 4000),
             ("lares-home", "turn on the light in the kitchen", 300),
             ("building", "turn on the light in office 12", 100_000),
             ("building", "turn on the light in office 12", 50_000),
             ("building", "turn on the light in office 12", 8_000),
             ("building", "turn on the light in office 12", 100)]
    picks = []
    for world, instruction, budget in cases:
        case = f"{world}, budget {budget:,}"
        fits = _fitting(world, instruction, budget)
        got, want = call(richest_that_fits, _home(world), instruction, budget, case=case), (fits or [None])[0]
        if got == want:
            picks.append(f"{budget:,} -> {want}")
            continue
        if want is None:
            why = " Nothing fits: return None."
        elif got in fits:
            why = (f" {got!r} fits too, but it tells the model less: of the formats that fit ({', '.join(fits)}), "
                   "return the richest, the first in CHOICES.")
        elif got in CHOICES:
            why = f" {got!r} does not fit: its text is {_tokens(world, got, instruction):,} tokens."
        else:
            why = f" Return one of {list(CHOICES)} or None."
        raise Incorrect(f"For {case}: the richest knowledge that fits is {want!r}, but your function returned "
                        f"{got!r}.{why}")
    return "Right: " + "; ".join(picks) + ". A budget is a context window: the model's, minus the rest of the prompt."


q1 = Problem("Count a prompt", ("tokens_for",), _test_tokens, hints=[
    "knowledge_text(home, fmt, instruction) returns (note, text); count_tokens(text) counts the text.",
    "def tokens_for(home, fmt, instruction):\n"
    "    return count_tokens(knowledge_text(home, fmt, instruction)[1])",
])
q2 = Problem("The rooms an instruction names", ("my_rooms",), _test_rooms, hints=[
    "Each room has a name: home.graph.nodes[room_id]['name'], e.g. 'Office 12'. Compare words, not substrings: "
    "'Office 1' is inside 'office 12'.",
    "Keep a room when its lower-cased name appears in the lower-cased instruction as whole words: "
    "re.search(rf'\\b{re.escape(name)}\\b', text) -- \\b stops 'office 1' matching inside 'office 12'.",
])
q3 = Problem("The richest prompt that fits", ("richest_that_fits",), _test_fit, hints=[
    "CHOICES is ordered richest first (full, compact, retrieval): try them in that order and return the first "
    "whose tokens_for(home, fmt, instruction) is at most the budget.",
    "After the loop, nothing fitted: return None.",
])
EXERCISE = Exercise("16_prompt_budget", [q1, q2, q3])
bind = EXERCISE.bind
