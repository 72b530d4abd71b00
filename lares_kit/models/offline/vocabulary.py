"""The words of the home: how the offline model finds rooms and devices in what people say.

Part of the offline model (:mod:`lares_kit.models.offline`). Every rule
module reads an instruction the same way: :func:`words_of` normalises the
text, :func:`rooms_in` finds the rooms it names (by name, id, alias, a
common synonym, or a floor), :func:`has_word` tests for a word, and the
lexicons say what people call each kind of device and which rooms and
things a home might lack. :func:`describe` is how a reply names a device.
Only words: no goal, no plan (that is :mod:`.understanding`).
"""

from __future__ import annotations

import functools
import re

from ...sentences.wording import in_sentence
from .reading import Beliefs, Dev

__all__ = ["LIGHT_WORDS", "NOT_SETTINGS", "ROOM_SYNONYMS", "ROOM_WORDS", "STOP", "THING_WORDS", "TYPE_SETTINGS",
           "TYPE_WORDS", "SENSED", "describe", "has_word", "room_phrases", "rooms_in", "state_words", "untyped",
           "with_digits", "words_of"]

LIGHT_WORDS = ("light", "lights", "lamp", "lamps", "bulb", "bulbs", "lighting")
# device type -> what people call it
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "light": LIGHT_WORDS, "thermostat": ("thermostat", "heating", "heat", "temperature", "degrees"),
    "heater": ("heater", "heating", "radiator"), "lock": ("lock", "door"), "door": ("door",),
    "window": ("window", "windows"), "blinds": ("blinds", "blind", "shades", "curtains"), "fan": ("fan",),
    "tv": ("tv", "television", "telly", "volume"),
    "speaker": ("speaker", "music", "radio", "volume"), "oven": ("oven",),
    "stove": ("stove", "hob", "cooker"), "kettle": ("kettle",), "alarm": ("alarm",),
    "hvac": ("air conditioning", "air conditioner", "aircon", "ac", "hvac", "cooling"),
    "sensor": ("sensor", "sensors"),
}
# Things people ask homes to do that a given home may not have: a mention with no match is refused.
THING_WORDS = {w for ws in TYPE_WORDS.values() for w in ws} | {
    "coffee machine", "dishwasher", "fridge", "washing machine", "vacuum", "sprinkler", "air conditioning",
    "aircon", "fireplace", "garage door", "camera", "printer", "jacuzzi", "hot tub", "microwave", "toaster", "dryer"}
# Home Assistant's kinds, as imported homes have them. Not things to refuse by: "water the plants" in a home
# with no valve is a task for hands (.infeasible), not a missing device called "water".
TYPE_WORDS |= {
    "media_player": ("speaker", "speakers", "music", "radio", "song", "track", "media player", "volume"),
    "vacuum": ("vacuum", "robot vacuum"), "valve": ("valve", "water", "irrigation", "sprinkler"),
    "cover": ("blinds", "blind", "shades", "curtains", "curtain", "shutters", "garage door"),
}
# Settings each type has, for a device whose state the request does not show (an overview, Home Assistant's
# static context): what a command may still ask of it.
TYPE_SETTINGS: dict[str, tuple[str, ...]] = {
    "light": ("on", "brightness", "color"), "switch": ("on",), "fan": ("on", "speed"), "lock": ("locked",),
    "cover": ("position",), "blinds": ("position",), "door": ("open",), "window": ("open",),
    "valve": ("open", "position"),
    "thermostat": ("target", "mode"), "hvac": ("on", "target", "mode"), "heater": ("on", "target"),
    "media_player": ("on", "playing", "volume", "muted"), "tv": ("on", "volume"), "speaker": ("on", "volume"),
    "alarm": ("armed",), "vacuum": ("status",)}
# The modes people name for heating and air conditioning ("the thermostat to heat at 20"): what such a device is
# commonly set to, as Home Assistant's climate modes say it; a mode the device refuses is the tool's to say.
MODE_WORDS: dict[str, tuple[str, ...]] = {"thermostat": ("heat", "cool", "auto"),
                                          "hvac": ("cool", "heat", "fan", "dry", "auto")}
NOT_SETTINGS = ("unit", "device_class", "unlisted")  # state keys that describe a device; nothing sets them
ROOM_WORDS = {"garage", "attic", "basement", "cellar", "garden", "bathroom", "toilet", "loft", "pantry", "nursery",
              "playroom", "gym", "studio", "office", "study", "kitchen", "lounge", "hall", "hallway", "bedroom",
              "porch", "balcony", "patio", "shed", "laundry", "landing", "library", "den", "conservatory", "closet",
              "utility room", "guest room", "spare room", "dining room", "living room", "sitting room", "terrace",
              "master bedroom", "kids room", "games room", "cinema room", "wine cellar", "driveway", "roof"}
ROOM_SYNONYMS = [{"lounge", "living room", "sitting room", "front room", "family room"},
                 {"hallway", "hall", "corridor", "entrance", "entry", "foyer", "landing"},
                 {"office", "study", "workroom"}, {"bedroom", "main bedroom", "master bedroom"},
                 {"bathroom", "washroom"}]
STOP = {"the", "a", "an", "my", "our", "your", "in", "on", "off", "to", "of", "and", "for", "please", "all", "turn",
        "switch", "set", "is", "it", "me", "us", "up", "at", "with", "room", "light", "lights"}


@functools.lru_cache(maxsize=8192)  # called for every device name on every request: cache it
def words_of(text: str) -> str:
    """Lower-case words, hyphens as spaces, punctuation dropped (digits and '.' kept).

    Args:
        text: any text, e.g. the user's instruction or a room name.

    Examples:
        >>> words_of("Turn ON the Living-Room lamp, please!")
        'turn on the living room lamp please'
    """
    text = text.lower().replace("’", "'").replace("-", " ").replace("_", " ")
    return " ".join(re.sub(r"[^a-z0-9.'% ]", " ", text).replace("'s ", " ").split()).strip(". ")


def has_word(text: str, phrase: str) -> bool:
    """Whether ``phrase`` is in ``text`` as whole words, a plural "s" allowed ("lamp" is in "the lamps").

    Args:
        text: the text to search, already in :func:`words_of` form.
        phrase: one or more words to find; an empty phrase is never found.

    Examples:
        >>> has_word("switch off the lamps", "lamp"), has_word("the lampshade", "lamp"), has_word("x", "")
        (True, False, False)
    """
    return bool(phrase) and re.search(rf"\b{re.escape(phrase)}s?\b", text) is not None


def describe(b: Beliefs, dev_id: str) -> str:
    """'the light in the Kitchen' -- how a halt message names a device ('the TV in the Den': capitals kept).

    Args:
        b: what the model read from the request; its rooms and devices give the names.
        dev_id: the id of a device in ``b.devices``.

    Examples:
        >>> from lares_kit.models.offline.reading import Dev, Room
        >>> b = Beliefs("", "latest", {"den": Room("den", "Den")}, {"tv": Dev("tv", "TV", "tv", "den"),
        ...             "fan": Dev("fan", "Ceiling Fan", "fan", None)}, None, {}, [])
        >>> describe(b, "tv"), describe(b, "fan")
        ('the TV in the Den', 'the ceiling fan (fan)')
    """
    dev = b.devices[dev_id]
    room = b.rooms[dev.room].name if dev.room in b.rooms else None
    return f"the {in_sentence(dev.name)} in the {room}" if room else f"the {in_sentence(dev.name)} ({dev.id})"


def room_phrases(b: Beliefs) -> dict[str, set[str]]:
    """Room id -> the phrases that name it: its name, its id and its aliases, as :func:`words_of` writes them.

    Args:
        b: what the model read from the request; its rooms are read.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> rooms = {"lounge": Room("lounge", "Living-Room", ["den"])}
        >>> phrases = room_phrases(Beliefs("", "latest", rooms, {}, None, {}, []))
        >>> sorted(phrases["lounge"])
        ['den', 'living room', 'lounge']
    """
    return {r.id: {words_of(r.name), words_of(r.id), *map(words_of, r.aliases)} for r in b.rooms.values()}


def rooms_in(text: str, b: Beliefs, numbered: bool = False) -> tuple[list[str], str]:
    """(the rooms ``text`` names, in the order said; ``text`` with those mentions blanked out as ``#``).

    ``text`` is already :func:`words_of` form. A room is named by its name, id
    or an alias (a plural "s" allowed), by a common synonym when only one room
    fits it ("living room" for a home that calls it the lounge), or by
    "upstairs"/"downstairs" when the home has floors; with ``numbered``, when
    nothing else names a room, by a room word that begins several rooms' names
    ("the bedroom": Bedroom 1 and Bedroom 2). Blanking keeps positions,
    so "meeting room 1" cannot later read as the value 1.

    Args:
        text: the instruction (or a part of it), already in :func:`words_of` form.
        b: what the model read from the request; its rooms, and the floors they are on, are read.
        numbered: also read a room word as every room whose name is that word and a number or letter.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> rooms = {"lounge": Room("lounge", "Lounge"), "office-3": Room("office-3", "Office 3")}
        >>> rooms_in("set office 3 to 21 and dim the living room", Beliefs("", "latest", rooms, {}, None, {}, []))
        (['office-3', 'lounge'], 'set ######## to 21 and dim the ###########')
    """
    found: list[tuple[int, str]] = []
    phrases = sorted(((p, r) for r, ps in room_phrases(b).items() for p in ps if p), key=lambda x: -len(x[0]))
    for phrase, room in phrases:
        for m in re.finditer(rf"\b{re.escape(phrase)}s?\b", text):
            found.append((m.start(), room))
            text = text[:m.start()] + "#" * (m.end() - m.start()) + text[m.end():]
    for group in ROOM_SYNONYMS:  # "living room" for a home that calls it the lounge
        fits = {r for r, ps in room_phrases(b).items() if ps & group}
        for word in sorted(group, key=lambda w: (-len(w), w)):
            m = re.search(rf"\b{re.escape(word)}s?\b", text)
            if m and len(fits) == 1:
                found.append((m.start(), fits.pop()))
                text = text[:m.start()] + "#" * (m.end() - m.start()) + text[m.end():]
    for word in sorted(ROOM_WORDS, key=lambda w: (-len(w), w)) if numbered and not found else ():
        # "the bedroom" in a home of Bedroom 1 and Bedroom 2: both (not "my bedroom": one of them, the speaker's)
        rooms = [r for r in b.rooms.values() if re.fullmatch(rf"{re.escape(word)} \w{{1,2}}", words_of(r.name))]
        if len(rooms) > 1 and (m := re.search(rf"(?<!\bmy )(?<!\bour )(?<!\byour )\b{re.escape(word)}\b", text)):
            found += [(m.start(), r.id) for r in rooms]
            text = text[:m.start()] + "#" * (m.end() - m.start()) + text[m.end():]
    floors = {r.floor for r in b.rooms.values() if r.floor is not None}
    if len(floors) > 1:  # "downstairs", "upstairs": the rooms on those floors, when the world has floors
        for pattern, wanted in ((r"\b(?:downstairs|down ?stairs|ground floor)\b", {min(floors)}),
                                (r"\b(?:upstairs|up ?stairs)\b", floors - {min(floors)})):
            if m := re.search(pattern, text):  # a room named too ("upstairs ... the landing") says more
                found += [] if found else [(m.start(), r.id) for r in b.rooms.values() if r.floor in wanted]
                text = text[:m.start()] + "#" * (m.end() - m.start()) + text[m.end():]
    rooms = [r for _, r in sorted(found)]
    return list(dict.fromkeys(rooms)), text


_FLAGS = {"on": ("on", "off"), "open": ("open", "closed"), "locked": ("locked", "unlocked"), "armed": ("armed",
          "disarmed"), "playing": ("playing", "paused"), "muted": ("muted", "not muted")}
# What a binary sensor's on and off mean, by its device class (Home Assistant's classes)
SENSED = {"door": ("open", "closed"), "window": ("open", "closed"), "garage_door": ("open", "closed"),
           "opening": ("open", "closed"), "motion": ("detecting motion", "clear"), "occupancy": ("occupied", "clear"),
           "presence": ("home", "away"), "moisture": ("wet", "dry"), "smoke": ("detecting smoke", "clear"),
           "lock": ("unlocked", "locked"), "battery": ("low", "normal"), "problem": ("reporting a problem", "OK")}


def state_words(dev: Dev) -> str:
    """A device's state as a sentence says it: "on", "open", "locked, volume 20", "detecting motion".

    Args:
        dev: the device, with the state the model knows (keys it does not know are left out).

    Examples:
        >>> state_words(Dev("d", "Porch door", "binary_sensor", "p", state={"on": False, "device_class": "door"}))
        'closed'
        >>> state_words(Dev("t", "TV", "tv", "l", state={"on": True, "volume": 20}))
        'on, volume 20'
        >>> state_words(Dev("s", "Humidity", "sensor", "b", state={"humidity": 62, "unit": "%"}))
        'humidity 62%'
    """
    state = dev.state
    if dev.type == "binary_sensor" and isinstance(state.get("on"), bool):
        words = SENSED.get(str(state.get("device_class")), ("on", "off"))
        return words[0 if state["on"] else 1]
    parts = []
    for key, value in state.items():
        if key in NOT_SETTINGS:
            continue
        if key in _FLAGS and isinstance(value, bool):
            parts.append(_FLAGS[key][0 if value else 1])
        elif key == "items" and isinstance(value, list):
            parts.append(f"{len(value)} item{'s' if len(value) != 1 else ''}")
        else:  # "next event ...": no ".." at the end; a Home Assistant sensor says its unit
            unit = str(state.get("unit") or "") if dev.type == "sensor" else ""
            parts.append(f"{key.replace('_', ' ')} {str(value).rstrip('.')}{unit if unit == '%' else f' {unit}'}"
                         .rstrip())
    return ", ".join(parts)


_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_NUMBER = re.compile(r"\b(?:(" + "|".join(_TENS[2:]) + r")(?:[ -](" + "|".join(_ONES[1:10]) + r"))?|("
                     + "|".join(sorted(_ONES, key=len, reverse=True)) + r")|(a |one )?hundred)"
                     r"(?=\s*(?:percent|per cent|%|degrees?|°))")


def with_digits(text: str) -> str:
    """English number words before a unit written as digits, for the rules: "forty percent" -> "40 percent".

    Args:
        text: an instruction, already in :func:`words_of` form.

    Examples:
        >>> with_digits("dim the lights to forty five percent"), with_digits("heat it to twenty degrees")
        ('dim the lights to 45 percent', 'heat it to 20 degrees')
        >>> with_digits("turn on one of the lamps")
        'turn on one of the lamps'

    """
    def value(m: re.Match) -> str:
        tens, ones, single, _ = m.groups()
        if tens:
            return str(_TENS.index(tens) * 10 + (_ONES.index(ones) if ones else 0))
        return str(_ONES.index(single)) if single else "100"

    return _NUMBER.sub(value, text)


def untyped(name: str, device_type: str) -> str | None:
    """A device's name without the word for its type at the end, as people shorten it; None if it has none.

    Args:
        name: The device's name (or an alias), as the world writes it.
        device_type: Its type.

    Examples:
        >>> untyped("Front door lock", "lock"), untyped("Back door", "lock"), untyped("Lock", "lock")
        ('Front door', None, None)
    """
    words, kind = words_of(name).split(), words_of(device_type).split()
    return name.rsplit(None, 1)[0] if kind and len(words) > 1 and words[-1] == kind[-1] else None


def named_kind(rest: str, devices: list[Dev]) -> list[Dev]:
    """Of several devices of one type, those whose own name has a word the instruction adds to the kind.

    "all the light strips": the lights named "Light strip", not the floor lamp; "the ceiling lights": the ceiling
    lights. Words for the kind itself (light, lamp...) and words every one of them has tell nothing apart.

    Args:
        rest: the instruction in :func:`words_of` form, its room names blanked (:func:`rooms_in`).
        devices: the devices the instruction was read to mean.

    Examples:
        >>> strips = [Dev("a", "Light strip", "light", "x"), Dev("b", "Floor lamp", "light", "x")]
        >>> [d.id for d in named_kind("turn on all the light strips", strips)]
        ['a']
        >>> [d.id for d in named_kind("turn on all the lamps", strips)]
        ['a', 'b']
    """
    if len(devices) < 2 or len({d.type for d in devices}) > 1 or re.search(r"\b(?:and|or)\b", rest):
        return devices  # "the tv and the lights", "the ceiling light and the lamp": a word of one says nothing of all
    said = {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in rest.split() if "#" not in w}
    for word in sorted(said - STOP - set(LIGHT_WORDS) - {w for ws in TYPE_WORDS.values() for w in ws}):
        having = [d for d in devices if word in words_of(d.name).split()]
        if having and len(having) < len(devices):
            return having
    return devices
