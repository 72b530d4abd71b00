"""The home: rooms and exits as a graph, the devices in them, the world files, generated homes, the clock,
and the events that change the home while an agent works.

Taught in ``01_the_home_as_a_graph`` (the graph and the world files), ``06_robot_search`` (items the robot
finds) and ``05_world_knowledge`` (a home that changes under the agent).
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "Clock": "lares_kit.home.clock",
    "add_events": "lares_kit.home.during",
    "generate_home": "lares_kit.home.generator",
    "check_home": "lares_kit.home.worlds",
    "load_world": "lares_kit.home.worlds",
    "world_paths": "lares_kit.home.worlds",
}
__all__ = ["Clock", "add_events", "generate_home", "check_home", "load_world", "world_paths"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
