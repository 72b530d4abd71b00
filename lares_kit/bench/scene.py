"""Setting the stage for one benchmark episode: a fresh home, the user, the placeholders.

Taught in ``notebooks/08_evaluation.ipynb``. :func:`set_stage` turns a task
and a seed into a :class:`Scene`: its own copy of the world (so episodes can
run in parallel threads; a cheap one, :func:`copy_home`), with the task's
set-up applied, the start state the checks compare against (the home's own
state dicts, not copies: a device that changes gets a new one), and a
simulated user built on :class:`~lares_kit.tools.users.ScriptedUser` whose answers
have their placeholders filled in. The home gets the task's ``during:``
events after its world's (:mod:`lares_kit.home.during`); a ``set`` among them
updates the scene's start as it happens -- the world's doing, not the
agent's, so the ``unchanged`` check starts from it, as it does from
``events:`` after the episode.

This module does not run agents (:mod:`lares_kit.bench.runner` does) or judge
them (:mod:`lares_kit.bench.judging.checks`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..home.clock import Clock
from ..home.during import schedule
from ..home.graph import Home
from ..run_context import RunContext
from ..safety.policy import DEFAULT_SOURCE
from ..tools.users import ScriptedUser
from .suites.tasks import Task
from .suites.validate import PLACEHOLDER

__all__ = ["SCENE_NOW", "Scene", "copy_home", "fill", "room_pattern", "set_stage"]

# "Now" in every benchmark episode, whatever the day it runs: a memory task's "last week" or
# "yesterday" is read against this date, so a task file means the same thing next year.
SCENE_NOW = datetime(2026, 12, 1, 9, 0)


def copy_home(home: Home) -> Home:
    """A copy of a home for another episode, cheap however big the home (:meth:`Home.copy`).

    It shares the room graph (episodes never change the layout) and each
    device's description and state until the copy changes it: the home
    never writes into a state dict, ``update_device`` gives the device a new
    one. So a copy costs little in a 5,000-device building, and the
    breadth-first oracle can make thousands of them. Change devices with
    ``update_device`` (every tool does), never by writing into ``device.state``.

    Args:
        home: The home to copy.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> twin = copy_home(home)
        >>> twin.update_device("kitchen-light", {"on": True})
        >>> home.devices["kitchen-light"].state, twin.graph is home.graph
        ({'on': False}, True)
    """
    return home.copy()


@dataclass
class Scene:
    """One task, set up and ready for an agent."""

    task: Task
    seed: int
    home: Home  # this episode's own copy, set up
    # device id -> state when the episode starts: the home's own state dicts, not copies (Home.device_states
    # with shared=True). The home gives a device a new dict when it changes, so these stay the start, and a
    # device whose state is still the same object has not changed (lares_kit.bench.judging.collateral.changes).
    start: dict[str, dict[str, Any]]
    items: dict[str, str]  # item id -> the room it is in when the episode starts
    user: ScriptedUser = field(default_factory=ScriptedUser)
    memory: Any = None  # a lares_kit.memory.agent_memory.Memory seeded with the set-up's earlier sessions, or None

    @property
    def context(self) -> dict[str, Any]:
        """What placeholders are filled from."""
        return {"items": self.items, "time_of_day": self.task.setup.time_of_day, "user": self.task.setup.user}

    @property
    def run_context(self) -> RunContext:
        """The task's set-up as the run's context: its ``source``, who speaks (``user``) and from which ``room``.

        Pass it to ``run_agent(..., context=scene.run_context)``: the home holds the world only.
        """
        setup = self.task.setup
        return RunContext(source=DEFAULT_SOURCE if setup.source is None else setup.source,
                          person=setup.user or "", room=setup.room)


def set_stage(task: Task, world: Home, seed: int = 0) -> Scene:
    """A fresh copy of ``world`` with the task's set-up, and its simulated user.

    The seed matters only when the set-up says ``shuffle: true``: then the
    movable items are hidden in rooms chosen by the seed (the same seed always
    gives the same rooms), before the task's own placements are applied.

    Args:
        task: The task whose set-up to apply: the robot's room, device states, item placements, the speaker...
        world: The task's home as loaded; it is copied, never changed.
        seed: Hides the movable items when the set-up says ``shuffle: true``; otherwise unused.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.bench.suites.tasks import Setup, Task, UserScript
        >>> task = Task("t", "demo", "lares-home", "search", "Where is my dog?",
        ...             setup=Setup(placements={"bruno": "kitchen"}, robot="lounge"),
        ...             user=UserScript(answers=[("where", "Last time I saw him in the {bruno.room}.")]))
        >>> scene = set_stage(task, load_world("lares-home"))
        >>> scene.home.robot.room, scene.items["bruno"]
        ('lounge', 'kitchen')
        >>> scene.user.ask("Where did you see him?")
        'Last time I saw him in the Kitchen.'
    """
    home = copy_home(world)
    setup = task.setup
    home.reset(seed if setup.shuffle else None, placements=setup.placements, states=setup.states)
    if setup.robot:
        home.move_robot(setup.robot)
    if setup.time_of_day:  # the home's clock starts at the task's hour: the policy reads it, a poller moves it on
        home.clock = Clock.simulated(start=setup.time_of_day)
    home.version = 0
    scene = Scene(task, seed, home, home.device_states(shared=True), {i.id: i.room for i in home.items.values()})
    schedule(home, task.during, baseline=scene.start)  # while the agent works: the world's events, then the task's
    rules = [(when, fill(say, scene.context, home)) for when, say in task.user.answers]
    otherwise = fill(task.user.otherwise, scene.context, home) if task.user.otherwise is not None else None
    scene.user = ScriptedUser(rules=rules, fallback=otherwise)
    if setup.memory is not None:
        scene.memory = seed_memory(setup.memory, setup.user or "")
    return scene


def seed_memory(seed: dict[str, Any], user: str) -> Any:
    """A fresh in-memory long-term store holding earlier sessions, and a Memory for ``user`` over it.

    The store's clock stands still at :data:`SCENE_NOW`: what the episode says is stored at that
    time, and "last week" means the week before it.

    Examples:
        >>> memory = seed_memory({"preferences": {"office temperature": 21},
        ...     "turns": [{"role": "user", "text": "I like the office at 21 degrees", "at": "2026-11-28 09:14"}]},
        ...     "ana")
        >>> memory.store.preferences("ana"), [t.text for t in memory.long_term()]
        ({'office temperature': 21}, ['I like the office at 21 degrees'])
    """
    from ..memory.agent_memory import Memory, MemoryStore

    store = MemoryStore(":memory:", clock=lambda: SCENE_NOW)
    for key, value in seed.get("preferences", {}).items():
        store.remember_preference(user, key, value)
    for n, turn in enumerate(seed.get("turns", [])):
        # earlier sessions: not in this conversation's prompt window, so only recall finds them
        store.add(turn["role"], turn["text"], user=turn.get("user") or user, session=f"earlier-{n}",
                  at=(turn.get("at") or "2026-01-01 09:00") + (":00" if len(turn.get("at") or "") == 16 else ""))
    return Memory(store, user=user)


def room_pattern(home: Home, room_id: str) -> str:
    """A regex that matches a room's id, name or aliases (spaces and hyphens alike).

    Args:
        home: The home the room is in.
        room_id: The room's id, e.g. ``"main-bedroom"``.

    Examples:
        >>> from lares_kit import load_world
        >>> room_pattern(load_world("garden-flat"), "main-bedroom")
        '(?:main[- ]bedroom|bedroom)'
    """
    attrs = home.graph.nodes[room_id]
    words = [room_id, attrs.get("name", room_id), *attrs.get("aliases", [])]
    unique = list(dict.fromkeys(w.lower().replace("-", " ") for w in words))
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", "[- ]") for w in unique) + ")"


def fill(text: str, context: dict[str, Any], home: Home, regex: bool = False) -> str:
    """Fill ``{<item>.room}``, ``{time_of_day}`` and ``{user}`` in an answer or a pattern.

    Args:
        text: An answer or a pattern with placeholders, e.g. ``"He is in the {bruno.room}."``.
        context: The scene's values: ``items`` (item id -> room id), ``time_of_day``, ``user``.
        home: The home whose room names fill ``{<item>.room}``.
        regex: True for a pattern (a room becomes :func:`room_pattern`), False for an answer (its name).

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> ctx = {"items": {"bruno": "bedroom"}, "time_of_day": "evening", "user": None}
        >>> fill("It is {time_of_day}; Bruno is in the {bruno.room}.", ctx, home)
        'It is evening; Bruno is in the Bedroom.'
        >>> fill("{bruno.room}", ctx, home, regex=True)
        '(?:bedroom)'
    """
    def one(match: re.Match) -> str:
        name, room = match.group(1), match.group(2)
        if room:
            room_id = context["items"][name]
            return room_pattern(home, room_id) if regex else home.room_name(room_id)
        value = str(context.get(name) or "")
        return re.escape(value) if regex else value

    return PLACEHOLDER.sub(one, text)
