"""Exercise 06, the search order: read a search from its Episode, choose the next room, count its cost.

Notebook: ``exercises/06_search_order.ipynb`` (after ``notebooks/06_robot_search.ipynb``).
The searcher of the questions is the one the offline model plays: nearest
unsearched room first, ties to the room that comes first in the world file
(``list(graph.nodes)``); move one exit at a time, switch the light on in a
dark room, look. Its cost is counted in tool calls, as the benchmark counts
it against the oracle (:mod:`lares_kit.bench.judging.oracle`).

The checks run the offline model themselves (``model="offline"``) and
compare with answers worked out here, never with the model's own output, so
their verdicts do not move when the model's rules do.
"""

from __future__ import annotations

import copy
from functools import lru_cache

import networkx as nx

from ....agents import run_agent
from ....episode import Episode
from ....episode_steps import ToolCall
from ....home.worlds import load_world
from ....tools.toolbox import ToolError, move_robot
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]

FIND = {"lares-home": "turn on the light for my dog", "garden-flat": "turn on the light for my cat"}


# ------------------------------------------------------------ the episodes
@lru_cache(maxsize=None)
def _episode_data(world: str, seed: int | None) -> dict:
    home = load_world(world)
    home.reset(seed=seed)
    return run_agent(FIND[world], home, model="offline").to_dict()


def _episode(world: str, seed: int | None) -> Episode:
    return Episode.from_dict(copy.deepcopy(_episode_data(world, seed)))  # a fresh copy: answers may change it


def _with_failed_move() -> Episode:
    # The dog search with one more call after the first look: a move to a room that is not next door.
    episode = _episode("lares-home", None)
    home = load_world("lares-home")
    try:
        move_robot(home, "office")
    except ToolError as exc:
        error = f"Error: {exc}"
    else:  # pragma: no cover - the Lares home's office is two rooms from the hallway
        raise AssertionError("expected the move to fail")
    first = episode.tool_calls[0]
    failed = ToolCall("move_robot", {"destination_room_id": "office"}, error, ok=False, turn=first.turn,
                      after={**copy.deepcopy(first.after), "devices": {}})
    episode.steps.insert(episode.steps.index(first) + 1, failed)
    return episode


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _path(episode: Episode) -> list[str]:
    path = [episode.initial_state["robot"]]
    for step in episode.tool_calls:
        if step.tool == "move_robot" and step.ok:
            path.append(step.arguments["destination_room_id"])
    return path


# --------------------------------------------------------------------- q1
def _test_path(robot_path) -> str:
    cases = [("the dog found in the hallway (lares-home, seed 1)", lambda: _episode("lares-home", 1)),
             ("the dog search of notebook 06 (lares-home)", lambda: _episode("lares-home", None)),
             ("the cat search of the garden flat, seed 7", lambda: _episode("garden-flat", 7)),
             ("the dog search with a failed move after the first look", _with_failed_move)]
    for case, make in cases:
        episode = make()
        got = call(robot_path, episode, case=case)
        want = _path(episode)
        if not isinstance(got, list):
            raise Incorrect(f"For {case}, return a list of room ids; got {type(got).__name__} {got!r}.")
        if got == want:
            continue
        tried = [episode.initial_state["robot"]] + [(s.arguments or {}).get("destination_room_id")
                                                      for s in episode.tool_calls if s.tool == "move_robot"]
        if got == tried:
            raise Incorrect(f"For {case}, your path includes a move that failed (ok=False: 'The Office is not next "
                            "to the Hallway'). The robot did not go there: skip calls whose .ok is False.")
        if got == want[1:]:
            raise Incorrect(f"For {case}, the path should begin where the robot started, "
                            f"{want[0]!r} (episode.initial_state['robot']), before the first move.")
        if len(got) == len(episode.tool_calls) + 1 or len(got) == len(episode.tool_calls):
            raise Incorrect(f"For {case}, you have one room per tool call ({len(got)}); the path has one room per "
                            f"move, {len(want)} in all: {' -> '.join(want)}.")
        expect_equal(got, want, case)
    return "You read the path from the record alone: start, then every move that worked."


# --------------------------------------------------------------------- q2
def _next(graph: nx.Graph, room: str, searched: set[str]) -> str | None:
    moves = nx.single_source_shortest_path_length(graph, room)
    todo = [r for r in graph.nodes if r not in searched and r in moves]
    return min(todo, key=lambda r: moves[r]) if todo else None  # min keeps the first of equals: file order


def _order(graph: nx.Graph, start: str, first: tuple[str, ...] = ()) -> list[str]:
    """Every room, in the order the nearest-first searcher looks in them, after the rooms in ``first``."""
    order, room = list(first), first[-1] if first else start
    while (room := _next(graph, room, set(order))) is not None:
        order.append(room)
    return order


def _test_next(next_room) -> str:
    lares, garden, town = (load_world(w).graph for w in ("lares-home", "garden-flat", "townhouse"))
    cases = [
        (lares, "lares-home", "hallway", set()),
        (lares, "lares-home", "hallway", {"hallway"}),
        (lares, "lares-home", "office", {"hallway", "lounge", "office"}),
        (garden, "garden-flat", "living-room", {"entrance", "living-room"}),
        (garden, "garden-flat", "kitchen", {"entrance", "living-room", "dining-room", "kitchen"}),
        (town, "townhouse", "landing", {"hall", "stairs", "landing", "study"}),
        (town, "townhouse", "utility", set(town.nodes) - {"spare-room", "bathroom"}),
        (lares, "lares-home", "bedroom", set(lares.nodes)),
    ]
    for graph, world, room, searched in cases:
        case = (f"the robot in the {room} of {world}, searched: "
                f"{', '.join(r for r in graph.nodes if r in searched) or 'nothing yet'}")
        got = call(next_room, graph, room, set(searched), case=case)
        want = _next(graph, room, searched)
        if got == want:
            continue
        if want is None:
            raise Incorrect(f"For {case}, every room is searched, so return None; got {got!r}.")
        if got is None:
            raise Incorrect(f"For {case}, you returned None, but {want!r} is not searched yet.")
        if got not in graph:
            raise Incorrect(f"For {case}, {got!r} is not a room of {world}. Rooms: {', '.join(graph.nodes)}.")
        if got in searched:
            raise Incorrect(f"For {case}, {got!r} was already searched; pick a room not in searched.")
        moves = nx.single_source_shortest_path_length(graph, room)
        if moves[got] > moves[want]:
            raise Incorrect(f"For {case}, {got!r} is {_n(moves[got], 'move')} away, but {want!r} is only "
                            f"{_n(moves[want], 'move')} away.")
        raise Incorrect(f"For {case}, {got!r} and {want!r} are both {_n(moves[want], 'move')} away. "
                        "Ties go to the room that comes first in list(graph.nodes) -- the world file's order -- "
                        f"which is {want!r}.")
    for world in ("lares-home", "garden-flat", "townhouse"):
        home = load_world(world)
        order, room = [], home.robot.room
        for _ in range(len(home.graph) + 1):
            room = call(next_room, home.graph, room, set(order), case=f"a whole search of {world}")
            if room is None:
                break
            order.append(room)
        expect_equal(order, _order(home.graph, home.robot.room), f"a whole search of {world} from the "
                     f"{home.robot.room}")
    return "Nearest unsearched room first, ties in the world file's order: the offline model's search."


# --------------------------------------------------------------------- q3
def _calls(home, order: list[str], hidden: str) -> tuple[int, int, int, int]:
    """(moves, lights, looks, halt) for the searcher going through ``order`` until it looks in ``hidden``."""
    dist = dict(nx.all_pairs_shortest_path_length(home.graph))
    moves = lights = looks = 0
    room = home.robot.room
    for target in order:
        moves += dist[room][target]
        lights += 0 if home.is_lit(target) else 1
        looks += 1
        room = target
        if target == hidden:
            break
    return moves, lights, looks, 1


def _wrong_counts(home, order: list[str], hidden: str) -> dict[int, str]:
    # What the common slips give: count -> what was forgotten.
    moves, lights, looks, halt = _calls(home, order, hidden)
    rooms = order[: order.index(hidden) + 1]
    one_hop = sum(1 for a, b in zip([home.robot.room, *rooms], rooms) if a != b)
    from_start = sum(nx.shortest_path_length(home.graph, home.robot.room, r) for r in rooms)
    slips = {moves + lights + looks: "the final halt (every episode ends with one, and the benchmark counts it)",
             moves + len(rooms) + looks + halt: "that a lit room needs no set_light (home.is_lit)",
             one_hop + lights + looks + halt: "that one move_robot crosses one exit: walking between two rooms "
                                              "takes as many moves as the shortest route has exits",
             from_start + lights + looks + halt: "that each walk starts where the robot is now (the room searched "
                                                 "last), not where it began"}
    slips.pop(moves + lights + looks + halt, None)
    return slips


def _test_calls(search_calls) -> str:
    from ....bench.judging.oracle import oracle_steps
    from ....bench.suites.tasks import Expect, Setup, Task

    lares, garden, town = (load_world(w) for w in ("lares-home", "garden-flat", "townhouse"))
    lares_order, garden_order = _order(lares.graph, "hallway"), _order(garden.graph, "entrance")
    cases = [(lares, "lares-home", ["hallway"], "hallway", "the dog in the hallway, order ['hallway']"),
             (lares, "lares-home", lares_order, "bedroom", "the dog search of notebook 06 (dog in the bedroom)"),
             (lares, "lares-home", lares_order, "kitchen", "the Lares home's nearest-first order, dog in the kitchen"),
             (garden, "garden-flat", garden_order, "corridor", "the garden flat's nearest-first order, cat in the "
                                                               "corridor (seed 1)"),
             (garden, "garden-flat", garden_order, "conservatory", "the garden flat's nearest-first order, cat in "
                                                                   "the conservatory"),
             (town, "townhouse", ["living-room", "kitchen", "landing", "spare-room"], "spare-room",
              "the townhouse, order living-room, kitchen, landing, spare-room")]
    for home, world, order, hidden, case in cases:
        got = call(search_calls, home, list(order), hidden, case=case)
        parts = _calls(home, order, hidden)
        want = sum(parts)
        if isinstance(got, bool) or not isinstance(got, int):
            raise Incorrect(f"For {case}, return the number of tool calls as an int; got {type(got).__name__} {got!r}.")
        if got != want:
            slip = _wrong_counts(home, order, hidden).get(got)
            why = f" It looks as if you forgot {slip}." if slip else ""
            raise Incorrect(f"For {case}, expected {want} calls ({_n(parts[0], 'move')}, {_n(parts[1], 'light')}, "
                            f"{_n(parts[2], 'look')}, 1 halt) but got {got}.{why}")
    # The oracle knows where the dog is: its plan is the search whose order is just that room.
    for room in lares.graph:
        task = Task(f"find-in-{room}", "exercise-06", "lares-home", "search", "Find Bruno.",
                    setup=Setup(placements={"bruno": room}), expect=Expect(seen=["bruno"], allow_changes=["*-light"]))
        best = oracle_steps(task, lares)
        case = f"order [{room!r}] with the dog in the {room} (what the oracle does)"
        got = call(search_calls, lares, [room], room, case=case)
        if got != best:
            raise Incorrect(f"For {case}, lares_kit.bench.judging.oracle needs {best} calls, and your count is {got}.")
    return "Your count matches the real searches, and the oracle's when the order starts at the right room."


q1 = Problem("The robot's path", ("robot_path",), _test_path, hints=[
    "episode.tool_calls lists every call, oldest first; a move is a call whose .tool is 'move_robot', and its "
    ".arguments['destination_room_id'] says where to.",
    "A call can fail: then .ok is False and the robot stayed put. Begin the list with "
    "episode.initial_state['robot'].",
])
q2 = Problem("The next room to search", ("next_room",), _test_next, hints=[
    "nx.single_source_shortest_path_length(graph, robot_room) gives {room: moves} for every room, the robot's "
    "own room included (0 moves).",
    "Keep the rooms not in searched, in list(graph.nodes) order; min(rooms, key=...) returns the first of equal "
    "rooms, which is the tie rule. Return None when no room is left.",
])
q3 = Problem("What a search costs", ("search_calls",), _test_calls, hints=[
    "Walk through order from home.robot.room: each room costs its distance from the room before (one "
    "move_robot per exit), plus one set_light if the room is dark, plus one look_with_robot.",
    "nx.shortest_path_length(home.graph, a, b) is the number of moves from a to b; home.is_lit(room) says "
    "whether a light is on there. Stop after the look in hidden_room, and add 1 for the halt.",
])
EXERCISE = Exercise("06_search_order", [q1, q2, q3])
bind = EXERCISE.bind
