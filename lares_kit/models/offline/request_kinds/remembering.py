"""Memory requests: remember a stated preference, and use it later through ``recall``.

Part of the offline model (:mod:`lares_kit.models.offline`); the memory
category of the smart-building paper ("A general AI agent framework for smart
buildings based on large language models and ReAct strategy", 2025), taught
in ``notebooks/10_memory.ipynb``:

* "my name is Ana and I like the office at 21 degrees" -> call
  ``remember_preference(key="office temperature", value=21)``, then confirm;
* "set my office to my usual temperature" (a later session) -> call
  ``recall(query="office temperature")``, read the number in its result,
  then set the thermostat of *my* office -- the room whose alias is
  "<speaker>'s office". The speaker comes from the request: a system line
  "You are talking to Ana." (the agents write it when they know), or the
  recall result ("Preferences ana stated: ...", "ana said: ...").

What was remembered is never known from anywhere but the request: with no
recall tool, or nothing recalled, the model says it does not know.
"""

from __future__ import annotations

import re

from ..reading import Beliefs, Dev, norm
from ..understanding import Change, Goal
from ..vocabulary import rooms_in, words_of

__all__ = ["recognise_memory", "memory_step", "preference_of", "speaker_of"]

_USUAL = re.compile(r"\b(usual|normal|preferred|favou?rite|the way i like|how i like|as i like|like i like|"
                    r"as always|as before)\b")
# "I like X at 21" states a preference; "I'd like" / "I want" are requests for now, not preferences.
_STATES = re.compile(r"\bi (?:(?:usually|always|generally) )?(?:like|prefer|love)\b(.*?)\b(?:at|to be|set to|on)\s+"
                     r"(-?\d+(?:\.\d+)?)\s*(degrees?|°c?|c\b|%|percent)?")
_NAME = re.compile(r"\b(?:my name is|call me|i am|i'm)\s+([a-z][a-z'-]+)", re.IGNORECASE)
_ATTRIBUTE = [(r"\b(degrees?|°|temperature|warm|cool|heating)\b", "temperature"),
              (r"\b(%|percent|bright|brightness|dim)\b", "brightness")]


def _attribute(text: str) -> str:
    return next((name for pattern, name in _ATTRIBUTE if re.search(pattern, text)), "setting")


def _place(text: str) -> str:
    # "the office" -> "office"; "meeting room 2" -> "meeting room 2"
    words = [w for w in text.split() if w not in ("the", "my", "a", "our", "in", "to", "have", "keep", "it", "when")]
    return " ".join(words[-3:]) if words else ""


def speaker_of(b: Beliefs) -> str:
    """Who is speaking: the agent's system line, else the name a recall result gives.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far. The
            speaker comes from its system line, or a recall result.
    """
    if b.speaker:
        return b.speaker
    for call in b.calls:
        if norm(call.name) == "recall" and call.ok:
            if m := re.search(r"Preferences (\S+) stated|\b(\S+) said:", call.result or ""):
                return m.group(1) or m.group(2)
    return ""


def recognise_memory(b: Beliefs) -> Goal | None:
    """A ``remember`` goal (a stated preference) or a ``usual`` goal (use a remembered one), or None.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.

    Examples:
        >>> b = Beliefs("My name is Ana and I like the office at 21 degrees", "latest", {}, {}, None, {}, [])
        >>> g = recognise_memory(b)
        >>> g.kind, g.target, g.changes[0].value, g.message
        ('remember', ['office temperature'], 21, 'Ana')
        >>> recognise_memory(Beliefs("set my office to my usual temperature", "latest", {}, {}, None, {}, [])).kind
        'usual'
    """
    text = words_of(b.instruction)
    name = _NAME.search(b.instruction)
    if m := _STATES.search(text):
        value = float(m.group(2))
        key = f"{_place(m.group(1))} {_attribute(m.group(0))}".strip()
        return Goal("remember", changes=[Change("", key, int(value) if value.is_integer() else value)], target=[key],
                    message=name.group(1).capitalize() if name else "")
    if _USUAL.search(text):
        attribute = _attribute(text)
        rooms, rest = rooms_in(text, b)
        mine = re.search(r"\bmy ((?!usual|normal|preferred|favou?rite)[a-z]+(?: room)?)\b", rest)
        place = mine.group(1) if mine else (b.rooms[rooms[0]].name.lower() if rooms else "")
        asks = re.match(r"(what|which|how|do you know|tell me)\b", text) is not None  # a question: answer only
        return Goal("usual", target=[f"{place} {attribute}".strip()], target_text=place, condition=attribute,
                    then="report" if asks else "set")
    return None


def preference_of(result: str, key: str) -> float | int | str | None:
    """The remembered value for ``key`` in a recall result: a stated preference first, else a number said.

    A key of "<place> setting" ("the way I like it") takes the first preference about that place.

    Args:
        result: what ``recall`` said: the matching memories, then "Preferences NAME stated: key = value ...".
        key: the preference wanted, "<place> <attribute>" (``"office temperature"``); "<place> setting" takes any about
            that place.

    Examples:
        >>> preference_of('1 memory matches ...: "I like the office at 21 degrees". '
        ...               'Preferences ana stated: office temperature = 21 (2026-11-29).', "office temperature")
        21
    """
    attribute = key.split()[-1] if key else ""
    prefs = result.split("Preferences", 1)[1].split(":", 1)[-1] if "Preferences" in result else ""
    for k, v in re.findall(r"([\w ]+?) = (\"[^\"]*\"|-?\d+(?:\.\d+)?|true|false)", prefs):
        k = k.strip(" ;")
        if attribute in k or k == key or (attribute == "setting" and set(key.split()[:-1]) <= set(k.split())):
            value = v.strip('"')
            try:
                number = float(value)
            except ValueError:
                return value
            return int(number) if number.is_integer() else number
    unit = (r"\s*(?:degrees?|°)" if attribute == "temperature"
            else r"\s*(?:%|percent)" if attribute == "brightness" else "")
    if m := re.search(rf"(-?\d+(?:\.\d+)?){unit}", result.split("Preferences", 1)[0].split(":", 1)[-1]):
        number = float(m.group(1))
        return int(number) if number.is_integer() else number
    return None


def _room_for(b: Beliefs, goal: Goal, speaker: str) -> str | None:
    rooms, _ = rooms_in(words_of(goal.target_text), b)
    if rooms:
        return rooms[0]
    if speaker and goal.target_text:  # "my office" -> the room called "Ana's office"
        phrase = words_of(f"{speaker}'s {goal.target_text}")
        for room in b.rooms.values():
            if phrase in {words_of(a) for a in [room.name, *room.aliases]}:
                return room.id
    return None


def _device_for(b: Beliefs, room: str, attribute: str) -> tuple[Dev, str] | None:
    kinds = ("thermostat", "hvac", "heater") if attribute == "temperature" else ("light",)
    attr = "target" if attribute == "temperature" else "brightness"
    for kind in kinds:
        dev = next((d for d in b.devices.values() if d.room == room and d.type == kind), None)
        if dev is not None:
            return dev, attr
    return None


def memory_step(b: Beliefs, goal: Goal, can: set[str]) -> tuple[str, object, str]:
    """The next step of a memory goal: ``("remember", (key, value), why)``, ``("recall", query, why)``,
    ``("changes", [Change], reason)`` or ``("say", message, why)``.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        goal: the ``remember`` or ``usual`` goal from :func:`recognise_memory`.
        can: the offered tools' names, normalised (``setdevice``, ``askuser``): a step uses only these.
    """
    done = [c for c in b.calls if norm(c.name) in ("rememberpreference", "recall") and c.result is not None]
    if goal.kind == "remember":
        key, value, name = goal.target[0], goal.changes[0].value, goal.message
        hello = f"Nice to meet you, {name}. " if name else ""
        stored = next((c for c in done if norm(c.name) == "rememberpreference"), None)
        if stored is None and "rememberpreference" in can:
            return ("remember", (key, value), f"{hello}The user states a preference; I store it for later sessions.")
        if stored is None or not stored.ok:
            why = (stored.result or "").removeprefix("Error: ") if stored else "I have no long-term memory tool"
            return ("say", f"{hello}I could not remember that ({why}).", "Remembering failed, so I say so.")
        return ("say", f"{hello}I will remember that you like {key} = {value}.", "The preference is stored.")
    recalled = next((c for c in reversed(done) if norm(c.name) == "recall"), None)
    if recalled is None:
        if "recall" not in can:
            return ("say", f"I have no long-term memory here, so I do not know your usual {goal.condition}.",
                    "Without a recall tool I cannot know what the user usually likes.")
        return ("recall", goal.target[0], f"'Usual' refers to an earlier conversation, so I search long-term memory "
                                           f"for {goal.target[0]!r}.")
    value = preference_of(recalled.result or "", goal.target[0]) if recalled.ok else None
    if value is None:
        return ("say", f"I could not find your usual {goal.condition} in my memory. Tell me what you like and I "
                       "will remember it.", "Memory has no such preference, so I must not guess.")
    if goal.then == "report":
        return ("say", f"Your usual {goal.target[0]} is {value}.", "The user asked what it is; I only answer.")
    attribute = goal.condition
    if attribute == "setting":  # "the way I like it": the kind of setting comes from the stored preference
        attribute = "brightness" if isinstance(value, (int, float)) and value > 35 else "temperature"
    room = _room_for(b, goal, speaker_of(b))
    found = _device_for(b, room, attribute) if room else None
    if found is None:
        where = f"'{goal.target_text}'" if goal.target_text else "the room"
        return ("say", f"Your usual {goal.condition} is {value}, but I do not know which device to set for {where}.",
                "I know the value but not where to apply it.")
    dev, attr = found
    return ("changes", [Change(dev.id, attr, value)], f"From memory, your usual {goal.condition} is {value}. ")
