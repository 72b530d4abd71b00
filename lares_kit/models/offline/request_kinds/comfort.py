"""Comfort requests: read a room's sensors, compare with the comfortable ranges, then act.

Part of the offline model (:mod:`lares_kit.models.offline`). The smart-building
paper's reasoning tasks are like "it's stuffy in meeting room 2, do
something": nothing in the words names a device or a value. The rules here
do what a careful person would:

1. recognise a complaint or a question about a room's air ("stuffy", "too
   hot", "I'm cold in office 3", "is the air OK in meeting room 3?");
2. read the room's sensors with ``read_device`` -- the readings in the
   prompt's knowledge may be stale, and only the reading says what is
   *comfortable* (a world file's device description: "Comfortable: 20-24 °C,
   humidity 30-60%, CO2 under 1000 ppm.");
3. decide from the readings: CO2 or humidity too high -> open the window;
   too warm -> air conditioning on and cooling, or the fan; too humid -> the
   fan; too cold -> heating up and the window shut; all in range -> change
   nothing and say so.

It reads only the request (the knowledge and the tool results); a room
without a sensor is judged by what the user said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..reading import Beliefs, Dev, norm
from ..understanding import Change, Goal, missing_in_rooms
from ..vocabulary import rooms_in, words_of

__all__ = ["FEELINGS", "Readings", "recognise_comfort", "comfort_step", "parse_readings"]

# word pattern -> what the user feels; "check" is a question, not a complaint
FEELINGS = [
    (r"\b(stuffy|stale|airless|no air|close in here)\b", "stuffy"),
    (r"\b(muggy|humid|damp|sticky|musty)\b", "humid"),
    (r"\b(too (?:hot|warm)|boiling|sweltering|roasting|baking|(?:hot|warm) in)\b|\bi'?m (?:hot|warm)\b"
     r"|\b(?:seems?|feels?|getting) (?:too )?(?:hot|warm)\b", "hot"),
    (r"\b(too (?:cold|cool|chilly)|freezing|chilly|(?:cold|chilly) in)\b|\bi'?m (?:cold|freezing)\b"
     r"|\b(?:seems?|feels?|getting) (?:too )?cold\b", "cold"),
    (r"\b(?:is|how is|how's) the air\b|\bair quality\b|\b(?:is|are) .* comfortable\b", "check"),
]


@dataclass
class Readings:
    """What one sensor read: values (None when not reported) and its comfortable ranges."""

    temperature: float | None = None
    humidity: float | None = None
    co2: float | None = None
    temp_range: tuple[float, float] = (20.0, 24.0)  # the usual office ranges when the device says none
    humidity_range: tuple[float, float] = (30.0, 60.0)
    co2_max: float = 1000.0


def parse_readings(text: str) -> Readings:
    """A ``read_device`` result for a sensor, read back into numbers.

    Args:
        text: what ``read_device`` said about a sensor: its readings, then its comfortable ranges.

    Examples:
        >>> r = parse_readings("The air sensor ... is a sensor: temperature 28.5 °C, humidity 71%, co2 1650 ppm. "
        ...                    "Settings: none. Comfortable: 20-24 °C, humidity 30-60%, CO2 under 1000 ppm.")
        >>> r.temperature, r.humidity, r.co2, r.temp_range, r.co2_max
        (28.5, 71.0, 1650.0, (20.0, 24.0), 1000.0)
    """
    r = Readings()
    for name, pattern in (("temperature", r"temperature (-?\d+(?:\.\d+)?)"), ("humidity", r"humidity (\d+(?:\.\d+)?)%"),
                          ("co2", r"co2 (\d+(?:\.\d+)?)")):
        if m := re.search(pattern, text, re.IGNORECASE):
            setattr(r, name, float(m.group(1)))
    # The ranges sit after the readings, in the device's description.
    tail = text.split("Settings:", 1)[-1]
    if m := re.search(r"(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*°C", tail):
        r.temp_range = (float(m.group(1)), float(m.group(2)))
    if m := re.search(r"humidity (\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)%", tail, re.IGNORECASE):
        r.humidity_range = (float(m.group(1)), float(m.group(2)))
    if m := re.search(r"CO2 (?:under|below) (\d+)", tail, re.IGNORECASE):
        r.co2_max = float(m.group(1))
    return r


def recognise_comfort(b: Beliefs) -> Goal | None:
    """A comfort goal (``kind="comfort"``, the room in ``target``, the feeling in ``condition``), or None.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("it's stuffy in meeting room 2, do something", "latest",
        ...             {"meeting-room-2": Room("meeting-room-2", "Meeting room 2")}, {}, None, {}, [])
        >>> g = recognise_comfort(b)
        >>> g.kind, g.target, g.condition
        ('comfort', ['meeting-room-2'], 'stuffy')
    """
    text = words_of(b.instruction)
    feeling = next((f for pattern, f in FEELINGS if re.search(pattern, text)), None)
    if feeling is None:
        return None
    rooms, _ = rooms_in(text, b)
    if not rooms:
        return None
    return Goal("comfort", target=rooms[:1], condition=feeling)


def _sensors(b: Beliefs, room: str) -> list[Dev]:
    return [d for d in b.devices.values() if d.room == room and d.type == "sensor"]


def _reading_text(state: dict[str, object]) -> str:
    # A sensor's known state written as read_device writes its readings (parse_readings reads it back).
    units = {"temperature": " °C", "humidity": "%", "co2": " ppm"}
    return "Readings: " + ", ".join(f"{k} {v}{units.get(k, '')}" for k, v in state.items() if k in units) + "."


def _read_result(b: Beliefs, device: str, live: bool = False) -> str | None:
    for call in reversed(b.calls):
        if norm(call.name) == "readdevice" and str(call.arg("device_id")) == device and call.ok:
            return call.result
    state = b.devices[device].state if live and device in b.devices else {}
    return _reading_text(state) if state else None


def _of(b: Beliefs, room: str, kind: str) -> Dev | None:
    return next((d for d in b.devices.values() if d.room == room and d.type == kind), None)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _judge(r: Readings, feeling: str) -> tuple[dict[str, bool], list[str]]:
    # -> ({problem: True}, phrases describing the readings against the ranges)
    lo, hi = r.temp_range
    hlo, hhi = r.humidity_range
    problems = {"hot": r.temperature is not None and r.temperature > hi,
                "cold": r.temperature is not None and r.temperature < lo,
                "humid": r.humidity is not None and r.humidity > hhi,
                "stale": r.co2 is not None and r.co2 > r.co2_max}
    said = []
    if r.temperature is not None:
        verdict = "too warm" if problems["hot"] else "too cold" if problems["cold"] else "comfortable"
        said.append(f"{_fmt(r.temperature)} °C ({verdict}; {_fmt(lo)}-{_fmt(hi)} °C is comfortable)")
    if r.humidity is not None:
        verdict = "too humid" if problems["humid"] else "fine"
        said.append(f"humidity {_fmt(r.humidity)}% ({verdict}; {_fmt(hlo)}-{_fmt(hhi)}%)")
    if r.co2 is not None:
        verdict = "stale air" if problems["stale"] else "fine"
        said.append(f"CO2 {_fmt(r.co2)} ppm ({verdict}; under {_fmt(r.co2_max)} ppm)")
    return problems, said


def _changes(b: Beliefs, room: str, problems: dict[str, bool], r: Readings) -> list[Change]:
    window, fan, hvac, thermostat = (_of(b, room, k) for k in ("window", "fan", "hvac", "thermostat"))
    lo, hi = r.temp_range
    middle = round((lo + hi) / 2)
    changes: list[Change] = []
    if problems["stale"] or (problems["humid"] and not problems["cold"]):
        if window is not None:
            changes.append(Change(window.id, "open", True))  # fresh air first: it costs no energy
    if problems["hot"]:
        if hvac is not None:
            changes.append(Change(hvac.id, "on", True))
            if hvac.state.get("mode") != "cool":  # a mode already right is not news in the report
                changes.append(Change(hvac.id, "mode", "cool"))
        elif thermostat is not None and isinstance(thermostat.state.get("target"), (int, float)):
            changes.append(Change(thermostat.id, "target", min(thermostat.state["target"], middle)))
    if (problems["hot"] or problems["humid"] or (problems["stale"] and window is None)) and fan is not None:
        changes.append(Change(fan.id, "on", True))
    if problems["cold"]:
        if window is not None and window.state.get("open"):
            changes.append(Change(window.id, "open", False))
        if thermostat is not None:
            changes.append(Change(thermostat.id, "target", max(thermostat.state.get("target") or middle, middle)))
        elif hvac is not None:
            changes.append(Change(hvac.id, "on", True))
            if hvac.state.get("mode") != "heat":
                changes.append(Change(hvac.id, "mode", "heat"))
    return changes


def comfort_step(b: Beliefs, goal: Goal, can: set[str] | None = None) -> tuple[str, object, str]:
    """The next step of a comfort goal: ``("read", sensor id, why)``, ``("changes", [Change], reason)``
    or ``("say", message, why)``.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        goal: the comfort goal from :func:`recognise_comfort` (room in ``target``, feeling in ``condition``).
        can: the offered tools' names, normalised; without ``readdevice`` (Home Assistant's dialect) a sensor's
            state the live context gave is its reading. None: read every sensor.
    """
    room = goal.target[0]
    live = can is not None and "readdevice" not in can  # the readings are the states a live context reported
    name = b.rooms[room].name if room in b.rooms else room
    sensors = _sensors(b, room)
    for sensor in sensors:
        if _read_result(b, sensor.id, live) is None:
            return ("read", sensor.id, f"To judge the air in the {name} I first read its {sensor.name.lower()}.")
    if not sensors:  # no sensor: go by what the user said
        felt = {"stuffy": {"stale": True}, "humid": {"humid": True}, "hot": {"hot": True}, "cold": {"cold": True}}
        problems = {"hot": False, "cold": False, "humid": False, "stale": False, **felt.get(goal.condition, {})}
        if goal.condition == "check":
            return ("say", f"The {name} has no sensor, so I cannot tell how the air is.", "There is nothing to read.")
        changes = _changes(b, room, problems, Readings())
        if not changes:  # nothing there to change: say so, and what is nearest (an empty report read ". .")
            kind = {"cold": "heating", "hot": "fan", "humid": "fan", "stuffy": "window"}.get(goal.condition, "")
            missing = missing_in_rooms(kind, b, [room]) if kind else ""
            missing = missing[:1].lower() + missing[1:] if missing else \
                f"there is nothing I can change for that in the {name}, so I did nothing."
            return ("say", f"You said the {name} feels {goal.condition}, but it has no sensor; {missing}",
                    "Nothing in that room can help.")
        return ("changes", changes, f"The {name} has no sensor, so I went by what you said. ")
    readings = [parse_readings(_read_result(b, s.id, live) or "") for s in sensors]
    problems = {k: any(_judge(r, goal.condition)[0][k] for r in readings) for k in ("hot", "cold", "humid", "stale")}
    said = "; ".join(", ".join(_judge(r, goal.condition)[1]) for r in readings)
    reading = f"The {name} reads {said}."
    if goal.condition == "check" or not any(problems.values()):
        tail = "" if goal.condition == "check" else " Everything is in the comfortable range, so I changed nothing."
        return ("say", reading + tail, "I have the readings and can answer from them.")
    changes = _changes(b, room, problems, readings[0])
    if not changes:
        return ("say", reading + " I have no device there that could help.", "No device in the room can fix this.")
    return ("changes", changes, reading + " ")
