"""The knowledge-free oracle (lares_kit.bench.judging.search_oracle): the best an agent can do not knowing
where things are."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction

import pytest

from lares_kit import load_world
from lares_kit.bench.judging.oracle import oracle_steps
from lares_kit.bench.judging.search_oracle import hidden_items, knowledge_free_oracle
from lares_kit.bench.suites.tasks import Expect, Setup, Task, UserScript, load_suite, load_tasks, task_home
from lares_kit.home.generator import generate_home
from lares_kit.home.worlds import parse_world

# The Lares home: the robot starts in the hallway, the only lit room. The lounge, kitchen and bedroom open off
# the hallway; the office only off the lounge. Looking in the hallway costs 1 (look); in a room next to the
# robot 3 (move, light, look). The dog is in each of the five rooms with probability 1/5.


def suite_task(task_id: str) -> Task:
    return next(t for t in load_suite("lares-home") if t.id == task_id)


def test_find_dog_by_hand():
    # "Find my dog" (seen: bruno; lights may change). Order hallway, lounge, office, kitchen, bedroom; the cost
    # when the dog is in each room (everything paid so far, then the calls in that room):
    #   hallway  1                              = 1   (look)
    #   lounge   1 + (1 move + 1 light + 1 look) = 4
    #   office   4 + (1 + 1 + 1)                 = 7
    #   kitchen  7 + (3 moves office-lounge-hallway-kitchen + 1 + 1) = 12
    #   bedroom 12 + (2 moves kitchen-hallway-bedroom + 1 + 1)       = 16
    # Once seen, nothing is left but the halt: expected = (1 + 4 + 7 + 12 + 16) / 5 + 1 = 40/5 + 1 = 9.
    # (Hallway, kitchen, bedroom, lounge, office ties: 1 + 4 + 8 + 12 + 15 = 40; starting in the kitchen does
    # not: 3 + 5 + 8 + 12 + 15 = 43.) Even the last room must be looked in -- "seen" asks for it.
    # Worst case: every room visited and looked in: 5 looks, 4 lights, and a walk from the hallway over the
    # four exits of this tree, each walked twice except along the longest branch (hallway-lounge-office): 8 - 2 =
    # 6 moves. 15 calls + the halt = 16: hallway, kitchen, bedroom, lounge, office (the order above has 16 + 1).
    found = knowledge_free_oracle(suite_task("lh-find-dog"), load_world("lares-home"))
    assert found.expected_fraction == Fraction(9) and found.expected == 9.0
    assert found.worst == 16 and found.exact and found.policy == "search"
    assert found.rooms == ("lounge", "hallway", "kitchen", "bedroom", "office") and found.items == ("bruno",)
    assert found.order == ("hallway", "lounge", "office", "kitchen", "bedroom")
    assert found.worst_order == ("hallway", "kitchen", "bedroom", "lounge", "office")
    # knowing where he is: hallway 1+1, kitchen, bedroom, lounge 3+1, office 4+1 -> (2 + 4 + 4 + 4 + 5) / 5
    assert found.omniscient_mean == 3.8
    assert found.omniscient == oracle_steps(suite_task("lh-find-dog"), load_world("lares-home"))


def test_light_for_dog_by_hand():
    # "Turn on the light for my dog" (lit: bruno, and name his room). The omniscient oracle: bedroom light, halt
    # = 2. Without knowing: the last room needs no visit -- he must be there -- only its light.
    #   hallway  1 (look); kitchen 1 + 3 = 4; lounge 4 + (2 moves + light + look) = 8; office 8 + 3 = 11;
    #   bedroom  11 + 1 (its light, from afar) = 12.
    # Expected = (1 + 4 + 8 + 11 + 12) / 5 + 1 (halt) = 36/5 + 1 = 41/5 = 8.2. Worst: 12 + 1 = 13 -- leaving a
    # dark room for last is best; leaving the office would cost 5 moves instead of 4, the hallway 2 more lights.
    found = knowledge_free_oracle(suite_task("lh-light-for-dog"), load_world("lares-home"))
    assert found.expected_fraction == Fraction(41, 5)
    assert found.expected == pytest.approx(8.2)
    assert found.worst == 13 and found.exact and found.omniscient == 2
    assert found.order == ("hallway", "kitchen", "lounge", "office", "bedroom")


def test_lights_that_must_go_back_off_by_hand():
    # No allow_changes: every light switched on to look must be switched off again, found there or not: a dark
    # room costs 4 (move, light, look, light off). Hallway, lounge, office, kitchen, bedroom:
    # 1, 1+4 = 5, 5+4 = 9, 9+(3 moves+3) = 15, 15+(2 moves+3) = 20 -> 50/5 + 1 = 11; worst 1+4+5+5+4 + 1 = 20.
    task = Task("t", "demo", "lares-home", "search", "Find my dog.", setup=Setup(shuffle=True),
                expect=Expect(seen=["bruno"]))
    found = knowledge_free_oracle(task, load_world("lares-home"))
    assert (found.expected_fraction, found.worst, found.exact) == (Fraction(11), 20, True)


SUITE_TASKS = [t for t in load_tasks() if not t.events]
HOMES: dict[str, object] = {}


def home_of(task: Task):
    if task.world not in HOMES:
        HOMES[task.world] = task_home(task)
    return HOMES[task.world]


def test_bounds_for_every_search_task_of_every_suite():
    # omniscient_mean <= expected is a theorem (knowing more never hurts); omniscient <= expected holds here
    # because a search costs far more than any one placement (it is not a theorem: a seed can hide the dog
    # far away). worst >= both: it covers every placement, this seed's too.
    searched = []
    for task in SUITE_TASKS:
        for seed in (0, 1):
            found = knowledge_free_oracle(task, home_of(task), seed)
            if found is None:
                assert not hidden_items(task, home_of(task))
                break
            searched.append(task.id)
            assert found.omniscient_mean <= found.expected <= found.worst, task.id
            assert found.omniscient <= found.expected and found.omniscient <= found.worst, task.id
            assert found.exact == (len(found.rooms) <= 12), task.id
    assert {"lh-find-dog", "lh-light-for-dog", "gf-where-cat", "th-where-pepper"} <= set(searched)
    # a search, or a changing home where the thing sought moves while the robot looks
    assert {t.category for t in SUITE_TASKS if t.id in searched} == {"search", "changing-home"}


@pytest.mark.parametrize("suite", ["lares-home", "garden-flat", "townhouse"])
def test_omniscient_mean_is_the_mean_of_oracle_steps(suite):
    # The module prices "go and look" without a search of its own: it must agree with the real oracle.
    for task in load_suite(suite):
        found = knowledge_free_oracle(task, home_of(task))
        if found is None:
            continue
        item = found.items[0]
        steps = [oracle_steps(replace(task, setup=replace(task.setup, placements={item: room})), home_of(task))
                 for room in found.rooms]
        assert found.omniscient_mean == pytest.approx(sum(steps) / len(steps)), task.id


def test_none_without_anything_hidden():
    world = load_world("lares-home")
    assert knowledge_free_oracle(suite_task("lh-kitchen-on"), world) is None
    assert hidden_items(suite_task("lh-kitchen-on"), world) == []


def test_a_user_who_says_where_the_dog_is():
    # Asked "Where is Bruno?", this user names his room: ask, then do what the omniscient oracle does.
    # 1 + the mean omniscient 3.8 = 4.8 (worst 1 + 5, the office), much less than searching (9).
    task = replace(suite_task("lh-find-dog"), user=UserScript(answers=[("where", "He's in the {bruno.room}.")]))
    found = knowledge_free_oracle(task, load_world("lares-home"))
    assert (found.policy, found.expected_fraction, found.worst, found.order) == ("ask", Fraction(24, 5), 6, ())
    # a task that must ask anyway has paid for that question already
    must = replace(task, expect=replace(task.expect, must_ask=["where"]))
    found = knowledge_free_oracle(must, load_world("lares-home"))
    assert (found.policy, found.expected_fraction, found.omniscient_mean) == ("ask", Fraction(24, 5), 4.8)
    # a user who always says the kitchen does not tell; a task that forbids questions does not ask
    wrong = replace(task, user=UserScript(answers=[("where", "In the kitchen, I think.")]))
    shy = replace(task, expect=replace(task.expect, must_not_ask=["."]))
    for other in (wrong, shy):
        assert knowledge_free_oracle(other, load_world("lares-home")).expected == 9.0


def test_lit_alone_can_light_every_room():
    # Only "lit" names the dog and every light may change: switch on the four dark rooms, halt = 5, any placement.
    task = Task("t", "demo", "lares-home", "search", "Light for Bruno.", setup=Setup(shuffle=True),
                expect=Expect(lit=["bruno"], allow_changes=["*-light"]))
    found = knowledge_free_oracle(task, load_world("lares-home"))
    assert (found.policy, found.expected, found.worst) == ("light-all", 5.0, 5)


def test_two_items_sought_together():
    world = load_world("lares-home")
    expect = Expect(seen=["bruno", "sally"], allow_changes=["*-light"])
    task = Task("t", "demo", "lares-home", "search", "Find everyone.", setup=Setup(shuffle=True), expect=expect)
    found = knowledge_free_oracle(task, world)
    assert found.items == ("bruno", "sally") and not found.exact  # an order policy: an upper bound
    # finding both costs at least finding the dog alone (9), and the omniscient mean is the real oracle's
    assert 9 <= found.expected <= found.worst
    steps = [oracle_steps(Task("t", "demo", "lares-home", "search", "x",
                               setup=Setup(placements={"bruno": a, "sally": b}), expect=expect), world)
             for a in found.rooms for b in found.rooms]
    assert found.omniscient_mean == pytest.approx(sum(steps) / len(steps))
    assert found.omniscient_mean <= found.expected


def random_home(rooms: int, seed: int):
    """A home of ``rooms`` rooms, a random tree plus a few extra exits (loops), some lights on, a dog."""
    rng = random.Random(seed)
    ids = [f"room-{i}" for i in range(rooms)]
    edges = {tuple(sorted((ids[i], ids[rng.randrange(i)]))) for i in range(1, rooms)}
    while len(edges) < rooms - 1 + rooms // 3:
        edges.add(tuple(sorted(rng.sample(ids, 2))))
    return parse_world({
        "id": f"random-{rooms}-{seed}", "name": "Random",
        "rooms": [{"id": r, "name": f"Room {i}", "exits": sorted({b for a, b in edges if a == r}
                                                                  | {a for a, b in edges if b == r})}
                  for i, r in enumerate(ids)],
        "devices": [{"id": f"{r}-light", "name": "Light", "type": "light", "room": r,
                     "state": {"on": rng.random() < 0.3}} for r in ids],
        "robot": {"id": "robot", "name": "Robot", "room": ids[0]},
        "items": [{"id": "dog", "name": "Rex", "type": "dog", "room": ids[-1]}]}, source="<random>")


def test_heuristic_is_close_to_exact_on_mid_size_homes():
    homes = [random_home(rooms, seed) for rooms in (8, 9, 10) for seed in range(4)]
    homes += [generate_home(rooms=rooms, seed=seed) for rooms, seed in ((9, 1), (10, 2))]
    for home in homes:
        item = next(iter(home.items))
        for expect in (Expect(seen=[item], allow_changes=["*"]),
                       Expect(lit=[item], mentions=[f"{{{item}.room}}"], allow_changes=["*"])):
            task = Task("t", "demo", home.id, "search", "Find it.", setup=Setup(shuffle=True), expect=expect)
            exact = knowledge_free_oracle(task, home)
            guess = knowledge_free_oracle(task, home, exact_rooms=0)
            assert exact.exact and not guess.exact
            # an upper bound (a real policy achieves it), within a few percent
            assert exact.expected <= guess.expected <= exact.expected * 1.03, home.id
            assert exact.worst <= guess.worst <= exact.worst * 1.10, home.id


def test_the_biggest_world_uses_the_heuristic():
    world = load_world("smart-building")  # 15 rooms: above EXACT_ROOMS
    task = Task("t", "demo", "smart-building", "search", "Where is the parcel?", setup=Setup(shuffle=True),
                expect=Expect(seen=["parcel"], mentions=["{parcel.room}"], allow_changes=["*"]))
    found = knowledge_free_oracle(task, world)
    assert not found.exact and len(found.rooms) == 15
    assert found.omniscient_mean <= found.expected <= found.worst
    assert knowledge_free_oracle(task, world) == found  # deterministic


def test_deterministic_and_the_world_untouched():
    world = load_world("townhouse")
    before = world.truth()
    task = next(t for t in load_suite("townhouse") if t.id == "th-where-pepper")
    assert knowledge_free_oracle(task, world, 3) == knowledge_free_oracle(task, world, 3)
    assert world.truth() == before
