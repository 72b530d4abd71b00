"""Agent-facing tools for any device: change one setting, read its state.
Sentences out, as in :mod:`lares_kit.tools.toolbox`.

Taught in ``notebooks/02_agent_facing_tools.ipynb`` beside the Lares tools
(lights and the robot): where those are high level, these two work on every
device a world file can hold -- a thermostat, a lock, blinds, a TV -- from
the device's attribute specs (:func:`lares_kit.home.devices.attributes_of`), so a
wrong setting or value is answered with what the device does accept.
:data:`lares_kit.tools.toolbox.DEVICE_TOOLS` is these two; a Toolbox adds them when
a home has more than lights, and :func:`add_to_list` when it has a to-do or
shopping list (Home Assistant's ``todo`` entities). Device APIs read from documents (SAGE) are
:mod:`lares_kit.device_apis.documents`.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ToolError, choices, did_you_mean
from ..home.devices import Attribute, attributes_of, check_value
from ..home.graph import Home
from ..sentences.wording import agree, in_sentence, is_plural, with_article
from .schema import DeviceId, ListId

__all__ = ["DEVICE_TOOLS", "add_to_list", "device_tools_for", "read_device", "set_device"]


def _device(home: Home, device_id: str):
    dev = home.devices.get(device_id)
    if dev is None or not dev.exposed:  # a device not exposed to the assistant is not there for it
        ids = [d.id for d in home.devices.values() if d.exposed]
        raise ToolError(f"No device found with the ID {device_id!r}.{did_you_mean(device_id, ids)} "
                        f"{choices('Devices', device_id, ids)}")
    return dev


def set_device(home: Home, device_id: DeviceId, attribute: str, value: bool | float | str) -> str:
    """Change one setting of a device. For example a thermostat's target, a lock's locked, blinds' position.

    Args:
        home: The home the device is in; supplied by the toolkit, never shown to the model.
        device_id: ID of the device, e.g. "hall-thermostat".
        attribute: The setting to change, e.g. "target", "on", "locked", "position".
        value: The new value: true/false, a number, or one of the named choices.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("townhouse")
        >>> set_device(home, "hall-thermostat", "target", 21)
        'The target of the thermostat in the Hall (hall-thermostat) is now 21 (was 19).'
        >>> set_device(home, "front-door-lock", "locked", False)
        'The front door lock in the Hall (front-door-lock) is now unlocked (was locked).'
        >>> set_device(home, "hall-thermostat", "target", "warm")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: 'warm' is not a valid target for the thermostat in the Hall (hall-thermostat);
        use a number from 5 to 30 °C.
    """
    dev = _device(home, device_id)
    attrs = attributes_of(dev.type, dev.capabilities)
    spec = attrs.get(attribute)
    where = f"the {in_sentence(dev.name)} in the {home.room_name(dev.room)} ({dev.id})"
    if spec is None or spec.read_only:
        settable = [f"{n} ({a.describe()})" for n, a in attrs.items() if not a.read_only]
        what = "can be read but not set on" if spec is not None else "is not a setting of"
        can = f"It can set: {'; '.join(settable)}." if settable else "It has no settings; it only reports readings."
        raise ToolError(f"{attribute!r} {what} {where}. {can}")
    new, allowed = check_value(spec, value)
    if allowed:
        raise ToolError(f"{value!r} is not a valid {attribute} for {where}; use {allowed}.")
    old = dev.state.get(attribute)
    if spec.kind == "bool":  # "the window ... is now open (was closed)", not "the open of the window is now true"
        subject, now, was = where, _flag(attribute, new), _flag(attribute, old)
    else:
        subject, now, was = f"the {attribute} of {where}", _value_text(new), _value_text(old)
    # "The blinds ... are open", "The position of the blinds ... is 100"
    subject, be = subject[0].upper() + subject[1:], agree(subject, "is")
    if old == new:
        return f"{subject} {be} already {now}; nothing changed."
    home.update_device(dev.id, {attribute: new})
    before = f" (was {was})" if old is not None else ""
    return f"{subject} {be} now {now}{before}."


def read_device(home: Home, device_id: DeviceId) -> str:
    """Read a device's state and what can be set on it, sensor readings included.

    Args:
        home: The home the device is in; supplied by the toolkit, never shown to the model.
        device_id: ID of the device, e.g. "hall-thermostat".

    Examples:
        >>> from lares_kit import load_world
        >>> print(read_device(load_world("townhouse"), "living-room-blinds"))  # doctest: +NORMALIZE_WHITESPACE
        The blinds in the Living room (living-room-blinds) are blinds: position 0% open.
        Settings: position (a number from 0 to 100 % open).
    """
    dev = _device(home, device_id)
    attrs = attributes_of(dev.type, dev.capabilities)
    state = ", ".join(_flag(k, v) if isinstance(v, bool) else f"{k} {_value_text(v, attrs.get(k))}"
                      for k, v in dev.state.items()) or "no readings"
    settable = [f"{n} ({a.describe()})" for n, a in attrs.items() if not a.read_only]
    # A world file's device description (e.g. what readings are comfortable) helps the model judge them.
    note = f" {dev.description}" if dev.description else ""
    # "The light ... is a light", "The spotlights ... are lights", "The blinds ... are blinds"
    kind = (dev.type if is_plural(dev.type) else f"{dev.type}s") if is_plural(dev.name) else with_article(dev.type)
    return (f"The {in_sentence(dev.name)} in the {home.room_name(dev.room)} ({dev.id}) {agree(dev.name, 'is')} "
            f"{kind}: {state}. "
            f"Settings: {'; '.join(settable) or 'none, it only reports readings'}.{note}")


def add_to_list(home: Home, list_id: ListId, item: str) -> str:
    """Add an item to a to-do or shopping list.

    Args:
        home: The home the list is in; supplied by the toolkit, never shown to the model.
        list_id: ID of the list, e.g. "shopping-list".
        item: The item to add, in the user's words, e.g. "oat milk".

    Examples:
        >>> from lares_kit.home.worlds import parse_world
        >>> home = parse_world({"id": "flat", "rooms": [{"id": "kitchen"}], "robot": {"id": "robot", "room": "kitchen"},
        ...     "devices": [{"id": "shopping-list", "name": "Shopping list", "type": "todo", "room": "kitchen",
        ...                  "state": {"items": []}}]})
        >>> add_to_list(home, "shopping-list", "oat milk")
        "Added 'oat milk' to the shopping list in the Kitchen (shopping-list); it has 1 item to do."
        >>> home.devices["shopping-list"].state["items"]
        [{'summary': 'oat milk', 'status': 'needs_action'}]
    """
    dev = _device(home, list_id)
    where = f"the {in_sentence(dev.name)} in the {home.room_name(dev.room)} ({dev.id})"
    if dev.type != "todo":
        lists = [d.id for d in home.devices.values() if d.type == "todo" and d.exposed]
        raise ToolError(f"{where[0].upper()}{where[1:]} is not a list. {choices('Lists', list_id, lists)}")
    what = str(item).strip()
    if not what:
        raise ToolError("The item is empty: say what to add, e.g. \"milk\".")
    items = [dict(i) if isinstance(i, dict) else i for i in dev.state.get("items") or []]
    items.append({"summary": what, "status": "needs_action"})
    home.update_device(dev.id, {"items": items})
    to_do = sum(1 for i in items if not isinstance(i, dict) or i.get("status") != "completed")
    to_do += int(dev.state.get("unlisted") or 0)
    return f"Added {what!r} to {where}; it has {to_do} item{'s' if to_do != 1 else ''} to do."


# A true/false setting in words, (when true, when false); others read "muted" / "not muted".
_FLAG_WORDS = {"on": ("on", "off"), "open": ("open", "closed"), "locked": ("locked", "unlocked"),
               "armed": ("armed", "disarmed")}


def _flag(attribute: str, value: Any) -> str:
    yes, no = _FLAG_WORDS.get(attribute, (attribute, f"not {attribute}"))
    return yes if value else no


def _value_text(value: Any, spec: Attribute | None = None) -> str:
    # A number reads with its unit when the spec has one: "28.5 °C", "71%", "1650 ppm".
    if isinstance(value, bool):
        return {True: "true", False: "false"}[value]
    if spec is not None and spec.unit and isinstance(value, (int, float)):
        return f"{value}{'' if spec.unit.startswith('%') else ' '}{spec.unit}"
    return str(value)


DEVICE_TOOLS: list[Callable[..., str]] = [set_device, read_device]


def device_tools_for(home: Home) -> list[Callable[..., str]]:
    """The device tools for a home: :data:`DEVICE_TOOLS`, and :func:`add_to_list` when it has a list to add to.

    Args:
        home: The home whose exposed devices decide.
    """
    lists = any(d.type == "todo" and d.exposed for d in home.devices.values())
    return [*DEVICE_TOOLS, add_to_list] if lists else list(DEVICE_TOOLS)
