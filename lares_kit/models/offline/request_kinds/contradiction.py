"""A request whose means defeats its purpose: point it out, ask, then do what the user meant -- once.

Part of the offline model (:mod:`lares_kit.models.offline`). The smart-building
paper's example is "lower the temperature to make the room warmer"; the
homes' tasks add "turn the light off so I can read" and "close the blinds so
more sun comes in". The rules here:

1. **recognise** it: a means and a purpose that pull opposite ways, from a
   small table (temperature up/down against warmer/cooler, lights off
   against seeing better) or from "<means> so (that) <purpose>", where the
   means is understood as a command and its effect ("dark") is checked
   against what the purpose needs ("light");
2. **ask** what the user wants (or, with no ``ask_user``, say why nothing
   was done);
3. **read the answer** (:func:`read_answer`): a number ("make it 22"), a
   direction ("I meant warmer", "no, cooler", "lower it"; "not warmer" does
   not count as warmer), leaving things alone ("actually leave it",
   "never mind"), or a plain "yes" to the question, which offered the
   purpose;
4. **act once**: a direction is *one* step (2 degrees). The planner is
   stateless and sees the conversation again every turn, so it must notice
   that the step is already made -- :meth:`~lares_kit.models.offline.reading.Beliefs.value_set` --
   or "warmer" would raise the target again each turn, 19 -> 21 -> 23 ->
   ... until the home's limit.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..reading import Beliefs
from ..understanding import Change, Goal, understand
from ..vocabulary import describe, rooms_in, words_of

__all__ = ["STEP", "clash_in", "contradiction_step", "read_answer", "recognise_contradiction"]

STEP = 2  # degrees: how far "warmer" / "cooler" moves a target, once

# (means, purpose): lowering the heat to get warmer, raising it to get cooler, dark to read.
_HEAT = r"(?:temperature|heating|thermostat|heat)"
_ROOM = r"(?: in (?:the )?[\w ]+?)?"  # "turn the thermostat in office 3 down"
_CONTRADICTIONS = [
    (rf"\b(lower|reduce|decrease|turn down|drop|cut)\b.*\b{_HEAT}\b|\bturn (?:off|down) the (?:heating|heater)\b|"
     rf"\b(?:turn|put|bring|knock) (?:the |that )?{_HEAT}{_ROOM} down\b",
     r"\b(warmer|hotter|warm (?:it|things|the \w+|me|us) up|warms? up|heats? (?:it |things |the \w+ )?up)\b",
     "Lowering the temperature would make the room colder, not warmer", "warmer"),
    (rf"\b(raise|increase|turn up|put up)\b.*\b{_HEAT}\b|\b(?:turn|put|bring|crank) (?:the |that )?{_HEAT}{_ROOM} up\b",
     r"\b(cooler|colder|cool (?:it|things|the \w+|me|us)(?: down)?|cools? down|chill)\b",
     "Raising the temperature would make the room warmer, not cooler", "cooler"),
    (r"\b(turn|switch) (?:off|out) the lights?\b|\bturn the lights? off\b",
     r"\b((?:see|read) better|brighter|more light)\b",
     "Switching the light off would make it darker, not brighter", "brighter"),
]

def recognise_contradiction(b: Beliefs) -> Goal | None:
    """A ``contradiction`` goal if the instruction's means defeats its purpose, else None.

    The goal's ``condition`` is what the purpose wants ("warmer", "cooler",
    "brighter"), or ``"opposite"`` for a "<means> so <purpose>" request,
    whose ``changes`` are the means as asked; ``question`` is what to ask.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("Lower the heating to warm the room up", "latest", {"hall": Room("hall", "Hall")}, {},
        ...             None, {}, [])
        >>> goal = recognise_contradiction(b)
        >>> goal.condition, goal.message
        ('warmer', 'Lowering the temperature would make the room colder, not warmer')
    """
    text = words_of(b.instruction)
    clash = clash_in(text)
    if clash is not None:
        why, wanted, question = clash
        rooms, _ = rooms_in(text, b)
        return Goal("contradiction", target=rooms, condition=wanted, message=why, question=question)
    return _purpose_contradiction(b, text)


def clash_in(instruction: str) -> tuple[str, str, str] | None:
    """(why, what the purpose wants, the question to ask) for a means against its purpose, from words alone.

    Args:
        instruction: the user's instruction, as typed.

    Examples:
        >>> clash_in("Put the heating up so the office cools down")[:2]
        ('Raising the temperature would make the room warmer, not cooler', 'cooler')
        >>> clash_in("Put the heating up so the office warms up") is None
        True
    """
    text = words_of(instruction)
    for means, purpose, why, wanted in _CONTRADICTIONS:
        if re.search(means, text) and re.search(purpose, text):
            return why, wanted, f"{why}. Do you want it {wanted}, or did you mean something else?"
    return None


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
        rooms, _ = rooms_in(dark.group(1), b)
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


# Reading the answer to the question. A direction word after a negation ("not warmer", "I don't want it
# warmer") is not that direction.
_LEAVE = (r"\b(leave|as (?:it|they) (?:is|are|was|were)|never ?mind|forget (?:it|that|about it)|don'?t bother|"
          r"no change|keep it (?:as|at|where|the same|like)|stay as|nothing)\b")
_DIRECTIONS = {  # goal direction -> the words that ask for it ("too cold" asks for warmer)
    "warmer": r"\b(warmer|hotter|warm (?:it|things|the \w+|me) up|warm up|heat (?:it |things )?up|up|higher|raise|"
              r"increase|more heat|too (?:cold|cool|chilly)|freezing|i'?m (?:cold|chilly))\b",
    "cooler": r"\b(cooler|colder|cool (?:it|things|the \w+|me)(?: down)?|cool down|chill|down|lower|reduce|decrease|"
              r"less heat|too (?:hot|warm)|boiling|i'?m (?:hot|warm|boiling))\b",
    "brighter": r"\b(bright|brighter|lighter|light|lights? on|on|see|read|lit)\b",
    "darker": r"\b(dark|darker|dim|off|out)\b",
}
_PAIRS = {"warmer": "cooler", "cooler": "warmer", "brighter": "darker", "darker": "brighter"}
# a negation at most three words before (a comma or dash ends its reach: "not warmer -- cooler")
_NEGATION = re.compile(r"\b(not|never|don'?t|do not|no longer|isn'?t|wasn'?t)\b(?:\s+[\w']+){0,3}\s*$|\bno\s*$")
_YES = re.compile(r"^(?:(?:oh|ah|um|well|sorry|right)[\s,!.]+)*(yes|yeah|yep|yup|please|sure|ok|okay|correct|exactly|"
                  r"that'?s (?:right|it|what i meant)|go ahead|do it|i do|indeed|definitely)\b")


def _asks_for(answer: str, pattern: str) -> bool:
    """Whether ``answer`` has a word of ``pattern`` that no negation just before it cancels."""
    return any(not _NEGATION.search(answer[:m.start()]) for m in re.finditer(pattern, answer))


def read_answer(answer: str, wanted: str) -> tuple[str, float | None]:
    """What an answer to "Do you want it <wanted>, or did you mean something else?" asks for.

    Returns ``("number", value)``, ``(direction, None)`` with direction one of
    warmer/cooler/brighter/darker, ``("leave", None)``, or ``("unclear", None)``.

    Args:
        answer: the user's answer to the question, as typed.
        wanted: what the request's purpose wanted (the goal's ``condition``), e.g. ``"warmer"``; a yes asks for it.

    Examples:
        >>> read_answer("oh, I meant warmer", "warmer"), read_answer("no, I really want it cooler", "warmer")
        (('warmer', None), ('cooler', None))
        >>> read_answer("lower it", "warmer"), read_answer("actually leave it", "warmer")
        (('cooler', None), ('leave', None))
        >>> read_answer("make it 22", "warmer"), read_answer("yes please", "cooler")
        (('number', 22.0), ('cooler', None))
        >>> read_answer("not warmer -- cooler!", "warmer"), read_answer("hmm, warmer or cooler?", "warmer")
        (('cooler', None), ('unclear', None))
        >>> read_answer("I don't want it warmer, I'm boiling", "warmer"), read_answer("no", "warmer")
        (('cooler', None), ('unclear', None))
    """
    text = " ".join(answer.lower().replace("’", "'").split())  # punctuation kept: it ends a negation
    number = re.search(r"(?<![\w.])(-?\d+(?:\.\d+)?)", text)
    if number:
        return "number", float(number.group(1))
    if re.search(_LEAVE, text):
        return "leave", None
    pair = (wanted, _PAIRS.get(wanted, ""))
    asked = [d for d in pair if d in _DIRECTIONS and _asks_for(text, _DIRECTIONS[d])]
    if len(asked) == 1:
        return asked[0], None
    if not asked and _YES.search(text):
        return wanted, None  # "yes" to a question that offered the purpose
    return "unclear", None


def _lights_of(b: Beliefs, goal: Goal) -> list[str]:
    """The lights the means was about: the ones the instruction names, else those in its rooms."""
    named = understand(replace(b, answers=[]))
    lights = [c.device for c in named.changes if c.attribute == "on" and b.devices[c.device].type == "light"] \
        if named.kind == "control" else []
    return lights or [d.id for room in goal.target for d in b.lights_in(room)]


def contradiction_step(b: Beliefs, goal: Goal, can: set[str]) -> tuple[str, object, str]:
    """``("ask", question, why)``, ``("changes", [Change], reason)`` or ``("say", message, why)``.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        goal: the contradiction goal from :func:`recognise_contradiction`.
        can: the offered tools' names, normalised (``setdevice``, ``askuser``): a step uses only these.
    """
    answers = [a for q, a in b.answers if q == goal.question]
    if not answers:
        if "askuser" in can:
            return ("ask", goal.question, f"{goal.message}: the request contradicts itself, so I ask before acting.")
        return ("say", f"{goal.message}, so I did nothing. Tell me which you want and I will do it.",
                "The request contradicts itself; I point it out instead of acting.")
    answer = words_of(answers[-1])
    left = ("say", "All right, I left everything as it was.", "The user wants things left as they are.")
    if goal.condition == "opposite":
        if re.search(r"\b(leave|keep|as (?:it|they) (?:is|are)|never ?mind|don'?t|do not|nothing)\b", answer):
            return left
        if re.search(r"\b(yes|yeah|opposite|meant|backwards|instead|sorry|oops|on|off|open|up|light|dark)\b", answer):
            return ("changes", [_opposite(c) for c in goal.changes], "You meant the opposite, so ")
        return ("say", "All right, I left everything as it was.", "The answer does not ask for a change.")
    kind, number = read_answer(answers[-1], goal.condition)
    unclear = ("say", f"I could not tell from your answer ({answers[-1]!r}) whether you want it {goal.condition} or "
               f"{_PAIRS[goal.condition]}, so I left everything as it was.", "The answer does not say which way.")
    device = _thermostat(b, goal.target) if goal.condition != "brighter" else None
    if kind == "leave" and device is not None and "target" in b.devices[device].state:
        return ("say", f"All right, I left {describe(b, device)} as it was, at target "
                       f"{b.devices[device].state['target']}.", "The user wants things left as they are.")
    if kind == "leave":
        return left
    if goal.condition == "brighter":
        if kind not in ("brighter", "darker"):
            return unclear
        lights = _lights_of(b, goal)
        if not lights:
            return ("say", "I do not know which lights you mean, so I left everything as it was.", "No lights named.")
        return ("changes", [Change(d, "on", kind == "brighter") for d in lights], f"You want it {kind}, so ")
    if device is None:
        return ("say", "I found no thermostat to change, so I left everything as it was.", "Nothing to set.")
    if kind == "number" and number is not None:
        value = number
        why = f"You asked for {number:g}, so "
    elif kind in ("warmer", "cooler"):
        # One step, from where it was before this task changed it: once made, the value set is the goal.
        done = b.value_set(device, "target")
        current = b.devices[device].state.get("target")
        if done is not None:
            value = done
        elif isinstance(current, (int, float)) and not isinstance(current, bool):
            value = current + (STEP if kind == "warmer" else -STEP)
        else:
            return ("say", "I do not know the current setting, so I left it as it was.", "No value to change from.")
        why = f"You want it {kind}, so "
    else:
        return unclear
    value = int(value) if float(value).is_integer() else value
    return ("changes", [Change(device, "target", value)], why)
