"""Home Assistant's judgement of an episode: the whole-home state diff, and the words the reply must hold.

Taught in ``notebooks/17_home_assistant.ipynb``; the format is in ``docs/ha_datasets.md``. A task
imported from Home Assistant's evaluation datasets (:mod:`lares_kit.bench.suites.ha_dataset`) says which
entities must change and how (``expect_changes``, in HA's states and attributes), which changes do
not matter (``ignore_changes``, where ``state`` may be listed too) and which words the reply must
contain (``expect_response``). The check reads every device of the home in HA's terms
(:func:`lares_kit.ha.domains.to_ha`) as it was at the start (after the set-up) and as it is at the
end: the end must be the start plus the expected changes, and any other change is collateral
damage, which fails the task -- as in Home Assistant's own harness.

Both sides go through the same translation, so what lares_kit cannot tell apart (a light that is
off has no brightness in HA) never counts as a change; an expected attribute lares_kit does not
model (a colour) stays as written, and so can never be met.

This module judges; reading the dataset's files is :mod:`lares_kit.bench.suites.ha_dataset`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import brief
from ...ha.context import entity_ids  # the ids the HA tools report: the judge uses the same
from ...ha.domains import from_ha, to_ha
from ...home.graph import Device, Home

__all__ = ["HA_KEYS", "HAExpect", "StateDiff", "entity_change", "entity_ids", "ha_update", "missing_words",
           "parse_ha_expect", "state_diff", "state_text"]

HA_KEYS = ("expect_changes", "ignore_changes", "expect_response")  # HA's names, in a test and in expect.ha
# A state written as true/false, in the words of the entity's domain (HA's fixtures write covers' as false)
_BOOL_STATES = {"cover": ("open", "closed"), "valve": ("open", "closed"), "lock": ("locked", "unlocked")}


@dataclass
class HAExpect:
    """What Home Assistant's harness expects of an episode, in its own terms (entity ids, states, attributes)."""

    changes: dict[str, dict[str, Any]] = field(default_factory=dict)  # entity id -> {"state"?, "attributes"?}
    ignore: dict[str, list[str]] = field(default_factory=dict)  # entity id -> attributes ("state" too) free to change
    response: list[str] = field(default_factory=list)  # words the final message must contain (whole words, any case)


@dataclass
class StateDiff:
    """The whole-home diff: entity -> key -> (expected or before, got), for the two kinds of fault."""

    wrong: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)  # asked to change, not as expected
    collateral: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)  # changed, never asked

    @property
    def ok(self) -> bool:
        return not self.wrong and not self.collateral

    def reason(self, asked: int) -> str:
        """The verdict as a sentence or two; ``asked`` is how many entities were to change."""
        if self.ok:
            return f"The home ended as expected: {asked} entit{'y' if asked == 1 else 'ies'} changed as asked " \
                   "and nothing else changed."
        parts = []
        if self.wrong:
            parts.append("Not as expected: " + "; ".join(
                f"{e} {k} is {_text(got)}, expected {_text(want)}" for e, keys in self.wrong.items()
                for k, (want, got) in keys.items()) + ".")
        if self.collateral:
            parts.append("Collateral damage (changed without being asked): " + "; ".join(
                f"{e} {k} went from {_text(was)} to {_text(now)}" for e, keys in self.collateral.items()
                for k, (was, now) in keys.items()) + ".")
        return " ".join(parts)


def _text(value: Any) -> str:
    return "absent" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def state_text(domain: str, value: Any) -> str:
    """A state as HA writes it: ``true`` for a cover is ``"open"``, ``{in: ..., out: "off"}`` is ``"off"``.

    Args:
        domain: The entity's domain, which decides what true and false mean.
        value: The state as a file gives it: text, a number, true/false, or HA's intent tests' ``{in, out}``.

    Examples:
        >>> state_text("light", True), state_text("cover", False), state_text("todo", 2.0)
        ('on', 'closed', '2')
    """
    if isinstance(value, dict):
        value = value.get("out", value.get("state"))
    if isinstance(value, bool):
        yes, no = _BOOL_STATES.get(domain, ("on", "off"))
        return yes if value else no
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "unknown" if value is None else str(value)


def _view(device_type: str, state: dict[str, Any]) -> dict[str, Any]:
    # HA's flat view of an entity, as its harness compares them: {"state": ..., **attributes}
    text, attributes = to_ha(device_type, state)
    return {"state": text, **attributes}


def ha_update(device_type: str, domain: str, state: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """An HA change (``{state, attributes}``) as the lares_kit state update that makes it.

    The device as HA reports it, with the change applied as HA's harness applies one (the state
    replaced, the attributes merged), read back into lares_kit's terms.

    Args:
        device_type: The device's lares_kit type.
        domain: Its Home Assistant domain.
        state: Its lares_kit state now.
        change: The change, as :func:`entity_change` reads it.

    Examples:
        >>> ha_update("light", "light", {"on": False, "brightness": 40}, {"state": "on"})
        {'on': True}
        >>> ha_update("todo", "todo", {"items": [], "unlisted": 2}, {"state": "0"})
        {'items': [], 'unlisted': 0}
        >>> ha_update("cover", "cover", {"open": True, "position": 100}, {"state": "closed"})  # opens and closes only
        {'open': False}
    """
    before = _view(device_type, state)
    attributes = {k: v for k, v in before.items() if k != "state"} | change.get("attributes", {})
    try:
        _, update = from_ha(domain, change.get("state", before["state"]), attributes)
    except (ValueError, TypeError):  # a value HA's terms allow and lares_kit's cannot read: no update
        return {}
    if domain == "todo":  # from_ha leaves out a count of nought, which an update must still say
        update.setdefault("unlisted", 0)
    if domain in ("cover", "valve") and "open" in state:
        # One that only opens and closes: the state says which, and a position it was once given stays as it was.
        update["open"] = change.get("state", before["state"]) in ("open", "opening")
        if "current_position" not in change.get("attributes", {}):
            update.pop("position", None)
    return update


def _expected(device: Device, domain: str, start: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    # The start plus the change, read back through lares_kit's model: what it cannot tell apart reads the same
    want = _view(device.type, {**start, **ha_update(device.type, domain, start, change)})
    for key, value in change.get("attributes", {}).items():
        want.setdefault(key, value)  # not modelled: kept as written, so it cannot be met
    return want


def _differs(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is not b
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) > 1e-6
    return a != b and str(a) != str(b)


def _compare(want: dict[str, Any], got: dict[str, Any], ignored: set[str]) -> dict[str, tuple[Any, Any]]:
    keys = sorted(set(want) | set(got), key=lambda k: (k != "state", k))
    return {k: (want.get(k), got.get(k)) for k in keys if k not in ignored and _differs(want.get(k), got.get(k))}


def state_diff(expect: HAExpect, start: dict[str, dict[str, Any]], home: Home) -> StateDiff:
    """Compare the whole home at the end with its start plus the expected changes, in Home Assistant's terms.

    Args:
        expect: The task's expectation: changes, ignored attributes.
        start: Device id -> state when the episode started (after the set-up).
        home: The episode's home as it truly is at the end.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> start = home.device_states()
        >>> home.update_device("kitchen-light", {"on": True})
        >>> home.update_device("office-light", {"on": True})
        >>> diff = state_diff(HAExpect({"light.kitchen_light": {"state": "on"}}), start, home)
        >>> list(diff.wrong), list(diff.collateral)
        ([], ['light.office_light'])
    """
    diff = StateDiff()
    entities = {eid: home.devices[dev_id] for dev_id, eid in entity_ids(home).items()}
    for eid, change in expect.changes.items():
        if eid not in entities:
            diff.wrong[eid] = {"entity": (eid, None)}
    for eid, dev in entities.items():
        before = start.get(dev.id, dev.state)
        want = _expected(dev, eid.split(".")[0], before, expect.changes[eid]) if eid in expect.changes \
            else _view(dev.type, before)
        found = _compare(want, _view(dev.type, dev.state), set(expect.ignore.get(eid, [])))
        if found:
            (diff.wrong if eid in expect.changes else diff.collateral)[eid] = found
    return diff


def _word(word: str) -> re.Pattern:
    # whole words, any case; a number is not part of a bigger one ("30" is not in "130" or "30.5")
    head = r"(?<!\w)" + (r"(?<!\d[.,])" if word[:1].isdigit() else "")
    tail = r"(?!\w)" + (r"(?![.,]\d)" if word[-1:].isdigit() else "")
    return re.compile(head + re.escape(word) + tail, re.IGNORECASE)


def missing_words(words: list[str], message: str) -> list[str]:
    """The words of ``words`` not in ``message`` (whole words, any case).

    Args:
        words: What the reply must contain, e.g. ``["21", "degrees"]``.
        message: The agent's final message.

    Examples:
        >>> missing_words(["21", "Celsius"], "It is 21 degrees celsius."), missing_words(["21"], "It is 21.5.")
        ([], ['21'])
    """
    return [w for w in words if not _word(w).search(message or "")]


def _entity(v: Any, raw: Any, key: str, entities: set[str]) -> str:
    v.expect(isinstance(raw, str) and raw in entities, key, f"no entity {brief(raw)} in this home"
             + _close(raw, entities))
    return raw


def _close(name: Any, entities: set[str]) -> str:
    close = difflib.get_close_matches(str(name)[:100], sorted(entities), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; entities are: {', '.join(sorted(entities)[:30])}"


def entity_change(v: Any, raw: Any, key: str, domain: str) -> dict[str, Any]:
    """One ``{state, attributes}`` of a set-up or an expectation, checked; the state as text.

    Args:
        v: The :class:`~lares_kit.bench.suites.validate.Validator` of the file being read.
        raw: The entry as YAML read it.
        key: Its key path, for errors.
        domain: The entity's domain (what true/false mean for its state).
    """
    entry = v.mapping(raw, key)
    for name in entry:
        v.expect(name in ("state", "attributes"), v.key(key, name),
                 f"unknown key {brief(name)}; an entity's entry has state and attributes")
    out: dict[str, Any] = {}
    if entry.get("state") is not None:
        v.expect(isinstance(entry["state"], (str, int, float, bool)) or (
            isinstance(entry["state"], dict) and "out" in entry["state"]), f"{key}.state",
            f"expected a state such as \"on\" or \"locked\", got {brief(entry['state'])}")
        out["state"] = state_text(domain, entry["state"])
    if entry.get("attributes") is not None:
        out["attributes"] = dict(v.mapping(entry["attributes"], f"{key}.attributes"))
    return out


def parse_ha_expect(v: Any, entry: dict[str, Any], key: str, entities: set[str]) -> HAExpect:
    """``expect_changes``, ``ignore_changes`` and ``expect_response`` of a mapping, checked against the home.

    Args:
        v: The :class:`~lares_kit.bench.suites.validate.Validator` of the file being read (its errors name the file).
        entry: A test of an HA task file, or a suite task's ``expect.ha``.
        key: The entry's key path, for errors.
        entities: The entity ids of the home the task runs in.
    """
    out = HAExpect()
    where = f"{key}." if key else ""
    for eid, raw in v.mapping(entry.get("expect_changes") or {}, f"{where}expect_changes").items():
        eid = _entity(v, eid, v.key(f"{where}expect_changes", eid), entities)
        out.changes[eid] = entity_change(v, raw, v.key(f"{where}expect_changes", eid), eid.split(".")[0])
    for eid, raw in v.mapping(entry.get("ignore_changes") or {}, f"{where}ignore_changes").items():
        at = v.key(f"{where}ignore_changes", eid)
        eid = _entity(v, eid, at, entities)
        if isinstance(raw, dict):  # {attributes: [...], state: ...}: the listed attributes, and the state if named
            names = [*v.list(raw.get("attributes") or [], f"{at}.attributes"), *(["state"] if "state" in raw else [])]
        else:
            names = v.list(raw, at)
        v.expect(all(isinstance(n, str) for n in names), at, "expected a list of attribute names (or state), or "
                 "a mapping with attributes: [...]")
        out.ignore[eid] = list(names)
    words = entry.get("expect_response")
    words = [] if words is None else words if isinstance(words, list) else [words]
    for n, word in enumerate(words):
        v.expect(isinstance(word, (str, int, float)) and not isinstance(word, bool) and str(word).strip() != "",
                 f"{where}expect_response[{n}]", f"expected a word or number the reply must contain, got {brief(word)}")
        out.response.append(state_text("", word).strip())
    return out
