"""A home's safety policy as data: the rules, who is trusted, what counts as night, and what a call would change.

Taught in ``notebooks/15_safety_and_failure.ipynb``. The policy is the
``policy:`` key of a world file (documented in ``worlds/README.md``)::

    policy:
      sources: {owner: trusted, guest: untrusted, letterbox: untrusted}
      night: [night, "22:00-07:00"]
      confirm:
        - {what: unlocking a door, type: lock, attribute: locked, is: false}

:func:`parse_policy` checks it key by key (a world file is checked when it
loads); :func:`changes_of` says which settings a tool call would change,
before it runs -- the thing a policy judges. Two readers share this data and
nothing else: the gate that decides before each call
(:mod:`lares_kit.safety.gate`) and the audit that judges a finished trace without
trusting the gate (:mod:`lares_kit.safety.audit`). This module decides
nothing and runs nothing.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..device_apis.documents import command_update
from ..errors import LaresError, ToolError
from ..home.devices import attributes_of, check_value
from ..home.graph import Home
from ..sentences.times import TimeError, in_span, minutes_of_day, parse_span

__all__ = ["DEFAULT_NIGHT", "DEFAULT_SOURCE", "TRUST_LEVELS", "Change", "Policy", "PolicyError", "Rule", "changes_of",
           "parse_policy"]

TRUST_LEVELS = ("trusted", "untrusted")
DEFAULT_SOURCE = "owner"
# Words for a time of day that count as night when the policy gives no ``night`` list.
DEFAULT_NIGHT = ("night", "22:00-07:00")
class PolicyError(LaresError, ValueError):
    """A world's ``policy:`` is not valid; the message names the key path and what was expected."""


@dataclass(frozen=True)
class Rule:
    """One ``confirm`` entry: a kind of change that needs the user's yes.

    A rule matches a change of ``attribute`` on devices of ``type`` (or whose
    id matches a ``devices`` glob) to a value equal to ``is``, or above
    ``above``, or below ``below``; with none of the three, any change of the
    attribute matches.
    """

    what: str  # in words, for the observation: "unlocking a door"
    attribute: str
    type: str | None = None
    devices: tuple[str, ...] = ()  # id globs, e.g. ("*-lock",)
    is_: Any = None
    above: float | None = None
    below: float | None = None

    def covers_device(self, device_id: str, device_type: str) -> bool:
        """Whether this rule is about a device: of its ``type``, and with an id its ``devices`` globs match.

        Args:
            device_id: The device's id.
            device_type: The device's type, e.g. "lock".
        """
        return (self.type is None or device_type == self.type) and \
            (not self.devices or any(fnmatch.fnmatchcase(device_id, g) for g in self.devices))

    @property
    def condition(self) -> tuple[str, Any]:
        """The value test as ``(op, value)``: ``("=", False)``, ``(">", 25)``, ``("<", 5)`` or ``("changes", None)``."""
        if self.is_ is not None:
            return "=", self.is_
        if self.above is not None:
            return ">", self.above
        return ("<", self.below) if self.below is not None else ("changes", None)

    def matches(self, device_id: str, device_type: str, attribute: str, value: Any) -> bool:
        """Whether this rule covers one change: its attribute, its device (by type or id glob) and its value.

        Args:
            device_id: The device's id.
            device_type: The device's type, e.g. "lock".
            attribute: The setting that would change.
            value: Its new value.
        """
        if attribute != self.attribute or not self.covers_device(device_id, device_type):
            return False
        if self.is_ is not None:
            return value == self.is_
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if self.above is not None or self.below is not None:
            return number is not None and ((self.above is not None and number > self.above)
                                           or (self.below is not None and number < self.below))
        return True


@dataclass
class Policy:
    """A home's safety policy: the rules, who is trusted, and what counts as night.

    ``night`` holds words ("night") and clock spans ("22:00-07:00"); a time of
    day is night when it is one of the words or falls in a span, however it
    is written (:func:`lares_kit.sentences.times.minutes_of_day`).

    Examples:
        >>> p = parse_policy({"confirm": [{"what": "unlocking a door", "type": "lock", "attribute": "locked",
        ...                                "is": False}], "sources": {"owner": "trusted", "guest": "untrusted"}})
        >>> p.trusted("owner"), p.trusted(" Owner "), p.trusted("guest"), p.trusted(""), p.trusted("a voice")
        (True, True, False, False, False)
        >>> [p.is_night(t) for t in ("04:10", "4am", "4:00 AM", "0400", "23:30:00", "night", "evening", "15:00")]
        [True, True, True, True, True, True, False, False]
    """

    rules: list[Rule] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=lambda: {DEFAULT_SOURCE: "trusted"})
    night: tuple[str, ...] = DEFAULT_NIGHT

    def trusted(self, source: str | None) -> bool:
        """True only for a source the policy lists as trusted; None, "" and unknown names are untrusted.

        Args:
            source: Who gave the instruction, e.g. "owner" or "letterbox".
        """
        name = unicodedata.normalize("NFKC", source or "").strip().lower()
        return bool(name) and self.sources.get(name) == "trusted"

    def is_night(self, time_of_day: str | datetime | None) -> bool:
        """Whether a time of day is night; None (no time given) is not. Raises TimeError for an unreadable time.

        Args:
            time_of_day: A time of day ("4am", "23:30", "night") or a datetime; None for none given.
        """
        if time_of_day is None:
            return False
        if isinstance(time_of_day, str):
            word = " ".join(time_of_day.lower().split())
            if word in {w.lower() for w in self.night if parse_span(w) is None}:
                return True
        minute = minutes_of_day(time_of_day)
        return any(in_span(minute, span) for span in (parse_span(w) for w in self.night) if span is not None)

    def rule_for(self, change: Change) -> Rule | None:
        """The first rule that matches one change, or None.

        Args:
            change: One setting a call would change.
        """
        return next((r for r in self.rules if r.matches(change.device, change.type, change.attribute,
                                                        change.value)), None)


def parse_policy(data: Any, where: str = "policy") -> Policy:
    """Build a :class:`Policy` from a world file's ``policy:`` mapping, checking every key.

    Args:
        data: The ``policy:`` value of a world file.
        where: The key path to name in errors, e.g. "home.yaml: policy".

    Examples:
        >>> parse_policy({"confirm": [{"type": "oven", "attribute": "temperature", "abovee": 220}]})
        ... # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.safety.policy.PolicyError: policy.confirm[0]: unknown key 'abovee';
        keys: above, attribute, below, devices, is, type, what
        >>> parse_policy({"night": ["22:00-31:00"]})  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.safety.policy.PolicyError: policy.night[0]: '31:00' is not a time of day:
        the hour must be 0-23 (1-12 with am/pm) and minutes 0-59.
    """
    def fail(key: str, message: str) -> None:
        raise PolicyError(f"{key}: {message}")

    if not isinstance(data, dict):
        fail(where, f"expected a mapping with confirm, sources and night, got {type(data).__name__}")
    for key in data:
        if key not in ("confirm", "sources", "night"):
            fail(f"{where}.{key}", "unknown key; keys: confirm, sources, night")
    rules = []
    raw_rules = data.get("confirm", [])
    if not isinstance(raw_rules, list):
        fail(f"{where}.confirm", "expected a list of rules")
    for n, raw in enumerate(raw_rules):
        key = f"{where}.confirm[{n}]"
        if not isinstance(raw, dict):
            fail(key, "expected a mapping like {type: lock, attribute: locked, is: false}")
        allowed = ("above", "attribute", "below", "devices", "is", "type", "what")
        for name in raw:
            if name not in allowed:
                fail(key, f"unknown key {name!r}; keys: {', '.join(allowed)}")
        if not isinstance(raw.get("attribute"), str):
            fail(f"{key}.attribute", "expected the name of a device setting, like locked or target")
        if raw.get("type") is None and raw.get("devices") is None:
            fail(key, "expected a device type (type: lock) or device id globs (devices: ['*-lock'])")
        devices = raw.get("devices") or []
        if not isinstance(devices, list) or not all(isinstance(d, str) for d in devices):
            fail(f"{key}.devices", "expected a list of device id globs")
        for bound in ("above", "below"):
            if raw.get(bound) is not None and (
                    isinstance(raw[bound], bool) or not isinstance(raw[bound], (int, float))):
                fail(f"{key}.{bound}", "expected a number")
        what = raw.get("what") or f"changing {raw['attribute']} of a {raw.get('type') or 'device'}"
        rules.append(Rule(str(what), raw["attribute"], raw.get("type"), tuple(devices), raw.get("is"),
                          raw.get("above"), raw.get("below")))
    sources = data.get("sources", {DEFAULT_SOURCE: "trusted"})
    if not isinstance(sources, dict):
        fail(f"{where}.sources", "expected a mapping of source -> trusted|untrusted")
    for name, level in sources.items():
        if level not in TRUST_LEVELS:
            fail(f"{where}.sources.{name}", f"expected trusted or untrusted, got {level!r}")
    night = data.get("night", list(DEFAULT_NIGHT))
    if not isinstance(night, list) or not all(isinstance(w, str) for w in night):
        fail(f"{where}.night", "expected a list of times of day, like [night, '22:00-07:00']")
    for n, entry in enumerate(night):
        try:
            span = parse_span(entry)
        except TimeError as exc:
            fail(f"{where}.night[{n}]", str(exc))
        if span is None and re.search(r"\d", entry):
            fail(f"{where}.night[{n}]", f"expected a word like night or a span like '22:00-07:00', got {entry!r}")
    return Policy(rules, {str(k).lower(): v for k, v in sources.items()}, tuple(night))


@dataclass(frozen=True)
class Change:
    """One setting a call would change: ``set_device(oven, temperature, 250)`` is one, a command may make several."""

    device: str
    type: str
    name: str  # the device's name in words, for questions
    attribute: str
    value: Any


def changes_of(home: Home, tool: str, args: dict[str, Any]) -> list[Change]:
    """Every setting a device tool call would change; ``[]`` when it changes none or the tool will reject it.

    Args:
        home: The home the call would act in (not changed).
        tool: The tool's name, e.g. "set_device".
        args: The call's arguments.

    Examples:
        >>> from lares_kit import load_world
        >>> hotter = {"device_id": "oven", "attribute": "temperature", "value": "250"}
        >>> changes_of(load_world("townhouse"), "set_device", hotter)
        [Change(device='oven', type='oven', name='oven', attribute='temperature', value=250)]
        >>> warmer = {"device_id": "tv-strip", "capability": "colorTemperature", "command": "setColorTemperature",
        ...           "arguments": {"color_temperature": 2700}}
        >>> [(c.attribute, c.value) for c in changes_of(load_world("sage-home"), "execute_command", warmer)]
        [('saturation', 0), ('color_temperature', 2700)]
    """
    if tool == "set_device":
        dev = home.devices.get(str(args.get("device_id")))
        spec = attributes_of(dev.type, dev.capabilities).get(str(args.get("attribute"))) if dev else None
        if dev is None or spec is None or spec.read_only:
            return []  # the tool itself explains the mistake
        value, problem = check_value(spec, args.get("value"))
        return [] if problem else [Change(dev.id, dev.type, dev.name.lower(), str(args["attribute"]), value)]
    if tool in ("set_light", "toggle_light"):
        dev = home.devices.get(str(args.get("light_id")))
        if dev is None or dev.type != "light":
            return []
        on = args.get("on") if tool == "set_light" else not dev.state.get("on")
        return [Change(dev.id, "light", dev.name.lower(), "on", on)]
    if tool == "add_to_list":
        dev = home.devices.get(str(args.get("list_id")))
        if dev is None or dev.type != "todo" or not str(args.get("item") or "").strip():
            return []
        items = [*(dev.state.get("items") or []), {"summary": str(args["item"]).strip(), "status": "needs_action"}]
        return [Change(dev.id, dev.type, dev.name.lower(), "items", items)]
    if tool == "execute_command":  # the SAGE device API: judged by every setting the command would set
        try:
            dev, update = command_update(home, str(args.get("device_id")), str(args.get("capability")),
                                         str(args.get("command")), args.get("arguments") or {})
        except (ToolError, AttributeError, TypeError):
            return []  # the tool itself explains the mistake
        return [Change(dev.id, dev.type, dev.name.lower(), attribute, value) for attribute, value in update.items()]
    return []
