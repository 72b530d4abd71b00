"""Understanding an instruction: from words to a :class:`Goal` the planner can pursue.

Part of the offline model (:mod:`lares_kit.models.offline`). Rules, not a
language model: words are matched against the vocabulary of the home in the
prompt (room names, ids and aliases; device names, ids, aliases, types and
the attributes their states show) plus small built-in lexicons ("heating" is
a thermostat, "living room" may be the lounge). What it recognises:

* control -- "turn on the light in the kitchen", "turn off all the lights",
  "set the heating to 21", "lock the front door";
* find -- "find my dog", "where is Sally", "turn on the light for my dog";
* ask-then -- "set the office light depending on whether it's daytime":
  a fact the home cannot show, so the user must be asked;
* question -- "which lights are on?", answered from the knowledge;
* refuse -- a room or device the home does not have, or a kind of device the
  named room lacks ("the fan in the lobby": the nearest fans are named);
  "on" as a place ("the book on the shelf") is not a switch;
* clarify -- "turn on the lamp" when several lamps fit and no room is said;
* unknown -- everything else; the planner then tries
  :mod:`~lares_kit.models.offline.request_kinds.infeasible` (a clear request nothing here can do)
  before saying it could not understand.
"""

from __future__ import annotations

import re
from typing import Any

from ...sentences.wording import agree, capitalise
from .goals import WHICH_ONE as _WHICH_ONE
from .goals import Change, Goal
from .goals import which_one as _which_one
from .ha.recognizer import recognise_intent, switch_change
from .reading import Beliefs, Dev
from .vocabulary import (
    LIGHT_WORDS,
    NOT_SETTINGS,
    ROOM_WORDS,
    STOP,
    THING_WORDS,
    TYPE_SETTINGS,
    TYPE_WORDS,
    describe,
    has_word,
    named_kind,
    room_phrases,
    rooms_in,
    state_words,
    with_digits,
    words_of,
)

__all__ = ["NOT_UNDERSTOOD", "Change", "Goal", "daytime_answer", "missing_in_rooms", "understand", "yes_no_answer"]

NOT_UNDERSTOOD = "could not understand"  # how a reply to a question it cannot read begins its excuse
NUMERIC_ATTRS = ("target", "position", "brightness", "volume", "level", "speed", "channel", "temperature")


# Ways of saying on and off that the rules read as the plain words.
_SAYINGS = [(r"\b(?:kill|cut)\b(?= (?:the |all )?(?:\w+ )?(?:lights?|lamps?|power)\b)", "switch off"),
            (r"\b(?:we|i) (?:don'?t|do not) need (?=(?:the |any )?(?:lights?|lamps?)\b)", "switch off "),
            (r"\bno need for (?=(?:the |any )?(?:lights?|lamps?)\b)", "switch off ")]
def _distinct(b: Beliefs, dev: Dev) -> set[str]:
    room = b.rooms.get(dev.room or "")  # only this device's room, not every room's phrases
    room_words = (set(" ".join([words_of(room.name), words_of(room.id), *map(words_of, room.aliases)]).split())
                  if room else set())
    words = set(" ".join([words_of(dev.name), words_of(dev.id), *map(words_of, dev.aliases)]).split())
    return words - STOP - room_words - {"light", "lights"}


# Verbs that switch one kind of setting, read as Home Assistant reads TurnOn/TurnOff (.recognizer.switch_change):
# "lock" turns a lock on, "close" turns a cover off. (pattern, on, domain, the settings it may set)
_VERBS = ((r"\bunlock", False, "lock", {"locked"}), (r"\block(ed)?\b", True, "lock", {"locked"}),
          (r"\bopen\b", True, "cover", {"open", "position"}),
          (r"\b(?:close|shut)\b(?! (?:off|down)\b)", False, "cover", {"open", "position"}),
          (r"\bdisarm", False, "alarm", {"armed"}), (r"\barm\b", True, "alarm", {"armed"}))


def _value_for(text: str, dev: Dev) -> tuple[str, Any] | None:
    # What the instruction asks of this device: (attribute, value), or None if it cannot.
    keys = set(dev.state) | ({"on"} if dev.type in ("light", "") else set())
    if not dev.state:  # its state not shown (an overview, Home Assistant's static context): what its type has
        keys |= set(TYPE_SETTINGS.get(dev.type, ()))
    text = with_digits(text)  # "forty percent"
    number = re.search(r"\b(-?\d+(?:\.\d+)?)\s*(?:degrees?|°|%|percent|c)?\b", text)
    if number:
        value = float(number.group(1))
        value = int(value) if value.is_integer() else value
        named = [a for a in NUMERIC_ATTRS if a in keys and (has_word(text, a) or (a == "brightness" and "dim" in text))]
        usable = named or [a for a in NUMERIC_ATTRS if a in keys]
        return (usable[0], value) if usable else None
    if re.search(r"\bhalf ?way\b|\bhalf (?:open|closed|shut)\b", text) and "position" in keys:
        return "position", 50
    if "playing" in keys and (m := re.search(r"\b(pause|stop|resume|unpause|continue|play)\b", text)):
        return "playing", m.group(1) not in ("pause", "stop")  # "stop the music" pauses it, as HA reads it
    if dev.type == "vacuum" and re.search(r"\b(start|begin|run|clean|vacuum|stop|return|dock|base)\b", text):
        return "status", "returning" if re.search(r"\b(stop|return|dock|base)\b", text) else "cleaning"
    for pattern, on, domain, settings in _VERBS:  # what each verb sets: the first tier's own reading
        if re.search(pattern, text) and (change := switch_change(dev, on, domain)) and change.attribute in settings \
                and change.attribute in keys:
            return change.attribute, change.value
    onoff = re.search(r"\b(on|off|up|out)\b", text)
    if onoff and "on" in keys:
        return "on", onoff.group(1) in ("on", "up")
    if onoff and dev.type == "valve" and (change := switch_change(dev, onoff.group(1) in ("on", "up"), "valve")):
        return change.attribute, change.value  # "turn on the water": a valve opens (HassTurnOn, as HA reads it)
    if "toggle" in text and "on" in keys:
        return "on", not dev.state.get("on", False)
    return None


def _switched(rest: str, b: Beliefs) -> bool:
    """Whether an "on"/"off" in ``rest`` (room names blanked as #) means switching, not a place.

    "switch on the ####", "turn on the big lamp", "lights off", "turn it on": switching. "put the book on the
    shelf", "take the cup off the table": "on"/"off" before a thing that is no device or room says where.
    """
    names = {w for d in b.devices.values() for w in words_of(f"{d.name} {d.id} {d.type}").split()} | set(LIGHT_WORDS)
    for m in re.finditer(r"(\w+ )?\b(?:on|off)\b(?:\s+(?:the|a|an|my|your|our|his|her|their|top of the)\s+(.+))?",
                         rest):
        if m.group(2) is None or re.match(r"(?:turn|turned|switch|switched|flick|flip|power|click) $",
                                          m.group(1) or ""):
            return True
        phrase = re.split(r"\s(?:in|at|and|for|so|please|because|to|with|then|by|near|now)\b",
                          m.group(2))[0].split()[:4]
        if any("#" in w or w in names or w.rstrip("s") in names for w in phrase):
            return True
    return False


def _devices_for(text: str, b: Beliefs, rooms: list[str], rest: str) -> tuple[list[Dev], str]:
    # -> (devices the words pick out, a problem sentence if none/ambiguous)
    kinds = {t for t, ws in TYPE_WORDS.items() if any(has_word(rest, w) for w in ws) or has_word(rest, t)}
    kinds |= {d.type for d in b.devices.values() if d.type and has_word(rest, words_of(d.type))}
    scores = {d.id: len(_distinct(b, d) & set(rest.split())) for d in b.devices.values()}
    best = max(scores.values(), default=0)
    pool = [d for d in b.devices.values() if not rooms or d.room in rooms]
    specific = [d for d in pool if best and scores[d.id] == best]
    plural = re.search(r"\b(all|every|each|everything|everywhere|whole|both)\b|\b(lights|lamps)\b", text)
    if len(specific) > 1 and not plural:
        # Narrow a tie: the devices that can do what is asked ("lock" -> the ones with a lock), then the ones whose
        # name has more of the words than those counted already (the "entrance door", though "entrance" is a room).
        able = [d for d in specific if _value_for(rest, d)]
        specific = able or specific
        said = set(rest.split()) - STOP
        named = {d.id: len((set(words_of(d.name).split()) & said) - _distinct(b, d)) for d in specific}
        specific = [d for d in specific if named[d.id] == max(named.values())]
    if specific:
        # "the lamp" with three lamps: the same words fit several and nothing picks one -> ask which.
        fits = {frozenset(_distinct(b, d) & set(rest.split())) for d in specific}
        per_room = [d.room for d in specific]
        if len(specific) > 1 and len(fits) == 1 and not plural and (
                not rooms or len(set(per_room)) < len(per_room)):
            return [], "clarify:" + _which_one(b, specific)
        return specific, ""
    if kinds:
        pool = [d for d in pool if d.type in kinds or not d.type and "light" in kinds]
    elif _switched(rest, b) and not _absent_things(rest, b):
        # "on" alone means the lights -- unless it names a thing the home lacks ("the sprinklers on")
        pool = [d for d in pool if d.type in ("light", "")]
    else:
        pool = []
    if len(pool) > 1 and not plural:
        literal = [d for d in pool if (set(words_of(d.name).split()) - {"light", "lights"}) & set(rest.split())]
        pool = literal or pool
        if rooms and not literal and len({d.room for d in pool}) < len(pool):
            return [], "clarify:" + _which_one(b, pool)  # a lamp and a ceiling light in "the bedroom"
        if rooms or len({d.room for d in pool}) == 1:
            pool = [next(d for d in pool if d.room == room) for room in dict.fromkeys(d.room for d in pool)]
        else:
            names = ", ".join(sorted({b.rooms[d.room].name for d in pool if d.room in b.rooms}))
            return [], f"clarify:Which room do you mean: {names}?"
    return pool, ""


# First words of a plain yes or no to a question the model asked. (A yes to the safety gate's question is stricter,
# and defined once for both sides: lares_kit.safety.confirmation.is_yes.)
_YES_FIRST = ("yes", "yeah", "yep", "sure", "correct", "true", "y")
_NO_FIRST = ("no", "nope", "nah", "false", "n")


def yes_no_answer(answer: str) -> bool | None:
    """Read a plain yes/no answer by its first word: True (yes), False (no or "not..."), None (neither).

    Args:
        answer: the user's answer, as typed; only its first word counts.

    Examples:
        >>> yes_no_answer("Yep, it is."), yes_no_answer("Not really"), yes_no_answer("maybe later")
        (True, False, None)
    """
    first = (words_of(answer).split() or [""])[0]
    return True if first in _YES_FIRST else False if first in (*_NO_FIRST, "not") else None


def daytime_answer(answer: str) -> bool | None:
    """Read a yes/no answer to "Is it daytime?": True (day), False (night), None (unclear).

    Args:
        answer: the user's answer to "Is it daytime?", as typed.

    Examples:
        >>> daytime_answer("Yes, it's sunny"), daytime_answer("no, it's night"), daytime_answer("It's evening")
        (True, False, False)
    """
    w = words_of(answer)
    first = w.split()[0] if w.split() else ""
    if first in _YES_FIRST:
        return True
    if first in _NO_FIRST or re.search(r"\bnot (day|light|sunny)", w):
        return False
    if re.search(r"\b(night|evening|dark|late|midnight|dusk)\b", w):
        return False
    if re.search(r"\b(day|daytime|daylight|morning|afternoon|noon|sunny|bright|light)\b", w):
        return True
    return None


def _absent_things(rest: str, b: Beliefs) -> list[str]:
    # Things people ask homes for (THING_WORDS) that are named in `rest` and no device type of this home is.
    types = {d.type for d in b.devices.values()}
    return [w for w in sorted(THING_WORDS, key=lambda w: (-len(w), w))
            if has_word(rest, w) and not any(w in TYPE_WORDS.get(t, ()) or w == t for t in types)]


def _hops(b: Beliefs, start: str) -> dict[str, int]:
    # room id -> exits crossed from `start` (breadth-first over the believed exits)
    hops, frontier = {start: 0}, [start]
    while frontier:
        frontier = [n for r in frontier for n in b.neighbours(r) if n not in hops and not hops.update({n: hops[r] + 1})]
    return hops


# Words for what a device does, as the noun a refusal uses: "no heat in the Loft" reads "no heating".
_KIND_NOUNS = {"heat": "heating", "temperature": "heating", "degrees": "heating", "music": "speaker",
               "radio": "speaker", "cooling": "air conditioning", "ac": "air conditioning"}


def missing_in_rooms(rest: str, b: Beliefs, rooms: list[str], outcome: str = ", so I did nothing") -> str:
    """"There is no fan in the Den..." when ``rest`` names a kind of device that none of ``rooms`` has, else "".

    Args:
        rest: the instruction in :func:`.vocabulary.words_of` form, its room mentions blanked out as ``#``.
        b: what the model read from the request; its rooms and devices are read.
        rooms: the ids of the rooms the instruction names, in the order said.
        outcome: words put after "that I can control" to say what happened (default ", so I did nothing"; "" for none).

    Examples:
        >>> import textwrap
        >>> from lares_kit.models.offline.reading import Room
        >>> rooms = {"den": Room("den", "Den", exits=["hall"]), "hall": Room("hall", "Hall", exits=["den"])}
        >>> b = Beliefs("", "latest", rooms, {"f": Dev("f", "Fan", "fan", "hall")}, None, {}, [])
        >>> print(textwrap.fill(missing_in_rooms("switch on the fan in the ###", b, ["den"])))
        There is no fan in the Den that I can control, so I did nothing. The
        nearest I have: the fan in the Hall. Tell me if you want that changed
        instead.
        >>> missing_in_rooms("switch on the fan in the ####", b, ["hall"])
        ''
    """
    said = [(w, t) for t, ws in TYPE_WORDS.items() for w in ws if has_word(rest, w)]
    if not rooms or not said or any(d.room in rooms and d.type in {t for _, t in said} for d in b.devices.values()):
        return ""
    word = max((w for w, _ in said), key=lambda w: (len(w), w))
    word = _KIND_NOUNS.get(word, word)  # "heat up the loft" -> "no heating in the Loft"
    elsewhere = [d for d in b.devices.values() if d.type in {t for _, t in said} and d.room in b.rooms]
    names = " or ".join(f"the {b.rooms[r].name}" for r in rooms)
    message = f"There is no {word} in {names} that I can control{outcome}."
    if elsewhere:
        near = _hops(b, rooms[0])
        elsewhere.sort(key=lambda d: (near.get(d.room or "", len(b.rooms)), d.id))
        message += (" The nearest I have: " + "; ".join(describe(b, d.id) for d in elsewhere[:3]) +
                    f". Tell me if you want {'that' if len(elsewhere) == 1 else 'one of those'} changed instead.")
    return message


def _unknown_mention(rest: str, b: Beliefs, devices: list[Dev], rooms: list[str]) -> str:
    present = {p for ps in room_phrases(b).values() for p in ps}
    for word in sorted(ROOM_WORDS, key=lambda w: (-len(w), w)) if b.language == "en" else ():  # English words
        if has_word(rest, word) and word not in present:  # ("den" is an article in German: "Mach den Fernseher...")
            names = ", ".join(r.name for r in b.rooms.values())
            return f"There is no {word} in this home, so I did nothing. The rooms are: {names}."
    if not devices:
        absent = _absent_things(rest, b)
        if absent:
            kinds = ", ".join(sorted({d.type for d in b.devices.values()} - {""})) or "devices I was not told about"
            return f"This home has no {absent[0]} I can control, so I did nothing. It has: {kinds}."
        return missing_in_rooms(rest, b, rooms) if b.mode != "none" else ""
    return ""


def understand(b: Beliefs) -> Goal:
    """The goal behind the instruction in ``b``; answers to clarifying questions count.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
            Answers to earlier clarifying questions are read too.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Room, Dev
        >>> b = Beliefs("turn on the light in the kitchen", "latest", {"kitchen": Room("kitchen", "Kitchen")},
        ...             {"k": Dev("k", "Light", "light", "kitchen", state={"on": False})}, "kitchen", {}, [])
        >>> understand(b).changes
        [Change(device='k', attribute='on', value=True)]
    """
    clarified = [a for q, a in b.answers if q.startswith("Which room do you mean")]
    picked = [a for q, a in b.answers if q.startswith(_WHICH_ONE)]  # "The desk lamp in the study."
    text = words_of(" ".join([b.instruction, *(f"in the {a}" for a in clarified), *picked]))
    for pattern, plain in _SAYINGS:  # "kill the lights" -> "switch off the lights"
        text = re.sub(pattern, plain, text)
    if not text:
        return Goal("unknown")
    recognised = recognise_intent(b)  # Home Assistant's recognizer first; the rules below read what it does not
    if recognised is not None and recognised.kind != "control":
        return recognised
    if recognised is not None:
        devices = [b.devices[i] for i in dict.fromkeys(c.device for c in recognised.changes)]
        return _heat_and_finish(b, text, devices, recognised.changes, recognised.reply)
    if m := re.search(r"\b(?:depending on(?: whether)?|whether|if|unless|something|appropriate|suitable)\b(.*)", text):
        daytime = re.search(r"\b(day ?time|daylight|day|night|dark outside|sunny|time of day|appropriate|suitable)\b",
                            text)
        action = text[:m.start()] or text
        rooms, rest = rooms_in(action, b)
        devices, _ = _devices_for(action + " on", b, rooms, rest + " on")
        if devices and daytime:
            wants = re.search(r"\b(on|off)\b", action)
            night = re.search(r"\b(night|dark)\b", m.group(1))
            yes = [Change(d.id, "on", False) for d in devices] if not wants else (
                [] if night else [Change(d.id, "on", wants.group(1) == "on") for d in devices])
            no = [Change(d.id, "on", True) for d in devices] if not wants else (
                [Change(d.id, "on", wants.group(1) == "on") for d in devices] if night else [])
            return Goal("ask_then", question="Is it daytime right now?", condition="daytime", if_yes=yes, if_no=no)
        if devices and m.group(1).strip() and not m.group(0).startswith(("something", "appropriate", "suitable")):
            changes = [Change(d.id, *v) for d in devices if (v := _value_for(action, d))]
            clause = re.sub(r"\bi'?m\b", "you are", re.sub(r"\bmy\b", "your", m.group(1).strip()))
            clause = re.sub(r"\bi\b", "you", clause)
            return Goal("ask_then", question=f"Before I act, please tell me (yes or no): is it true that {clause}?",
                        condition="generic", if_yes=changes)
    if (m := re.search(r"\b(?:find|look for|search for|locate|check on)\s+(.+)", text)) or \
            (m := re.search(r"\bwhere(?:'s| is| are)\s+(.+)", text)) or \
            (m := re.search(r"^where\s+((?:the|my|our|your)\s+.+)", text)) or \
            (m := re.search(r"\bto\s+(?:wherever|where)\s+(.+?)\s+(?:is|are|went|has gone)\b", text)) or \
            (m := re.search(r"\bwhere\s+(.+?)\s+(?:is|are)\b", text)) or \
            (m := re.search(r"\b(?:light|lights|lamp)\b.*?\bfor\s+(.+)", text)):
        phrase = m.group(1).strip(" ?.")
        rooms, rest = rooms_in(phrase, b)
        target = [w for w in rest.split() if w not in STOP and "#" not in w and w not in ("you", "him", "her", "them")]
        if target and not (rooms and not rest.strip("# ")) and "robot" not in target:
            onoff = re.search(r"\b(on|off)\b", text[:m.start()])
            return Goal("find", target=target, target_text=phrase,
                        then=onoff.group(1) if onoff and re.search(r"\blight|lamp", text) else "report")
    rooms, rest = rooms_in(text, b, numbered=True)
    level = re.search(r"\b(downstairs|upstairs)\b", rest)
    if level and any(level.group(1) in words_of(d.name).split() for d in b.devices.values()):
        level = None  # a name ("Roborock Downstairs"), not a place
    if level and not rooms and b.rooms and all(r.floor is None for r in b.rooms.values()):
        # the map says no floors: which rooms are "downstairs" is a guess, so ask (not every light in the home)
        return Goal("clarify", question=f"Which room do you mean by {level.group(1)}? I was not told which floor "
                                        "each room is on.")
    devices, problem = _devices_for(text, b, rooms, rest)  # then "the light strips": not the floor lamp too
    devices = named_kind(rest, devices)
    if re.match(r"(which|what|where|is|are|how|who|does|do|any|tell me|list)\b", text) or b.instruction.endswith("?"):
        return Goal("question", message=_answer(text, b, rooms, devices))
    refusal = _unknown_mention(rest, b, devices, rooms)
    if refusal:
        return Goal("refuse", message=refusal)
    if problem.startswith("clarify:"):
        return Goal("clarify", question=problem.split(":", 1)[1])
    # `rest` has the room names blanked: "meeting room 1" must not read as "brightness 1".
    changes = [Change(d.id, *v) for d in devices if (v := _value_for(rest, d))]
    if devices and not changes:
        names = ", ".join(describe(b, d.id) for d in devices)
        settable = sorted({k for d in devices for k in d.state} - set(NOT_SETTINGS)) or ["nothing I was told about"]
        return Goal("refuse", message=f"I cannot do that with {names}: its settings are {', '.join(settable)}.")
    if app := re.search(r"\b(?:play|stream|watch|open|launch|put on)\s+(.+?)\s+on\s+"
                        r"(?:the\s+)?(?:tv|television|telly)\b", text):
        tvs = [d for d in devices if d.type == "tv"]
        if tvs and not any(k in d.state for d in tvs for k in ("app", "source", "input", "media")):
            settings = ", ".join(k for k in tvs[0].state)
            return Goal("refuse", message=f"I cannot play {app.group(1)}: {describe(b, tvs[0].id)} has no apps; its "
                                          f"settings are {settings}, so I did nothing.")
    goal = _heat_and_finish(b, text, devices, changes)
    if goal.kind != "unknown":
        return goal
    if rooms and (_switched(rest, b) or re.search(r"\blight", text)):
        names = ", ".join(b.rooms[r].name for r in rooms)
        return Goal("refuse", message=f"There is no light in the {names} for me to switch, so I did nothing.")
    return Goal("unknown")


def _heat_and_finish(b: Beliefs, text: str, devices: list[Dev], changes: list[Change], reply: str = "") -> Goal:
    """The control goal for ``changes``, once an oven switched on has a temperature (asked for if not said)."""
    heat_on = [c for c in changes if c.attribute == "on" and c.value is True
               and b.devices[c.device].state.get("temperature") in (0, None)
               and "temperature" in b.devices[c.device].state]
    if heat_on and not re.search(r"\d", text):
        # "Turn the oven on": on at 0 degrees heats nothing -- ask what temperature, then use the answer.
        dev = heat_on[0].device
        question = f"What temperature shall I set {describe(b, dev)} to?"
        said = [a for q, a in b.answers if q == question]
        degrees = re.search(r"\b(\d+(?:\.\d+)?)\b", said[-1]) if said else None
        if degrees:
            value = float(degrees.group(1))
            changes = changes + [Change(dev, "temperature", int(value) if value.is_integer() else value)]
        else:  # not asked yet, or the answer had no number: ask (planning halts if it was asked already)
            return Goal("clarify", question=question)
    if re.search(r"\b(pre ?heat|warm up|heat (?:it |the \w+ )?(?:up )?to)\b", text):
        # "Preheat the oven to 180": the temperature, and the oven on (an oven that is off heats nothing).
        warmed = {c.device for c in changes if c.attribute in ("temperature", "target")}
        changes = [Change(d.id, "on", True) for d in devices if d.id in warmed and d.state.get("on") is False] + changes
    if changes:
        return Goal("control", changes=changes, reply=reply)
    return Goal("unknown")


def _answer(text: str, b: Beliefs, rooms: list[str], devices: list[Dev]) -> str:
    if b.mode == "none":
        return "I was not given a map of the home (no WORLD KNOWLEDGE message), so I cannot answer that."
    if "robot" in text:
        room = b.rooms[b.robot].name if b.robot in b.rooms else b.robot
        return f"The robot is in the {room}."
    if re.search(r"\brooms\b", text):
        return f"The home has {len(b.rooms)} rooms: " + ", ".join(r.name for r in b.rooms.values()) + "."
    floors = sorted({r.floor for r in b.rooms.values() if r.floor is not None})
    if re.search(r"\b(floors|storeys|stories|levels)\b", text) and floors:
        on = "; ".join(f"floor {f}: " + ", ".join(r.name for r in b.rooms.values() if r.floor == f) for f in floors)
        return f"The home has {len(floors)} floor{'s' if len(floors) != 1 else ''} ({on})."
    warm = re.search(r"\b(how (?:warm|hot|cold|cool)|what temperature)\b", text)
    reading = "temperature" if warm else next((a for a in ("humidity", "co2", "temperature")
                                                if re.search(rf"\b{a}\b", text)), None)
    if reading and rooms:  # "what's the humidity in the kitchen?": whichever device reports it
        hits = [d for d in b.devices.values() if d.room in rooms and reading in d.state]
        hits = [d for d in hits if d.type == "sensor"] or hits
        if hits:
            return " ".join(f"{capitalise(describe(b, d.id))} {agree(describe(b, d.id), 'reads')} {reading} "
                            f"{d.state[reading]}." for d in hits)
    asked = [d for d in devices if not rooms or d.room in rooms]
    lights = [d for d in b.devices.values() if d.type == "light" and (not rooms or d.room in rooms)]
    listing = re.search(r"\b(on|off)\b", text) and re.search(r"\blights\b|\blamps\b|\b(which|any)\b", text)
    if not asked and rooms and (missing := missing_in_rooms(text, b, rooms, outcome="")):
        return missing  # "is the fan on in the loft?" with no fan there
    if not asked or (listing and len(asked) > 1):
        if re.search(r"\blights?\b|\blamps?\b", text) and lights:
            want_off = re.search(r"\boff\b", text) is not None
            hits = [describe(b, d.id) for d in lights if d.state.get("on") is (not want_off)]
            state = "off" if want_off else "on"
            return (f"These lights are {state}: " + "; ".join(hits) + ".") if hits else f"No lights are {state}."
        return (f"I am a rule-based teaching stand-in and {NOT_UNDERSTOOD} that question. I can answer which "
                "lights are on or off, where the robot is, which rooms there are, and a device's state.")
    return " ".join(f"{capitalise(describe(b, d.id))} {agree(describe(b, d.id), 'is')} {state_words(d)}."
                    if d.state else f"I do not know the state of {describe(b, d.id)}." for d in asked)
