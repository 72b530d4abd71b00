"""Instruction shapes beyond one command: several tasks, a contradiction, small talk.

Part of the offline model (:mod:`lares_kit.models.offline`). The smart-building
paper's test set has these kinds next to plain commands:

* **multi-task** -- "turn on the light in office 1, open the window in meeting
  room 3 and switch the kitchen fan on": split into clauses at a new verb,
  each understood on its own; the changes add up (and a clause the home
  cannot do is reported, not silently dropped);
* **contradiction** -- "lower the temperature to make the room warmer": the
  means defeats the purpose; recognised and followed up in
  :mod:`lares_kit.models.offline.request_kinds.contradiction`;
* **indirect requests** -- "it's too dark in office 5", "make office 3 warmer";
* **daily conversation** -- greetings, thanks, "what can you do?".
"""

from __future__ import annotations

import re
from dataclasses import replace

from .honest import recognise_unread
from .reading import Beliefs
from .request_kinds.contradiction import recognise_contradiction
from .request_kinds.infeasible import recognise_infeasible
from .understanding import Change, Goal, missing_in_rooms, understand
from .vocabulary import rooms_in, words_of

__all__ = ["split_tasks", "recognise_compound", "CAPABILITIES"]

# Where a reply says what the assistant can do: planning fills it in from the tools offered and the home's devices
CAPABILITIES = "{capabilities}"
_VERBS = (r"turn|switch|set|open|close|shut|lock|unlock|dim|raise|lower|put|start|stop|increase|decrease|"
          r"make|read|check")
# A new clause starts at a separator followed by a verb: "..., and open the window", "... then lock the door".
_SPLIT = re.compile(rf"\s*(?:,\s*(?:and\s+|then\s+)?|;\s*|\s+and\s+then\s+|\s+then\s+|\s+and\s+(?:also\s+)?|"
                    rf"\s+also\s+)(?=(?:please\s+)?(?:{_VERBS})\b)")
_SMALL_TALK = [
    (r"^(hi|hello|hey|good (morning|afternoon|evening)|greetings)\b",
     "Hello! I am the assistant here (lares_kit's offline model, a rule-based teaching stand-in). " + CAPABILITIES),
    (r"^(thanks|thank you|cheers|great job|well done)\b", "You're welcome. Tell me if there is anything else."),
    (r"^how are you\b", "I am fine, thank you: the building is running. What can I do for you?"),
    (r"^(who are you|what are you|what (?:can|could) you (?:do|control)|what are you able to (?:do|control)|"
     r"what do you do|help)\b",
     "I am the assistant of this building or home, a rule-based stand-in. " + CAPABILITIES),
    (r"^(bye|goodbye|good night|see you)\b", "Goodbye!"),
]


# Indirect requests (the paper's intent recognition): what is said -> the device kind and the change.
_INTENTS = [
    (r"\b(too dark|pitch black|can'?t see|cannot see|brighter|brighten)\b", "light", "on", True),
    (r"\b(too bright|glare|dazzling)\b", "light", "on", False),
    (r"\b(let (?:some )?(?:fresh )?air in|fresh air|air (?:it|the room) out)\b", "window", "open", True),
    (r"\b(warmer|warm (?:it|the [\w ]+?|me|us) up|heat (?:it |the [\w ]+? )?up)\b", "thermostat", "target", +2),
    (r"\b(cooler|cool (?:it |the [\w ]+? )?down)\b", "thermostat", "target", -2),
]


def _intent(b: Beliefs, text: str) -> Goal | None:
    rooms, _ = rooms_in(text, b)
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
            # No such device in the room: the other rules may still read it; if none can, say what is missing.
            if understand(b).kind != "unknown":
                return None
            missing = missing_in_rooms(kind if kind != "thermostat" else "heating", b, rooms)
            return Goal("refuse", message=missing) if missing else None
        if attribute == "target":
            # A relative change is made once: after a successful set, that value is the goal.
            done = b.value_set(devices[0].id, "target")
            if done is not None:
                return Goal("control", changes=[Change(devices[0].id, "target", done)])
            now = devices[0].state.get("target")
            if not isinstance(now, (int, float)):
                return None
            return Goal("control", changes=[Change(devices[0].id, "target", now + value)])
        return Goal("control", changes=[Change(d.id, attribute, value) for d in devices])
    return None


def split_tasks(instruction: str) -> list[str]:
    """The clauses of a multi-task instruction, each starting with its verb.

    Args:
        instruction: the user's instruction, as typed.

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


_GREETING = re.compile(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening|night)|greetings|thanks|thank you|"
                       r"cheers|ok(?:ay)?|bye|goodbye)(?: there)?\s*[,.!;:-]*\s+", re.IGNORECASE)


def after_greeting(instruction: str) -> str | None:
    """The request that follows a greeting ("good night! switch every light off"), or None when none follows.

    Args:
        instruction: the user's instruction, as typed.

    Examples:
        >>> after_greeting("Good night! Switch every light off")
        'Switch every light off'
        >>> after_greeting("hello, could you turn on the kitchen light?")
        'could you turn on the kitchen light?'
        >>> after_greeting("good night"), after_greeting("hello, how are you?")
        (None, None)
    """
    said = _GREETING.match(instruction)
    rest = instruction[said.end():] if said else ""
    verb = rf"(?:please |could you |can you |would you |now )?(?:{_VERBS}|lights?)\b"
    return rest if rest and re.match(verb, rest, re.IGNORECASE) else None


def recognise_compound(b: Beliefs) -> Goal | None:
    """Small talk, a contradiction, or several tasks in one instruction; None for anything else.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
    """
    text = words_of(b.instruction)
    for pattern, reply in _SMALL_TALK:
        if re.search(pattern, text) and len(text.split()) <= 8 + 3 * (reply.endswith(CAPABILITIES)):
            return Goal("chat", message=reply)
    contradiction = recognise_contradiction(b)
    if contradiction is not None:
        return contradiction
    clauses = split_tasks(b.instruction)
    if len(clauses) < 2:
        return _intent(b, text)
    clauses = _carry_room(b, clauses)
    # each clause read as a sentence of its own, exceptions and negations included (.honest)
    goals = [recognise_unread(replace(b, instruction=c)) or understand(replace(b, instruction=c)) for c in clauses]
    unread = next((g for g in goals if g.kind == "unread"), None)
    if unread is not None:  # words of one clause it cannot read: nothing is done, and the reply says which
        return unread
    if not any(g.kind == "control" for g in goals):
        return None
    changes = [c for g in goals if g.kind == "control" for c in g.changes]
    refused = " ".join(g.message for g in goals if g.kind == "refuse")
    # A clause asking for what the home cannot do ("... and make me a coffee") is refused with its reason.
    impossible = [recognise_infeasible(replace(b, instruction=c)) if g.kind == "unknown" else None
                  for c, g in zip(clauses, goals)]
    refused = " ".join([refused, *(i.message for i in impossible if i is not None)]).strip()
    unclear = [c for c, g, i in zip(clauses, goals, impossible) if g.kind not in ("control", "refuse") and i is None]
    if unclear:
        refused += f" I did not understand: {'; '.join(unclear)}."
    return Goal("control", changes=changes, message=refused.strip())


_SELF = re.compile(r"\b(its|their)\b|\s(there|in it|in that room|in the same room|in there)\b", re.IGNORECASE)


def _carry_room(b: Beliefs, clauses: list[str]) -> list[str]:
    """"... in meeting room 1 and open its window" / "... the air conditioning there": the room said before.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Room
        >>> b = Beliefs("", "latest", {"mr1": Room("mr1", "Meeting room 1")}, {}, None, {}, [])
        >>> clauses = ["turn on the light in meeting room 1", "open its window", "put the fan on there"]
        >>> for clause in _carry_room(b, clauses):
        ...     print(clause)
        turn on the light in meeting room 1
        open the window in the Meeting room 1
        put the fan on in the Meeting room 1
    """
    out, last = [], None
    for clause in clauses:
        rooms, _ = rooms_in(words_of(clause), b)
        if rooms:
            last = rooms[-1]
        elif last is not None and _SELF.search(clause):
            name = b.rooms[last].name
            clause = re.sub(r"\b(its|their)\b", "the", clause, flags=re.IGNORECASE)
            clause = re.sub(r"\s(?:there|in it|in that room|in the same room|in there)\b", "", clause,
                            flags=re.IGNORECASE) + f" in the {name}"
        out.append(clause)
    return out
