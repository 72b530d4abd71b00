"""The offline model's first tier: Home Assistant's own recognizer, over the names of this home.

Part of the offline model (:mod:`lares_kit.models.offline`); taught in
``notebooks/17_home_assistant.ipynb``. Before any hand-written rule reads an
instruction, ``hassil`` -- the recognizer of Home Assistant's built-in voice
assistant -- matches it against the sentence templates of
``home-assistant-intents`` in the home's language, with slot lists built
from what the request says about the home: **areas** from the rooms (names,
ids, aliases, and for English the common synonyms of :mod:`~lares_kit.models.offline.vocabulary`),
**names** from the devices (their names and aliases, alone and after their
room's name: "Kitchen Light"), **floors** where the knowledge names them.
A recognized intent becomes a :class:`~.goals.Goal`:

* ``HassTurnOn`` / ``HassTurnOff`` by name, by area or floor and domain
  ("turn off the lights in the kitchen"), or a whole domain ("turn off all
  the lights"): the setting each device has -- ``on``, ``locked`` (HA locks
  with TurnOn), ``open`` or ``position`` (covers, valves), ``mode`` (a
  thermostat), ``status`` (a vacuum);
* ``HassLightSet`` (brightness), ``HassSetPosition``,
  ``HassClimateSetTemperature``, ``HassSetVolume``, ``HassMediaPause`` /
  ``Unpause``, ``HassMediaPlayerMute`` / ``Unmute``, ``HassFanSetSpeed``,
  ``HassVacuumStart`` / ``ReturnToBase``, ``HassListAddItem``;
* state questions (``HassGetState``, ``HassClimateGetTemperature``) in a
  home that is not English, answered from what the agent knows with Home
  Assistant's own response in that language (English questions go to the
  rules of :mod:`~lares_kit.models.offline.understanding`, which name the devices).

One device named where several fit ("turn on the light" in a home of lights)
becomes a question; several fit a plural ("the lights") or "all": all of
them, as do several of a kind in one room with Home Assistant's tools ("the
light in the kitchen": HassTurnOn's area and domain). What hassil does not
match -- searches with the robot, conditions, memory, several commands in
one sentence, loose wordings ("pop the light on") -- returns None, and the
rules decide. hassil and the intents are loaded on the first instruction,
not by ``import lares_kit``.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ....ha.domains import device_class_of, domain_of
from ....sentences.languages import LanguageError, intents_for
from ..goals import WHICH_ONE, Change, Goal, which_one
from ..reading import Beliefs, Dev
from ..vocabulary import ROOM_SYNONYMS, TYPE_SETTINGS, untyped, words_of
from .responses import error_reply, intent_reply, state_reply, yes_no

__all__ = ["recognise_intent", "recognize", "switch_change"]

# The rules' own clarifying questions: once one is answered, the rules read the instruction with the answer.
_CLARIFYING = (WHICH_ONE, "Which room do you mean", "What temperature shall I set", "Sorry, I did not understand")
# Intents that change something, and the intents that read.
_SETTERS = {"HassTurnOn", "HassTurnOff", "HassLightSet", "HassSetPosition", "HassClimateSetTemperature",
            "HassSetVolume", "HassMediaPause", "HassMediaUnpause", "HassMediaNext", "HassMediaPlayerMute",
            "HassMediaPlayerUnmute", "HassFanSetSpeed", "HassVacuumStart", "HassVacuumReturnToBase", "HassListAddItem",
            "HassShoppingListAddItem"}
_READERS = {"HassGetState", "HassClimateGetTemperature"}
# English words that make a target plural: "the lights", "all", "every"
# ("blinds", "curtains" and "shutters" name one set as often as several: not plural)
_PLURAL = re.compile(r"\b(all|every|each|both|everything|everywhere|lights|lamps|fans|switches|covers|windows|doors|"
                     r"locks|valves|speakers|tvs)\b")


def _key(b: Beliefs) -> tuple:
    # What the slot lists are built from, hashable: the same home in the next request reuses them.
    rooms = tuple((r.id, r.name, tuple(r.aliases), r.floor) for r in b.rooms.values())
    devices = tuple((d.id, d.name, d.type, d.room or "", tuple(d.aliases), "on" in d.state) for d in b.devices.values())
    floors = tuple((n, tuple(names)) for n, names in sorted(b.floors.items()))
    return b.language, rooms, devices, floors


@functools.lru_cache(maxsize=32)
def _slot_lists(key: tuple) -> tuple[dict[str, Any], dict[str, tuple[str, ...]]]:
    """(hassil slot lists, name text -> the ids of the devices it names) for a home's key."""
    from hassil.intents import TextChunk, TextSlotList, TextSlotValue

    language, rooms, devices, floors = key
    areas: dict[str, str] = {}
    for rid, name, aliases, _ in rooms:
        for phrase in (name, rid.replace("-", " ").replace("_", " "), *aliases):
            areas.setdefault(phrase.strip().lower(), rid)
    if language == "en":  # "living room" for a home that calls it the lounge, when only one room fits
        said = {rid: {words_of(p) for p in (name, rid, *aliases)} for rid, name, aliases, _ in rooms}
        for group in ROOM_SYNONYMS:
            fits = [rid for rid, phrases in said.items() if phrases & group]
            for word in group if len(fits) == 1 else ():
                areas.setdefault(word, fits[0])
    room_names = {rid: name for rid, name, _, _ in rooms}
    names: dict[str, list[str]] = {}
    domains: dict[str, str] = {}
    for did, name, dtype, room, aliases, has_on in devices:
        said = [name, *aliases]
        if short := untyped(name, dtype):
            said.append(short)  # "the front door" for the front door lock
        if room in room_names:  # "Kitchen Light": how people name a device after its room
            said += [f"{room_names[room]} {n}" for n in (name, *aliases)
                     if words_of(room_names[room]) not in words_of(n)]
        for phrase in said:
            text = phrase.strip().lower()
            if text and did not in names.setdefault(text, []):
                names[text].append(did)
                domains.setdefault(text, domain_of(dtype, {"on": True} if has_on else {}) if dtype else "")

    def slot(values: dict[str, Any], context: dict[str, dict[str, str]] | None = None) -> Any:
        return TextSlotList(name=None, values=[
            TextSlotValue(TextChunk(text), value, (context or {}).get(text)) for text, value in values.items()])

    floor_texts = {n.strip().lower(): str(number) for number, said in floors for n in said if n.strip()}
    lists = {"area": slot(areas), "floor": slot(floor_texts),
             "name": slot({t: t for t in names}, {t: {"domain": d} for t, d in domains.items() if d})}
    return lists, {t: tuple(ids) for t, ids in names.items()}


def recognize(b: Beliefs) -> tuple[Any, dict[str, tuple[str, ...]]] | None:
    """hassil's best match for the instruction in ``b`` (and the name -> ids map it used), or None.

    Args:
        b: what the model read from the request: the instruction, the home's language, rooms, devices and floors.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("turn off the lights in the kitchen", "latest", {"kitchen": Room("kitchen", "Kitchen")},
        ...             {"k": Dev("k", "Light", "light", "kitchen")}, None, {}, [])
        >>> result, _ = recognize(b)
        >>> result.intent.name, result.entities["area"].value, result.entities["domain"].value
        ('HassTurnOff', 'kitchen', 'light')
    """
    text = b.instruction.strip()
    if not text or not b.devices:
        return None
    room = b.rooms.get(b.place)  # where the person speaks from: "turn on the lights" means the lights there
    return _recognized(_key(b), text, (room.id, room.name) if room else None)


@functools.lru_cache(maxsize=256)  # every step of an episode reads the same instruction in the same home
def _recognized(key: tuple, text: str, place: tuple[str, str] | None) -> tuple[Any, dict[str, tuple[str, ...]]] | None:
    language = key[0]
    try:
        intents = intents_for(language)
    except LanguageError:
        return None  # the model cannot read a language it does not know; the rules will say they did not understand
    from hassil import recognize_best

    lists, names = _slot_lists(key)
    context = {"area": {"value": place[0], "text": place[1]}} if place else None
    for said in dict.fromkeys([text, _main_clause(text, language), *_decompounded(text, key)]):
        result = recognize_best(said, intents, slot_lists=lists, language=language,
                                intent_context=context) if said else None
        if result is not None:
            return result, names
    return None


# A trailing clause that only says why ("unlock the door, the plumber is here") may be left out; one that says
# when, whether or what else may not (those are conditions and further commands, for the rules).
_REASON = re.compile(r"\s*(?:[,;:(]|\s-+\s|\s(?:because|since|as|cause|cos)\s)\s*")
_KEEPS = re.compile(r"\b(if|unless|when|whenever|whether|depending|until|till|after|before|once|while|then|and|but|"
                    r"except|only|otherwise|also|too|instead|not|don'?t|no|never|or)\b")


def _main_clause(text: str, language: str) -> str:
    """``text`` without a trailing clause that only gives a reason; "" when there is none to drop (English only).

    Examples:
        >>> _main_clause("Unlock the front door, the plumber is here.", "en")
        'Unlock the front door'
        >>> _main_clause("Turn on the porch light, but only after dark", "en")
        ''
    """
    parts = _REASON.split(text.strip().rstrip(".!"), maxsplit=1)
    if language != "en" or len(parts) < 2 or not parts[0].strip() or _KEEPS.search(words_of(parts[1])):
        return ""
    return parts[0].strip()


# Languages that write a place and a thing as one word ("Küchenlicht", "keukenlamp"), and the joints between them
_COMPOUNDING = ("de", "nl", "da", "sv", "nb")
_JOINT = re.compile(r"^(?:-|(?:en|n|s|e)-?)(?=\w{3})")


def _decompounded(text: str, key: tuple) -> list[str]:
    """``text`` with each word that joins an area (or floor) to what follows split in two, two ways; [] if none does.

    Home Assistant's sentences name the area and the kind apart ("Küche Licht an"); German and Dutch speakers
    often write them as one word, sometimes with a joint between ("Küche-n-licht"). Only tried when the sentence
    as said is not recognized: once as the word runs on ("Badspiegel": "Bad spiegel"), once without a joint
    ("-", "n", "en", "s", "e").

    Args:
        text: the instruction.
        key: the home's key (:func:`_key`): its language, rooms and floors.

    Examples:
        >>> key = ("de", (("kueche", "Küche", (), 0), ("wohnzimmer", "Wohnzimmer", (), 0)), (), ())
        >>> _decompounded("Wohnzimmerlampen an", key)
        ['Wohnzimmer lampen an']
        >>> _decompounded("Schalte das Küchenlicht ein", key), _decompounded("Wohnzimmer-Ventilator aus", key)
        (['Schalte das Küche nlicht ein', 'Schalte das Küche licht ein'], ['Wohnzimmer Ventilator aus'])
        >>> _decompounded("Schalte das Licht ein", key)
        []
    """
    language, rooms, _, floors = key
    if language not in _COMPOUNDING:
        return []
    places = sorted({p for _, name, aliases, _ in rooms for p in (name, *aliases)}
                    | {p for _, said in floors for p in said if p}, key=len, reverse=True)

    def split(word: str, joints: bool) -> str:
        for place in places:
            rest = word[len(place):] if word.lower().startswith(place.lower()) else ""
            rest = _JOINT.sub("", rest) if rest and joints else rest
            if len(rest) >= 3 and rest[0].isalpha():
                return f"{place} {rest}"
        return word

    words = text.split()
    readings = [" ".join(split(w, joints) for w in words) for joints in (False, True)]
    return [r for r in dict.fromkeys(readings) if r != " ".join(words)]


def _value(result: Any, slot: str) -> Any:
    entity = result.entities.get(slot)
    return None if entity is None else entity.value


def _targets(b: Beliefs, result: Any, names: dict[str, tuple[str, ...]]) -> list[Dev]:
    """The devices the recognized slots pick out: name, area, floor, domain and device class together."""
    pool = list(b.devices.values())
    if (name := _value(result, "name")) is not None:
        pool = [d for d in pool if d.id in names.get(str(name), ())]
    if (area := _value(result, "area")) is not None:
        pool = [d for d in pool if d.room == area]
    if (floor := _value(result, "floor")) is not None:
        pool = [d for d in pool if d.room in b.rooms and str(b.rooms[d.room].floor) == str(floor)]
    domain = _value(result, "domain")
    if domain is not None:  # "lock the smart lock": its lock, not the sensor of the same name (if one is a lock)
        wanted = set(domain) if isinstance(domain, list) else {str(domain)}
        of_domain = [d for d in pool if domain_of(d.type, d.state) in wanted]
        pool = of_domain if name is None else of_domain or pool
    if (device_class := _value(result, "device_class")) is not None:
        pool = [d for d in pool if device_class in (device_class_of(d.type), d.state.get("device_class"))]
    return pool


def _also_called(b: Beliefs, said: str, devices: list[Dev], area: Any) -> list[Dev]:
    """One device named ``said``, plus the others whose names hold all its words (in the area, if one was said)."""
    words = set(words_of(said).split())
    others = [d for d in b.devices.values() if d not in devices and (area is None or d.room == area)
              and any(words <= set(words_of(n).split()) for n in (d.name, *d.aliases))]
    return devices + others if len(devices) == 1 else devices


def switch_change(dev: Dev, on: bool, domain: Any = None) -> Change | None:
    """What "turn on"/"turn off" sets on a device, as Home Assistant means it (TurnOn locks a lock), or None.

    Args:
        dev: the device, as the model believes it (type and known state keys).
        on: True for HassTurnOn, False for HassTurnOff.
        domain: the domain the sentence or call meant; decides for a device with several settings ("open the
            door": its ``open``, not its lock). None when it said none.

    Examples:
        >>> switch_change(Dev("d", "Front door", "lock", "hall"), True)
        Change(device='d', attribute='locked', value=True)
    """
    state, kind = dev.state, dev.type
    if kind in ("sensor", "binary_sensor"):
        return None  # what a sensor shows is read, never set
    # One that opens and closes is opened or closed (HA's open_cover/close_cover), though its position may be known
    positioned = "position" in state and "open" not in state
    if domain in ("cover", "valve") and ("open" in state or "position" in state):
        return Change(dev.id, "position", 100 if on else 0) if positioned else Change(dev.id, "open", on)
    if kind == "lock" or "locked" in state:
        return Change(dev.id, "locked", on)
    if positioned or ("open" not in state and kind in ("blinds", "cover")):
        return Change(dev.id, "position", 100 if on else 0)
    if kind in ("door", "window", "valve", "cover") or "open" in state:  # one that only opens and closes
        return Change(dev.id, "open", on)
    if kind == "vacuum":
        return Change(dev.id, "status", "cleaning" if on else "returning")
    if kind == "thermostat" and "on" not in state:
        return Change(dev.id, "mode", "heat" if on else "off")
    if kind == "alarm" or "armed" in state:
        return Change(dev.id, "armed", on)
    if kind in ("light", "") or "on" in state or kind in ("switch", "fan", "tv", "speaker", "media_player",
                                                           "kettle", "hvac", "heater", "oven", "stove"):
        return Change(dev.id, "on", on)
    return None


def _number(value: Any) -> Any:
    number = float(value)
    return int(number) if number.is_integer() else number


def _changes(intent: str, result: Any, devices: list[Dev], b: Beliefs) -> list[Change] | None:
    """The settings an intent asks of these devices; None when one of them cannot do it."""
    changes: list[Change] = []
    for d in devices:
        keys = set(d.state) | set(TYPE_SETTINGS.get(d.type, ()))
        if intent in ("HassTurnOn", "HassTurnOff"):
            found = switch_change(d, intent == "HassTurnOn", _value(result, "domain"))
            found_list = [found] if found else []
        elif intent == "HassLightSet" and _value(result, "brightness") is not None and "brightness" in keys:
            found_list = ([Change(d.id, "on", True)] if d.state.get("on") is not True else []) + [
                Change(d.id, "brightness", _number(_value(result, "brightness")))]
        elif intent == "HassLightSet" and _value(result, "color") is not None and "color" in keys:
            found_list = ([Change(d.id, "on", True)] if d.state.get("on") is not True else []) + [
                Change(d.id, "color", str(_value(result, "color")))]
        elif intent == "HassSetPosition" and _value(result, "position") is not None:
            pos = _number(_value(result, "position"))
            found_list = ([Change(d.id, "position", pos)] if "position" in keys or d.type in ("blinds", "cover")
                          else [Change(d.id, "open", pos > 0)] if "open" in keys else [])
        elif intent == "HassClimateSetTemperature" and "target" in keys:
            found_list = [Change(d.id, "target", _number(_value(result, "temperature")))]
        elif intent == "HassSetVolume" and "volume" in keys:
            found_list = [Change(d.id, "volume", _number(_value(result, "volume_level")))]
        elif intent in ("HassMediaPause", "HassMediaUnpause") and "playing" in keys:
            found_list = [Change(d.id, "playing", intent == "HassMediaUnpause")]
        elif intent == "HassMediaNext" and isinstance(d.state.get("track"), int):
            done = b.value_set(d.id, "track")  # the next track: one more than before this task's skip, once made
            found_list = [Change(d.id, "track", done if done is not None else d.state["track"] + 1)]
        elif intent in ("HassMediaPlayerMute", "HassMediaPlayerUnmute") and "muted" in keys:
            found_list = [Change(d.id, "muted", intent == "HassMediaPlayerMute")]
        elif intent == "HassFanSetSpeed" and _value(result, "percentage") is not None and keys & {"percentage",
                                                                                                   "speed"}:
            pct = _number(_value(result, "percentage"))
            speed = Change(d.id, "percentage", pct) if "percentage" in keys else \
                Change(d.id, "speed", int(round(pct * 3 / 100)))
            found_list = ([Change(d.id, "on", True)] if pct and d.state.get("on") is False else []) + [speed]
        elif intent in ("HassVacuumStart", "HassVacuumReturnToBase") and d.type == "vacuum":
            found_list = [Change(d.id, "status", "cleaning" if intent == "HassVacuumStart" else "returning")]
        elif intent in ("HassListAddItem", "HassShoppingListAddItem") and d.type == "todo" and _value(result, "item"):
            found_list = [Change(d.id, "items", {"add": str(_value(result, "item")).strip()})]
        else:
            found_list = []
        if not found_list:
            return None
        changes += found_list
    return changes


_KIND_WORDS = frozenset({"light", "lights", "the", "a", "in", "on", "off", "turn", "switch", "please", "and"})


def _the_one_called(b: Beliefs, devices: list[Dev]) -> list[Dev]:
    # Of several devices of the kind said, the one whose own name has a word the instruction says ("lamp" names
    # the floor lamp, not the ceiling light); the same devices when no word tells one apart.
    said = set(words_of(b.instruction).split()) - _KIND_WORDS
    own = [d for d in devices if said & set(words_of(f"{d.name} {' '.join(d.aliases)}").split())
           and not said & set(words_of(b.rooms[d.room].name if d.room in b.rooms else "").split())
           & set(words_of(d.name).split())]
    return own if len(own) == 1 else devices


def recognise_intent(b: Beliefs) -> Goal | None:
    """The goal hassil recognizes in the instruction, or None to leave it to the rules.

    Args:
        b: what the model read from the request. An instruction the rules asked about (the user answered "which
            one?") is left to them, as they read the answer.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> rooms = {"kitchen": Room("kitchen", "Kitchen"), "hall": Room("hall", "Hall")}
        >>> devices = {"k": Dev("k", "Light", "light", "kitchen", state={"on": False}),
        ...            "h": Dev("h", "Light", "light", "hall", state={"on": True})}
        >>> recognise_intent(Beliefs("turn off all the lights", "latest", rooms, devices, None, {}, [])).changes
        [Change(device='k', attribute='on', value=False), Change(device='h', attribute='on', value=False)]
        >>> recognise_intent(Beliefs("turn on the light", "latest", rooms, devices, None, {}, [])).question
        'Which one do you mean: the light in the Kitchen or the light in the Hall?'
        >>> recognise_intent(Beliefs("find my dog", "latest", rooms, devices, None, {}, [])) is None
        True
    """
    if any(q.startswith(_CLARIFYING) for q, _ in b.answers):
        return None  # the user answered a question of the rules ("which one?"): they read the answer
    found = recognize(b)
    if found is None:
        return None
    result, names = found
    intent = result.intent.name
    if intent not in _SETTERS | _READERS:
        return None  # timers, weather, the date, broadcasts...: the rules say what the home cannot do
    if intent in _READERS:
        devices = _targets(b, result, names)
        if b.language != "en":
            return Goal("question", message=state_reply(b, result, devices))
        answer = yes_no(b, result, devices)  # English: "is it on?" gets a yes or a no; the rules answer the rest
        return Goal("question", message=answer) if answer else None
    devices = _targets(b, result, names)
    if intent == "HassShoppingListAddItem":  # "the shopping list": the to-do list called so, else the only one
        lists = [d for d in b.devices.values() if d.type == "todo"]
        devices = [d for d in lists if "shopping" in words_of(d.name)] or (lists if len(lists) == 1 else [])
    if not devices:
        return Goal("refuse", message=error_reply(b, result)) if b.language != "en" else None
    plural = b.language != "en" or _PLURAL.search(words_of(b.instruction)) is not None
    if len(devices) > 1 and not plural and _value(result, "name") is None and _value(result, "domain") is not None:
        # A kind on a floor: every one there. A kind in a room ("the light in the kitchen"): in Home Assistant's
        # dialect every one there, as HassTurnOn with an area and a domain means; with Lares's tools, a question.
        plural = _value(result, "floor") is not None or (b.dialect == "ha" and _value(result, "area") is not None)
    if not plural and (name := _value(result, "name")) is not None:
        # "the lamp": the floor lamp's alias, but three devices are lamps
        devices = _also_called(b, str(name), devices, _value(result, "area"))
    if len(devices) > 1:  # "lock the smart lock": the lock, not its battery sensor of the same name
        devices = [d for d in devices if _changes(intent, result, [d], b) is not None] or devices
    if len(devices) > 1 and not plural and _value(result, "name") is None:
        devices = _the_one_called(b, devices)  # "the lamp in the living room": its floor lamp, not its ceiling light
    if len(devices) > 1 and not plural:
        return Goal("clarify", question=which_one(b, devices))
    changes = _changes(intent, result, devices, b)
    if changes is None:
        return None  # a device that cannot do it: the rules name its settings, or what is missing
    return Goal("control", changes=changes, reply=intent_reply(b, result, devices))
