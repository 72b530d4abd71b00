"""Home Assistant's view of a home: exposed devices, entity ids, names, areas and floors, the static context.

The lesson is planned as ``notebooks/17_home_assistant.ipynb`` (issue 20);
the tools that use this module are :mod:`lares_kit.ha.tools`. Home
Assistant's LLM API does not hand a model ids: it lists the *exposed*
entities by their names, domains and areas (the **static context**, no
states) and lets the model target them as a person would -- ``name``,
``area``, ``floor``, ``domain``, ``device_class``. This module resolves such
a target to devices, and answers a target it cannot resolve with a sentence
the model can act on ("several devices are called Light: give the area
(Lounge, Kitchen)").

A device whose world file says ``expose: false`` does not exist here. Entity
ids are the world's (``entity_id:``) when it gives one, else derived from the
device's type and name by :func:`lares_kit.ha.domains.entity_id` -- with the
room's name in front when several devices share the name, so the five
"Light"s of the Lares home are ``light.kitchen_light`` and so on.

:func:`home_clock` is the home's own clock (:mod:`lares_kit.home.clock`): the
machine's time only when that clock is a ``local`` one, so a run repeats.
"""

from __future__ import annotations

import unicodedata
import weakref
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from ..errors import ToolError, did_you_mean
from ..home.graph import Device, Home
from .domains import DOMAINS, HA_DOMAINS, device_class_of, domain_of, entity_id, to_ha

__all__ = ["STATIC_HEADER", "LIVE_HEADER", "LIVE_AT_MOST", "Target", "entity_ids", "exposed_devices", "find_targets",
           "floor_name", "home_clock", "key", "live_context", "static_context", "yaml_list"]

STATIC_HEADER = "Static Context: An overview of the areas and the devices in this smart home:"
LIVE_HEADER = "Live Context: An overview of the areas and the devices in this smart home:"
KNOWN_DOMAINS = frozenset(DOMAINS.values()) | frozenset(HA_DOMAINS)

_IDS: "weakref.WeakKeyDictionary[Home, tuple[int, dict[str, str]]]" = weakref.WeakKeyDictionary()


def key(text: Any) -> str:
    """A name as it is compared: case, spacing, width and a leading "the" do not matter.

    Args:
        text: A name as the model or the world file wrote it.

    Examples:
        >>> key("  The Kitchen   LIGHT "), key("Küche")
        ('kitchen light', 'küche')
    """
    words = unicodedata.normalize("NFKC", str(text)).casefold().replace("_", " ").split()
    return " ".join(words[1:] if len(words) > 1 and words[0] == "the" else words)


def exposed_devices(home: Home) -> list[Device]:
    """The devices the assistant may see and control, in file order (``expose: false`` leaves one out).

    Args:
        home: The home.
    """
    return [d for d in home.devices.values() if d.exposed]


def entity_ids(home: Home) -> dict[str, str]:
    """Device id -> Home Assistant entity id, for every device (exposed or not), unique in the home.

    Args:
        home: The home; the world's ``entity_id:`` keys come first, the others are derived in file order.

    Examples:
        >>> from lares_kit import load_world
        >>> ids = entity_ids(load_world("townhouse"))
        >>> ids["kitchen-light"], ids["hall-light"], ids["front-door-lock"], ids["hall-thermostat"]
        ('light.spotlights', 'light.hall_ceiling_light', 'lock.front_door_lock', 'climate.thermostat')
    """
    cached = _IDS.get(home)
    if cached is not None and cached[0] == len(home.devices):
        return cached[1]
    taken = {d.entity_id for d in home.devices.values() if d.entity_id}
    shared: dict[str, int] = {}
    for d in home.devices.values():
        shared[key(d.name)] = shared.get(key(d.name), 0) + 1
    ids = {}
    for d in home.devices.values():
        if d.entity_id:
            ids[d.id] = d.entity_id
            continue
        room = home.room_name(d.room)
        name = d.name if shared[key(d.name)] == 1 or key(room) in key(d.name) else f"{room} {d.name}"
        ids[d.id] = entity_id(d.type, name, d.state, taken)
    _IDS[home] = (len(home.devices), ids)
    return ids


def floor_name(home: Home, room: str) -> str | None:
    """The name of a room's floor, when the world names its floors; else None.

    Args:
        home: The home; ``home.floors`` names the floors.
        room: A room id.
    """
    number = home.graph.nodes[room].get("floor")
    return home.floors[number]["name"] if number in home.floors else None


def yaml_list(entries: list[dict[str, Any]]) -> str:
    """Entries as Home Assistant writes its contexts: a YAML list, keys in the order given, any script as it is.

    Args:
        entries: One mapping per device.

    Examples:
        >>> print(yaml_list([{"names": "Light", "domain": "light", "state": "off"}]), end="")
        - names: Light
          domain: light
          state: 'off'
    """
    from ..files.yamldata import dump_yaml  # here: `import lares_kit` loads no YAML library

    return dump_yaml(entries)


def _names(d: Device) -> str:
    return ", ".join([d.name, *d.aliases])


def static_context(home: Home) -> str:
    """Home Assistant's static context: every exposed device's names, domain and area (and floor), no states.

    Args:
        home: The home.

    Examples:
        >>> from lares_kit import load_world
        >>> print("\\n".join(static_context(load_world("lares-home")).splitlines()[:4]))
        Static Context: An overview of the areas and the devices in this smart home:
        - names: Light
          domain: light
          areas: Lounge
    """
    entries = []
    for d in exposed_devices(home):
        entry = {"names": _names(d), "domain": domain_of(d.type, d.state), "areas": home.room_name(d.room)}
        floor = floor_name(home, d.room)
        if floor is not None:
            entry["floor"] = floor
        entries.append(entry)
    # A home that is not English says its language (as a YAML comment, so the list still reads as YAML): the
    # recognizer reads the people's words in it, and Home Assistant's replies come in it.
    language = f"# Language: {home.language}\n" if home.language != "en" else ""
    return f"{STATIC_HEADER}\n{language}{yaml_list(entries)}"


def home_clock(home: Home, monitor: Any = None) -> datetime:
    """The home's date and time, on its clock: 2024-01-01 at 08:00 unless a task, ``lares run --time-of-day`` or
    the world file set the time, then wherever the poller has moved it (the poller moves the home's own clock).

    Never the wall clock, so a run repeats -- unless the home's clock is a ``local`` one (:mod:`lares_kit.home.clock`).

    Args:
        home: The home; ``home.clock`` is the time.
        monitor: A :class:`~lares_kit.persistent.monitor.Monitor`, whose clock is the time; None: the home's clock.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.home.clock import Clock
        >>> home = load_world("lares-home")
        >>> home_clock(home)
        datetime.datetime(2024, 1, 1, 8, 0)
        >>> home.clock = Clock.simulated(start="4am")
        >>> home_clock(home)
        datetime.datetime(2024, 1, 1, 4, 0)
    """
    return (getattr(monitor, "clock", None) or home.clock).now()


# ----------------------------------------------------------------- targets
@dataclass
class Target:
    """What a call's target resolved to: the devices, and the areas and floor it named (for the result)."""

    devices: list[Device]
    areas: list[dict[str, str]] = field(default_factory=list)  # {"name", "type", "id"}, as HA's targets


def _as_list(value: Any) -> list[str]:
    if value is None or value == "" or value == []:
        return []
    return [str(v) for v in (value if isinstance(value, list) else [value])]


def _rooms_called(home: Home, area: str) -> list[str]:
    wanted = key(area)
    rooms = [r for r, a in home.graph.nodes(data=True)
             if wanted in {key(r), key(r.replace("-", " ")), key(a.get("name", r)), *map(key, a.get("aliases", []))}]
    if not rooms:
        names = [a.get("name", r) for r, a in home.graph.nodes(data=True)]
        raise ToolError(f"There is no area called {area!r}.{did_you_mean(area, names)} Areas: {', '.join(names)}.")
    return rooms


def _rooms_on_floor(home: Home, floor: str) -> list[str]:
    wanted = key(floor)
    numbers = [n for n, f in home.floors.items() if wanted in {key(f["name"]), *map(key, f["aliases"]), str(n)}]
    if not numbers and wanted.lstrip("-").isdigit():
        numbers = [int(wanted)]
    rooms = [r for r, a in home.graph.nodes(data=True) if a.get("floor") in numbers]
    if not rooms:
        named = [f["name"] for _, f in sorted(home.floors.items())]
        floors = f"Floors: {', '.join(named)}." if named else "This home names no floors: give the area instead."
        raise ToolError(f"There is no floor called {floor!r}.{did_you_mean(floor, named)} {floors}")
    return rooms


def _called(home: Home, d: Device, wanted: str, ids: dict[str, str]) -> bool:
    names = {key(d.name), *map(key, d.aliases)}
    if wanted in names:
        return True
    room = home.graph.nodes[d.room]
    rooms = {key(room.get("name", d.room)), *map(key, room.get("aliases", []))}
    # "Kitchen Light" for the Light in the Kitchen; an entity id as the model may copy it from a result
    return any(f"{r} {n}" == wanted or f"{n} in {r}" == wanted for r in rooms for n in names) or \
        wanted == key(ids[d.id])


def _where(home: Home, devices: Iterable[Device]) -> str:
    return ", ".join(dict.fromkeys(home.room_name(d.room) for d in devices))


def find_targets(home: Home, name: str | None = None, area: str | None = None, floor: str | None = None,
                 domain: Any = None, device_class: Any = None, default_domains: tuple[str, ...] = ()) -> Target:
    """The exposed devices a call's target means; a ToolError whose sentence says how to fix a target that does not fit.

    A name shared by several devices needs the area (then it means all of them there); without a name, an
    area or floor means its devices of the given domains, or of ``default_domains`` when none is given.

    Args:
        home: The home; only its exposed devices can be targets.
        name: A device's name or alias, as the static context lists it (any case); None for none.
        area: An area (room) name, id or alias; None for none.
        floor: A floor's name or alias (or its number); None for none.
        domain: A Home Assistant domain or a list of them ("light", ["cover", "valve"]); None for any.
        device_class: A device class or a list of them ("blind", "tv"); None for any.
        default_domains: The domains an area or floor means when neither a domain nor a device class is given.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> [d.id for d in find_targets(home, "light", area="kitchen").devices]
        ['kitchen-light']
        >>> find_targets(home, "Light")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: Several devices are called 'Light': give the area
        (Lounge, Hallway, Kitchen, Bedroom, Office).
    """
    domains, classes = _as_list(domain), _as_list(device_class)
    for d in domains:
        if d not in KNOWN_DOMAINS:
            here = sorted({domain_of(x.type, x.state) for x in exposed_devices(home)})
            raise ToolError(f"{d!r} is not a Home Assistant domain.{did_you_mean(d, sorted(KNOWN_DOMAINS))} "
                            f"Domains in this home: {', '.join(here)}.")
    rooms: set[str] | None = None
    targets: list[dict[str, str]] = []
    if area:
        rooms = set(_rooms_called(home, area))
        targets += [{"name": home.room_name(r), "type": "area", "id": r} for r in sorted(rooms)]
    if floor:
        on_floor = set(_rooms_on_floor(home, floor))
        if rooms is not None and not rooms & on_floor:
            raise ToolError(f"The area {area!r} is not on the floor {floor!r}.")
        rooms = on_floor if rooms is None else rooms & on_floor
        number = home.graph.nodes[min(on_floor)].get("floor")
        named = home.floors.get(number, {}).get("name", str(floor))
        targets.append({"name": named, "type": "floor", "id": str(number)})
    pool = exposed_devices(home)

    def fits(d: Device) -> bool:
        return (not domains or domain_of(d.type, d.state) in domains) and \
            (not classes or device_class_of(d.type) in classes)

    if not name:
        if rooms is None and not domains and not classes:
            raise ToolError("Say which device: give its name (as the static context lists it), or an area or "
                            "floor with a domain.")
        found = [d for d in pool if (rooms is None or d.room in rooms) and fits(d)]
        if not domains and not classes and default_domains:
            found = [d for d in found if domain_of(d.type, d.state) in default_domains]
        return Target(found, targets)
    ids = entity_ids(home)
    named = [d for d in pool if _called(home, d, key(name), ids)]
    if not named:
        names = list(dict.fromkeys(n for d in pool for n in (d.name, *d.aliases)))
        raise ToolError(f"There is no device called {name!r}.{did_you_mean(name, names)} "
                        "The static context lists every device by its names.")
    placed = [d for d in named if rooms is None or d.room in rooms]
    if not placed:
        raise ToolError(f"There is no {name!r} in the area given; a device called {name!r} is in: "
                        f"{_where(home, named)}.")
    found = [d for d in placed if fits(d)]
    if not found:
        kinds = ", ".join(dict.fromkeys(domain_of(d.type, d.state) for d in placed))
        raise ToolError(f"{name!r} is a {kinds}, not a {' or '.join(domains or classes)}: leave the domain out, "
                        "or give the one the static context lists.")
    if len(found) > 1 and rooms is None:
        raise ToolError(f"Several devices are called {name!r}: give the area ({_where(home, found)}).")
    return Target(found, targets)


LIVE_AT_MOST = 120  # live_context reports at most this many devices; more asks for a name, an area or a domain


def live_context(home: Home, name: str | None = None, area: str | None = None, domain: Any = None) -> str:
    """Home Assistant's live context: the exposed devices' names, domain, state, area and attributes, as YAML.

    States and attributes are Home Assistant's (:func:`lares_kit.ha.domains.to_ha`: ``'on'``, ``locked``,
    ``brightness`` 0-255, ``current_position``). A name given finds every device called so, in any area.

    Args:
        home: The home.
        name: Only the devices with this name or alias; None for any.
        area: Only the devices in this area; None for any.
        domain: Only the devices of this domain or domains; None for any.

    Examples:
        >>> from lares_kit import load_world
        >>> print(live_context(load_world("townhouse"), "front door lock"), end="")
        Live Context: An overview of the areas and the devices in this smart home:
        - names: Front door lock
          domain: lock
          state: locked
          areas: Hall
    """
    devices = find_targets(home, None, area, None, domain).devices if area or domain else exposed_devices(home)
    if name:
        ids = entity_ids(home)
        named = {d.id for d in exposed_devices(home) if _called(home, d, key(name), ids)}
        if not named:
            find_targets(home, name)  # raises the sentence that says there is no such device
        devices = [d for d in devices if d.id in named]
    if len(devices) > LIVE_AT_MOST:
        raise ToolError(f"{len(devices)} devices match; ask for at most {LIVE_AT_MOST} by giving a name, an area "
                        "or a domain.")
    entries = []
    for d in devices:
        state, attributes = to_ha(d.type, d.state)
        entry = {"names": _names(d), "domain": domain_of(d.type, d.state), "state": state,
                 "areas": home.room_name(d.room)}
        if attributes:
            entry["attributes"] = attributes
        entries.append(entry)
    return f"{LIVE_HEADER}\n{yaml_list(entries)}"
