"""Exercise 03, the function-calling loop: write it yourself, with a step limit and a stop rule.

Notebook: ``exercises/03_function_calling_loop.ipynb`` (after
``notebooks/03_function_calling_loop.ipynb``). The student's loop talks to
the offline model through the real ``openai`` client; the checks wrap that
client to count requests, and use a scripted client that never halts to
prove the step limit holds.
"""

from __future__ import annotations

import json
from types import SimpleNamespace as NS
from typing import Any

from ....agents.prompts import GOAL_PROMPT, ROLE_PROMPT
from ....episode import knowledge_header
from ....home.graph import Home
from ....home.worlds import load_world
from ....sentences.markers import DONE_HINT
from ....tools.toolbox import Toolbox
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal

__all__ = ["q1", "q2", "first_messages", "bind", "____", "PLACEHOLDER"]


def first_messages(home: Home, instruction: str) -> list[dict[str, Any]]:
    """The messages of the first request: role, world knowledge, goal, then the instruction.

    Args:
        home: The home whose knowledge (as the agent may know it, in ``initial`` mode) goes in the prompt.
        instruction: What the user asks, sent as the last (user) message.

    Examples:
        >>> [m["role"] for m in first_messages(load_world("lares-home"), "hi")]
        ['system', 'system', 'system', 'user']
    """
    knowledge = f"{knowledge_header('initial')}\n{home.render_knowledge('json')}"
    return [{"role": "system", "content": ROLE_PROMPT}, {"role": "system", "content": knowledge},
            {"role": "system", "content": GOAL_PROMPT}, {"role": "user", "content": instruction}]


def _call(name: str, arguments: dict[str, Any], call_id: str) -> NS:
    return NS(id=call_id, type="function", function=NS(name=name, arguments=json.dumps(arguments)))


def _test_tool_messages(tool_messages) -> str:
    box = Toolbox(load_world("lares-home"))
    two = NS(role="assistant", content=None, tool_calls=[
        _call("set_light", {"light_id": "kitchen-light", "on": True}, "call_a"),
        _call("move_robot", {"destination_room_id": "office"}, "call_b")])
    got = call(tool_messages, two, box, case="a reply with two calls")
    if isinstance(got, list) and len(got) != 2:
        raise Incorrect(f"For a reply with two calls, expected two tool messages (one per call, in order); your "
                        f"function returned {len(got)}. A model that gets no answer to a call is stuck.")
    want = [{"role": "tool", "tool_call_id": "call_a",
             "content": f"The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit. {DONE_HINT}"},
            {"role": "tool", "tool_call_id": "call_b", "content":
             "Error: The Office is not next to the Hallway; from the Hallway (hallway) the robot can go to: "
             "lounge, kitchen, bedroom."}]
    expect_equal(got, want, "a reply with two calls (set_light, then a move that fails)")
    return "One tool message per call, in order, errors included: the model gets an answer to every call."


class _Counting:
    # Wraps a client; counts chat.completions.create requests.
    def __init__(self, client: Any) -> None:
        self.requests = 0
        self.chat = NS(completions=NS(create=self._create))
        self._client = client

    def _create(self, **request: Any) -> Any:
        self.requests += 1
        return self._client.chat.completions.create(**request)


class _NeverHalts:
    # A scripted model that looks around for ever.
    def __init__(self) -> None:
        self.requests = 0
        self.chat = NS(completions=NS(create=self._create))

    def _create(self, **request: Any) -> Any:
        self.requests += 1
        message = NS(role="assistant", content=None, tool_calls=[_call("look_with_robot", {}, f"call_{self.requests}")])
        message.model_dump = lambda **kw: {"role": "assistant", "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls]}
        return NS(choices=[NS(message=message, finish_reason="tool_calls")], usage=None)


def _test_loop(run_loop) -> str:
    from ....models import make_client

    for instruction, steps, want_status, check in [
        ("turn on the light in the kitchen", 10, "done", lambda h: h.is_lit("kitchen")),
        ("turn on the light for my dog", 20, "done", lambda h: h.is_lit("bedroom")),
        ("turn on the light for my dog", 3, "step_limit", lambda h: not h.is_lit("bedroom")),
    ]:
        home, client = load_world("lares-home"), _Counting(make_client("offline"))
        case = f"{instruction!r} with max_steps={steps}"
        result = call(run_loop, client, home, instruction, max_steps=steps, case=case)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise Incorrect(f"For {case}, return a pair (status, messages); got {result!r}.")
        status, messages = result
        expect_equal(status, want_status, case)
        if not check(home):
            raise Incorrect(f"For {case}, the home did not end as expected (lit rooms: "
                            f"{[r for r in home.graph if home.is_lit(r)]}).")
        if client.requests > steps:
            raise Incorrect(f"For {case}, your loop asked the model {client.requests} times; the limit is {steps}.")
        if not isinstance(messages, list) or messages[:4] != first_messages(load_world("lares-home"), instruction):
            raise Incorrect(f"For {case}, messages should begin with first_messages(home, instruction).")
    stuck = _NeverHalts()
    result = call(run_loop, stuck, load_world("lares-home"), "look around", max_steps=4,
                  case="a model that never calls halt")
    if not (isinstance(result, tuple) and result[0] == "step_limit" and stuck.requests == 4):
        raise Incorrect(f"For a model that never calls halt and max_steps=4, expected status 'step_limit' after "
                        f"exactly 4 requests; got {result[0] if isinstance(result, tuple) else result!r} after "
                        f"{stuck.requests}.")
    return "It stops on halt, and at the step limit when the model never halts."


q1 = Problem("Answer every call", ("tool_messages",), _test_tool_messages, hints=[
    "message.tool_calls is a list; each call has .id, .function.name and .function.arguments (a JSON string).",
    "toolbox.dispatch(name, arguments) returns an Observation; its .content is what the model reads.",
    'Return [{"role": "tool", "tool_call_id": c.id, "content": toolbox.dispatch(c.function.name, '
    'c.function.arguments).content} for c in message.tool_calls].',
])
q2 = Problem("The loop", ("run_loop",), _test_loop, hints=[
    "Start with messages = first_messages(home, instruction) and toolbox = Toolbox(home); then "
    "for step in range(max_steps): ask, append, answer.",
    "Ask with client.chat.completions.create(model='offline', messages=messages, tools=toolbox.schemas(), "
    "tool_choice='auto'); the reply is response.choices[0].message.",
    "Append the reply as a dict (message.model_dump(exclude_none=True)), then the tool messages of question 1. "
    "If one of the calls was halt, return ('done', messages); after the loop, return ('step_limit', messages).",
])
EXERCISE = Exercise("03_function_calling_loop", [q1, q2])
bind = EXERCISE.bind
