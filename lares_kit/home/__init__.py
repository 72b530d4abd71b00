"""The home: rooms and exits as a graph, the devices in them, the world files, generated homes, the clock,
and the events that change the home while an agent works.

Taught in ``01_the_home_as_a_graph`` (the graph and the world files), ``06_robot_search`` (items the robot
finds) and ``05_world_knowledge`` (a home that changes under the agent).
"""
