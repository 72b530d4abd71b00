"""Reference solutions for ``exercises/06_search_order.ipynb`` (``lares_kit.learn.exercises.loop.ex06``)."""

import networkx as nx

__all__ = ["robot_path", "next_room", "search_calls"]

# %% q1
def robot_path(episode):
    """The rooms the robot was in, in order: where it started, then one room per move that worked.

    Args:
        episode: A finished Episode: its ``initial_state`` and ``tool_calls``.
    """
    path = [episode.initial_state["robot"]]
    for step in episode.tool_calls:
        if step.tool == "move_robot" and step.ok:
            path.append(step.arguments["destination_room_id"])
    return path

# %% q2
def next_room(graph, robot_room, searched):
    """The nearest room not in searched (ties: the first in list(graph.nodes)), or None when none is left.

    Args:
        graph: The home's graph (``home.graph``).
        robot_room: The room id the robot is in.
        searched: The room ids already searched.
    """
    moves = nx.single_source_shortest_path_length(graph, robot_room)
    left = [room for room in graph.nodes if room not in searched]
    if not left:
        return None
    return min(left, key=lambda room: moves[room])

# %% q3
def search_calls(home, order, hidden_room):
    """Tool calls to find a thing in hidden_room, searching the rooms of order in turn, halt included.

    Args:
        home: The home at the start: the robot's room and which rooms are lit.
        order: The room ids to search, in turn.
        hidden_room: The room id the thing is in.
    """
    calls, here = 0, home.robot.room
    for room in order:
        calls += nx.shortest_path_length(home.graph, here, room)  # one move_robot per exit
        if not home.is_lit(room):
            calls += 1  # set_light, so the robot can see
        calls += 1  # look_with_robot
        here = room
        if room == hidden_room:
            break
    return calls + 1  # halt
