"""Home Assistant's LLM API as agent-facing tools: ``HassTurnOn``, ``HassLightSet``, ``GetLiveContext``...

The lesson is planned as ``notebooks/17_home_assistant.ipynb`` (issue 20);
``run_agent(..., tool_set="ha")`` offers these tools instead of the Lares
ones (:mod:`lares_kit.agents.dialects`). Home Assistant's API
(``homeassistant/helpers/llm.py``) offers one tool per intent, named after
it, with its argument names: a target (``name``, ``area``, ``floor``,
``domain``, ``device_class``; resolved by :mod:`lares_kit.ha.context`) and a
value (``brightness`` and ``position`` in percent, ``temperature``,
``volume_level`` 0-100). Its prompt says to lock with ``HassTurnOn`` and
unlock with ``HassTurnOff`` (covers and valves: open and close), and that
the state of the home comes only from ``GetLiveContext``
(:data:`HA_API_PROMPT`; the static context is
:func:`lares_kit.ha.context.static_context`).

Results are JSON, shaped as Home Assistant's: a change answers with its
``IntentResponse`` (``{"speech": {"plain": {"speech": "Turned on the light
in the Kitchen"}}, "response_type": "action_done", "data": {"targets": [...],
"success": [{"name", "type": "entity", "id": "light.kitchen_light"}],
"failed": []}}``), a question with ``{"success": true, "result": ...}``. A
mistake raises a ToolError whose sentence the Toolbox sends back as
``{"success": false, "error": "..."}`` (these tools say so with
``json_errors``). The safety gate's own verdicts keep their text
(``Error: Confirmation needed: ...``), as for every tool.

Changes go through the same state as the Lares tools and are judged by the
same safety policy: each changing tool carries ``safety_check``, which asks
the gate about the very settings it would change, as ``set_device`` would
set them (:func:`lares_kit.ha.intents.safety_verdict`; what each intent sets
is :mod:`lares_kit.ha.intents`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..home.graph import Home
from .context import entity_ids, exposed_devices, home_clock, live_context
from .domains import domain_of
from .intents import INTENTS, plan, safety_verdict, speech

__all__ = ["HA_API_PROMPT", "HA_TOOLS", "HA_TOOL_NAMES", "ha_tools_for", "HassTurnOn", "HassTurnOff", "HassLightSet",
           "HassSetPosition", "HassClimateSetTemperature", "HassMediaPause", "HassMediaUnpause", "HassMediaNext",
           "HassSetVolume", "HassVacuumStart", "HassVacuumReturnToBase", "HassListAddItem", "GetDateTime",
           "GetLiveContext"]

HA_API_PROMPT = (
    "When controlling Home Assistant always call the intent tools. Use HassTurnOn to lock and HassTurnOff to "
    "unlock a lock; use HassTurnOn to open and HassTurnOff to close covers and valves. When controlling a device, "
    "prefer passing just name and domain. When controlling an area, prefer passing just area and domain. Anything "
    "about the current state of a device must come from GetLiveContext: the static context lists the devices, "
    "not their states."
)


def _act(home: Home, tool: str, args: dict[str, Any]) -> str:
    target, plans = plan(home, tool, args)
    for d, update in plans:
        changes = {a: v for a, v in update.items() if d.state.get(a) != v}
        if changes:
            home.update_device(d.id, changes)
    ids = entity_ids(home)
    return json.dumps({"speech": {"plain": {"speech": speech(home, tool, plans)}}, "response_type": "action_done",
                       "data": {"targets": target.areas,
                                "success": [{"name": d.name, "type": "entity", "id": ids[d.id]} for d, _ in plans],
                                "failed": []}}, ensure_ascii=False)




# ---------------------------------------------------------------------- tools
def HassTurnOn(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None,
               domain: list[str] | str | None = None, device_class: list[str] | str | None = None) -> str:
    """Turns on, opens or locks a device: lights, switches, fans and media players go on, covers and valves
    open, a lock locks, a vacuum starts. Use it for "turn on", "open", "lock", "activate".

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The device's name, as the static context lists it, e.g. "Ceiling light".
        area: The area the device is in, or the area whose devices to act on, e.g. "Kitchen".
        floor: The floor whose devices to act on, when the home names its floors.
        domain: The domain or domains to act on, e.g. "light" or ["cover"]; an area without one means its
            lights, switches and fans.
        device_class: The device class or classes to act on, e.g. "blind" or "tv".

    Examples:
        >>> from lares_kit import load_world
        >>> print(HassTurnOn(load_world("lares-home"), area="Kitchen", domain="light"))  # doctest: +ELLIPSIS
        {"speech": {"plain": {"speech": "Turned on the light in the Kitchen"}}, "response_type": "action_done", ...
    """
    return _act(home, "HassTurnOn", dict(name=name, area=area, floor=floor, domain=domain, device_class=device_class))


def HassTurnOff(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None,
                domain: list[str] | str | None = None, device_class: list[str] | str | None = None) -> str:
    """Turns off, closes or unlocks a device: lights, switches, fans and media players go off, covers and
    valves close, a lock unlocks, a vacuum goes back to its dock. Use it for "turn off", "close", "unlock".

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The device's name, as the static context lists it, e.g. "Ceiling light".
        area: The area the device is in, or the area whose devices to act on, e.g. "Kitchen".
        floor: The floor whose devices to act on, when the home names its floors.
        domain: The domain or domains to act on, e.g. "light" or ["cover"]; an area without one means its
            lights, switches and fans.
        device_class: The device class or classes to act on, e.g. "blind" or "tv".
    """
    return _act(home, "HassTurnOff", dict(name=name, area=area, floor=floor, domain=domain, device_class=device_class))


def HassLightSet(home: Home, brightness: int | None = None, color: str | None = None, name: str | None = None,
                 area: str | None = None, floor: str | None = None) -> str:
    """Sets the brightness (in percent; 0 switches it off) or the colour of a light, or of the lights in an area.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        brightness: The brightness in percent, from 0 to 100.
        color: A colour name such as "red" or "blue", for a light that takes colours.
        name: The light's name, as the static context lists it.
        area: The area the light is in, or the area whose lights to set.
        floor: The floor whose lights to set, when the home names its floors.
    """
    return _act(home, "HassLightSet", dict(brightness=brightness, color=color, name=name, area=area, floor=floor))


def HassSetPosition(home: Home, position: int, name: str | None = None, area: str | None = None,
                    floor: str | None = None, domain: list[str] | str | None = None,
                    device_class: list[str] | str | None = None) -> str:
    """Sets the position of a cover or valve in percent: 0 is closed, 100 fully open.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        position: The position in percent, from 0 (closed) to 100 (open).
        name: The device's name, as the static context lists it, e.g. "Blinds".
        area: The area the device is in, or the area whose covers to set.
        floor: The floor whose covers to set, when the home names its floors.
        domain: The domain or domains to act on: "cover" or "valve".
        device_class: The device class or classes to act on, e.g. "blind" or "window".
    """
    return _act(home, "HassSetPosition", dict(position=position, name=name, area=area, floor=floor, domain=domain,
                                              device_class=device_class))


def HassClimateSetTemperature(home: Home, temperature: float, name: str | None = None, area: str | None = None,
                              floor: str | None = None) -> str:
    """Sets the target temperature of a thermostat or climate device, in °C.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        temperature: The target temperature in °C, e.g. 21.
        name: The device's name, as the static context lists it, e.g. "Thermostat".
        area: The area the device is in.
        floor: The floor whose climate devices to set, when the home names its floors.
    """
    return _act(home, "HassClimateSetTemperature", dict(temperature=temperature, name=name, area=area, floor=floor))


def HassSetVolume(home: Home, volume_level: int, name: str | None = None, area: str | None = None,
                  floor: str | None = None) -> str:
    """Sets the volume of a media player (a TV, a speaker) in percent.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        volume_level: The volume in percent, from 0 to 100.
        name: The media player's name, as the static context lists it, e.g. "TV".
        area: The area the media player is in.
        floor: The floor whose media players to set, when the home names its floors.
    """
    return _act(home, "HassSetVolume", dict(volume_level=volume_level, name=name, area=area, floor=floor))


def HassMediaPause(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None) -> str:
    """Pauses a media player that is playing.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The media player's name, as the static context lists it.
        area: The area the media player is in.
        floor: The floor whose media players to pause, when the home names its floors.
    """
    return _act(home, "HassMediaPause", dict(name=name, area=area, floor=floor))


def HassMediaUnpause(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None) -> str:
    """Resumes a paused media player.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The media player's name, as the static context lists it.
        area: The area the media player is in.
        floor: The floor whose media players to resume, when the home names its floors.
    """
    return _act(home, "HassMediaUnpause", dict(name=name, area=area, floor=floor))


def HassMediaNext(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None) -> str:
    """Skips a media player to its next track.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The media player's name, as the static context lists it.
        area: The area the media player is in.
        floor: The floor whose media players to skip, when the home names its floors.
    """
    return _act(home, "HassMediaNext", dict(name=name, area=area, floor=floor))


def HassVacuumStart(home: Home, name: str | None = None, area: str | None = None) -> str:
    """Starts a vacuum cleaner.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The vacuum's name, as the static context lists it.
        area: The area the vacuum is in.
    """
    return _act(home, "HassVacuumStart", dict(name=name, area=area))


def HassVacuumReturnToBase(home: Home, name: str | None = None, area: str | None = None) -> str:
    """Sends a vacuum cleaner back to its dock.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        name: The vacuum's name, as the static context lists it.
        area: The area the vacuum is in.
    """
    return _act(home, "HassVacuumReturnToBase", dict(name=name, area=area))


def HassListAddItem(home: Home, item: str, name: str) -> str:
    """Adds an item to a to-do or shopping list.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        item: The item to add, e.g. "milk".
        name: The list's name, as the static context lists it, e.g. "Shopping list".
    """
    return _act(home, "HassListAddItem", dict(item=item, name=name))


def GetDateTime(home: Home, monitor: Any = None) -> str:
    """Gets the current date and time.

    Args:
        home: The home whose clock is read; supplied by the toolkit, never shown to the model.
        monitor: The poller whose simulated clock is the time, if any; supplied by the toolkit.

    Examples:
        >>> from lares_kit import load_world
        >>> GetDateTime(load_world("lares-home"))
        '{"success": true, "result": {"date": "2024-01-01", "time": "08:00:00", "weekday": "Monday"}}'
    """
    now = home_clock(home, monitor)
    return json.dumps({"success": True, "result": {"date": f"{now:%Y-%m-%d}", "time": f"{now:%H:%M:%S}",
                                                   "weekday": f"{now:%A}"}})


def GetLiveContext(home: Home, name: str | None = None, area: str | None = None,
                   domain: list[str] | str | None = None) -> str:
    """Gets the current state of the devices: on or off, open or closed, brightness, temperatures. Use it before
    answering a question about the home or acting on something that depends on its state.

    Args:
        home: The home whose devices are reported; supplied by the toolkit, never shown to the model.
        name: Only the devices with this name.
        area: Only the devices in this area.
        domain: Only the devices of this domain or domains, e.g. "light".

    Examples:
        >>> from lares_kit import load_world
        >>> print(json.loads(GetLiveContext(load_world("lares-home"), area="Hallway"))["result"])
        Live Context: An overview of the areas and the devices in this smart home:
        - names: Light
          domain: light
          state: 'on'
          areas: Hallway
        <BLANKLINE>
    """
    return json.dumps({"success": True, "result": live_context(home, name, area, domain)}, ensure_ascii=False)


HA_TOOLS: list[Callable[..., str]] = [HassTurnOn, HassTurnOff, HassLightSet, HassSetPosition,
                                      HassClimateSetTemperature, HassSetVolume, HassMediaPause, HassMediaUnpause,
                                      HassMediaNext, HassVacuumStart, HassVacuumReturnToBase, HassListAddItem,
                                      GetDateTime, GetLiveContext]
HA_TOOL_NAMES = frozenset(fn.__name__ for fn in HA_TOOLS)
for _fn in HA_TOOLS:
    _fn.json_errors = True  # type: ignore[attr-defined]  # the Toolbox answers a mistake as {"success": false, ...}
    if _fn.__name__ in INTENTS or _fn is HassListAddItem:
        _fn.safety_check = safety_verdict  # type: ignore[attr-defined]  # judged by the settings it would change


# tool -> the domains a home needs for Home Assistant to offer it (it registers an intent only where it applies)
_NEEDS = {"HassLightSet": ("light",), "HassSetPosition": ("cover", "valve"), "HassClimateSetTemperature": ("climate",),
          "HassSetVolume": ("media_player",), "HassMediaPause": ("media_player",),
          "HassMediaUnpause": ("media_player",), "HassMediaNext": ("media_player",), "HassVacuumStart": ("vacuum",),
          "HassVacuumReturnToBase": ("vacuum",),
          "HassListAddItem": ("todo",)}


def ha_tools_for(home: Home) -> list[Callable[..., str]]:
    """The HA tools a home's exposed devices call for: on/off, the clock and the live context always, the others
    where a device of their domain is exposed (as Home Assistant offers an intent only where it applies).

    Args:
        home: The home whose exposed devices decide.

    Examples:
        >>> from lares_kit import load_world
        >>> [fn.__name__ for fn in ha_tools_for(load_world("lares-home"))]
        ['HassTurnOn', 'HassTurnOff', 'HassLightSet', 'GetDateTime', 'GetLiveContext']
    """
    domains = {domain_of(d.type, d.state) for d in exposed_devices(home)}
    return [fn for fn in HA_TOOLS if fn.__name__ not in _NEEDS or not domains.isdisjoint(_NEEDS[fn.__name__])]
