"""Reading ``during:`` events from world and task files: the syntax, and the checks that name what is wrong.

Part of :mod:`lares_kit.home.during` (what happens while the agent works; taught in
``notebooks/05_world_knowledge.ipynb``); the format is documented in
``worlds/README.md`` and ``worlds/tasks/README.md``. A :class:`DuringEvent` is
plain data: when it happens (``after step 2``, ``at 30s``, ``after the first
look``) and the one change it makes (``move``, ``set``, ``carry`` or
``clock``). :func:`parse_during` checks each against the home it happens in
and fails with the file's own error (``WorldError``, ``TaskError``): one
sentence naming the file, the key path and what was expected. Playing the
events is :mod:`lares_kit.home.during`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..errors import LIST_AT_MOST, brief
from ..sentences.wording import in_sentence
from .devices import attributes_of, check_value

if TYPE_CHECKING:
    from .graph import Home

__all__ = ["CHANGES", "EVENT_KEYS", "WHEN_SYNTAX", "LATEST", "DuringEvent", "parse_during"]

CHANGES = ("move", "set", "carry", "clock")  # what an event does; exactly one per event
EVENT_KEYS = ("when", *CHANGES, "by", "says")
WHEN_SYNTAX = "'after step 2', 'at 30s' (on the home's clock) or 'after the first look'"
LATEST = 24 * 3600.0  # an event is at most a simulated day into the episode
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_STEP = re.compile(r"after step (-?\d+)")
_AT = re.compile(r"at (-?\d+(?:\.\d+)?) ?(s|sec|seconds?|m|min|minutes?)?")
_LOOK = re.compile(r"after (?:the )?(?:robot's )?(first|second|third|fourth|fifth) look|after look (-?\d+)")


@dataclass
class DuringEvent:
    """One change while the agent works: when it happens, and what it does.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> [event] = parse_during([{"when": "after step 2", "set": {"lounge-light": {"on": False}}, "by": "Ana"}],
        ...                        home, "mine.yaml", "during", ValueError)
        >>> event.trigger, event.at, event.change, event.sentence(home)
        ('step', 2.0, 'set', 'Ana switched the light in the Lounge (lounge-light) off')
    """

    when: str  # as written: "after step 2", "at 30s", "after the first look"
    trigger: str  # "step", "time" or "look"
    at: float  # the step (1: after the first action), the clock's seconds, or which look (1: the first)
    change: str  # one of CHANGES
    what: Any  # move: {item: room}; set: {device: {attribute: value}}; carry: a room id; clock: a time of day
    by: str = ""  # who does it ("Ana"), for the sentence; "": someone
    says: str = ""  # the sentence the transcript shows; "": written from the change

    def sentence(self, home: Home) -> str:
        """What happened, in words: ``says`` if the file gave one, else written from the change.

        Args:
            home: The home it happens in (for room and device names).
        """
        if self.says:
            return self.says
        who = self.by or "Someone"
        where = home.room_name
        if self.change == "move":
            return "; ".join((f"{self.by} took " if self.by else "") + f"{home.items[i].name} ({i})"
                             + ("" if self.by else " went") + f" to the {where(r)} ({r})" for i, r in self.what.items())
        if self.change == "carry":
            return f"{who} carried the robot to the {where(self.what)} ({self.what})"
        if self.change == "clock":
            return f"Time passed: the clock moved on to {self.what}"
        parts = []
        for dev_id, update in self.what.items():
            dev = home.devices[dev_id]
            name = f"the {in_sentence(dev.name)} in the {where(dev.room)} ({dev_id})"
            if set(update) == {"on"}:
                parts.append(f"{who} switched {name} {'on' if update['on'] else 'off'}")
            elif set(update) == {"locked"}:
                parts.append(f"{who} {'locked' if update['locked'] else 'unlocked'} {name}")
            else:
                said = ", ".join(f"{a} {_word(v)}" for a, v in update.items())
                parts.append(f"{who} set {name}: {said}")
        return "; ".join(parts)


# ------------------------------------------------------------------ parsing
def parse_during(raw: Any, home: Home, source: str, key: str, error: Callable[[str, str, str], Exception]
                 ) -> list[DuringEvent]:
    """Events from a world or task file, checked against ``home``; a bad one raises ``error(source, key, message)``.

    Args:
        raw: The ``during`` value as YAML read it: a list of mappings, each with ``when`` and one change.
        home: The home the events happen in: its items, rooms and devices are the valid names.
        source: The file, named first in errors.
        key: The key path of ``raw``, e.g. ``during`` or ``tasks[3].during``.
        error: The file kind's error (``WorldError``, ``TaskError``): called as ``error(source, key, message)``.

    Examples:
        >>> from lares_kit import load_world
        >>> parse_during([{"when": "after step 0", "move": {"bruno": "kitchen"}}], load_world("lares-home"),
        ...              "mine.yaml", "during", ValueError)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: ('mine.yaml', 'during[0].when',
        "steps count from 1: 'after step 1' is right after the agent's first action, not 'after step 0'")
    """
    def fail(where: str, message: str) -> None:
        raise error(source, where, message)

    if not isinstance(raw, list):
        fail(key, f"expected a list of events, each like {{when: after step 2, set: {{...}}}}, got {brief(raw)}")
    events = []
    for n, entry in enumerate(raw):
        where = f"{key}[{n}]"
        if not isinstance(entry, dict):
            fail(where, f"expected an event: a mapping with when and one of {', '.join(CHANGES)}, got {brief(entry)}")
        for name in entry:
            if name not in EVENT_KEYS:
                fail(_key(where, name), f"unknown key {brief(name)}; an event has: {', '.join(EVENT_KEYS)}")
        trigger, at = _when(entry.get("when"), f"{where}.when", fail)
        kinds = [c for c in CHANGES if c in entry]
        if len(kinds) != 1:
            fail(where, f"an event does exactly one thing: give one of {', '.join(CHANGES)}"
                 + (f", not {' and '.join(kinds)}" if kinds else ""))
        for name in ("by", "says"):
            if name in entry and not (isinstance(entry[name], str) and entry[name].strip()):
                fail(f"{where}.{name}", f"expected a few words ({'who does it' if name == 'by' else 'what happened'})"
                     f", got {brief(entry[name])}")
        what = _CHECKS[kinds[0]](entry[kinds[0]], home, f"{where}.{kinds[0]}", fail)
        events.append(DuringEvent(str(entry["when"]).strip(), trigger, at, kinds[0], what,
                                  entry.get("by", "").strip(), entry.get("says", "").strip()))
    return events


def _when(raw: Any, where: str, fail: Callable[[str, str], None]) -> tuple[str, float]:
    text = " ".join(raw.lower().split()) if isinstance(raw, str) else None
    if text is None:
        fail(where, f"missing when it happens: {WHEN_SYNTAX}")
    if m := _STEP.fullmatch(text):
        if int(m.group(1)) < 1:
            fail(where, f"steps count from 1: 'after step 1' is right after the agent's first action, not {raw!r}")
        return "step", float(m.group(1))
    if m := _AT.fullmatch(text):
        seconds = float(m.group(1)) * (60 if (m.group(2) or "s").startswith("m") else 1)
        if not 0 < seconds <= LATEST:
            fail(where, f"{raw!r} is not a time into the episode: give more than 0 s and at most a day (1440m)")
        return "time", seconds
    if m := _LOOK.fullmatch(text):
        nth = _ORDINALS[m.group(1)] if m.group(1) else int(m.group(2))
        if nth < 1:
            fail(where, f"looks count from 1: 'after look 1' is right after the robot's first look, not {raw!r}")
        return "look", float(nth)
    fail(where, f"{brief(raw)} is not a moment of the episode; write {WHEN_SYNTAX}")
    raise AssertionError  # fail raised


def _key(prefix: str, name: Any) -> str:
    # The key path of name under prefix; a key that is a paragraph is cut to a few words.
    return f"{prefix}.{name if isinstance(name, str) and len(name) <= 40 else brief(name)}"


def _names(names: Any) -> str:
    names = list(names)
    return ", ".join(names[:LIST_AT_MOST]) + (f" and {len(names) - LIST_AT_MOST:,} more" if len(names) > LIST_AT_MOST
                                             else "")


def _room(room: Any, home: Home, where: str, fail: Callable[[str, str], None]) -> str:
    if not (isinstance(room, str) and room in home.graph):
        fail(where, f"unknown room {brief(room)}; rooms are: {_names(home.graph.nodes)}")
    return room


def _check_move(raw: Any, home: Home, where: str, fail: Callable[[str, str], None]) -> dict[str, str]:
    if not (isinstance(raw, dict) and raw):
        fail(where, f"expected item -> room, like {{bruno: kitchen}}, got {brief(raw)}")
    for item in raw:
        if item not in home.items:
            fail(_key(where, item), f"no movable item {brief(item)} in world {home.id!r}; items are: "
                 f"{_names(home.items) or 'none'}")
        _room(raw[item], home, f"{where}.{item}", fail)
    return dict(raw)


def _check_set(raw: Any, home: Home, where: str, fail: Callable[[str, str], None]) -> dict[str, dict[str, Any]]:
    if not (isinstance(raw, dict) and raw):
        fail(where, f"expected device -> its new settings, like {{lounge-light: {{on: false}}}}, got {brief(raw)}")
    out: dict[str, dict[str, Any]] = {}
    for dev_id, update in raw.items():
        dev_key = _key(where, dev_id)
        dev = home.devices.get(dev_id) if isinstance(dev_id, str) else None
        if dev is None:
            fail(dev_key, f"no device {brief(dev_id)} in world {home.id!r}; devices are: {_names(home.devices)}")
        if not (isinstance(update, dict) and update):
            fail(dev_key, f"expected its settings, like {{on: false}}, got {brief(update)}")
        specs = attributes_of(dev.type, dev.capabilities)
        out[dev_id] = {}
        for attr, value in update.items():
            if attr not in specs and attr not in dev.state:  # a sensor's reading may change too: not only settings
                fail(_key(dev_key, attr), f"{brief(attr)} is not a setting of {dev.type} {dev_id!r}; it has: "
                     f"{', '.join(dict.fromkeys([*specs, *dev.state])) or 'none'}")
            if attr in specs:
                value, allowed = check_value(specs[attr], value)
                if allowed is not None:
                    fail(f"{dev_key}.{attr}", f"{brief(update[attr])} is not valid here; use {allowed}")
            elif not isinstance(value, (bool, int, float, str)):
                fail(f"{dev_key}.{attr}", f"expected a value, got {brief(value)}")
            out[dev_id][attr] = value
    return out


def _check_carry(raw: Any, home: Home, where: str, fail: Callable[[str, str], None]) -> str:
    return _room(raw, home, where, fail)


def _check_clock(raw: Any, home: Home, where: str, fail: Callable[[str, str], None]) -> str:
    from ..sentences.times import TimeError, minutes_of_day

    try:
        minutes_of_day(raw if isinstance(raw, str) else "")
    except TimeError:
        fail(where, f"expected the time of day the clock moves on to, like '22:30' or '10pm', got {brief(raw)}")
    return raw


_CHECKS = {"move": _check_move, "set": _check_set, "carry": _check_carry, "clock": _check_clock}


def _word(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)
