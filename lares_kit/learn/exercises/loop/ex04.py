"""Exercise 04, the intent step: a forced decision, read carefully, then a forced action.

Notebook: ``exercises/04_intent_step.ipynb`` (after ``notebooks/04_intent_and_action.ipynb``).
The checks send the student's requests to the offline model and feed the
reader replies a real model could send: good, wrong function, bad JSON,
no call at all.
"""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

from ....agents.prompts import decide_schema, forced
from ....home.worlds import load_world
from ....tools.toolbox import Toolbox
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal
from ...matching import has_word
from .ex03 import first_messages

__all__ = ["q1", "q2", "q3", "first_messages", "bind", "____", "PLACEHOLDER"]

KITCHEN = "turn on the light in the kitchen"


def _reply(name: str | None, arguments: str) -> NS:
    calls = [] if name is None else [NS(id="call_1", type="function", function=NS(name=name, arguments=arguments))]
    return NS(role="assistant", content="I think..." if name is None else None, tool_calls=calls or None)


def _request_problem(request: object, case: str, tools: list, choice: object) -> None:
    if not isinstance(request, dict):
        raise Incorrect(f"For {case}, return the request as a dict of keyword arguments; got {type(request).__name__}.")
    for key, want in [("model", "offline"), ("tools", tools), ("tool_choice", choice)]:
        if request.get(key) != want:
            raise Incorrect(f"For {case}, the request's {key!r} should be {json.dumps(want)[:120]}; "
                            f"got {json.dumps(request.get(key), default=str)[:120]}.")


def _test_intent_request(intent_request) -> str:
    from ....models import make_client

    home = load_world("lares-home")
    names = Toolbox(home).names
    messages = first_messages(home, KITCHEN)
    request = call(intent_request, messages, names, case="the kitchen instruction")
    _request_problem(request, "the kitchen instruction", [decide_schema(names)], forced("decide_best_function"))
    if request.get("messages") != messages:
        raise Incorrect("The request should send the messages it was given, unchanged.")
    reply = make_client("offline").chat.completions.create(**request).choices[0].message
    args = json.loads(reply.tool_calls[0].function.arguments)
    return f"The offline model decided: {args['best_function']}, because {args['reasoning']!r}"


def _test_read(read_decision) -> str:
    names = ["set_light", "move_robot", "halt"]
    good = _reply("decide_best_function",
                  json.dumps({"reasoning": "The kitchen is dark.", "best_function": "set_light"}))
    expect_equal(call(read_decision, good, names, case="a good decision"), ("set_light", "The kitchen is dark."),
                 "a good decision")
    for case, reply, words in [
        ("best_function 'fly', which is not a tool", _reply("decide_best_function",
         json.dumps({"reasoning": "Wings.", "best_function": "fly"})), ["fly", "set_light", "move_robot", "halt"]),
        ("arguments that are not JSON", _reply("decide_best_function", '{"reasoning": "oops'), ["JSON"]),
        ("a call to set_light instead of deciding", _reply("set_light", "{}"), ["decide_best_function"]),
        ("a reply with text and no call", _reply(None, ""), ["decide_best_function"]),
    ]:
        try:
            got = read_decision(reply, names)
        except ValueError as exc:
            missing = [w for w in words if not has_word(str(exc), w)]
            if missing:
                raise Incorrect(f"For {case}, the ValueError should mention {', '.join(missing)} so the model can "
                                f"fix it; it says {str(exc)!r}.") from None
            continue
        except Exception as exc:
            raise Incorrect(f"For {case}, raise ValueError with a sentence; your function raised "
                            f"{type(exc).__name__}: {exc}.") from None
        raise Incorrect(f"For {case}, expected a ValueError; your function returned {got!r}.")
    return "Good decisions are read; bad ones are refused with a sentence that says what to send."


def _test_action_request(action_request) -> str:
    from ....models import make_client

    home = load_world("lares-home")
    box = Toolbox(home)
    messages = first_messages(home, KITCHEN)
    request = call(action_request, messages, box, "set_light", case="acting on set_light")
    _request_problem(request, "acting on set_light", [box.schema("set_light")], forced("set_light"))
    reply = make_client("offline").chat.completions.create(**request).choices[0].message
    first = reply.tool_calls[0].function
    return f"Only set_light was offered, and forced: the model sent set_light({first.arguments})."


q1 = Problem("Ask for a decision", ("intent_request",), _test_intent_request, hints=[
    "Offer one tool, the decision: decide_schema(tool_names) builds its schema with best_function as an enum.",
    "Force it: tool_choice=forced('decide_best_function'). Return dict(model='offline', messages=messages, "
    "tools=[...], tool_choice=...).",
])
q2 = Problem("Read the decision, refuse a bad one", ("read_decision",), _test_read, hints=[
    "reply.tool_calls may be None or empty: that is a reply with no decision (raise ValueError).",
    "The call's .function.name must be decide_best_function; json.loads(.function.arguments) may raise "
    "json.JSONDecodeError (a kind of ValueError) -- say 'not valid JSON'.",
    "Check best_function against tool_names and put the valid names in the error, e.g. "
    "f\"best_function must be one of {', '.join(tool_names)}; got {best!r}\".",
])
q3 = Problem("Then act", ("action_request",), _test_action_request, hints=[
    "Offer only the chosen function: tools=[toolbox.schema(function)].",
    "Force it with tool_choice=forced(function), so the model fills in its arguments and nothing else.",
])
EXERCISE = Exercise("04_intent_step", [q1, q2, q3])
bind = EXERCISE.bind
