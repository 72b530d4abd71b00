"""Reference solutions for ``exercises/01_shortest_route.ipynb`` (``lares_kit.learn.exercises.loop.ex01``)."""

import networkx as nx

__all__ = ["shortest_route", "farthest_rooms", "visit_all"]

# %% q1
def shortest_route(graph, start, goal):
    """The rooms from start to goal along exits, both included.

    Args:
        graph: The home's graph (``home.graph``): rooms are nodes, exits are edges.
        start: The room id to start from, e.g. "kitchen".
        goal: The room id to reach, e.g. "office".
    """
    return nx.shortest_path(graph, start, goal)

# %% q2
def farthest_rooms(graph, start):
    """The rooms most moves away from start, sorted.

    Args:
        graph: The home's graph (``home.graph``).
        start: The room id the moves are counted from.
    """
    moves = nx.single_source_shortest_path_length(graph, start)
    most = max(moves.values())
    return sorted(room for room, n in moves.items() if n == most)

# %% q3
from itertools import permutations


def visit_all(graph, start, rooms):
    """A walk from start that enters every room in rooms, in as few moves as possible.

    Args:
        graph: The home's graph (``home.graph``).
        start: The room id the walk starts in (the robot's room).
        rooms: The room ids to enter, in any order; ``start`` may be one of them.
    """
    moves = dict(nx.all_pairs_shortest_path_length(graph))
    todo = [r for r in rooms if r != start]
    best = min(permutations(todo), key=lambda order: sum(moves[a][b] for a, b in zip((start, *order), order)))
    walk = [start]
    for a, b in zip((start, *best), best):
        walk += nx.shortest_path(graph, a, b)[1:]
    return walk
