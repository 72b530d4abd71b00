"""The offline model's rules for SAGE's tree of prompts: which agent is asking, and its next call.

Part of the offline model (:mod:`lares_kit.models.offline`, which calls
:func:`sage_reply` first). A request belongs to SAGE's tree when it offers
SAGE's tools, and each agent of the tree is told apart by its tools:

* ``device_agent`` offered -> the **coordinator** (:func:`coordinator_step`):
  persistent commands go to the condition agent; personal requests ("put the
  game on", "something for the kids", "my usual temperature") ask the
  preference agent, then the TV guide, then hand a concrete task to the
  device agent; a request that defeats itself ("lower the heating to make it
  warmer") is asked about first, and the answer becomes one plain task
  ("turn the thermostat up"); chained commands ("... and then ...") go one by one; a device
  agent that asks "which one?" makes it ask the user and try again, and so
  does one that says the home's safety policy needs the person's yes;
* ``find_device`` + ``execute_command`` -> the **device agent**
  (:mod:`~lares_kit.models.offline.designs.sage.devices`);
* ``create_condition`` -> the **condition agent**
  (:mod:`~lares_kit.models.offline.designs.sage.conditions`);
* ``user_profile`` -> the **preference agent** (:func:`preference_step`).

Everything is decided from the request -- the task, the tools, the results
so far -- never from the home. Any other request returns None and goes to
the rest of the offline model unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from .....persistent.phrases import is_persistent
from .....safety.confirmation import is_yes
from .....sentences.markers import answer_in, cannot_ask_in, relayed
from ...request_kinds.contradiction import clash_in, read_answer
from .conditions import condition_step
from .devices import CONFIRM_FIRST, device_phrase, device_step
from .reading import Talk, read_talk

__all__ = ["sage_reply", "coordinator_step", "preference_step", "profile_facts", "chain"]

Step = tuple[str, dict[str, Any]]
_ACTION = r"(?:turn|switch|set|put|dim|brighten|lock|unlock|start|make|change|play|mute)"


def _halt(message: str) -> Step:
    return "halt", {"message_to_user": message}


def _answer(result: str | None) -> str:
    # a sub-agent's answer without the trace of its calls that follows it
    return (result or "").split("\n(The ")[0]


def profile_facts(text: str) -> dict[str, str]:
    """The "- key: value" lines of a profile, as a mapping.

    Args:
        text: what ``user_profile`` said: a heading, then one "- key: value" line per fact.

    Examples:
        >>> profile_facts("Profile of Amal (amal):\\n- favourite team: Montreal Canadiens\\n- usual temperature: 21")
        {'favourite team': 'Montreal Canadiens', 'usual temperature': '21'}
    """
    return {k.strip(): v.strip() for k, v in re.findall(r"^- ([\w ]+): (.+)$", text, re.MULTILINE)}


def chain(task: str) -> list[str]:
    """A chained command split into its parts; "it" / "them" become the device of the part before.

    Args:
        task: a command that may chain actions with "and", "then", commas or semicolons.

    Examples:
        >>> chain("Turn on the light behind the TV and make it blue")
        ['Turn on the light behind the TV', 'make the light behind the TV blue']
        >>> chain("Turn on the bedside lamp, turn off the landing light and set the heating to 16")
        ['Turn on the bedside lamp', 'turn off the landing light', 'set the heating to 16']
    """
    parts = [p.strip(" ,.") for p in re.split(rf",?\s+(?:and\s+)?then\s+|,\s+and\s+|\s+and\s+(?={_ACTION}\b)|;\s*"
                                              rf"|,\s*(?={_ACTION}\b)",
                                              task.strip(), flags=re.IGNORECASE) if p.strip(" ,.")]
    out: list[str] = []
    for part in parts:
        kind = re.search(r"\b(light|lamp|strip|tv|television|speaker)s?\b", out[-1], re.IGNORECASE) if out else None
        if kind and re.search(r"\bthe (other )?one\b", part, re.IGNORECASE):  # "the one by the plant": same kind
            part = re.sub(r"\bone\b", kind.group(1), part, count=1, flags=re.IGNORECASE)
        elif out and re.search(r"\b(it|them|that one|this one)\b", part, re.IGNORECASE):
            before = device_phrase(out[-1])
            part = re.sub(r"\b(it|them|that one|this one)\b", before, part, count=1, flags=re.IGNORECASE)
        out.append(part)
    return out


def _need(task: str) -> str | None:
    # what a personal request needs from the profile
    text = task.lower()
    if re.search(r"\b(the game|my team|the match|team playing|my favou?rite team)\b", text):
        return "team"
    if re.search(r"\b(kids?|children)\b", text):
        return "kids"
    if re.search(r"\bsomething (?:i|we)(?:'d| would)? (?:like|enjoy)|\bmy kind of\b|\bsomething (?:good )?to watch\b",
                 text):
        return "genre"
    if re.search(r"\b(my|the) usual\b|\bas usual\b", text):
        return "temperature"
    if re.search(r"\bmy favou?rite colou?r\b", text):
        return "colour"
    return None


def _channel(guide: str, prefer: list[str], avoid: list[str]) -> tuple[str, str] | None:
    # (number, line) of the best channel in a tv_guide result: one naming a preferred show first. A guide that
    # found nothing lists every channel after saying so: none of them matches, so none is chosen.
    if guide.startswith("Nothing on now matches"):
        return None
    rows = re.findall(r"channel (\d+) \(([^)]*)\): ([^\[]*)\[([^\]]*)\]", guide)
    rows = [r for r in rows if not any(a and a.lower() in r[3].lower() for a in avoid)]
    rows.sort(key=lambda r: not any(p and p.lower() in r[2].lower() for p in prefer))
    return (rows[0][0], f"channel {rows[0][0]} ({rows[0][1]}): {rows[0][2].strip()}") if rows else None


def _is_question(task: str) -> bool:
    return task.rstrip().endswith("?") or bool(re.match(r"(is|are|what|which|when|does|do|who)\b", task, re.I))


def _personal(t: Talk, need: str) -> Step | str:
    """The next call for a personal request, or the concrete device task it comes down to."""
    asked = t.last("preference_agent")
    if asked is None:
        question = {"team": "Which team does the person support, and which sport?",
                    "kids": "Which shows do the person's kids like?",
                    "genre": "Which TV genres does the person like, and which do they avoid?",
                    "temperature": "What is the person's usual temperature?",
                    "colour": "What is the person's favourite light colour?"}[need]
        return "preference_agent", {"question": question}
    facts = profile_facts(asked.result or "")
    split = lambda key: [v.strip() for v in facts.get(key, "").split(",") if v.strip()]  # noqa: E731
    if need in ("temperature", "colour"):
        value = facts.get("usual temperature" if need == "temperature" else "favourite light colour")
        if not value:
            return _halt(f"I do not know your {'usual temperature' if need == 'temperature' else 'favourite colour'}"
                         " yet; tell me once and I will remember it.")
        if need == "temperature":
            return f"set the thermostat to {value}"
        return f"set {device_phrase(t.task)} to {value}"
    queries = {"team": split("favourite team")[:1], "kids": ["kids"], "genre": split("favourite genres")}[need]
    if not queries:
        return _halt("I do not know enough about what you like yet to choose.")
    found = None
    for query in queries:
        looked = [c for c in t.results("tv_guide") if c.args.get("query") == query]
        if not looked:
            return "tv_guide", {"query": query}
        found = found or _channel(looked[-1].result or "", split("kids shows"), split("genres to avoid"))
    if found is None:
        return _halt(f"Nothing matching {', '.join(queries)} is on TV right now.")
    if _is_question(t.task):
        return _halt(f"Yes: {found[1]}." if need == "team" else f"You might like {found[1]}.")
    tv = device_phrase(t.task) if re.search(r"\b(tv|television|telly)\b", t.task, re.I) else "the TV"
    return f"turn on {tv} and set it to channel {found[0]}"


def _devices(t: Talk, requests: list[str]) -> Step:
    """Hand each device task to the device agent in turn; ask the user when it asks which one."""
    answers = []
    for request in requests:
        calls = [c for c in t.results("device_agent") if c.args.get("request", "").startswith(request)]
        if not calls:
            return "device_agent", {"request": request}
        result = _answer(calls[-1].result)
        if result.startswith("Which one do you mean"):
            asked = [c for c in t.results("ask_user") if c.args.get("question") == result]
            if not asked and "ask_user" in t.tools and len(calls) == 1:
                return "ask_user", {"question": result}
            answer = answer_in(asked[-1].result) if asked else ""
            if answer and asked[-1].ok and len(calls) == 1:
                return "device_agent", {"request": f"{request} (the person means: {answer})"}
        if question := cannot_ask_in(result):  # it needs the person's answer: ask, then hand the task back
            asked = [c for c in t.results("ask_user") if c.args.get("question") == question]
            if not asked and "ask_user" in t.tools and len(calls) == 1:
                return "ask_user", {"question": question}
            if asked and asked[-1].ok and len(calls) == 1:
                return "device_agent", {"request": relayed(request, question, answer_in(asked[-1].result))}
        if result.startswith(CONFIRM_FIRST):  # the safety policy: only the coordinator asks the person
            question = result.removeprefix(CONFIRM_FIRST)
            asked = [c for c in t.results("ask_user") if c.args.get("question") == question]
            if not asked and "ask_user" in t.tools and len(calls) == 1:
                return "ask_user", {"question": question}
            answer = answer_in(asked[-1].result) if asked else ""
            if asked and asked[-1].ok and is_yes(answer, question) and len(calls) == 1:
                return "device_agent", {"request": f"{request} (the person confirmed: yes)"}
            result = (f"I did not do it: the home's safety policy needs a clear yes from you first ({question})"
                      if len(calls) == 1 else f"I did not do it: {result}")
        answers.append(result)
    return _halt(" ".join(answers))


# What a clear answer to a contradiction asks the device agent to do (a number: "set the thermostat to N").
_PLAIN = {"warmer": "turn the thermostat up", "cooler": "turn the thermostat down",
          "brighter": "turn the lights on", "darker": "turn the lights off"}


def _contradiction(t: Talk) -> Step | None:
    """"Lower the heating to make it warmer": ask which way first, then hand over one plain task (or nothing)."""
    clash = clash_in(t.task)
    if clash is None:
        return None
    why, wanted, question = clash
    asked = [c for c in t.results("ask_user") if c.args.get("question") == question]
    if not asked:
        if "ask_user" in t.tools:
            return "ask_user", {"question": question}
        return _halt(f"{why}, so I did nothing. Tell me which you want and I will do it.")
    answer = answer_in(asked[-1].result)
    kind, number = read_answer(answer, wanted)
    if kind == "number" and wanted in ("warmer", "cooler"):
        return _devices(t, [f"set the thermostat to {number:g}"])
    if kind in _PLAIN:
        return _devices(t, [_PLAIN[kind]])  # once: _devices halts when the device agent has answered
    if kind == "leave":
        return _halt("All right, I left everything as it was.")
    return _halt(f"I could not tell from your answer ({answer!r}) which way you want it, "
                 "so I left everything as it was.")


def coordinator_step(t: Talk) -> Step:
    """The coordinator's next call (see the module docstring).

    Args:
        t: what the request says: the task, who is talking, the offered tools and the calls so far (see
            :func:`.sage_reading.read_talk`).
    """
    task = t.task
    if is_persistent(task) and "condition_agent" in t.tools:
        done = t.last("condition_agent")
        return _halt(_answer(done.result)) if done else ("condition_agent", {"request": task})
    if re.search(r"\b(weather|umbrella|forecast|raining|rain)\b", task, re.I) and "weather" in t.tools:
        day = "tomorrow" if "tomorrow" in task.lower() else "today"
        done = t.last("weather")
        if done is None:
            return "weather", {"day": day}
        advice = " Take an umbrella." if re.search(r"\b(rain|showers?)\b", done.result or "") else ""
        return _halt((done.result or "") + advice)
    need = _need(task)
    if need is not None:
        step = _personal(t, need)
        if not isinstance(step, str):
            return step
        return _devices(t, [step])
    if _is_question(task) and re.search(r"\bon (tv|now|tonight)\b|\bwhat'?s on\b|\bchannel\b", task, re.I):
        done = t.last("tv_guide")
        query = re.sub(r"\b(what'?s|is|there|a|any|on|tv|now|tonight|channel|show)\b|\?", " ", task, flags=re.I)
        return _halt(done.result or "") if done else ("tv_guide", {"query": " ".join(query.split())})
    return _contradiction(t) or _devices(t, chain(task))


def preference_step(t: Talk) -> Step:
    """The preference agent: read the profile (and past requests when asked about them), then answer.

    Args:
        t: what the request says: the task, who is talking, the offered tools and the calls so far (see
            :func:`.sage_reading.read_talk`).
    """
    profile = t.last("user_profile")
    if profile is None:
        return "user_profile", {"person": t.person} if t.person else {}  # the speaker, when the goal names them
    if re.search(r"\b(last time|before|asked|earlier|past)\b", t.task, re.I) and "recall" in t.tools \
            and t.last("recall") is None:
        words = re.sub(r"\b(what|did|the|person|ask|asked|last|time|before|earlier|about)\b|\?", " ", t.task,
                       flags=re.I)
        return "recall", {"query": " ".join(words.split()) or t.task}
    said = t.last("recall")
    return _halt((profile.result or "") + (f"\n{said.result}" if said else ""))


_AGENTS = [({"device_agent"}, coordinator_step), ({"find_device", "execute_command"}, device_step),
           ({"create_condition", "notify_on_condition"}, condition_step), ({"user_profile"}, preference_step)]


def sage_reply(request: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]] | None:
    """(text, calls) for a request from SAGE's tree, or None for any other request.

    Args:
        request: a Chat Completions request body, already checked by :func:`.wire.validate`.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": n}} for n in ("find_device", "execute_command", "halt")]
        >>> sage_reply({"messages": [{"role": "user", "content": "turn on the TV by the plant"}], "tools": tools})
        (None, [('find_device', {'description': 'the TV by the plant'})])
        >>> sage_reply({"messages": [{"role": "user", "content": "hi"}], "tools": tools[2:]}) is None
        True
    """
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict) and t.get("function")]
    names = {t["function"].get("name") for t in tools}
    choice = request.get("tool_choice")
    step_of = next((step for needs, step in _AGENTS if needs <= names), None)
    if step_of is None or choice == "none" or isinstance(choice, dict):
        return None  # not SAGE's tree, or a forced call: the general rules answer
    talk = read_talk(request.get("messages") or [], tools)
    name, args = step_of(talk)
    same = [c for c in talk.calls if c.name == name and c.args == args]
    if len(same) >= 3:  # a rule going round in circles: stop and say so
        name, args = _halt(f"I keep getting the same answer from {name} and cannot finish: "
                           f"{(same[-1].result or '')[:200]}")
    if name not in names:
        return (args.get("message_to_user") or f"I would call {name} next, but it is not offered."), []
    return None, [(name, args)]
