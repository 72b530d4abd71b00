"""What each of Home Assistant's intents does to a device, and how the safety gate judges it.

Part of the HA tool dialect (the tools are :mod:`lares_kit.ha.tools`, the
targets :mod:`lares_kit.ha.context`; the lesson is planned as
``notebooks/17_home_assistant.ipynb``). An intent is turned into a *plan*
before anything changes: the devices its target means and the settings it
would set on each, in the Lares state keys of :mod:`lares_kit.home.devices` --
``HassTurnOn`` sets a light's ``on``, a lock's ``locked``, blinds'
``position`` (100), a door's ``open``, a thermostat's ``mode`` (heat), a
vacuum's ``status`` (cleaning), an alarm's ``armed``. The plan is what the
tool then applies, what :func:`planned_changes` reports and what the safety
gate judges (:func:`safety_verdict`), so the three never disagree.

An area without a domain means its lights, switches and fans to
``HassTurnOn``/``HassTurnOff`` ("turn off the hall" never unlocks its door:
that needs ``domain: lock`` or the lock's name). Of an area's devices, those
that cannot do what the intent does are left out; a *named* device that
cannot is an error that says so.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ToolError, choices
from ..home.devices import attributes_of, check_value
from ..home.graph import Device, Home
from ..safety.gate import Verdict
from ..safety.policy import changes_of
from ..sentences.wording import capitalise, in_sentence
from .context import Target, exposed_devices, find_targets, key
from .domains import domain_of

__all__ = ["INTENTS", "plan", "planned_changes", "safety_verdict", "speech"]

_SWITCHED = ("light", "switch", "fan")  # what an area means to HassTurnOn/Off when no domain is given


class _Cannot(ToolError):
    """This device cannot do what the intent does: left out of an area's devices, an error for a named one."""


def _the(home: Home, d: Device) -> str:
    return f"the {in_sentence(d.name)} in the {home.room_name(d.room)}"


def _start(home: Home, d: Device) -> str:  # "The ..." at the start of a sentence
    return capitalise(_the(home, d))


def _settable(d: Device, attribute: str) -> bool:
    spec = attributes_of(d.type, d.capabilities).get(attribute)
    return (spec is not None and not spec.read_only) or (spec is None and attribute in d.state)


def _checked(home: Home, d: Device, attribute: str, value: Any, what: str) -> Any:
    spec = attributes_of(d.type, d.capabilities).get(attribute)
    if spec is None:
        return value
    new, allowed = check_value(spec, value)
    if allowed:
        raise ToolError(f"{value!r} is not a valid {what} for {_the(home, d)}: use {allowed}.")
    return new


# ------------------------------------------------------------ what each intent sets
def _on_off(home: Home, d: Device, on: bool) -> dict[str, Any]:
    domain = domain_of(d.type, d.state)
    if domain == "lock":
        return {"locked": on}
    if domain in ("cover", "valve"):
        return {"position": 100 if on else 0} if _settable(d, "position") else {"open": on}
    if domain == "vacuum":
        return {"status": "cleaning" if on else "returning"}
    if domain == "alarm_control_panel":
        return {"armed": on}
    if domain == "climate" and not _settable(d, "on") and _settable(d, "mode"):
        now = d.state.get("mode", "off")
        return {"mode": (now if now != "off" else "heat") if on else "off"}
    if _settable(d, "on"):
        return {"on": on}
    raise _Cannot(f"{_start(home, d)} is a {domain}; it cannot be turned on or off.")


def _needs(home: Home, d: Device, domains: tuple[str, ...], attribute: str, tool: str) -> None:
    domain = domain_of(d.type, d.state)
    if domain not in domains:
        raise _Cannot(f"{_start(home, d)} is a {domain}; {tool} acts on a {' or '.join(domains)} only.")
    if not _settable(d, attribute):
        raise _Cannot(f"{_start(home, d)} has no {attribute} setting for {tool} to change.")


def _light_set(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
    _needs(home, d, ("light",), "on", "HassLightSet")
    if args.get("brightness") is None and not args.get("color"):
        raise ToolError("HassLightSet needs a brightness (0-100) or a color (a name such as red).")
    change: dict[str, Any] = {"on": True}
    if args.get("color"):
        _needs(home, d, ("light",), "color", "HassLightSet")
        change["color"] = _checked(home, d, "color", str(args["color"]).strip().lower(), "color")
    if args.get("brightness") is not None:
        level = _percent(args["brightness"], "brightness")
        if level == 0:
            return {"on": False}
        change["brightness"] = _checked(home, d, "brightness", level, "brightness")
    return change


def _position(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
    level = _percent(args["position"], "position")
    if domain_of(d.type, d.state) in ("cover", "valve") and not _settable(d, "position") and _settable(d, "open"):
        return {"open": level > 0}
    _needs(home, d, ("cover", "valve"), "position", "HassSetPosition")
    return {"position": _checked(home, d, "position", level, "position")}


def _temperature(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
    _needs(home, d, ("climate",), "target", "HassClimateSetTemperature")
    return {"target": _checked(home, d, "target", args["temperature"], "temperature")}


def _volume(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
    _needs(home, d, ("media_player",), "volume", "HassSetVolume")
    return {"volume": _checked(home, d, "volume", _percent(args["volume_level"], "volume_level"), "volume")}


def _playing(playing: bool, tool: str) -> Callable[[Home, Device, dict[str, Any]], dict[str, Any]]:
    def update(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
        _needs(home, d, ("media_player",), "playing", tool)
        if d.state.get("on") is False:
            raise ToolError(f"{_start(home, d)} is off: turn it on first with HassTurnOn.")
        return {"playing": playing}
    return update


def _next(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
    track = d.state.get("track")
    if domain_of(d.type, d.state) != "media_player" or isinstance(track, bool) or not isinstance(track, int):
        raise _Cannot(f"{_start(home, d)} has no track to skip; it does not play tracks.")
    return {"track": track + 1}


def _vacuum(start: bool) -> Callable[[Home, Device, dict[str, Any]], dict[str, Any]]:
    def update(home: Home, d: Device, args: dict[str, Any]) -> dict[str, Any]:
        _needs(home, d, ("vacuum",), "status", "HassVacuumStart" if start else "HassVacuumReturnToBase")
        return {"status": "cleaning" if start else "returning"}
    return update


def _percent(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        raise ToolError(f"{what} is a percentage: give a whole number from 0 to 100, not {value!r}.")
    return int(round(value))


# tool -> (what it sets on one device, its verb for the speech, the domains an area means without a domain)
INTENTS: dict[str, tuple[Callable[[Home, Device, dict[str, Any]], dict[str, Any]], str, tuple[str, ...]]] = {
    "HassTurnOn": (lambda h, d, a: _on_off(h, d, True), "Turned on", _SWITCHED),
    "HassTurnOff": (lambda h, d, a: _on_off(h, d, False), "Turned off", _SWITCHED),
    "HassLightSet": (_light_set, "Set the brightness of", ("light",)),
    "HassSetPosition": (_position, "Set the position of", ("cover", "valve")),
    "HassClimateSetTemperature": (_temperature, "Set the temperature of", ("climate",)),
    "HassSetVolume": (_volume, "Set the volume of", ("media_player",)),
    "HassMediaPause": (_playing(False, "HassMediaPause"), "Paused", ("media_player",)),
    "HassMediaUnpause": (_playing(True, "HassMediaUnpause"), "Resumed", ("media_player",)),
    "HassMediaNext": (_next, "Skipped to the next track on", ("media_player",)),
    "HassVacuumStart": (_vacuum(True), "Started", ("vacuum",)),
    "HassVacuumReturnToBase": (_vacuum(False), "Sent {} back to its dock", ("vacuum",)),
}
# The verbs a state change has in words (HassTurnOn on a lock locks it)
_VERBS = {("locked", True): "Locked", ("locked", False): "Unlocked", ("armed", True): "Armed",
          ("armed", False): "Disarmed", ("open", True): "Opened", ("open", False): "Closed",
          ("status", "returning"): "Sent {} back to its dock", ("status", "cleaning"): "Started"}


def plan(home: Home, tool: str, args: dict[str, Any]) -> tuple[Target, list[tuple[Device, dict[str, Any]]]]:
    """The target a call resolved to, and each device it acts on with what it sets; a ToolError says why it cannot.

    Args:
        home: The home the call acts in (not changed).
        tool: An intent tool's name, a key of :data:`INTENTS` or ``"HassListAddItem"``.
        args: The call's arguments by name (``name``, ``area``... and the intent's value).

    Examples:
        >>> from lares_kit import load_world
        >>> _, plans = plan(load_world("townhouse"), "HassSetPosition", {"position": 40, "area": "living room"})
        >>> [(d.id, update) for d, update in plans]
        [('living-room-blinds', {'position': 40})]
    """
    if tool == "HassListAddItem":
        return _list_plan(home, args)
    update, _, defaults = INTENTS[tool]
    if tool in _ONE_WILL_DO and not any(args.get(k) for k in ("name", "area", "floor", "domain", "device_class")):
        target = Target(_the_only(home, tool, defaults))  # "set the temperature to 21" in a home with one thermostat
    else:
        target = find_targets(home, args.get("name"), args.get("area"), args.get("floor"), args.get("domain"),
                              args.get("device_class"), defaults)
    plans, cannot = [], []
    for d in target.devices:
        try:
            plans.append((d, update(home, d, args)))
        except _Cannot as exc:
            cannot.append(exc)
    if cannot and (args.get("name") or not plans and len(cannot) == 1):
        raise cannot[0]
    if not plans:
        raise ToolError(f"There is nothing {tool} can act on {_scope(args)}; the static context lists every "
                        "device with its domain and area.")
    return target, plans


# Intents that need no target when the home has one device they can act on (never switching all on or off)
_ONE_WILL_DO = frozenset(INTENTS) - {"HassTurnOn", "HassTurnOff"}


def _the_only(home: Home, tool: str, domains: tuple[str, ...]) -> list[Device]:
    found = [d for d in exposed_devices(home) if domain_of(d.type, d.state) in domains]
    if len(found) == 1:
        return found
    if not found:
        raise ToolError(f"There is no {' or '.join(domains)} in this home for {tool} to act on.")
    raise ToolError(f"Say which device: {tool} could act on {', '.join(_the(home, d) for d in found[:8])}"
                    f"{' and more' if len(found) > 8 else ''}; give its name or area.")


def _scope(args: dict[str, Any]) -> str:
    parts = [f"in the area {args['area']!r}" if args.get("area") else "",
             f"on the floor {args['floor']!r}" if args.get("floor") else "",
             f"with the domain {args['domain']!r}" if args.get("domain") else "",
             f"with the device class {args['device_class']!r}" if args.get("device_class") else ""]
    return " ".join(p for p in parts if p) or "here"


def _list_plan(home: Home, args: dict[str, Any]) -> tuple[Target, list[tuple[Device, dict[str, Any]]]]:
    item = str(args.get("item") or "").strip()
    if not item:
        raise ToolError("Give the item to add, e.g. item: \"milk\".")
    lists = [d for d in exposed_devices(home) if domain_of(d.type, d.state) == "todo"]
    found = [d for d in lists if key(args.get("name")) in {key(d.name), *map(key, d.aliases)}]
    if not found:
        raise ToolError(f"There is no list called {args.get('name')!r}. "
                        f"{choices('Lists', args.get('name'), [d.name for d in lists])}")
    if len(found) > 1:
        raise ToolError(f"Several lists are called {args.get('name')!r}, in: "
                        f"{', '.join(home.room_name(d.room) for d in found)}; rename one in the world file.")
    items = [dict(i) if isinstance(i, dict) else i for i in found[0].state.get("items") or []]
    return Target(found), [(found[0], {"items": [*items, {"summary": item, "status": "needs_action"}]})]


def planned_changes(home: Home, tool: str, args: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Every setting an HA tool call would set, as ``(device id, attribute, value)``; ``[]`` if the call would fail.

    Args:
        home: The home the call would act in (not changed).
        tool: The tool's name, e.g. "HassTurnOff".
        args: The call's arguments.

    Examples:
        >>> from lares_kit import load_world
        >>> planned_changes(load_world("townhouse"), "HassTurnOff", {"name": "front door lock"})
        [('front-door-lock', 'locked', False)]
        >>> planned_changes(load_world("townhouse"), "HassTurnOff", {"name": "nothing"})
        []
    """
    if tool not in INTENTS and tool != "HassListAddItem":
        return []
    try:
        _, plans = plan(home, tool, args)
    except ToolError:
        return []  # the tool itself explains the mistake
    return [(d.id, attribute, value) for d, update in plans for attribute, value in update.items()]


def safety_verdict(gate: Any, home: Home, tool: str, args: dict[str, Any]) -> Verdict:
    """The safety gate's verdict on an HA call, judged by the settings it would change, as ``set_device`` sets them.

    One sensitive setting (or none) is judged by the gate itself, so a confirmation asks, and is used up,
    exactly as for ``set_device``. Several sensitive settings in one call (an area's two locks) are not
    asked about at once: the call is held back, with a sentence that says to change them one at a time
    (an untrusted source is refused, as always).

    Args:
        gate: The run's :class:`~lares_kit.safety.gate.SafetyGate`.
        home: The home the call would act in (not changed).
        tool: The tool's name.
        args: The call's arguments.
    """
    if tool == "HassListAddItem":  # an item for a list is judged as add_to_list's change, at night too
        lists = [device for device, _, _ in planned_changes(home, tool, args)]
        return gate.check("add_to_list", {"list_id": lists[0], "item": args.get("item")}) if lists else \
            Verdict("allow")
    judged = []
    for device, attribute, value in planned_changes(home, tool, args):
        same = {"device_id": device, "attribute": attribute, "value": value}
        for change in changes_of(home, "set_device", same):  # [] when set_device could not set it
            judged.append((same, gate.policy.rule_for(change) is not None, change))
    sensitive = [j for j in judged if j[1]]
    if len(sensitive) > 1 and gate.policy.trusted(gate.source):
        names = ", ".join(dict.fromkeys(j[2].name for j in sensitive))
        return Verdict("confirm", f"{tool} would make {len(sensitive)} sensitive changes at once ({names}); each "
                                  "needs the user's confirmation on its own: change one device at a time, by name.")
    if not judged:
        return Verdict("allow")
    return gate.check("set_device", (sensitive or judged)[0][0])


# -------------------------------------------------------------------- results
def speech(home: Home, tool: str, plans: list[tuple[Device, dict[str, Any]]]) -> str:
    """What was done, in one line, as Home Assistant's response speech: "Unlocked the front door lock in the Hall".

    Args:
        home: The home, for the rooms' names.
        tool: The intent tool that ran.
        plans: What it did, as :func:`plan` gives it.
    """
    phrases: dict[str, list[str]] = {}
    for d, update in plans:
        default = INTENTS[tool][1] if tool in INTENTS else f"Added {update['items'][-1]['summary']!r} to"
        verb = next((_VERBS[(a, v)] for a, v in update.items() if isinstance(v, (bool, str)) and (a, v) in _VERBS),
                    default)
        phrases.setdefault(verb, []).append(_the(home, d))
    said = []
    for verb, things in phrases.items():
        what = " and ".join(things) if len(things) <= 3 else f"{len(things)} devices"
        said.append(verb.format(what) if "{}" in verb else f"{verb} {what}")
    return "; ".join(said)
