"""Events while the agent works: the home changes under it (``during:`` in a world or a task file).

Taught in ``notebooks/05_world_knowledge.ipynb`` (which knowledge mode sees a
change) and ``notebooks/06_robot_search.ipynb`` (a sighting gone stale). The
format is documented in ``worlds/README.md`` and ``worlds/tasks/README.md``.

A real home does not stand still while an assistant works in it: Ana switches
the lounge light off, the dog wanders to the kitchen, someone locks the back
door. Each :class:`DuringEvent` happens at one moment of an episode --

* ``after step 2``: right after the home's clock counts its second action
  (one per tool call that runs, :meth:`lares_kit.home.graph.Home.tick`);
* ``at 30s`` (or ``at 2m``): once actions have taken that long on the home's
  clock: moving the robot takes 20 s, asking the person 30 s, anything else
  5 s (:data:`ACTION_SECONDS`), and a simulated clock moves with them;
* ``after the first look`` (``after look 2``...): right after the robot's
  first (second...) look that worked --

and does one thing: ``move`` an item to a room (the dog goes to the kitchen),
``set`` a device's state (a light switched, a door locked, a sensor's new
reading), ``carry`` the robot to a room (someone picks it up), or move the
``clock`` on to a time of day (night falls: the safety policy reads it at
every check). They change the **truth**, never the agent's knowledge: only
the ``latest`` knowledge (re-rendered every request), a tool that reads the
home (``read_device``, Home Assistant's ``GetLiveContext``) or a fresh look
with the robot shows them; the robot's sightings of a thing that moved go
stale. Nothing happens after the action that ends an episode.

A home holds its events in a :class:`Schedule` (``home.during``, None when it
has none: such a home never moves its clock nor records anything here).
:func:`play` runs them after each action; every agent design calls it from
the one place all calls go through (:meth:`lares_kit.agents.agent_run.AgentRun.call`),
which records each as a :class:`~lares_kit.episode_steps.Meanwhile` step -- so they
happen at the same point of the home's clock in every design, executor and
replay. This module plays events (reading them from files is :mod:`lares_kit.home.during_files`); it runs no agent.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..episode_steps import Meanwhile
from .during_files import CHANGES, WHEN_SYNTAX, DuringEvent, parse_during

if TYPE_CHECKING:
    from .graph import Home

__all__ = ["ACTION_SECONDS", "CHANGES", "WHEN_SYNTAX", "DuringEvent", "Schedule", "parse_during", "schedule",
           "add_events", "play", "happened_so_far", "happened_since", "where_seen", "changed_note"]

# How long an action takes on the home's clock: walking to the next room, waiting for the person; else 5 s.
ACTION_SECONDS = {"move_robot": 20.0, "ask_user": 30.0}
OTHER_ACTION_SECONDS = 5.0


@dataclass
class Schedule:
    """A home's events and how far they have played (``home.during``); :meth:`restart` goes back to the start."""

    events: list[DuringEvent]
    played: list[bool] = field(default_factory=list)
    looks: int = 0  # the robot's looks that worked so far
    seconds: float = 0.0  # how long the actions so far took on the home's clock (plus any clock event)
    counted: int = 0  # the home's steps already timed
    log: list[Meanwhile] = field(default_factory=list)  # what happened, oldest first
    # A benchmark scene's start states (lares_kit.bench.scene): an event's settings are the world's doing, so the
    # checks' "unchanged" starts from them; None: nothing to tell.
    baseline: dict[str, dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.played = self.played or [False] * len(self.events)

    def restart(self) -> None:
        """Nothing has happened yet: every event waits again (``Home.reset`` calls this)."""
        self.played, self.looks, self.seconds, self.counted, self.log = [False] * len(self.events), 0, 0.0, 0, []

    def __deepcopy__(self, memo: dict[int, Any]) -> Schedule:
        # A copy of the home gets its own progress; the events never change, so they are shared, and the baseline
        # (one state dict per device: a building's thousands) is copied shallowly -- its dicts are replaced, never
        # written into -- so the oracle's thousands of home copies stay cheap.
        return Schedule(self.events, list(self.played), self.looks, self.seconds, self.counted,
                        copy.deepcopy(self.log, memo), dict(self.baseline) if self.baseline is not None else None)


# ------------------------------------------------------------------ playing
def schedule(home: Home, events: list[DuringEvent], baseline: dict[str, dict[str, Any]] | None = None) -> Home:
    """Give ``home`` these events (after any its world file has), nothing played yet; return the home.

    Args:
        home: The home the events happen in; its own events (a world file's ``during:``) come first.
        events: More events, e.g. a task's.
        baseline: A benchmark scene's start states, which each ``set`` event updates (the world's doing).

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> events = parse_during([{"when": "after step 1", "move": {"bruno": "kitchen"}}], home, "x", "during",
        ...                       ValueError)
        >>> len(schedule(home, events).during.events), home.during.played
        (1, [False])
    """
    own = home.during.events if home.during is not None else []
    if own or events:
        home.during = Schedule([*own, *events], baseline=baseline)
    return home


def add_events(home: Home, raw: list[dict[str, Any]], source: str = "<events>") -> Home:
    """Give ``home`` events written as a world file writes them (a notebook's way); return the home.

    Args:
        home: The home they happen in, after any it has.
        raw: The events, e.g. ``[{"when": "after step 1", "move": {"bruno": "kitchen"}}]``.
        source: What to call them in an error (a bad one is a DataFileError naming the key).

    Examples:
        >>> from lares_kit import load_world
        >>> home = add_events(load_world("lares-home"), [{"when": "after step 1", "carry": "attic"}])
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: <events>: during[0].carry: unknown room 'attic'; rooms are: lounge, \
hallway, kitchen, bedroom, office
    """
    from ..errors import DataFileError

    return schedule(home, parse_during(raw, home, source, "during", DataFileError))


def happened_so_far(home: Home) -> int:
    """How many events have happened in ``home`` (mark it before a call; :func:`happened_since` after).

    Args:
        home: The home.
    """
    return len(home.during.log) if home.during is not None else 0


def happened_since(home: Home, mark: int) -> list[Meanwhile]:
    """Copies of the steps of the events that happened since ``mark`` (:func:`happened_so_far`), oldest first.

    A SAGE sub-agent's run plays events inside the coordinator's call; both episodes record them.

    Args:
        home: The home.
        mark: What :func:`happened_so_far` said before.
    """
    return [copy.deepcopy(s) for s in home.during.log[mark:]] if home.during is not None else []


def play(home: Home, tool: str = "", ok: bool = True) -> list[Meanwhile]:
    """After an action: move the clock on by the time it took, and let the events now due happen; return them.

    Does nothing in a home without events, or when no action was counted since the last call.

    Args:
        home: The home the action was taken in.
        tool: The tool that ran: how long it took (:data:`ACTION_SECONDS`), and whether it was a look.
        ok: Whether it worked (a look counts only when it did).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.tools.toolbox import Toolbox
        >>> home = load_world("lares-home")
        >>> schedule(home, parse_during([{"when": "at 25s", "set": {"lounge-light": {"on": False}}, "by": "Ana"}],
        ...                             home, "x", "during", ValueError))  # doctest: +ELLIPSIS
        <Home 'lares-home': ...>
        >>> box = Toolbox(home)
        >>> _ = box.dispatch("move_robot", '{"destination_room_id": "kitchen"}')
        >>> play(home, "move_robot"), home.during.seconds
        ([], 20.0)
        >>> _ = box.dispatch("set_light", '{"light_id": "kitchen-light", "on": true}')
        >>> [step.text for step in play(home, "set_light")], home.devices["lounge-light"].state
        (['Ana switched the light in the Lounge (lounge-light) off'], {'on': False})
    """
    plan = home.during
    new = home.clock.steps - plan.counted if plan is not None else 0
    if plan is None or new <= 0:
        return []
    plan.counted = home.clock.steps
    # Actions a run did not time itself (a call made outside an agent loop) take the usual time.
    _wait(home, plan, ACTION_SECONDS.get(tool, OTHER_ACTION_SECONDS) + (new - 1) * OTHER_ACTION_SECONDS)
    plan.looks += tool == "look_with_robot" and ok
    start = len(plan.log)
    while (due := next((i for i, e in enumerate(plan.events) if not plan.played[i] and _due(e, home, plan)), None)
           ) is not None:  # in file order; a clock event can make a timed one due
        plan.played[due] = True
        plan.log.append(_happen(plan.events[due], home, plan))
    return plan.log[start:]


def _wait(home: Home, plan: Schedule, seconds: float) -> None:
    plan.seconds += seconds
    if home.clock.kind == "simulated":  # a fixed clock stays where it is; a local one follows the machine
        home.clock.advance(seconds)


def _due(event: DuringEvent, home: Home, plan: Schedule) -> bool:
    reached = {"step": home.clock.steps, "time": plan.seconds, "look": plan.looks}[event.trigger]
    return reached >= event.at


def _happen(event: DuringEvent, home: Home, plan: Schedule) -> Meanwhile:
    devices: dict[str, dict[str, Any]] = {}
    text = event.sentence(home)
    if event.change == "move":
        for item, room in event.what.items():
            home.move_item(item, room)
    elif event.change == "carry":
        home.move_robot(event.what)
    elif event.change == "clock":
        text = _move_clock(event, home, plan, text)
    else:
        for dev_id, update in event.what.items():
            home.update_device(dev_id, update)
            devices[dev_id] = copy.deepcopy(home.devices[dev_id].state)
            if plan.baseline is not None:  # the world's doing: the checks' "unchanged" starts from it
                plan.baseline[dev_id] = {**plan.baseline.get(dev_id, {}), **copy.deepcopy(update)}
    after = {"time": home.time, "robot": home.robot.room, "devices": devices,
             "items": {i.id: i.room for i in home.items.values()}, "seen": copy.deepcopy(home.seen)}
    return Meanwhile(text, event.when, event.change, copy.deepcopy(event.what), step=home.time,
                     seconds=plan.seconds, after=after)


def _move_clock(event: DuringEvent, home: Home, plan: Schedule, text: str) -> str:
    from ..sentences.times import minutes_of_day

    if home.clock.kind != "simulated":
        return f"{text} -- but the home's clock is {home.clock.kind}, so its time stayed as it was"
    now = home.clock.now()
    minute = minutes_of_day(event.what)
    target = now.replace(hour=minute // 60, minute=minute % 60, second=0, microsecond=0)
    if target <= now:  # later today, or else tomorrow
        target += timedelta(days=1)
    _wait(home, plan, (target - now).total_seconds())
    return text


# ------------------------------------------------------------- what it means
def where_seen(change: str, knowledge: str, static: bool = False) -> str:
    """Where an agent can find out about a change: the part of the transcript a learner reads after it.

    Args:
        change: The event's kind: ``move``, ``set``, ``carry`` or ``clock``.
        knowledge: The episode's knowledge mode: ``latest``, ``initial`` or ``none``.
        static: True when the run's knowledge is Home Assistant's static context (no states), as its dialect says.

    Examples:
        >>> where_seen("set", "latest"), where_seen("set", "initial")
        ('the latest knowledge shows it from the next request', 'the initial knowledge does not show it')
        >>> where_seen("move", "latest")
        'no knowledge shows where things are: only a fresh look with the robot'
    """
    if change == "move":
        return "no knowledge shows where things are: only a fresh look with the robot"
    if change == "clock":
        return "no knowledge shows the time: the safety policy reads the clock at every check"
    if static:
        return "the static context has no states: only GetLiveContext shows it"
    if knowledge == "latest":
        return "the latest knowledge shows it from the next request"
    if knowledge == "initial":
        return "the initial knowledge does not show it"
    return "no knowledge message: only a tool that reads the home shows it"


def changed_note(steps: list[Any], home: Home) -> str:
    """The line the ``latest`` knowledge adds once events changed what it shows: what, and after which step.

    "" when none did (then the message is exactly as it always was). Items are never named: where things are is
    not knowledge; only devices the agent can see, and the robot.

    Args:
        steps: The episode's steps; its :class:`~lares_kit.episode_steps.Meanwhile` steps are read.
        home: The home, for which devices are exposed to the agent.

    Examples:
        >>> from lares_kit import load_world
        >>> step = Meanwhile("Ana switched ...", "after step 2", "set", {"lounge-light": {"on": False}}, step=2)
        >>> changed_note([step], load_world("lares-home"))
        'Changed while you worked, not by you: after step 2, lounge-light on=false.'
    """
    parts = []
    for s in steps:
        if not isinstance(s, Meanwhile):
            continue
        if s.change == "carry":
            parts.append(f"after step {s.step}, the robot was carried to {s.what}")
        elif s.change == "set":
            said = [f"{d} " + " ".join(f"{a}={_text(v)}" for a, v in update.items()) for d, update in s.what.items()
                    if getattr(home.devices.get(d), "exposed", False)]
            parts += [f"after step {s.step}, {one}" for one in said]
    return f"Changed while you worked, not by you: {'; '.join(parts)}." if parts else ""


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
