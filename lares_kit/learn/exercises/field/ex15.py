"""Exercise 15, refusing unsafe requests in the tool layer, not in the prompt.

Notebook: ``exercises/15_refusal.ipynb`` (for ``notebooks/15_safety_and_failure``).
The offline model does not read English rules, and a real model can be
talked out of them; a rule in the tool layer holds whatever the model
believes. The student writes a policy entry as data (q1), reads the
policy's verdicts for instructions from different sources (q2) and writes a
guard around ``set_device`` (q3). The checks run the offline agent with a
real :class:`~lares_kit.tools.toolbox.Toolbox` and a scripted user, and judge what
happened to the home -- never the wording of the answer alone.
"""

from __future__ import annotations

from typing import Any

from ....agents import run_agent
from ....home.worlds import load_world
from ....safety.gate import PolicyError, SafetyGate, parse_policy
from ....tools.schema import SchemaError
from ....tools.toolbox import Toolbox, ask_user, halt, read_device
from ....tools.users import ScriptedUser
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call
from ...matching import has_word, says_number

__all__ = ["INSTRUCTIONS", "PLACEHOLDER", "VERDICTS", "____", "bind", "q1", "q2", "q3"]

VERDICTS = ("allow", "confirm", "refuse")

# q2: label -> (source, time of day, request in words, the call it comes down to), in the shared house
INSTRUCTIONS: dict[str, tuple[str, str, str, tuple[str, dict[str, Any]]]] = {
    "a": ("owner", "04:00", "unlock the front door",
          ("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": False})),
    "b": ("guest", "04:00", "unlock the front door",
          ("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": False})),
    "c": ("letterbox", "04:00", "turn off the hall light", ("set_light", {"light_id": "hall-light", "on": False})),
    "d": ("owner", "04:00", "lock the front door",
          ("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": True})),
    "e": ("guest", "15:00", "turn off the hall light", ("set_light", {"light_id": "hall-light", "on": False})),
    "f": ("lodger", "15:00", "put the heating up to 29 °C",
          ("set_device", {"device_id": "hall-thermostat", "attribute": "target", "value": 29})),
}


# ------------------------------------------------------------------ q1
def _townhouse(policy: dict[str, Any], locked: bool = True) -> Any:
    home = load_world("townhouse")
    home.extra["policy"] = policy  # the student's policy in place of the world file's
    home.devices["back-door-lock"].state["locked"] = locked
    return home


def _test_policy(policy) -> str:
    if not isinstance(policy, dict):
        raise Incorrect(f"policy is the data of a world file's policy: key, a dict like {{'confirm': [...]}}; "
                        f"got {type(policy).__name__}.")
    try:
        parse_policy(policy)
    except PolicyError as exc:
        raise Incorrect(f"The world loader would refuse this policy: {exc}.") from None
    # The owner says no: nothing may change, and the question must have named the back door.
    home = _townhouse(policy)
    ep = run_agent("unlock the back door", home, agent="function-calling", user=ScriptedUser(answers=["No, leave it."]))
    if home.devices["back-door-lock"].state["locked"] is not True:
        raise Incorrect("Asked to unlock the back door, the agent did it although the owner would have said no: "
                        "no rule of yours matched the change back-door-lock, attribute locked, value false.")
    if not any(has_word(q, "back") for q in ep.asked):
        raise Incorrect("The back door stayed locked, but nobody was asked: your policy refuses instead of asking "
                        "(is the owner a trusted source?). The owner should be able to say yes.")
    # The owner says yes: the same request now goes through.
    home = _townhouse(policy)
    run_agent("unlock the back door", home, agent="function-calling", user=ScriptedUser(answers=["Yes, go ahead."]))
    if home.devices["back-door-lock"].state["locked"] is not False:
        raise Incorrect("The owner said yes when asked, but the back door stayed locked: a trusted owner's yes "
                        "should let the change through (check sources: owner must be trusted).")
    # Locking is never sensitive: no question, it just happens.
    home = _townhouse(policy, locked=False)
    ep = run_agent("lock the back door", home, agent="function-calling", user=ScriptedUser(answers=["No."]))
    if ep.asked or home.devices["back-door-lock"].state["locked"] is not True:
        raise Incorrect("Asked to *lock* the back door, the agent had to ask first (or could not): your rule also "
                        "matches locking. Match only the value false (is: False).")
    return ("Unlocking the back door now waits for the owner's yes -- refused on a no, done on a yes -- and "
            "locking it needs no question. The rule is data the Toolbox applies, whatever the model thinks.")


# ------------------------------------------------------------------ q2
def _gate_verdict(label: str) -> tuple[str, str]:
    source, when, _, (tool, args) = INSTRUCTIONS[label]
    verdict = SafetyGate.for_home(load_world("shared-house"), source, when).check(tool, args)
    return verdict.action, verdict.text


def _test_verdicts(verdicts) -> str:
    if not isinstance(verdicts, dict):
        raise Incorrect(f"verdicts is a dict from label to verdict, like {{'a': 'confirm', ...}}; "
                        f"got {type(verdicts).__name__}.")
    missing = [k for k in INSTRUCTIONS if k not in verdicts]
    if missing:
        raise Incorrect(f"Give a verdict for every instruction; missing: {', '.join(missing)}.")
    for label, (source, when, words, _) in INSTRUCTIONS.items():
        said = verdicts[label]
        if said not in VERDICTS:
            raise Incorrect(f"For ({label}), use one of 'allow', 'confirm', 'refuse'; got {said!r}.")
        want, why = _gate_verdict(label)
        if said != want:
            because = why.split(". Do not try again")[0] if why else "nothing in the policy matches this change"
            raise Incorrect(f"For ({label}) -- {source} at {when}: {words!r} -- the policy says {want!r}, you said "
                            f"{said!r}. The gate's reason: {because}.")
    return (f"All {len(INSTRUCTIONS)} verdicts match the gate: at night an untrusted voice changes nothing, an "
            "untrusted speaker can never confirm a sensitive change, and even the owner is asked first.")


# ------------------------------------------------------------------ q3
def _test_guard(set_device) -> str:
    if not callable(set_device):
        raise Incorrect(f"set_device should be a function (def set_device(home, device_id, attribute, value)); "
                        f"got {type(set_device).__name__}.")
    if getattr(set_device, "__name__", "") != "set_device":
        raise Incorrect(f"Name the guard set_device (yours is {set_device.__name__!r}): a model calls tools by "
                        "name, and set_device is the name it knows.")
    home = load_world("shared-house")
    try:
        Toolbox(home, tools=[set_device, read_device, ask_user, halt]).schemas()
    except SchemaError as exc:
        raise Incorrect(f"The Toolbox cannot describe your set_device to the model: {exc}.") from None
    # Direct calls first: the guard alone, on a home with no policy of its own.
    ok = call(set_device, _bare(), "oven", "temperature", 200, case="the oven at 200 °C")
    if not isinstance(ok, str):
        raise Incorrect(f"For the oven at 200 °C, return the sentence set_device returns; got {type(ok).__name__}.")
    for value in (250, "250"):
        home = _bare()
        text = _refusal(set_device, home, value)
        if home.devices["oven"].state["temperature"] != 0:
            raise Incorrect(f"Called with value={value!r}, your guard let the oven go to "
                            f"{home.devices['oven'].state['temperature']} °C; above 220 it must refuse.")
        if not says_number(text, 220) or len(text.split()) < 8:
            raise Incorrect(f"Your refusal for value={value!r} was {text!r}. Tell the model the limit (220 °C) and "
                            "what to do instead, in a sentence of at least eight words.")
    # Then the offline agent with a real Toolbox: refused above the limit, done below it, other devices untouched.
    tools = [set_device, read_device, ask_user, halt]
    runs = {"Set the oven to 250 degrees": ("oven", "temperature", 0),
            "Set the oven to 180 degrees": ("oven", "temperature", 180),
            "Set the heating to 21 degrees": ("hall-thermostat", "target", 21)}
    for request, (device, attribute, want) in runs.items():
        home = _bare()
        ep = run_agent(request, home, agent="function-calling", tools=tools)
        got = home.devices[device].state[attribute]
        if got != want:
            steps = "; ".join(f"{s.call_text} -> {s.result[:80]}" for s in ep.tool_calls)
            raise Incorrect(f"For {request!r}, the {device}'s {attribute} ended at {got}, expected {want}. "
                            f"The agent's calls: {steps}")
        if ep.status != "done":
            raise Incorrect(f"For {request!r}, the episode ended with status {ep.status!r}, not 'done': does your "
                            "refusal make the model try again and again?")
    return ("The guard refuses the oven above 220 °C with a sentence the model acts on, lets 180 °C and the heating "
            "through, and handles a value sent as text. It holds even for a model that was told otherwise.")


def _bare() -> Any:
    home = load_world("shared-house")
    del home.extra["policy"]  # only the guard stands between the model and the oven
    return home


def _refusal(guard: Any, home: Any, value: Any) -> str:
    # What the model would read: a ToolError's sentence, or the returned sentence of a guard that returns one.
    from ....tools.toolbox import ToolError

    try:
        text = guard(home, "oven", "temperature", value)
    except ToolError as exc:
        return str(exc)
    except Exception as exc:
        why = " (models sometimes send numbers as text)" if isinstance(value, str) else ""
        raise Incorrect(f"Called with value={value!r}{why}, your guard raised {type(exc).__name__}: {exc}. "
                        "Compare float(value), and refuse with raise ToolError(...).") from None
    if text is PLACEHOLDER:
        from ...checking import NotAttempted

        raise NotAttempted("Your set_device still returns ____. Replace ____ with your code.")
    return str(text)


q1 = Problem("A rule for the back door", ("policy",), _test_policy, hints=[
    "One rule under confirm: which device (devices: ['back-door-lock'], or type: lock), which attribute "
    "(locked) and which value needs a yes (is: False). A what: in words makes the question readable.",
    "Keys as in worlds/README.md, in Python: {'confirm': [{'what': ..., 'devices': [...], 'attribute': ..., "
    "'is': ...}]}. Without sources, the owner is trusted by default.",
])
q2 = Problem("Who may change what, at night", ("verdicts",), _test_verdicts, hints=[
    "Three questions in order: is the source trusted (shared house: only the owner)? Is it night (22:00-07:00)? "
    "Does a confirm rule match the change?",
    "Untrusted at night: refuse anything. Untrusted and a rule matches: refuse. Trusted and a rule matches: "
    "confirm. No rule: allow. Locking a door matches no rule.",
    "Check one with SafetyGate.for_home(load_world('shared-house'), 'guest', '04:00').check(tool, args).action.",
])
q3 = Problem("A guard around set_device", ("set_device",), _test_guard, hints=[
    "Keep the signature, hints and docstring of the starter; at the top, test device_id == 'oven' and "
    "attribute == 'temperature' and float(value) > 220.",
    "Refuse with raise ToolError('...'): the Toolbox turns it into an error observation the model reads. Say the "
    "limit and what to do: 'Do not try again; tell the user the oven goes up to 220 °C.'",
    "Otherwise return plain_set_device(home, device_id, attribute, value), the library's own tool.",
])
EXERCISE = Exercise("15_refusal", [q1, q2, q3])
bind = EXERCISE.bind
