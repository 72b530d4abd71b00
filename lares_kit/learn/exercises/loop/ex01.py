"""Exercise 01, the shortest route: plan the robot's moves on the home's graph with networkx.

Notebook: ``exercises/01_shortest_route.ipynb`` (after
``notebooks/01_the_home_as_a_graph.ipynb``). A route is a list of room ids,
start and end included; consecutive rooms must share an exit. The checks
accept any shortest route, not one particular one.
"""

from __future__ import annotations

from itertools import permutations

import networkx as nx

from ....home.worlds import load_world
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]


def _walk_problem(graph: nx.Graph, walk: object, start: str, case: str) -> None:
    # A walk is a list of rooms, beginning at start, each next to the one before.
    if not isinstance(walk, list) or not all(isinstance(r, str) for r in walk):
        raise Incorrect(f"For {case}, return a list of room ids (strings); got {type(walk).__name__} {walk!r}.")
    if not walk or walk[0] != start:
        raise Incorrect(f"For {case}, the route must begin with the start room {start!r}; got {walk!r}.")
    for a, b in zip(walk, walk[1:]):
        if not graph.has_edge(a, b):
            raise Incorrect(f"For {case}, your route goes from {a!r} to {b!r}, but no exit joins them. "
                            f"Exits of {a!r}: {', '.join(graph.neighbors(a)) if a in graph else 'none (not a room)'}.")


def _test_route(shortest_route) -> str:
    for world, start, goal in [("lares-home", "kitchen", "office"), ("lares-home", "hallway", "hallway"),
                               ("townhouse", "kitchen", "study"), ("garden-flat", "entrance", "bathroom")]:
        graph = load_world(world).graph
        case = f"{start} -> {goal} in {world}"
        walk = call(shortest_route, graph, start, goal, case=case)
        _walk_problem(graph, walk, start, case)
        if walk[-1] != goal:
            raise Incorrect(f"For {case}, the route must end at {goal!r}; it ends at {walk[-1]!r}.")
        best = nx.shortest_path_length(graph, start, goal)
        if len(walk) - 1 != best:
            raise Incorrect(f"For {case}, your route takes {len(walk) - 1} moves; the shortest takes {best}.")
    return "Every route is valid and as short as it can be."


def _test_farthest(farthest_rooms) -> str:
    for world, start in [("lares-home", "hallway"), ("lares-home", "office"), ("townhouse", "hall"),
                         ("garden-flat", "entrance")]:
        graph = load_world(world).graph
        case = f"{start} in {world}"
        got = call(farthest_rooms, graph, start, case=case)
        dist = nx.single_source_shortest_path_length(graph, start)
        most = max(dist.values())
        want = sorted(r for r, d in dist.items() if d == most)
        if not isinstance(got, list):
            raise Incorrect(f"For {case}, return a sorted list of room ids; got {type(got).__name__} {got!r}.")
        if got != want:
            raise Incorrect(f"For {case}, expected {want} ({most} moves away) but got {got!r}.")
    return "You found the rooms farthest from the robot, ties included."


def _optimal_tour(graph: nx.Graph, start: str, rooms: list[str]) -> int:
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    todo = [r for r in rooms if r != start]
    return min(sum(dist[a][b] for a, b in zip((start, *order), order)) for order in permutations(todo))


def _test_tour(visit_all) -> str:
    for world in ["lares-home", "garden-flat"]:
        home = load_world(world)
        start, dark = home.robot.room, [r for r in home.graph if not home.is_lit(r)]
        case = f"the dark rooms of {world} from {start}"
        walk = call(visit_all, home.graph, start, dark, case=case)
        _walk_problem(home.graph, walk, start, case)
        missed = [r for r in dark if r not in walk]
        if missed:
            raise Incorrect(f"For {case}, the robot never enters: {', '.join(missed)}.")
        best = _optimal_tour(home.graph, start, dark)
        if len(walk) - 1 > best:
            raise Incorrect(f"For {case}, your walk takes {len(walk) - 1} moves; it can be done in {best}.")
    return "Every dark room visited, in as few moves as possible."


q1 = Problem("The shortest route", ("shortest_route",), _test_route, hints=[
    "networkx has a function for exactly this: look at nx.shortest_path.",
    "nx.shortest_path(graph, source, target) returns the list of nodes, both ends included.",
])
q2 = Problem("The farthest rooms", ("farthest_rooms",), _test_farthest, hints=[
    "nx.single_source_shortest_path_length(graph, start) gives {room: moves} for every room.",
    "Find the largest number of moves, then keep every room at that distance, and sort them.",
])
q3 = Problem("Visit every dark room", ("visit_all",), _test_tour, hints=[
    "The homes are small: you can try every order of the rooms to visit (itertools.permutations).",
    "For one order, the moves are the sum of shortest-path lengths between consecutive rooms, starting "
    "from the robot's room.",
    "Keep the cheapest order, then join the shortest paths between consecutive rooms into one walk "
    "(drop the first room of each path after the first, or it appears twice).",
])
EXERCISE = Exercise("01_shortest_route", [q1, q2, q3])
bind = EXERCISE.bind
