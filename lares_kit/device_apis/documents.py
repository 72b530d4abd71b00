"""Device APIs from documents: list devices, read a capability's docs, get an attribute, run a command.

Taught in ``notebooks/11_device_apis_and_disambiguation.ipynb``. SAGE's
point: an agent can use any device *without device-specific code* if it can
read the device's documentation. Each device in a world file names its
capabilities (``docs: [switch, switchLevel]``); each capability is a short
document in ``lares_kit/data/capabilities.yaml`` -- its attributes, its
commands and their arguments. Ranges and choices come from the device's own
attribute specs (:func:`lares_kit.home.devices.attributes_of`), so a document
never disagrees with what the device accepts.

The four tools validate everything against the document and answer mistakes
with a sentence that says what is allowed: a wrong command lists the
capability's commands, an out-of-range value gives the range, a near-miss id
gets "did you mean". Finding a device from words ("the TV by the plant") is
:mod:`lares_kit.device_apis.nearby`.

Result shapes the offline model reads (:mod:`lares_kit.models.offline.designs.sage.rules`):
``- <id>: <name> in the <room> -- <where>; capabilities: a, b``;
``- <command>(<arg>: <range>): <doc>``; ``The <attr> of <id> is <value>.``;
``<id>: <attr> is now <value> (was <old>).``
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from ..errors import ToolError, choices, did_you_mean
from ..files.reading import parse_data
from ..home.clock import CLOCK_ATTRIBUTES, CLOCK_ID
from ..home.devices import attributes_of, check_value
from ..home.graph import Device, Home
from ..tools.schema import DeviceId

__all__ = ["capability_library", "device_capabilities", "device_extras", "capability_doc", "list_devices",
           "get_capability_docs", "get_attribute", "execute_command", "DEVICE_API_TOOLS"]


@lru_cache(maxsize=1)
def _library() -> dict[str, Any]:
    text = resources.files("lares_kit").joinpath("data/capabilities.yaml").read_text(encoding="utf-8")
    return parse_data(text, "capabilities.yaml")  # YAML 1.2 booleans: the commands `on` and `off` stay words


def capability_library() -> dict[str, Any]:
    """Every capability document, by name (a copy: change it freely).

    Examples:
        >>> sorted(capability_library()["switch"]["commands"])
        ['off', 'on']
    """
    return copy.deepcopy(_library())


def device_extras(home: Home, device_id: str) -> dict[str, Any]:
    """The world file's extra keys of one device (``docs``, ``near``), or ``{}``.

    Args:
        home: The home whose world file listed the device.
        device_id: The device's id, e.g. ``"tv-plant"``; an unknown id gives ``{}``.
    """
    return home.extra.get("device_extras", {}).get(device_id, {})


def device_capabilities(home: Home, device_id: str) -> list[str]:
    """The capabilities a device documents, in file order.

    Args:
        home: The home whose world file listed the device.
        device_id: The device's id, e.g. ``"fireplace-strip"``; an unknown id has none.

    Examples:
        >>> from lares_kit import load_world
        >>> device_capabilities(load_world("sage-home"), "fireplace-strip")
        ['switch', 'switchLevel', 'colorControl', 'colorTemperature']
    """
    return [c for c in device_extras(home, device_id).get("docs", []) if c in _library()]


def _device(home: Home, device_id: str) -> Device:
    dev = home.devices.get(device_id)
    if dev is not None and dev.exposed:  # a device not exposed to the assistant is not there for it
        return dev
    ids = [d.id for d in home.devices.values() if d.exposed]
    raise ToolError(f"No device has the id {device_id!r}.{did_you_mean(device_id, ids)} "
                    f"{choices('Devices', device_id, ids)}")


def _capability(home: Home, dev: Device, capability: str) -> dict[str, Any]:
    caps = device_capabilities(home, dev.id)
    if capability not in caps:
        raise ToolError(f"{dev.id} has no capability {capability!r}.{did_you_mean(capability, caps)} "
                        f"Its capabilities: {', '.join(caps) or 'none documented'}.")
    return _library()[capability]


def _range(dev: Device, attribute: str) -> str:
    spec = attributes_of(dev.type, dev.capabilities).get(attribute)
    return spec.describe() if spec is not None else "a value"


def capability_doc(home: Home, device_id: str, capability: str) -> str:
    """The full document of one capability of one device, with ranges and current values.

    Args:
        home: The home the device is in; its current values are shown.
        device_id: The device's id, e.g. ``"fireplace-strip"``; an unknown id raises ToolError.
        capability: The capability's name, e.g. "switchLevel".

    Examples:
        >>> from lares_kit import load_world
        >>> print(capability_doc(load_world("sage-home"), "fireplace-strip", "switchLevel"))
        fireplace-strip / switchLevel: brightness level.
        Attributes:
        - level: the brightness, in percent of full; a number from 0 to 100 % (now 90)
        Commands:
        - setLevel(level: a number from 0 to 100 %): Set the brightness level (0 is darkest).
    """
    dev = _device(home, device_id)
    doc = _capability(home, dev, capability)
    lines = [f"{dev.id} / {capability}: {doc['summary']}.", "Attributes:"]
    for attr, meaning in doc.get("attributes", {}).items():
        if attr not in dev.state:
            continue  # a shared document may describe more than this device has
        lines.append(f"- {attr}: {meaning}; {_range(dev, attr)} (now {_value_words(dev.state[attr])})")
        for value, use in doc.get("values", {}).get(attr, {}).items():
            lines.append(f"    {value}: {use}")
    commands = doc.get("commands") or {}
    lines.append("Commands:" if commands else "Commands: none (it can only be read).")
    for name, cmd in commands.items():
        args = ", ".join(f"{arg}: {_range(dev, attr)}" for arg, attr in (cmd.get("args") or {}).items())
        lines.append(f"- {name}({args}): {cmd['doc']}")
    return "\n".join(lines)


def _value_words(value: Any) -> str:
    return {True: "true", False: "false"}.get(value, str(value)) if isinstance(value, bool) else str(value)


def _summary(home: Home, dev: Device) -> str:
    caps = device_capabilities(home, dev.id)
    what = "; ".join(f"{c} ({_library()[c]['summary']})" for c in caps) or "none documented"
    return (f"- {dev.id}: {dev.name} in the {home.room_name(dev.room)} -- {dev.description.rstrip('.')}; "
            f"capabilities: {what}")


# --------------------------------------------------------------------- tools
def list_devices(home: Home) -> str:
    """List every device with where it is and a one-line summary of each capability it has.

    Args:
        home: The home whose devices are listed; supplied by the toolkit, never shown to the model.

    Examples:
        >>> from lares_kit import load_world
        >>> print(list_devices(load_world("sage-home")).splitlines()[1][:70])
        - tv-credenza: TV in the Living room -- The living-room TV, standing o
    """
    shown = [d for d in home.devices.values() if d.exposed]
    lines = [f"{len(shown)} devices (id: name in room -- where; capabilities):"]
    return "\n".join(lines + [_summary(home, d) for d in shown])


def get_capability_docs(home: Home, device_id: DeviceId, capability: str) -> str:
    """Read the documentation of one capability of a device: its attributes with ranges and current values,
    and its commands with their arguments.

    Args:
        home: The home the device is in; supplied by the toolkit, never shown to the model.
        device_id: The device's id, as list_devices shows it, e.g. "tv-credenza".
        capability: The capability's name, e.g. "tvChannel", "switchLevel".
    """
    return capability_doc(home, device_id, capability)


def get_attribute(home: Home, device_id: DeviceId, attribute: str) -> str:
    """Read the current value of one attribute of a device, e.g. a light's level or the fridge's door.

    Args:
        home: The home the device is in; supplied by the toolkit, never shown to the model.
        device_id: The device's id, e.g. "fireplace-strip".
        attribute: The attribute's name, as the capability docs show it, e.g. "level".

    Examples:
        >>> from lares_kit import load_world
        >>> get_attribute(load_world("sage-home"), "fireplace-strip", "level")
        'The level of fireplace-strip is 90 (a number from 0 to 100 %).'
        >>> get_attribute(load_world("sage-home"), "fireplace-strip", "brightnes")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: fireplace-strip has no attribute 'brightnes'.
        Its attributes: on, level, hue, saturation, color_temperature.
    """
    if device_id == CLOCK_ID and device_id not in home.devices:  # the time, as a condition reads it
        reading = home.clock.reading()
        if attribute not in reading:
            raise ToolError(f"The clock has no attribute {attribute!r}. Its attributes: {', '.join(reading)}.")
        return f"The {attribute} of clock is {reading[attribute]} ({CLOCK_ATTRIBUTES[attribute]})."
    dev = _device(home, device_id)
    if attribute not in dev.state:
        attrs = list(dev.state)
        raise ToolError(f"{dev.id} has no attribute {attribute!r}.{did_you_mean(attribute, attrs)} "
                        f"Its attributes: {', '.join(attrs)}.")
    return f"The {attribute} of {dev.id} is {_value_words(dev.state[attribute])} ({_range(dev, attribute)})."


def execute_command(home: Home, device_id: DeviceId, capability: str, command: str,
                    arguments: dict | None = None) -> str:
    """Run a command of a device's capability, with its arguments; read the capability docs first to know them.

    Args:
        home: The home the device is in; supplied by the toolkit, never shown to the model.
        device_id: The device's id, e.g. "tv-plant".
        capability: The capability the command belongs to, e.g. "tvChannel".
        command: The command's name, e.g. "setTvChannel", "on", "off".
        arguments: The command's arguments by name, e.g. {"channel": 3}; leave out or {} for none.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("sage-home")
        >>> execute_command(home, "fireplace-strip", "switchLevel", "setLevel", {"level": 30})
        'fireplace-strip: level is now 30 (was 90).'
        >>> execute_command(home, "fireplace-strip", "switchLevel", "setLevel", {"level": 130})
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: 130 is not a valid level for fireplace-strip: use a number from 0 to 100 %.
        >>> execute_command(home, "tv-plant", "tvChannel", "setChannel", {"channel": 3})
        ... # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: tvChannel has no command 'setChannel'. Did you mean 'setTvChannel'?
        Its commands: setTvChannel(channel).
    """
    dev, update = command_update(home, device_id, capability, command, arguments)
    if capability in ("tvChannel", "mediaInputSource") and dev.state.get("on") is False:
        # A TV that is off shows nothing: say how to fix it rather than pretend.
        raise ToolError(f"{dev.id} is off, so it cannot change {capability}; switch it on first "
                        f"(capability switch, command on).")
    changes = {a: v for a, v in update.items() if dev.state.get(a) != v}
    if not changes:
        now = ", ".join(f"{a} is {_value_words(v)}" for a, v in update.items())
        return f"{dev.id}: {now} already; nothing changed."
    before = {a: dev.state.get(a) for a in changes}
    home.update_device(dev.id, changes)
    return f"{dev.id}: " + ", ".join(f"{a} is now {_value_words(v)} (was {_value_words(before[a])})"
                                     for a, v in changes.items()) + "."


def command_update(home: Home, device_id: str, capability: str, command: str,
                   arguments: dict | None = None) -> tuple[Device, dict[str, Any]]:
    """The device and the state update a command would make, checked against its document; raises ToolError.

    Shared by :func:`execute_command` and the safety policy, which must judge a
    command by what it would change before it runs.

    Args:
        home: The home the device is in; it is only read, never changed.
        device_id: The device's id, e.g. ``"fireplace-strip"``.
        capability: The capability the command belongs to, e.g. ``"switchLevel"``.
        command: The command's name in that capability's document, e.g. ``"setLevel"``.
        arguments: The command's arguments by name, e.g. ``{"level": 30}``; None for a command without any.

    Examples:
        >>> from lares_kit import load_world
        >>> command_update(load_world("sage-home"), "fireplace-strip", "switchLevel", "setLevel", {"level": 30})[1]
        {'level': 30}
    """
    dev = _device(home, device_id)
    doc = _capability(home, dev, capability)
    commands = doc.get("commands") or {}
    if command not in commands:
        listed = ", ".join(f"{n}({', '.join(c.get('args') or {})})" for n, c in commands.items())
        raise ToolError(f"{capability} has no command {command!r}.{did_you_mean(command, list(commands))} "
                        f"Its commands: {listed or 'none, it can only be read'}.")
    cmd = commands[command]
    wanted = cmd.get("args") or {}
    given = dict(arguments or {})
    for name in given:
        if name not in wanted:
            raise ToolError(f"{command} has no argument {name!r}; it takes: {', '.join(wanted) or 'no arguments'}.")
    specs = attributes_of(dev.type, dev.capabilities)
    update: dict[str, Any] = dict(cmd.get("sets") or {})
    for name, attr in wanted.items():
        if name not in given:
            raise ToolError(f"{command} needs the argument {name!r} ({_range(dev, attr)}).")
        value, allowed = check_value(specs[attr], given[name]) if attr in specs else (given[name], None)
        if allowed:
            raise ToolError(f"{given[name]!r} is not a valid {attr} for {dev.id}: use {allowed}.")
        update[attr] = value
    return dev, update


DEVICE_API_TOOLS: list[Callable[..., str]] = [list_devices, get_capability_docs, get_attribute, execute_command]
