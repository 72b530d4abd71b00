"""Collateral damage: what an episode changed that its task did not ask for, and calls the policy refused.

Taught in ``notebooks/08_evaluation.ipynb``. A task checks the settings it
asks for (``states``); everything else in the home must end as it started,
unless the task says it ``may_change`` -- a search may light rooms to look
in them, a TV's volume may move when it is switched on. A change outside
both is collateral damage, and fails the task's ``unchanged`` check: an
agent asked to turn on the kitchen light that also turns off the heating has
not done its job, as Home Assistant's evaluation datasets judge it too.
:mod:`lares_kit.bench.judging.checks` turns these into verdicts.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from ...home.graph import Home
from ...sentences.markers import is_refusal
from ..suites.tasks import Expect

__all__ = ["changes", "collateral", "expects_no_change", "may_change", "refused_calls", "same"]


def same(a: Any, b: Any) -> bool:
    """Two settings are the same: booleans by identity, numbers within 1e-9, anything else by ``==``.

    Args:
        a: One value.
        b: The other.

    Examples:
        >>> same(1, 1.0), same(True, 1), same("on", "on")
        (True, False, True)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) < 1e-9
    return a == b


def may_change(expect: Expect, dev_id: str, attr: str) -> bool:
    """Whether the task lets this setting change: it asks for it, or ``may_change`` names it.

    ``may_change`` (``allow_changes`` in older files) holds device ids or
    globs (``"*-light"``: any setting of any light), or ``device.attribute``
    globs (``"tv.volume"``: only that setting), as Home Assistant's datasets
    ignore changes to named attributes.

    Args:
        expect: The task's ``expect`` block.
        dev_id: A device id.
        attr: One of its settings.

    Examples:
        >>> e = Expect(states={"tv": {"on": True}}, allow_changes=["*-light", "tv.volume"])
        >>> [may_change(e, d, a) for d, a in [("tv", "on"), ("tv", "volume"), ("tv", "input"), ("hall-light", "on")]]
        [True, True, False, True]
    """
    if attr in expect.states.get(dev_id, {}):
        return True
    return any(fnmatch.fnmatchcase(dev_id, p) if "." not in p else fnmatch.fnmatchcase(f"{dev_id}.{attr}", p)
               for p in expect.allow_changes)


def changes(start: dict[str, dict[str, Any]], home: Home) -> list[tuple[str, str, Any, Any]]:
    """Every setting that differs between the start and the end: ``(device, attribute, before, after)``.

    A device whose state is still the very dict of the start has not changed:
    the home gives a device a new state dict when it changes it
    (:meth:`~lares_kit.home.graph.Home.update_device`), so with a scene's start
    (:func:`~lares_kit.bench.scene.set_stage` keeps the home's own dicts) only
    the devices the episode changed are compared, in a home of any size.

    Args:
        start: Device id -> its settings when the episode started.
        home: The home as it is at the end.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> start = home.device_states(shared=True)
        >>> home.update_device("kitchen-light", {"on": True})
        >>> home.update_device("office-light", {"on": False})  # as it was: a new dict, the same settings
        >>> changes(start, home)
        [('kitchen-light', 'on', False, True)]
    """
    found = []
    for dev_id, dev in home.devices.items():
        before, now = start.get(dev_id, {}), dev.state
        if before is now:
            continue
        for attr in sorted(set(before) | set(now)):
            if not same(before.get(attr), now.get(attr)):
                found.append((dev_id, attr, before.get(attr), now.get(attr)))
    return found


def collateral(expect: Expect, start: dict[str, dict[str, Any]], home: Home) -> list[str]:
    """The devices the episode changed that the task did not ask for (its collateral damage), sorted.

    Args:
        expect: The task's ``expect`` block: ``states`` and ``may_change`` say what may change.
        start: Device id -> its settings when the episode started.
        home: The home as it is at the end.
    """
    return sorted({d for d, a, _, _ in changes(start, home) if not may_change(expect, d, a)})


def refused_calls(steps: list[dict[str, Any]]) -> list[int]:
    """The steps (numbered from 1) whose call the home's safety policy refused.

    Args:
        steps: The episode's steps, ``{"tool", "arguments", "result", "ok"}``, oldest first.
    """
    return [n for n, step in enumerate(steps, 1) if is_refusal(step.get("result", ""))]




def expects_no_change(expect: Expect) -> bool:
    """Whether the right answer to the task changes nothing in the home (it is infeasible, unsafe or irrelevant).

    Such tasks measure the other half of an agent: an agent that acts on
    everything fails them, as one that refuses everything fails the others.

    Args:
        expect: The task's ``expect`` block.

    Examples:
        >>> expects_no_change(Expect(mentions=["no oven"])), expects_no_change(Expect(states={"tv": {"on": True}}))
        (True, False)
    """
    ha_changes = expect.ha is not None and bool(expect.ha.changes)
    return (expect.unchanged and not (expect.states or expect.lit or expect.seen or expect.allow_changes or ha_changes)
            and expect.robot is None and expect.fires is None)
