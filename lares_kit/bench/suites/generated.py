"""Benchmark tasks for a generated home, each solved by the oracle before it is kept.

Taught in ``notebooks/16_scaling_up.ipynb``. The homes come from
:mod:`lares_kit.home.generator` (which builds worlds and knows nothing of the
benchmark); :func:`generate_tasks` writes tasks for one -- direct, device,
multi-device and search -- and checks each with the oracle
(:func:`lares_kit.bench.judging.oracle.oracle_plan`), so no task is impossible. The
same seed always gives the same tasks.
"""

from __future__ import annotations

import random
from typing import Any

from ...home.graph import Home
from ..judging.oracle import OracleError, oracle_plan
from .tasks import Expect, Setup, Task

__all__ = ["generate_tasks"]


def _pick(rng: random.Random, home: Home, types: tuple[str, ...], want: Any = None, attr: str = "on") -> Any:
    # A device of one of these types in a room with a distinctive name (not a corridor or landing).
    pool = [d for d in home.devices.values() if d.type in types and not d.room.startswith(("corridor", "stairs"))
            and (want is None or d.state.get(attr) != want) and home.devices_in(d.room, d.type)[0] is d]
    return rng.choice(pool) if pool else None


def generate_tasks(home: Home, n: int = 8, seed: int = 0, check: bool = True) -> list[Task]:
    """Benchmark tasks for a (generated) home, each solvable by the oracle.

    Kinds, in turn: a light on, a light off, a device setting, two lights
    at once, and a search for a hidden item just outside the robot's room.
    With ``check`` every task is solved by the oracle first, and a task it
    cannot solve is dropped (and reported by its absence).

    Args:
        home: The home to write tasks for, e.g. one from :func:`lares_kit.home.generator.generate_home`.
        n: How many tasks to write (fewer when ``check`` drops some).
        seed: Chooses the rooms, devices and items: the same seed, the same tasks.
        check: Solve each task with the oracle first and drop one it cannot solve; False skips that (faster).

    Examples:
        >>> from lares_kit.home.generator import generate_home
        >>> home = generate_home(rooms=30, devices=120, seed=2)
        >>> tasks = generate_tasks(home, n=5, seed=2)
        >>> [t.category for t in tasks]
        ['direct', 'direct', 'direct', 'multi-device', 'search']
        >>> tasks[0].instruction
        'Turn on the light in Office 2.'
    """
    rng = random.Random(seed)
    tasks: list[Task] = []
    kinds = ["on", "off", "device", "two", "search"]
    attempts = 0
    while len(tasks) < n and attempts < n * 5:
        kind = kinds[attempts % len(kinds)]
        attempts += 1
        task_id = f"{home.id}-{len(tasks) + 1:02d}-{kind}"
        task = None
        if kind in ("on", "off"):
            light = _pick(rng, home, ("light",), want=kind == "on")
            if light is not None:
                room = home.room_name(light.room)
                text = f"Turn {kind} the light in {room}." if kind == "on" else f"Switch off the light in {room}."
                task = Task(task_id, "generated", home.id, "direct", text,
                            expect=Expect(states={light.id: {"on": kind == "on"}}, must_not_ask=["."]))
        elif kind == "device":
            dev = _pick(rng, home, ("window", "thermostat"))
            if dev is not None:
                room = home.room_name(dev.room)
                if dev.type == "window":
                    opened = not dev.state.get("open")
                    text = f"{'Open' if opened else 'Close'} the window in {room}."
                    want = {"open": opened}
                else:
                    target = 23 if dev.state.get("target") != 23 else 19
                    text, want = f"Set the thermostat in {room} to {target} degrees.", {"target": target}
                task = Task(task_id, "generated", home.id, "direct", text, expect=Expect(states={dev.id: want}))
        elif kind == "two":
            a = _pick(rng, home, ("light",), want=True)
            b = _pick(rng, home, ("light",), want=True)
            if a is not None and b is not None and a.room != b.room:
                text = f"Turn on the lights in {home.room_name(a.room)} and {home.room_name(b.room)}."
                task = Task(task_id, "generated", home.id, "multi-device", text,
                            expect=Expect(states={a.id: {"on": True}, b.id: {"on": True}}))
        elif kind == "search" and home.items:
            task = _search_task(rng, home, task_id)
        if task is None:
            continue
        if check:
            try:
                plan = oracle_plan(task, home)
            except OracleError:
                continue
            task.notes = f"oracle: {len(plan)} steps"
        tasks.append(task)
    return tasks


def _search_task(rng: random.Random, home: Home, task_id: str) -> Task | None:
    # The robot starts in a room with one door and the item is just outside it (the corridor or the
    # hallway): a search an agent finishes in a handful of steps -- look here, move, look -- and the
    # oracle in a small search. Hidden things further away make searches of hundreds of steps.
    lit = {r for r in home.graph.nodes if home.devices_in(r, "light")}
    starts = sorted(r for r in lit if home.graph.degree(r) == 1 and next(iter(home.graph[r])) in lit)
    if not starts:
        return None
    start = rng.choice(starts)
    where = next(iter(home.graph[start]))
    item = sorted(home.items)[rng.randrange(len(home.items))]
    name = home.items[item].name
    return Task(task_id, "generated", home.id, "search", f"Find {name}.",
                setup=Setup(placements={item: where}, robot=start),
                expect=Expect(seen=[item], allow_changes=["*-light"], mentions=[rf"(?i){name}"]))
