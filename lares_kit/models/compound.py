"""Instruction shapes beyond one command: several tasks, a contradiction, small talk.

Part of the offline model (:mod:`lares_kit.models.offline`). The smart-building
paper's test set has these kinds next to plain commands:

* **multi-task** -- "turn on the light in office 1, open the window in meeting
  room 3 and switch the kitchen fan on": split into clauses at a new verb,
  each understood on its own; the changes add up (and a clause the home
  cannot do is reported, not silently dropped);
* **contradiction** -- "lower the temperature to make the room warmer": the
  means defeats the purpose. The model points it out and does not act; if it
  can ask, it asks what the user wants and acts on a clear answer;
* **indirect requests** -- "it's too dark in office 5", "make office 3 warmer";
* **daily conversation** -- greetings, thanks, "what can you do?".
"""

from __future__ import annotations

import re
from dataclasses import replace

from .reading import Beliefs, norm
from .understanding import Change, Goal, _rooms_in, describe, understand, words_of

__all__ = ["split_tasks", "recognise_compound", "contradiction_step", "CAPABILITIES"]

CAPABILITIES = ("I can switch lights and devices, open and close windows and doors, set thermostats and air "
                "conditioning, read sensors and judge the air in a room, remember your preferences, and answer "
                "questions about the building.")
_VERBS = (r"turn|switch|set|open|close|shut|lock|unlock|dim|raise|lower|put|start|stop|increase|decrease|"
          r"make|read|check")
# A new clause starts at a separator followed by a verb: "..., and open the window", "... then lock the door".
_SPLIT = re.compile(rf"\s*(?:,\s*(?:and\s+|then\s+)?|;\s*|\s+and\s+then\s+|\s+then\s+|\s+and\s+(?:also\s+)?|"
                    rf"\s+also\s+)(?=(?:please\s+)?(?:{_VERBS})\b)")
_SMALL_TALK = [
    (r"^(hi|hello|hey|good (morning|afternoon|evening)|greetings)\b", "Hello! I am the assistant here (lares_kit's offline model, a rule-based teaching stand-in). "
     + CAPABILITIES),
    (r"^(thanks|thank you|cheers|great job|well done)\b", "You're welcome. Tell me if there is anything else."),
    (r"^how are you\b", "I am fine, thank you: the building is running. What can I do for you?"),
    (r"^(who are you|what are you|what can you do|what do you do|help)\b",
     "I am the assistant of this building or home, a rule-based stand-in. " + CAPABILITIES),
    (r"^(bye|goodbye|good night|see you)\b", "Goodbye!"),
]
# (means, purpose): lowering the heat to get warmer, raising it to get cooler, dark to read.
_CONTRADICTIONS = [
    (r"\b(lower|reduce|decrease|turn down|drop|cut)\b.*\b(temperature|heating|thermostat|heat)\b|"
     r"\bturn (?:off|down) the (?:heating|heater)\b", r"\b(warmer|hotter|warm (?:it|the room|me) up|heat up)\b",
     "Lowering the temperature would make the room colder, not warmer", "warmer"),
    (r"\b(raise|increase|turn up|put up)\b.*\b(temperature|heating|thermostat|heat)\b",
     r"\b(cooler|colder|cool (?:it|the room|me|down)|chill)\b",
     "Raising the temperature would make the room warmer, not cooler", "cooler"),
    (r"\b(turn|switch) (?:off|out) the lights?\b|\bturn the lights? off\b",
     r"\b((?:see|read) better|brighter|more light)\b",
     "Switching the light off would make it darker, not brighter", "brighter"),
]


# Indirect requests (the paper's intent recognition): what is said -> the device kind and the change.
_INTENTS = [
    (r"\b(too dark|pitch black|can'?t see|cannot see|brighter|brighten)\b", "light", "on", True),
    (r"\b(too bright|glare|dazzling)\b", "light", "on", False),
    (r"\b(let (?:some )?(?:fresh )?air in|fresh air|air (?:it|the room) out)\b", "window", "open", True),
    (r"\b(warmer|warm (?:it|the room|me) up|heat (?:it |the room )?up)\b", "thermostat", "target", +2),
    (r"\b(cooler|cool (?:it |the room )?down)\b", "thermostat", "target", -2),
]


def _intent(b: Beliefs, text: str) -> Goal | None:
    rooms, _ = _rooms_in(text, b)
    if not rooms:
        return None
    for pattern, kind, attribute, value in _INTENTS:
        if not re.search(pattern, text):
            continue
        devices = [d for d in b.devices.values() if d.room in rooms and d.type == kind]
        if kind == "thermostat" and not devices:  # no thermostat: the air conditioner
            devices = [d for d in b.devices.values() if d.room in rooms and d.type == "hvac"]
            if devices and value < 0:
                cool = [] if devices[0].state.get("mode") == "cool" else [Change(devices[0].id, "mode", "cool")]
                return Goal("control", changes=[Change(devices[0].id, "on", True), *cool])
        if not devices:
            return None
        if attribute == "target":
            # A relative change is made once: after a successful set, that value is the goal.
            done = [c for c in b.calls if c.ok and norm(c.name) == "setdevice" and c.arg("device_id") == devices[0].id
                    and c.arg("attribute") == "target"]
            if done:
                return Goal("control", changes=[Change(devices[0].id, "target", done[-1].arg("value"))])
            now = devices[0].state.get("target")
            if not isinstance(now, (int, float)):
                return None
            return Goal("control", changes=[Change(devices[0].id, "target", now + value)])
        return Goal("control", changes=[Change(d.id, attribute, value) for d in devices])
    return None


def split_tasks(instruction: str) -> list[str]:
    """The clauses of a multi-task instruction, each starting with its verb.

    Examples:
        >>> split_tasks("Turn on the light in office 1, open the window in meeting room 3 and switch the fan on")
        ['Turn on the light in office 1', 'open the window in meeting room 3', 'switch the fan on']
        >>> split_tasks("turn on the lights in office 2 and office 5")
        ['turn on the lights in office 2 and office 5']
        >>> split_tasks("turn the kitchen light off and the bedroom light on")
        ['turn the kitchen light off', 'turn the bedroom light on']
        >>> split_tasks("put the corridor light and the bathroom light on")
        ['put the corridor light and the bathroom light on']
    """
    parts = _SPLIT.split(instruction.strip().rstrip(".!"))
    return [c for p in parts if p and p.strip() for one in _the_one_in(p.strip()) for c in _shared_verb(one)]


# "set the thermostat in office 4 to 20 and the one in office 1 to 23": the second takes the first's verb and noun.
_THE_ONE_IN = re.compile(r"^(\w+(?: \w+)?) (the [\w ]+?) in (.+?),? and the (?:one|ones) in (.+)$", re.IGNORECASE)


def _the_one_in(clause: str) -> list[str]:
    m = _THE_ONE_IN.match(clause)
    if not m:
        return [clause]
    verb, noun, first, second = m.groups()
    return [f"{verb} {noun} in {first}", f"{verb} {noun} in {second}"]


# "turn the kitchen light off and the bedroom light on": one verb, each part with its own on/off.
_SHARED_VERB = re.compile(r"^((?:please\s+)?(?:turn|switch|put))\s+(.+)$", re.IGNORECASE)
_PARTICLE_END = re.compile(r"\s(?:on|off)$", re.IGNORECASE)


def _shared_verb(clause: str) -> list[str]:
    """A clause whose later parts each end in on/off, as one clause per part (else the clause alone)."""
    m = _SHARED_VERB.match(clause)
    if not m:
        return [clause]
    parts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m.group(2))
    # Every part has its own on/off ("the corridor light and the bathroom light on" is one clause).
    if len(parts) < 2 or not re.match(r"(?:on|off)\s", parts[0], re.IGNORECASE) and not _PARTICLE_END.search(
            parts[0]) or not all(_PARTICLE_END.search(p) for p in parts[1:]):
        return [clause]
    return [f"{m.group(1)} {p}" for p in parts]


def recognise_compound(b: Beliefs) -> Goal | None:
    """Small talk, a contradiction, or several tasks in one instruction; None for anything else."""
    text = words_of(b.instruction)
    for pattern, reply in _SMALL_TALK:
        if re.search(pattern, text) and len(text.split()) <= 8:
            return Goal("chat", message=reply)
    for means, purpose, why, wanted in _CONTRADICTIONS:
        if re.search(means, text) and re.search(purpose, text):
            rooms, _ = _rooms_in(text, b)
            return Goal("contradiction", target=rooms, condition=wanted,
                        message=why, question=f"{why}. Do you want it {wanted}, or did you mean something else?")
    purpose = _purpose_contradiction(b, text)
    if purpose is not None:
        return purpose
    clauses = split_tasks(b.instruction)
    if len(clauses) < 2:
        return _intent(b, text)
    clauses = _carry_room(b, clauses)
    goals = [understand(replace(b, instruction=c)) for c in clauses]
    if not any(g.kind == "control" for g in goals):
        return None
    changes = [c for g in goals if g.kind == "control" for c in g.changes]
    refused = " ".join(g.message for g in goals if g.kind == "refuse")
    unclear = [c for c, g in zip(clauses, goals) if g.kind not in ("control", "refuse")]
    if unclear:
        refused += f" I did not understand: {'; '.join(unclear)}."
    return Goal("control", changes=changes, message=refused.strip())


_SELF = re.compile(r"\b(its|their)\b|\s(there|in it|in that room|in the same room|in there)\b", re.IGNORECASE)


def _carry_room(b: Beliefs, clauses: list[str]) -> list[str]:
    """"... in meeting room 1 and open its window" / "... the air conditioning there": the room said before.

    Examples:
        >>> from lares_kit.models.reading import Beliefs, Room
        >>> b = Beliefs("", "latest", {"mr1": Room("mr1", "Meeting room 1")}, {}, None, {}, [])
        >>> _carry_room(b, ["turn on the light in meeting room 1", "open its window", "put the fan on there"])
        ['turn on the light in meeting room 1', 'open the window in the Meeting room 1', 'put the fan on in the Meeting room 1']
    """
    out, last = [], None
    for clause in clauses:
        rooms, _ = _rooms_in(words_of(clause), b)
        if rooms:
            last = rooms[-1]
        elif last is not None and _SELF.search(clause):
            name = b.rooms[last].name
            clause = re.sub(r"\b(its|their)\b", "the", clause, flags=re.IGNORECASE)
            clause = re.sub(r"\s(?:there|in it|in that room|in the same room|in there)\b", "", clause,
                            flags=re.IGNORECASE) + f" in the {name}"
        out.append(clause)
    return out


def _thermostat(b: Beliefs, rooms: list[str]) -> str | None:
    for kind in ("thermostat", "hvac", "heater"):
        for d in b.devices.values():
            if d.type == kind and (not rooms or d.room in rooms) and "target" in d.state:
                return d.id
    return None


# "..., so I can read" / "... to save electricity": what the purpose needs, tried in this order.
_PURPOSE = re.compile(r"\s(so that|so|in order to|to(?=\s(?:save|keep|let|help|get|make)\b))\s(.+)$", re.IGNORECASE)
_NEEDS = [
    (r"\b(dark|darker|sleep|nap|doze|rest)\b", "dark"),
    (r"\b(read|reading|see|look|find|search|brighter|more light|sun ?light|sun|daylight)\b", "light"),
    (r"\b(keeps? (?:baking|cooking|running|going|warm|working)|bake|baking|cook|cooking|finish)\b", "on"),
    (r"\b(save|saving) (?:electricity|energy|power|money)\b|\bquiet\b", "off"),
]
_OPPOSITE = {"dark": "light", "light": "dark", "on": "off", "off": "on"}  # the effect that defeats each need
# "Make the kitchen completely dark": the means, said as the result.
_MAKE_DARK = re.compile(r"\bmake (?:the |it )?(.*?)\b(?:completely |totally |really |pitch )?(dark|darker)\b")
_YOURS = {"i": "you", "i'm": "you're", "my": "your", "me": "you", "we": "you", "we're": "you're", "our": "your",
          "us": "you", "myself": "yourself"}


def _effects(b: Beliefs, change: Change) -> set[str]:
    """What a change does to a room: {"light", "on"}, {"dark", "closed"}, ..."""
    dev = b.devices.get(change.device)
    kind = dev.type if dev else ""
    if change.attribute == "on":
        state = "on" if change.value else "off"
        return {state, ("light" if change.value else "dark")} if kind in ("light", "") else {state}
    if change.attribute == "position" and isinstance(change.value, (int, float)):
        return {"open", "light"} if change.value >= 50 else {"closed", "dark"}
    if change.attribute == "open":
        return {"open"} if change.value else {"closed"}
    return set()


def _opposite(change: Change) -> Change:
    """The change that does the opposite: off for on, open for closed."""
    if change.attribute == "position" and isinstance(change.value, (int, float)):
        return Change(change.device, "position", 100 if change.value < 50 else 0)
    return Change(change.device, change.attribute, not change.value)


def _means_sentence(b: Beliefs, clash: list[Change], need: str) -> str:
    """"Switching off the light in the Lounge would make it dark" -- what the asked change does against the need."""
    first = clash[0]
    what = describe(b, first.device) if first.device in b.devices else first.device
    if len(clash) > 1:
        what += f" and {len(clash) - 1} more"
    if first.attribute == "on":
        doing = f"Switching {'on' if first.value else 'off'} {what}"
    else:
        doing = f"{'Opening' if 'open' in _effects(b, first) else 'Closing'} {what}"
    result = {"dark": "make it lighter", "light": "make it darker", "on": "stop it", "off": "use more power"}[need]
    if need == "light" and first.attribute != "on":
        result = "keep the light out"
    return f"{doing} would {result}"


def _purpose_contradiction(b: Beliefs, text: str) -> Goal | None:
    """"Turn off the light so I can read": the means defeats the purpose -> a contradiction to ask about."""
    m = _PURPOSE.search(text)
    if not m:
        return None
    means_text, purpose = text[:m.start()], m.group(2)
    need = next((n for pattern, n in _NEEDS if re.search(pattern, purpose)), None)
    if need is None:
        return None
    if dark := _MAKE_DARK.search(means_text):
        rooms, _ = _rooms_in(dark.group(1), b)
        means = [Change(d.id, "on", False) for d in b.devices.values() if d.room in rooms and d.type == "light"]
    else:
        goal = understand(replace(b, instruction=means_text, answers=[]))
        means = goal.changes if goal.kind == "control" else []
    clash = [c for c in means if _OPPOSITE[need] in _effects(b, c)]
    if not clash:
        return None
    said = _PURPOSE.search(b.instruction.strip().rstrip(".!"))  # the user's own words, pronouns turned round
    wanted = " ".join(_YOURS.get(w.lower(), w) for w in (said.group(2) if said else purpose).split())
    why = f"{_means_sentence(b, clash, need)}, but you want it {m.group(1).lower()} {wanted}"
    return Goal("contradiction", changes=clash, condition="opposite", message=why,
                question=f"{why}. Did you mean the opposite, or shall I leave things as they are?")


def contradiction_step(b: Beliefs, goal: Goal, can: set[str]) -> tuple[str, object, str]:
    """``("ask", question, why)``, ``("changes", [Change], reason)`` or ``("say", message, why)``."""
    answers = [a for q, a in b.answers if q == goal.question]
    if not answers:
        if "askuser" in can:
            return ("ask", goal.question, f"{goal.message}: the request contradicts itself, so I ask before acting.")
        return ("say", f"{goal.message}, so I did nothing. Tell me which you want and I will do it.",
                "The request contradicts itself; I point it out instead of acting.")
    answer = words_of(answers[-1])
    if goal.condition == "opposite":
        if re.search(r"\b(leave|keep|as (?:it|they) (?:is|are)|never ?mind|don'?t|do not|nothing)\b", answer):
            return ("say", "All right, I left everything as it was.", "The user wants things left as they are.")
        if re.search(r"\b(yes|yeah|opposite|meant|backwards|instead|sorry|oops|on|off|open|up|light|dark)\b", answer):
            return ("changes", [_opposite(c) for c in goal.changes], "You meant the opposite, so ")
        return ("say", "All right, I left everything as it was.", "The answer does not ask for a change.")
    up = re.search(r"\b(warm|warmer|hotter|up|higher|raise)\b", answer)
    down = re.search(r"\b(cool|cooler|colder|down|lower)\b", answer)
    device = _thermostat(b, goal.target)
    if goal.condition == "brighter" or device is None or bool(up) == bool(down):
        return ("say", "All right, I left everything as it was.", "The answer does not ask for a change.")
    number = re.search(r"\b(\d+(?:\.\d+)?)\b", answer)
    current = b.devices[device].state.get("target")
    if number:
        value = float(number.group(1))
    elif isinstance(current, (int, float)):
        value = current + (2 if up else -2)
    else:
        return ("say", "I do not know the current setting, so I left it as it was.", "No value to change from.")
    value = int(value) if float(value).is_integer() else value
    return ("changes", [Change(device, "target", value)], f"You want it {'warmer' if up else 'cooler'}, so ")
