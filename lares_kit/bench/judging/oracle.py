"""The oracle: the fewest tool calls that solve a task, for an agent that knows the truth.

Taught in ``notebooks/08_evaluation.ipynb``. ``steps / oracle_steps`` says
how far an agent is from the physical limit: a perfect agent that already
knew where the cat is would score 1.0; searching for it costs more.

The number is not typed by hand: :func:`oracle_plan` runs a breadth-first
search from the task's start, calling the real tools
(:mod:`lares_kit.tools.toolbox`) on copies of the home, until the task's own world
checks (states, unchanged, lit, seen, robot; :mod:`lares_kit.bench.judging.checks`)
all pass. A node is (robot room, states of the devices that matter, items
seen). Only calls that can matter are tried, which keeps the search small
without changing its answer:

* ``set_light`` / ``set_device`` towards a value the checks ask for (a
  range's nearest bound); a device set anywhere else would only have to be
  set back;
* lights in rooms that must be lit or where a sought item is, both ways
  (lit to look, dark again if nothing allows them to stay on);
* ``move_robot`` and ``look_with_robot`` only when the robot must see
  something or end somewhere;
* never a call the task forbids.

Then the conversation is added: one ``ask_user`` when the task must ask,
and the final ``halt`` that every episode ends with -- agents' step counts
include their halt too, so the ratio stays fair.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from ...home.graph import Home
from ...tools.toolbox import (
    ToolError,
    default_tools,
    look_with_robot,
    move_robot,
    set_device,
    set_light,
    toggle_light,
)
from ..scene import Scene, copy_home, set_stage
from ..suites.tasks import Task
from .checks import Outcome, matches_forbidden, run_checks

__all__ = ["WORLD_CHECKS", "OracleError", "oracle_plan", "oracle_steps"]

# The checks over the world's final state; the others judge the conversation.
WORLD_CHECKS = ("states", "unchanged", "lit", "seen", "robot")
TOOLS = {fn.__name__: fn for fn in (move_robot, look_with_robot, set_light, toggle_light, set_device)}

Call = tuple[str, dict[str, Any]]  # (tool name, arguments)


class OracleError(ValueError):
    """No sequence of calls passes the task's checks: the task is impossible as written."""


def _goal(scene: Scene, home: Home) -> bool:
    outcome = Outcome(home, scene.start, scene.context)
    return all(r.passed for r in run_checks(scene.task.expect, outcome, WORLD_CHECKS))


def _rooms_that_matter(scene: Scene) -> set[str]:
    expect, items = scene.task.expect, scene.home.items
    places = [*expect.lit, *expect.seen]
    return {items[p].room if p in items else p for p in places}


def _candidates(scene: Scene, home: Home, tools: set[str]) -> list[Call]:
    """The calls worth trying from this node (see the module docstring)."""
    expect = scene.task.expect
    calls: list[Call] = []
    if expect.seen or expect.robot is not None:
        calls += [("move_robot", {"destination_room_id": r}) for r in home.graph.neighbors(home.robot.room)]
    sought = [i for i in expect.seen if i not in home.seen and home.items[i].room == home.robot.room]
    if sought and home.is_lit(home.robot.room):
        calls.append(("look_with_robot", {}))
    for dev_id, attrs in expect.states.items():
        dev = home.devices[dev_id]
        for attr, want in attrs.items():
            value = want
            if isinstance(want, dict):  # a range: the nearest bound
                now = dev.state.get(attr)
                low, high = want.get("min"), want.get("max")
                value = low if low is not None and (not isinstance(now, (int, float)) or now < low) else high
            if value is not None and dev.state.get(attr) != value:
                calls += _set_calls(dev, attr, value, tools)
    for room in _rooms_that_matter(scene):
        for light in home.devices_in(room, "light"):
            calls += _set_calls(light, "on", not light.state["on"], tools)
    # each call once, forbidden ones dropped
    unique = {json.dumps(c, sort_keys=True): c for c in calls}
    return [c for c in unique.values() if not any(matches_forbidden(r, c[0], c[1]) for r in expect.forbidden)]


def _set_calls(dev: Any, attr: str, value: Any, tools: set[str]) -> list[Call]:
    # Every tool that makes this change: if the task forbids one, another may do.
    calls: list[Call] = []
    if dev.type == "light" and attr == "on":
        if "set_light" in tools:
            calls.append(("set_light", {"light_id": dev.id, "on": value}))
        if "toggle_light" in tools and dev.state.get("on") != value:
            calls.append(("toggle_light", {"light_id": dev.id}))
    if "set_device" in tools:
        calls.append(("set_device", {"device_id": dev.id, "attribute": attr, "value": value}))
    return calls


def _key(scene: Scene, home: Home) -> str:
    expect = scene.task.expect
    devices = sorted(set(expect.states)
                     | {d.id for r in _rooms_that_matter(scene) for d in home.devices_in(r, "light")})
    return json.dumps([home.robot.room, [home.devices[d].state for d in devices],
                       sorted(i for i in expect.seen if i in home.seen)], sort_keys=True)


def oracle_plan(task: Task, world: Home, seed: int = 0, budget: int = 100_000) -> list[Call]:
    """The shortest list of tool calls that solves the task, ending with ``halt``.

    Args:
        task: The task to solve.
        world: The task's home as loaded; it is copied, never changed.
        seed: The seed the task's set-up shuffles its items with (only when it says ``shuffle: true``).
        budget: The most search states to expand before giving up with :class:`OracleError`.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.bench.suites.tasks import Expect, Setup, Task
        >>> task = Task("t", "demo", "lares-home", "search", "Find Bruno.",
        ...             setup=Setup(placements={"bruno": "office"}), expect=Expect(seen=["bruno"],
        ...             allow_changes=["*-light"]))
        >>> [name for name, args in oracle_plan(task, load_world("lares-home"))]
        ['move_robot', 'move_robot', 'set_light', 'look_with_robot', 'halt']
    """
    if task.events:
        # A persistent command is set up, not carried out: write the condition, attach the action, report.
        return [("create_condition", {"code": "(the condition)", "description": "(the event)"}),
                ("notify_on_condition", {"condition_id": "(its id)", "instruction": "(the action)"}),
                ("halt", {"message_to_user": "(what was set up)"})]
    scene = set_stage(task, world, seed)
    tools = {fn.__name__ for fn in default_tools(scene.home)}
    start = scene.home
    # frontier: (home after the calls, the calls so far), shortest first
    frontier: deque[tuple[Home, list[Call]]] = deque([(start, [])])
    visited = {_key(scene, start)}
    found: list[Call] | None = [] if _goal(scene, start) else None
    expanded = 0
    while frontier and found is None:
        home, calls = frontier.popleft()
        expanded += 1
        if expanded > budget:
            raise OracleError(f"task {task.id!r}: no solution within {budget} search nodes; make it smaller")
        for name, args in _candidates(scene, home, tools):
            child = copy_home(home)
            try:
                TOOLS[name](child, **args)
            except ToolError:
                continue
            key = _key(scene, child)
            if key in visited:
                continue
            visited.add(key)
            if _goal(scene, child):
                found = [*calls, (name, args)]
                break
            frontier.append((child, [*calls, (name, args)]))
    if found is None:
        raise OracleError(f"task {task.id!r} ({task.source}): no sequence of tool calls passes its checks "
                          f"{', '.join(WORLD_CHECKS)}; the task is impossible as written")
    asks = [("ask_user", {"question": "(the question the task needs)"})] if task.expect.must_ask else []
    return [*asks, *found, ("halt", {"message_to_user": "(a report that passes the message checks)"})]


def oracle_steps(task: Task, world: Home, seed: int = 0) -> int:
    """The length of :func:`oracle_plan`: world calls, plus a question if needed, plus the halt.

    Args:
        task: The task to solve.
        world: The task's home as loaded; it is copied, never changed.
        seed: The seed the task's set-up shuffles its items with (only when it says ``shuffle: true``).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.bench.suites.tasks import Expect, Task
        >>> task = Task("t", "demo", "lares-home", "direct", "Kitchen light on.",
        ...             expect=Expect(states={"kitchen-light": {"on": True}}))
        >>> oracle_steps(task, load_world("lares-home"))
        2
    """
    return len(oracle_plan(task, world, seed))
