"""Planning the next step: from a :class:`~.understanding.Goal` and beliefs to intentions.

Part of the offline model (:mod:`lares_kit.models.offline`). The planner is
stateless: it is handed everything the request says, works out how far the
task has got from the history, and returns what to do next as
:class:`Intention` objects in the toolkit's vocabulary ("switch this light
on", "move to that room", "look", "ask", "halt"). Turning an intention into
a call of whichever tools were actually offered happens in
:mod:`.calls` (tool calls) and :mod:`.formats` (ReAct and JSON text).

``can`` is the set of offered tool names, normalised (``"setlight"``,
``"togglelight"``, ...): the plan uses only what it can express.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from ...sentences.markers import cannot_ask
from ...sentences.wording import agree, capitalise, join_clauses, with_article
from .compound import CAPABILITIES, after_greeting, recognise_compound
from .ha.reading import ha_intent
from .honest import recognise_unread
from .reading import Beliefs, norm
from .request_kinds.comfort import comfort_step, recognise_comfort
from .request_kinds.confirming import cannot_under_rules, confirmation_step, house_rule_against
from .request_kinds.contradiction import contradiction_step
from .request_kinds.hazards import recognise_hazard
from .request_kinds.infeasible import recognise_infeasible, what_i_can_do
from .request_kinds.lists import recognise_list
from .request_kinds.live_context import live_context_step
from .request_kinds.remembering import memory_step, recognise_memory
from .understanding import NOT_UNDERSTOOD, Change, Goal, daytime_answer, understand, yes_no_answer
from .vocabulary import ROOM_WORDS, describe, has_word, rooms_in, words_of

__all__ = ["STAND_IN", "Intention", "plan", "route"]

STAND_IN = ("I am lares_kit's offline model: a rule-based teaching stand-in, not a real language model, and I could "
            "not understand this instruction: {instruction!r}. I can switch lights and devices by room or name, search "
            "for someone with the robot, ask you about things I cannot observe, and answer simple questions about "
            "the home.")
DEVICE_TOOLS = {"setlight", "togglelight", "setdevice"}
# Home Assistant's intent tools that change a device (tool_set="ha"), normalised
HA_TOOLS = {"hassturnon", "hassturnoff", "hasslightset", "hasssetposition", "hassclimatesettemperature",
            "hasssetvolume", "hassmediapause", "hassmediaunpause", "hassmedianext", "hassvacuumstart",
            "hassvacuumreturntobase",
            "hasslistadditem"}


@dataclass
class Intention:
    """One thing to do next. ``action``: light | device | move | look | ask | halt."""

    action: str
    args: dict[str, Any] = field(default_factory=dict)  # in the contract's argument names
    why: str = ""
    # the same change as a Home Assistant intent call, (tool, arguments), for a request in that dialect (.ha_reading)
    ha: tuple[str, dict[str, Any]] | None = None


def _halt(message: str, why: str = "") -> list[Intention]:
    return [Intention("halt", {"message_to_user": message}, why or "There is nothing more to do, so I report back.")]


def route(b: Beliefs, start: str, goal: str) -> list[str]:
    """Rooms from ``start`` to ``goal`` over the believed exits (breadth-first), or [] if none.

    Args:
        b: what the model read from the request; its rooms' exits, less any a move proved wrong, are the map.
        start: the room id to start from, usually where the robot is.
        goal: the room id to reach.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Room
        >>> rooms = {"a": Room("a", "A", exits=["b"]), "b": Room("b", "B", exits=["a", "c"]),
        ...          "c": Room("c", "C", exits=["b"])}
        >>> route(Beliefs("", "latest", rooms, {}, "a", {}, []), "a", "c")
        ['a', 'b', 'c']
    """
    back: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            path = [here]
            while back[path[-1]] is not None:
                path.append(back[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for nxt in b.neighbours(here):
            if nxt not in back:
                back[nxt] = here
                queue.append(nxt)
    return []


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return str(a).lower() == str(b).lower()
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a).lower() == str(b).lower()


def _touches(call, device: str) -> bool:
    return norm(call.name) in DEVICE_TOOLS and str(call.arg("light_id", "device_id")) == device


def _last_error(b: Beliefs, device: str) -> str | None:
    touching = [c for c in b.calls if _touches(c, device) and c.result is not None]
    return touching[-1].result if touching and not touching[-1].ok else None


def _state_words(change: Change) -> str:
    # "on", "locked", "not open", "target 21": how a message states a setting
    if change.attribute == "on":
        return "on" if change.value else "off"
    if isinstance(change.value, bool):
        opposite = {"locked": "unlocked", "open": "closed", "armed": "disarmed"}
        return change.attribute if change.value else opposite.get(change.attribute, f"not {change.attribute}")
    return f"{change.attribute} {change.value}"


def _says(b: Beliefs, c: Change, now: bool) -> str:
    # "the light in the Kitchen is now on"; "the thermostat in the Hall already had target 21";
    # "the spotlights in the Kitchen are now on"
    what = describe(b, c.device)
    if _adds(c):
        return f"I added {c.value['add']!r} to {what}" if now else f"{what} already had {c.value['add']!r}"
    if c.attribute == "on" or isinstance(c.value, bool):
        return f"{what} {agree(what, 'is') + ' now' if now else agree(what, 'was') + ' already'} {_state_words(c)}"
    return f"{what} {'now ' + agree(what, 'has') if now else 'already had'} {_state_words(c)}"


def _ha_offered(b: Beliefs, c: Change, can: set[str]) -> bool:
    # Is Home Assistant's intent tool for this change among the tools offered?
    intent = ha_intent(b, "device", {"device_id": c.device, "attribute": c.attribute, "value": c.value})
    return intent is not None and norm(intent[0]) in can & HA_TOOLS


def _adds(c: Change) -> bool:
    return c.attribute == "items" and isinstance(c.value, dict) and "add" in c.value  # an item for a list


def _change_intention(b: Beliefs, c: Change, why: str) -> Intention:
    dev = b.devices[c.device]
    if c.attribute == "on" and dev.type in ("light", ""):
        args = {"light_id": c.device, "on": bool(c.value)}
        return Intention("light", args, why, ha_intent(b, "light", args))
    if _adds(c):  # add_to_list, or HassListAddItem
        return Intention("list", {"list_id": c.device, "item": c.value["add"]}, why,
                         ha_intent(b, "device", {"device_id": c.device, "attribute": "items", "value": c.value}))
    args = {"device_id": c.device, "attribute": c.attribute, "value": c.value}
    return Intention("device", args, why, ha_intent(b, "device", args))


def _control(b: Beliefs, changes: list[Change], can: set[str], reason: str = "", reply: str = "") -> list[Intention]:
    pending, failed, barred = [], [], []
    for c in changes:
        error = _last_error(b, c.device)
        current = b.devices[c.device].state.get(c.attribute)
        if current is not None and _same(current, c.value):
            continue
        if rule := house_rule_against(b, c.device, c.attribute, c.value):  # an untrusted instruction (.confirming)
            barred.append((c, rule))
            continue
        (failed if error else pending).append((c, error))
    usable = [c for c, _ in pending if (c.attribute == "on" and can & DEVICE_TOOLS)
              or ("addtolist" in can if c.attribute == "items" else "setdevice" in can)
              or _ha_offered(b, c, can)]
    if usable:
        intentions = []
        for c in usable:
            verb = f"add {c.value['add']!r} to {describe(b, c.device)}" if _adds(c) else \
                f"switch {describe(b, c.device)} {_state_words(c)}" if c.attribute == "on" else \
                f"make {describe(b, c.device)} {_state_words(c)}" if isinstance(c.value, bool) else \
                f"set the {c.attribute} of {describe(b, c.device)} to {c.value}"
            # "The user wants me to ..." alone; after a reason ("It is night, so ") the reason says why
            why = join_clauses(reason, f"I will {verb} now.") if reason else \
                f"The user wants me to {verb}, so I will do that now."
            intentions.append(_change_intention(b, c, why))
        return intentions
    done = [c for c in changes if c not in [p for p, _ in pending + failed + barred]]
    changed = [c for c in done if any(_touches(call, c.device) and call.ok for call in b.calls)]
    parts = [_says(b, c, True) for c in changed]
    already = [c for c in done if c not in changed]
    if len(already) > 2 or (already and changed and len(already) > 1):
        states = sorted({_state_words(c) for c in already})
        parts.append(f"{'the other ' if changed else ''}{len(already)} were already {' or '.join(states)}")
    else:
        parts += [_says(b, c, False) for c in already]
    for c, error in failed:
        parts.append(f"I could not change {describe(b, c.device)} ({(error or '').removeprefix('Error: ')})")
    for c, rule in barred:
        parts.append(cannot_under_rules(describe(b, c.device), rule))
    for c, _ in pending:
        if c not in usable:
            parts.append(f"I have no tool to change {describe(b, c.device)}")
    if not changed and reason.endswith(", so "):  # "It is night; the light ... was already on": no "so" for no change
        reason = reason[:-len(", so ")] + "; "
    message = capitalise(join_clauses(reason, "; ".join(parts)) + ".")
    if reply and not failed and not pending and not barred:  # Home Assistant's reply, in the home's language
        message = reply
    return _halt(message, "The house rules forbid the rest of the request, so I say so." if barred else
                 "Every change the user asked for is made, so I report back.")


def _matches(goal: Goal, thing: tuple[str, str, str]) -> bool:
    words = set(words_of(" ".join(thing)).split())
    return bool(words & set(goal.target))


def _find(b: Beliefs, goal: Goal, can: set[str]) -> list[Intention]:
    what = goal.target_text
    for room, things in b.looked.items():
        hit = next((t for t in things if _matches(goal, t)), None)
        if hit is None:
            continue
        where = b.rooms[room].name if room in b.rooms else room
        # "I found Bruno, a dog, in the Hall"; "I found Keys in the Hall" (the name says what they are)
        kind = "" if not hit[1] or hit[0].lower().split()[-1:] == hit[1].lower().split()[-1:] else hit[1]
        found = f"I found {hit[0]}, {with_article(kind)}, in the {where}" if kind else \
            f"I found {hit[0]} in the {where}"
        lights = b.lights_in(room)
        if goal.then == "report":
            return _halt(f"{found}.", f"I can see {hit[0]} in the {where}, so I can tell the user.")
        if not lights:
            return _halt(f"{found}, but there is no light there to switch.")
        changes = ([Change(lights[0].id, "on", True)] if goal.then == "on"
                   else [Change(d.id, "on", False) for d in lights])
        if goal.then == "on" and b.is_lit(room):
            return _halt(f"{found}, and the light there is on.", f"{hit[0]} is in the lit {where}; the job is done.")
        return _control(b, changes, can, f"{found}. ")
    if not {"moverobot", "lookwithrobot"} <= can:
        return _halt(f"I would need the robot (move_robot and look_with_robot) to look for {what}, and I do not "
                     "have those tools, so I did nothing.")
    if b.mode == "none" or b.robot not in b.rooms:
        return _no_map(b, goal, can)
    reachable = {r: len(route(b, b.robot, r)) for r in b.rooms}
    seen_before = {str(s.get("room")) for i, s in b.prior_seen.items()
                   if _matches(goal, (str(s.get("name", "")), str(s.get("type", "")), i))}
    order = list(b.rooms)
    # A room can be searched if the robot can reach it and see in it (lit, or with a light to switch on).
    candidates = [r for r in b.rooms if r not in b.looked and reachable[r] and (b.lights_in(r) or b.is_lit(r))]
    if not candidates:
        looked = ", ".join(b.rooms[r].name for r in b.looked) or "no room"
        return _halt(f"I looked in every room I could see into ({looked}) and did not find {what}.")
    dest = min(candidates, key=lambda r: (r not in seen_before, reachable[r], order.index(r)))
    name = b.rooms[dest].name
    if dest != b.robot:
        step = route(b, b.robot, dest)[1]
        why = f"I have not looked for {what} in the {name} yet; the robot goes there one room at a time."
        return [Intention("move", {"destination_room_id": step}, why)]
    if b.is_lit(dest) is not True:
        light = b.lights_in(dest)[0]
        why = f"It is too dark for the robot to see in the {name}, so I will switch its light on first."
        return [Intention("light", {"light_id": light.id, "on": True}, why)]
    return [Intention("look", {}, f"The robot is in the lit {name}, so it can look for {what}.")]


def _no_map(b: Beliefs, goal: Goal, can: set[str]) -> list[Intention]:
    question = f"I was not given a map of the home, so I cannot plan a search. Which room is {goal.target_text} in?"
    answer = next((a for q, a in b.answers if q == question), None)
    if answer is None:
        if "askuser" in can:
            return [Intention("ask", {"question": question}, "Without a map I cannot search, so I ask the user.")]
        return _halt(f"I was not given a map of the home (no WORLD KNOWLEDGE message), so I cannot search for "
                     f"{goal.target_text}.")
    rooms, _ = rooms_in(words_of(answer), b)
    lights = [d for r in rooms for d in b.lights_in(r)]
    if goal.then != "report" and lights:
        return _control(b, [Change(lights[0].id, "on", goal.then == "on")], can,
                        f"You told me {goal.target_text} is in the {b.rooms[rooms[0]].name}. ")
    # The answer is quoted, not spliced in: it is the user's own sentence, with its own full stop.
    said = words_of(answer)
    if not rooms and b.language == "en" and not any(has_word(said, w) for w in ROOM_WORDS):
        # "I'm not sure": no word for a room at all, so it told nothing (never claim it did)
        return _halt(f'Your answer ("{answer.strip()}") names no room, and without a map I cannot search for '
                     f"{goal.target_text}: tell me the room, for example \"{goal.target_text} is in the bedroom\".")
    return _halt(f'You told me where {goal.target_text} is ("{answer.strip()}"), but without a map I cannot '
                 "check or do more.")


def _ask_then(b: Beliefs, goal: Goal, can: set[str]) -> list[Intention]:
    answers = [a for q, a in b.answers if goal.question in q]
    decision = None
    if answers:
        read = daytime_answer if goal.condition == "daytime" else yes_no_answer
        decision = read(answers[-1])
    if decision is None and len(answers) >= 2:
        return _halt(f"I could not tell from your answers ({'; '.join(answers)}) whether the answer was yes or "
                     "no, so I did nothing.")
    if decision is None:
        if "askuser" not in can:
            return _halt(cannot_ask(goal.question))
        question = goal.question if not answers else f"Sorry, I did not understand. {goal.question}"
        why = "This depends on something I cannot observe in the home, so I must ask the user."
        return [Intention("ask", {"question": question}, why)]
    changes = goal.if_yes if decision else goal.if_no
    if goal.condition == "daytime":
        reason = "It is daytime, so " if decision else "It is night, so "
    else:
        reason = f"You answered {answers[-1]!r}, so "
    if not changes:
        return _halt(reason + "I left everything as it was.")
    return _control(b, changes, can, reason)


def plan(b: Beliefs, can: set[str]) -> list[Intention]:
    """The next intentions for the request in ``b`` with the tools in ``can``.

    Several intentions come back only for independent device changes (the
    caller sends them as parallel tool calls when that is allowed).

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        can: the offered tools' names, normalised (``setdevice``, ``askuser``): a step uses only these.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Room, Dev
        >>> b = Beliefs("turn on the light in the kitchen", "latest", {"kitchen": Room("kitchen", "Kitchen")},
        ...             {"k": Dev("k", "Light", "light", "kitchen", state={"on": False})}, "kitchen", {}, [])
        >>> plan(b, {"setlight", "halt"})[0].args
        {'light_id': 'k', 'on': True}
        >>> b.devices["k"].state["on"] = True
        >>> plan(b, {"setlight", "halt"})[0].args
        {'message_to_user': 'The light in the Kitchen was already on.'}
    """
    confirm = confirmation_step(b, can)  # a home's safety policy is waiting on the user's yes (.confirming)
    if confirm is not None:
        action, args, why = confirm
        return _halt(args["message_to_user"], why) if action == "halt" else \
            [Intention(action, args, why, ha_intent(b, action, args))]
    fetch = live_context_step(b, can)  # overview knowledge: ask for the states first (.live_context)
    if fetch is not None:
        return [Intention(*fetch)]
    # A request that would endanger someone is refused first (.hazards); then the instruction shapes of
    # the smart-building paper (memory, comfort, list adds, several tasks,
    # contradictions, small talk), then the single commands, searches and questions of Lares.
    if request := after_greeting(b.instruction):  # "good night! switch every light off": the request is read
        b = replace(b, instruction=request)
    goal = recognise_memory(b) or recognise_hazard(b) or recognise_comfort(b) or recognise_list(b) \
        or recognise_compound(b) or recognise_unread(b) or understand(b)
    if goal.kind == "unknown" or goal.kind == "question" and NOT_UNDERSTOOD in goal.message:
        # A clear request for what the home has no device or tool for ("make me a coffee", "could you call
        # the police?") is refused with the reason (.infeasible); "could not understand" is no refusal.
        goal = recognise_infeasible(b, can) or goal
    if goal.kind in ("remember", "usual", "comfort", "contradiction"):
        return _step(b, goal, can)
    if goal.kind == "unread":  # words it could not read: nothing done, and the reply says so (.honest)
        if b.house_rules is not None and b.house_rules.night:
            # the rules forbid every change now, whatever the words meant: that is the answer, not the reading
            return _halt(cannot_under_rules("anything now", b.house_rules.forbids("", "", "", None)) + ".",
                         "The house rules forbid every change now, so I say so.")
        return _halt(goal.message, "Part of the instruction is words I cannot read, so I act on none of it.")
    if goal.kind == "chat":  # "what can you do?": the tools offered and the devices here say (.infeasible)
        return _halt(goal.message.replace(CAPABILITIES, what_i_can_do(b, can)),
                     "This is conversation; no device needs to change.")
    if goal.kind == "control":
        return _control(b, goal.changes, can, f"{goal.message} " if goal.message else "", goal.reply)
    if goal.kind == "find":
        return _find(b, goal, can)
    if goal.kind == "ask_then":
        return _ask_then(b, goal, can)
    if goal.kind == "clarify":
        asked = any(q == goal.question for q, _ in b.answers)
        if "askuser" in can and not asked:
            return [Intention("ask", {"question": goal.question}, "I need one more thing from the user, so I ask.")]
        if asked:
            return _halt(f"I asked, but I could not tell what you meant, so I did nothing. {goal.question}")
        return _halt(f"I need to know one more thing before I act, and I have no way to ask: {goal.question}")
    if goal.kind in ("question", "refuse"):
        return _halt(goal.message, "I can answer this from what I know, without changing anything."
                     if goal.kind == "question" else "The home cannot do this, so I must say so.")
    return _halt(STAND_IN.format(instruction=b.instruction), "I could not understand the instruction.")


# A step's kind -> (the intention's action, its argument names); see _step.
_STEP_ACTIONS = {"read": ("read", "readdevice"), "recall": ("recall", "recall"), "ask": ("ask", "askuser"),
                 "remember": ("remember", "rememberpreference")}


def _step(b: Beliefs, goal: Goal, can: set[str]) -> list[Intention]:
    """Intentions for the goals whose rules live in comfort, remembering and compound."""
    if goal.kind == "comfort":
        kind, payload, why = comfort_step(b, goal, can)
    elif goal.kind == "contradiction":
        kind, payload, why = contradiction_step(b, goal, can)
    else:
        kind, payload, why = memory_step(b, goal, can)
    if kind == "changes":
        return _control(b, payload, can, why)  # type: ignore[arg-type]
    if kind == "say":
        return _halt(str(payload), why)
    action, tool = _STEP_ACTIONS[kind]
    if tool not in can:
        return _halt(f"I would need the tool {tool} for this and do not have it, so I did nothing.")
    args = {"read": lambda: {"device_id": payload}, "recall": lambda: {"query": payload},
            "ask": lambda: {"question": payload},
            "remember": lambda: {"key": payload[0], "value": payload[1]}}[kind]()  # type: ignore[index]
    return [Intention(action, args, why)]
