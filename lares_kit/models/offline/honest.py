"""Read or refuse: the clauses of an instruction the other rules would half-read.

Part of the offline model (:mod:`lares_kit.models.offline`). The rules of
:mod:`.understanding` find the devices and the value a sentence names and
act; words around them that change the meaning -- "except the hall", "don't",
"at 7pm", "up a bit", "and the hall light off" -- were skipped, and a wrong
action looked like success. Here each such clause is either *read* or
*refused*, never half-read:

* an exception ("everything off except the hall", "all but the office", "but not the bedroom",
  "but leave the hall alone"): the rest is read as a sentence of its own, and the devices of the rooms or
  names the exception gives (or of the floor: "upstairs") are left out;
* a negated command ("don't turn on the landing light"): nothing changes, and the reply says so;
* several clauses with their own on/off ("the kitchen light on and the hall light off"): each read alone;
* a relative change ("down by 5", "a couple of degrees warmer", "up a bit", "mute"): the current value
  from the knowledge, moved by the amount said (a bit: one step of the setting), or 0 for "mute";
* a level said beside a switch ("on at level 4", "channel 7"): the level, and the device switched on;
* a time ("every evening at 7", "in ten minutes", "at 11pm"): never read -- this model acts now.

A clause it cannot read means no change at all and a reply beginning with
:data:`lares_kit.sentences.understood.NOT_UNDERSTOOD_MARK`, which quotes the words,
says it did nothing and suggests a wording made of the home's own names (the
agent then ends the episode ``not_understood``). Rules of grammar and of the
home's vocabulary only: no sentence of any corpus or benchmark is named here.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...sentences.understood import NOT_UNDERSTOOD_MARK
from .goals import Change, Goal
from .reading import Beliefs, Dev
from .understanding import understand
from .vocabulary import MODE_WORDS, STOP, describe, rooms_in, with_digits, words_of

__all__ = ["recognise_unread", "unread_message"]

_TIME = re.compile(
    r"\b(?:every (?:morning|evening|night|day|weekday|hour|minute|\w+day)|each (?:morning|evening|night|day)"
    r"|at \d{1,2}(?:[:.]\d\d)? ?(?:am|pm|o'?clock)\b|at \d{1,2}[:.]\d\d|\d{1,2} ?(?:am|pm)\b|at (?:noon|midnight|"
    r"sunset|sunrise|dusk|dawn)|in (?:a|an|\d+|one|two|three|four|five|ten|fifteen|twenty|thirty|a few|a couple of)"
    r" (?:minutes?|hours?|seconds?)|tonight|tomorrow|later|whenever|on weekdays|at night|in the (?:morning|evening)"
    r"|all (?:night|day|evening|morning|afternoon|weekend)|overnight|for (?:a|an|\d+|one|two|three|four|five|ten|a few"
    r"|a couple of) (?:minutes?|hours?|seconds?)"
    # German: "jeden Abend um 7 Uhr", "um 19:30", "heute Abend", "in zehn Minuten"
    r"|jeden (?:abend|morgen|tag|mittag|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)"
    r"|um \d{1,2}(?:[:.]\d\d)?(?! ?(?:grad|prozent|%|stufen?)\b)(?: uhr)?|\d{1,2} uhr|heute (?:abend|nacht)"
    r"|morgen früh|später"
    r"|in (?:\d+|einer|einem|zwei|fünf|zehn|zwanzig) (?:minuten?|stunden?))\b")
_EXCEPT = re.compile(r"\s*,?\s*\b(?:except(?: for)?|apart from|other than|excluding|aside from|save for|but not|"
                     r"but leave|leaving)\b\s*|\s+not\s+(?=the\b)")
# "but" alone is an exception after a word for everything: "all but the office", "everywhere but the hall"
_ALL_BUT = re.compile(r"\b(?:all|every|everything|everywhere)\b.*?(\s+but\s+)(?!also\b|then\b|now\b|please\b)")
_NEGATED = re.compile(r"^(?:please )?(?:don'?t|do not|never|dont)\s+(.+)")
_UP = r"up|higher|louder|brighter|warmer|hotter|increase|raise|lauter|heller|wärmer"  # and German comparatives
_DOWN = r"down|lower|quieter|softer|dimmer|darker|cooler|colder|decrease|reduce|leiser|dunkler|kühler|kälter"
# a relative change: a comparative, "mute", "by 5", or up/down after a verb that moves a setting ("turn the TV up";
# not "light up", "warm up", "called up the stairs": those verbs say something else)
_RELATIVE = re.compile(r"\b(?:turn|turned|bring|put|knock|move|crank|nudge|push|pull)\b(?:\s+\S+){0,6}?\s+(?:up|down)\b"
                       r"|\b(?:higher|louder|brighter|warmer|hotter|quieter|softer|dimmer|darker|cooler|colder|increase"
                       r"|raise|decrease|reduce|lower|lauter|leiser|heller|dunkler|wärmer|kühler|kälter)\b|\bmute\b"
                       r"|\bby \d")
_STEP = {"volume": 10, "brightness": 10, "target": 1, "temperature": 10, "speed": 1, "level": 1, "position": 10,
         "channel": 1}
# the setting a relative change moves when the sentence names none, by what the words say
_FEELS = (("warmer|hotter|cooler|colder|degrees?|heating|heat", "target"),
          ("louder|quieter|softer|volume|mute|lauter|leiser|lautstärke", "volume"),
          ("brighter|dimmer|darker|brightness|heller|dunkler|helligkeit", "brightness"), ("channel", "channel"),
          ("speed", "speed"))
_MAIN = {"tv": "volume", "speaker": "volume", "media_player": "volume", "light": "brightness", "thermostat": "target",
         "fan": "speed", "stove": "level", "cover": "position", "blinds": "position"}
_AMOUNT = {"a couple of": 2, "a few": 3, "two": 2, "three": 3}


def unread_message(b: Beliefs, words: str, example: str = "") -> str:
    """The reply for words the rules cannot read: they are quoted, nothing was done, and a wording that works.

    Args:
        b: what the model read from the request (the home's names give the example wording).
        words: the words of the instruction it could not read, as the user wrote them.
        example: a wording that works in this home; "" makes one from the first light.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("x", "latest", {"hall": Room("hall", "Hall")}, {"h": Dev("h", "Light", "light", "hall")},
        ...             None, {}, [])
        >>> unread_message(b, "at 7pm")  # doctest: +NORMALIZE_WHITESPACE
        'I did not understand "at 7pm", so I did nothing. I am a rule-based stand-in: I act now, on one clear
         command per device, such as "turn on the light in the Hall". A real language model reads more.'
    """
    if not example:
        light = next((d for d in b.devices.values() if d.type in ("light", "") and d.room in b.rooms), None)
        example = f"turn on {describe(b, light.id)}" if light else "turn on the light in the kitchen"
    return (f'{NOT_UNDERSTOOD_MARK} "{words.strip()}", so I did nothing. I am a rule-based stand-in: I act now, on '
            f'one clear command per device, such as "{example}". A real language model reads more.')


def _quote(instruction: str, pattern: re.Pattern[str]) -> str:
    # The words a pattern found, as the user wrote them (case and punctuation kept where the words line up).
    found = pattern.search(instruction.lower())
    return instruction[found.start():found.end()] if found else instruction


def _read(b: Beliefs, text: str) -> Goal:
    return understand(replace(b, instruction=text, answers=[]))


def _excluded(b: Beliefs, text: str) -> set[str]:
    # The devices an exception names: by room, by floor ("upstairs"), or by a device's own words.
    rooms, rest = rooms_in(text, b)
    out = {d.id for d in b.devices.values() if d.room in rooms}
    floors = {r.floor for r in b.rooms.values() if r.floor is not None}
    if floors and re.search(r"\b(upstairs|downstairs|ground floor)\b", text):
        low = min(floors)
        want = {f for f in floors if (f == low) == bool(re.search(r"\b(downstairs|ground floor)\b", text))}
        out |= {d.id for d in b.devices.values() if d.room in b.rooms and b.rooms[d.room].floor in want}
    said = set(rest.split()) - {"the", "one", "ones", "light", "lights", "lamp", "in", "on", "of", "alone", "a"}
    for d in b.devices.values():
        if said and said <= set(words_of(f"{d.name} {d.id} {' '.join(d.aliases)}").split()):
            out.add(d.id)
    return out


def _exception(b: Beliefs, text: str) -> Goal | None:
    found = _EXCEPT.search(text)
    if found is not None and found.group(0).strip(" ,"):
        start, end = found.start(), found.end()
    elif (but := _ALL_BUT.search(text)) is not None:
        start, end = but.start(1), but.end(1)
    else:
        return None
    main, rest = text[:start].strip(" ,"), text[end:].strip(" ,")
    if not main or not rest:
        return None
    goal = _read(b, main)
    left_out = _excluded(b, rest)
    if goal.kind != "control" or not left_out:
        return Goal("unread", message=unread_message(b, _quote(b.instruction, re.compile(re.escape(rest)))
                                                       if rest in b.instruction.lower() else rest))
    return Goal("control", changes=[c for c in goal.changes if c.device not in left_out])


def _number(text: str) -> float | None:
    found = re.search(r"\bby (\d+(?:\.\d+)?)|\b(\d+(?:\.\d+)?) (?:degrees?|steps?|notches?|points?)\b", text)
    if found:
        return float(found.group(1) or found.group(2))
    return next((n for words, n in _AMOUNT.items() if re.search(rf"\b{words}\b", text)), None)


def _relative(b: Beliefs, text: str) -> Goal | None:
    # "down to zero", "up to 22", "at max": a value said outright is no relative change
    if not _RELATIVE.search(text) or re.search(r"\b(?:to|at) (?:\d|zero|nought|max|maximum|min|minimum|full)", text):
        return None
    neutral = re.sub(rf"\b(?:{_UP}|{_DOWN}|mute|by \d+|a (?:bit|little|notch|touch|couple of|few)|slightly"
                     r"|\d+ degrees?)\b", " ", text)
    goal = _read(b, " ".join(f"{neutral} to 0".split()))
    if goal.kind != "control":  # "the fan in office 2 to 0" reads the room's number: name the device alone
        goal = _read(b, " ".join(f"{neutral} on".split()))
    said = _quote(b.instruction, _RELATIVE)
    if goal.kind != "control" or not goal.changes:
        return None  # "turned up", "called up the stairs": no device setting to move; the other rules read it
    changes = []
    for dev in (b.devices[i] for i in dict.fromkeys(c.device for c in goal.changes)):
        attribute = next((a for words, a in _FEELS if re.search(rf"\b(?:{words})\b", text) and a in dev.state),
                         _MAIN.get(dev.type) if _MAIN.get(dev.type) in dev.state else None)
        current = dev.state.get(attribute) if attribute else None
        if not isinstance(current, (int, float)) or isinstance(current, bool):
            return Goal("unread", message=unread_message(b, said, _example(b, dev)))
        if any(c.ok and c.arg("device_id", "light_id", "id") == dev.id for c in b.calls):
            # moved once already in this task: "down a notch" is one notch, not one more at every turn
            changes.append(Change(dev.id, attribute, current))
            continue
        if re.search(r"\bmute\b", text):
            value: float = 0
        else:
            up = re.search(rf"\b(?:{_UP})\b", text) is not None
            amount = _number(text) or _STEP.get(attribute or "", 1)
            value = current + amount if up else max(0, current - amount)
        changes.append(Change(dev.id, attribute, int(value) if float(value).is_integer() else value))
    return Goal("control", changes=changes)


def _example(b: Beliefs, dev: Dev) -> str:
    numeric = next((a for a in dev.state if isinstance(dev.state[a], (int, float))
                    and not isinstance(dev.state[a], bool)), None)
    return f"set the {numeric} of {describe(b, dev.id)} to {dev.state[numeric]}" if numeric else \
        f"turn on {describe(b, dev.id)}"


def _mixed(b: Beliefs, text: str) -> Goal | None:
    if not (re.search(r"\bon\b", text) and re.search(r"\boff\b", text)):
        return None
    clauses = [c.strip() for c in re.split(r",\s*(?:and\s+)?|\s+and\s+(?:then\s+)?", text) if c.strip()]
    if len(clauses) < 2:
        return None
    changes: list[Change] = []
    for clause in clauses:
        goal = _read(b, clause)
        if goal.kind != "control":
            return Goal("unread", message=unread_message(b, clause))
        changes += goal.changes
    return Goal("control", changes=changes)


def _conjuncts(b: Beliefs, text: str, whole: Goal) -> Goal | None:
    # "the lamp in the den and the ceiling light in the hall": each part read alone, the first part's verb lent to
    # a part without one. Every part read: their changes; a part naming a thing that cannot be read: refused.
    parts = [p.strip() for p in re.split(r"\s+and\s+(?:then\s+)?", text) if p.strip()]
    if len(parts) < 2:
        return None
    verbs = r"(?:please )?(?:turn|switch|put|set|open|close|shut|lock|unlock)"
    verb = re.match(rf"({verbs}(?: on| off)?)\b", parts[0])
    if verb is None:  # "I am home. Turn on the lamp and ...": the first part read from its last verb, as one part is
        verb = next(reversed(list(re.finditer(rf"\b({verbs}(?: on| off)?)\b", parts[0]))), None)
        parts[0] = parts[0][verb.start():] if verb is not None else parts[0]
    tail = re.search(r"\b(on|off)$", text)  # "put the hall light and the den light on": the last word serves all
    acted = {w for c in whole.changes for w in
             words_of(f"{b.devices[c.device].name} {c.device} {' '.join(b.devices[c.device].aliases)}").split()}
    changes: list[Change] = []
    for part in parts:
        lent = part if verb is None or re.match(verbs, part) else f"{verb.group(1)} {part}"
        lent += f" {tail.group(1)}" if tail and not re.search(r"\b(on|off)\b", lent) else ""
        goal = _read(b, lent)
        if goal.kind != "control":
            _, rest = rooms_in(part, b)
            # a part naming a thing the whole reading did not act on is a part it could not read
            named = {w for w in rest.split() if not w.isdigit() and "#" not in w} - acted - STOP - {
                "too", "also", "one", "ones", "sure", "make", "are", "be", "get", "going"}
            return Goal("unread", message=unread_message(b, part)) if named and whole.kind == "control" else None
        changes += [c for c in goal.changes if c not in changes]
    return Goal("control", changes=changes)


def _moded(b: Beliefs, goal: Goal, text: str) -> Goal:
    # "the thermostat to heat at 20": the mode the sentence names beside the value, on a device that has modes.
    extra = []
    for dev in (b.devices[i] for i in dict.fromkeys(c.device for c in goal.changes)):
        choices = list(MODE_WORDS.get(dev.type, ())) if "mode" in dev.state else []
        said = re.search(rf"\b(?:to|on|in) ({'|'.join(map(re.escape, choices))})\b(?! ?\d)", text) if choices else None
        if said and not any(c.device == dev.id and c.attribute == "mode" for c in goal.changes):
            extra.append(Change(dev.id, "mode", said.group(1)))
    return replace(goal, changes=goal.changes + extra) if extra else goal


def _levelled(b: Beliefs, goal: Goal, text: str) -> Goal:
    # "on at level 4", "channel 7 on the TV": a level set on a device that is off switches it on as well.
    goal = _moded(b, goal, text)
    if not re.search(r"\d|\bhalf\b", text) or re.search(r"\boff\b", text) or not re.search(
            r"\bon\b|^switch\b.*\bto\b", text):
        return goal
    if re.search(r"\bhalf\b", text):  # "at half brightness": 50 of a 0-100 setting
        half = [Change(c.device, a, 50) for c in goal.changes for a in ("brightness", "volume")
                if a in b.devices[c.device].state and re.search(rf"\b{a}\b", text)]
        if not half:  # "half" of a setting the device does not have
            return Goal("unread", message=unread_message(b, _quote(b.instruction, re.compile(r"\bhalf \w+"))))
        goal = replace(goal, changes=goal.changes + half)
    extra = [Change(c.device, "on", True) for c in goal.changes if c.attribute not in ("on", "target")
             and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
             and b.devices[c.device].state.get("on") is False
             and not any(o.device == c.device and o.attribute == "on" for o in goal.changes)]
    return replace(goal, changes=extra + goal.changes) if extra else goal


def recognise_unread(b: Beliefs) -> Goal | None:
    """The instruction's reading when it holds a clause the other rules would half-read; None when it holds none.

    Returns a ``control`` goal when every clause is read, an ``unread`` goal (its ``message`` the reply) when one
    cannot be, a ``chat`` goal for a negated command.

    Args:
        b: what the model read from the request. Answers to the model's own questions leave the reading to the
            rules that asked them.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> rooms = {"hall": Room("hall", "Hall"), "den": Room("den", "Den")}
        >>> devs = {"hall-light": Dev("hall-light", "Light", "light", "hall", state={"on": True}),
        ...         "den-light": Dev("den-light", "Light", "light", "den", state={"on": True})}
        >>> b = Beliefs("turn off all the lights except the hall", "latest", rooms, devs, None, {}, [])
        >>> recognise_unread(b).changes
        [Change(device='den-light', attribute='on', value=False)]
        >>> recognise_unread(replace(b, instruction="at 7pm turn off the den light")).kind
        'unread'
    """
    if b.answers or not b.instruction.strip():
        return None
    text = words_of(with_digits(b.instruction))
    if re.match(r"(?:which|what|where|when|is|are|how|who|does|do|can|could|will)\b", text) and \
            b.instruction.rstrip().endswith("?"):
        return None  # a question is answered, not acted on: the other rules read it
    if _TIME.search(text):
        # a time on a command this model would carry out now is refused; on a sentence it would not act on
        # anyway ("roast a chicken for tonight"), the other rules give their answer
        rest = " ".join(_TIME.sub(" ", text).split())  # every time phrase out: "jeden Morgen um 6 Uhr"
        acting = ("control", "clarify", "find", "ask_then")
        if rest and _read(b, rest).kind in acting or _read(b, b.instruction).kind == "control":
            return Goal("unread", message=unread_message(b, _quote(b.instruction, _TIME)))
        return None
    if negated := _NEGATED.match(text):
        return Goal("chat", message=f"You asked me not to {negated.group(1)}, so I changed nothing.")
    if degree := re.search(r"\b(?:full|max(?:imum)?|min(?:imum)?|top) (?:speed|brightness|volume|power|heat)\b", text):
        return Goal("unread", message=unread_message(b, degree.group(0)))
    goal = _exception(b, text) or _mixed(b, text) or _relative(b, text)
    if goal is None:
        plain = _read(b, b.instruction)
        goal = _conjuncts(b, text, plain) if plain.kind in ("control", "refuse", "clarify") else None
        if goal is not None:
            same = goal.kind == "control" and plain.kind == "control" and \
                sorted(map(repr, goal.changes)) == sorted(map(repr, plain.changes))
            return None if same else _levelled(b, goal, text) if goal.kind == "control" else goal
        return _levelled(b, plain, text) if plain.kind == "control" and _levelled(b, plain, text) is not plain \
            else None
    return _levelled(b, goal, text) if goal.kind == "control" else goal
