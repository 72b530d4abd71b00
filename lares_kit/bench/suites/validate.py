"""Validating task files against their world, one key path at a time.

A :class:`Validator` carries the file name and the world the current task
runs in, so every check can fail with ``file: key.path: what was expected``
and name the valid choices (the rooms, the devices, a device's settings).
Used by :mod:`lares_kit.bench.suites.tasks`; it knows nothing about running tasks.

Placeholders: text the simulated user says and the regexes of a task may
contain ``{<item>.room}`` (the room the item is in when the episode starts,
after shuffling), ``{time_of_day}`` and ``{user}`` (from the set-up); see
:func:`lares_kit.bench.scene.fill`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from typing import Any

from ...errors import LIST_AT_MOST, brief
from ...home.devices import attributes_of, check_value
from ...home.graph import Home

__all__ = ["PLACEHOLDER", "REGEX_AT_MOST", "Validator"]

REGEX_AT_MOST = 10_000  # characters in one pattern; a longer one is a mistake, and slow to compile

# {pepper.room}, {time_of_day}, {user}. A letter first, so regex counts ({2,3}) are not placeholders.
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_-]*)(\.room)?\}")


def _names(names: Any) -> str:
    # "a, b, c" -- at most LIST_AT_MOST of them, so a 1,000-room world's error stays one line
    names = list(names)
    more = len(names) - LIST_AT_MOST
    return ", ".join(names[:LIST_AT_MOST]) + (f" and {more:,} more" if more > 0 else "")


def _kind(value: Any) -> str:
    return {type(None): "nothing", str: "a string", int: "a number", float: "a number", bool: "true/false",
            list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


class Validator:
    """Checks values from one file; ``home`` is the world of the task being read.

    Examples:
        >>> from lares_kit import load_world
        >>> v = Validator("x.yaml", ValueError, load_world("lares-home"))
        >>> v.room("hallway", "setup.robot")
        'hallway'
        >>> v.room("attic", "setup.robot")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: ('x.yaml', 'setup.robot',
                     "unknown room 'attic'; rooms are: lounge, hallway, kitchen, bedroom, office")
    """

    def __init__(self, source: str, error: Callable[[str, str, str], Exception], home: Home | None = None) -> None:
        self.source = source
        self.error = error
        self.home = home
        # which placeholders the current task can fill: time_of_day / user need a set-up value
        self.context: dict[str, bool] = {}

    def fail(self, key: str, message: str) -> None:
        raise self.error(self.source, key, message)

    def expect(self, cond: bool, key: str, message: str) -> None:
        if not cond:
            self.fail(key, message)

    @staticmethod
    def key(prefix: str, name: Any) -> str:
        """The key path of ``name`` under ``prefix``; a key that is a paragraph is cut to a few words.

        Examples:
            >>> Validator.key("tasks[0].setup.states", "oven")
            'tasks[0].setup.states.oven'
            >>> len(Validator.key("setup.states", "x" * 5000)) < 80
            True
        """
        text = name if isinstance(name, str) and len(name) <= 40 else brief(name)
        return f"{prefix}.{text}" if prefix else str(text)

    # ---------------------------------------------------------- shapes
    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        self.expect(isinstance(value, dict), key, f"expected a mapping, got {_kind(value)}")
        return value

    def list(self, value: Any, key: str) -> list[Any]:
        self.expect(isinstance(value, list), key, f"expected a list, got {_kind(value)}")
        return value

    def text(self, entry: dict[str, Any], name: str, key: str, default: Any = ...) -> Any:
        where = f"{key}.{name}" if key else name
        if name not in entry or entry[name] is None:
            self.expect(default is not ..., where, f"missing required key {name!r}")
            return default
        self.expect(isinstance(entry[name], str), where, f"expected a string, got {_kind(entry[name])}")
        return entry[name]

    def regex(self, pattern: Any, key: str) -> str:
        self.expect(isinstance(pattern, str) and pattern != "", key,
                    f"expected a regular expression, got {_kind(pattern)}")
        self.expect(len(pattern) <= REGEX_AT_MOST, key, f"a regular expression of {len(pattern):,} characters is too "
                    f"long (at most {REGEX_AT_MOST:,})")
        try:
            re.compile(PLACEHOLDER.sub("x", pattern))
        except re.error as exc:
            self.fail(key, f"not a valid regular expression ({exc})")
        return pattern

    def template(self, text: str, key: str) -> str:
        """Check the placeholders in ``text`` can be filled for this task."""
        for match in PLACEHOLDER.finditer(text):
            name, room = match.group(1), match.group(2)
            if room:
                self.item(name, key)
            else:
                self.expect(name in self.context, key,
                            f"unknown placeholder {brief(match.group(0))}; use {{<item>.room}}, "
                            "{time_of_day} or {user}")
                self.expect(self.context[name], key, f"{match.group(0)} needs setup.{name}")
        return text

    # ---------------------------------------------------------- the world
    def room(self, room: Any, key: str) -> str:
        self.expect(isinstance(room, str) and room in self.home.graph, key,
                    f"unknown room {brief(room)}; rooms are: {_names(self.home.graph.nodes)}")
        return room

    def item(self, item: Any, key: str) -> str:
        self.expect(isinstance(item, str) and item in self.home.items, key,
                    f"no movable item {brief(item)} in world {self.home.id!r}; items are: {_names(self.home.items)}")
        return item

    def place(self, place: Any, key: str) -> str:
        """A room id, or an item id standing for the room the item is in."""
        self.expect(isinstance(place, str) and (place in self.home.graph or place in self.home.items), key,
                    f"{brief(place)} is neither a room nor a movable item of world {self.home.id!r}")
        return place

    def devices_matching(self, pattern: str) -> list[str]:
        return [d for d in self.home.devices if fnmatch.fnmatchcase(d, pattern)]

    def device_globs(self, raw: Any, key: str, attributes: bool = False) -> list[str]:
        """Device ids or globs (``"*-light"``), and with ``attributes`` also ``"device.attribute"`` globs; each must
        match a device."""
        out = []
        for n, pattern in enumerate(self.list(raw, key)):
            device = pattern.split(".", 1)[0] if isinstance(pattern, str) and attributes else pattern
            self.expect(isinstance(pattern, str) and bool(self.devices_matching(device)), f"{key}[{n}]",
                        f"{brief(pattern)} matches no device in world {self.home.id!r}")
            out.append(pattern)
        return out

    def device_states(self, raw: Any, key: str, settable_only: bool) -> dict[str, dict[str, Any]]:
        """device id -> attribute -> value; expected states may also be ``{min: x, max: y}``."""
        out: dict[str, dict[str, Any]] = {}
        for dev_id, attrs in self.mapping(raw, key).items():
            dev_key = self.key(key, dev_id)
            dev = self.home.devices.get(dev_id)
            if dev is None:
                self.fail(dev_key, f"no device {brief(dev_id)} in world {self.home.id!r}; devices are: "
                          f"{_names(self.home.devices)}")
            specs = attributes_of(dev.type, dev.capabilities)
            out[dev_id] = {}
            for attr, value in self.mapping(attrs, dev_key).items():
                attr_key = self.key(dev_key, attr)
                spec = specs.get(attr)
                usable = spec is not None and not (settable_only and spec.read_only)
                if not usable and not (not settable_only and attr in dev.state):
                    settable = [n for n, s in specs.items() if not s.read_only]
                    self.fail(attr_key, f"{brief(attr)} is not a setting of {dev.type} {dev_id!r}; it has: "
                              f"{', '.join(settable) or 'none'}")
                out[dev_id][attr] = self._value(spec, value, attr_key, ranges=settable_only)
        return out

    def _value(self, spec: Any, value: Any, key: str, ranges: bool) -> Any:
        if ranges and isinstance(value, dict):
            self.expect(spec is not None and spec.kind == "number" and set(value) <= {"min", "max"} and value != {},
                        key, "a range is {min: x, max: y} and only fits number settings")
            return {bound: self._value(spec, v, f"{key}.{bound}", ranges=False) for bound, v in value.items()}
        if spec is None:
            self.expect(isinstance(value, (bool, int, float, str)), key, f"expected a value, got {_kind(value)}")
            return value
        checked, allowed = check_value(spec, value)
        self.expect(allowed is None, key, f"{brief(value)} is not valid here; use {allowed}")
        return checked
