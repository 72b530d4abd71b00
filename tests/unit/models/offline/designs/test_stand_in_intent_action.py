"""intent-action's prompts, from its real writer, read back by its own stand-in rules.

The intent step offers ``decide_best_function`` (the agent's ``decide_schema``); the stand-in names a function
from its enum and ends the reasoning with the call it means. The action step is written by the agent from that
decision; the stand-in reads the stated call back and makes exactly that call.
"""

from __future__ import annotations

import json

import pytest
from stand_in_requests import runs

from lares_kit.models.offline.designs import intent_action


@pytest.mark.parametrize("style", ["lean", "lares"])
def test_every_decision_is_read_back_as_the_call_it_states(style):
    decisions = actions = 0
    for episode, requests in runs("intent-action", prompt_style=style):
        for request in requests:
            forced = request["tool_choice"]["function"]["name"]
            text, calls = intent_action.reply(request) or (None, [])
            tool = next(t for t in request["tools"] if t["function"]["name"] == forced)
            fields = intent_action.intent_fields(tool)
            if fields is not None:  # the intent step: a function from the enum, and the call it means
                choice, reason = fields
                decisions += 1
                (name, args), = calls
                enum = tool["function"]["parameters"]["properties"][choice]["enum"]
                assert name == forced and args[choice] in enum
                limit = tool["function"]["parameters"]["properties"][reason].get("maxLength")
                assert limit is None or len(args[reason]) <= limit
            elif calls:  # the action step: the call the decision in the history states, made as stated
                actions += 1
                stated = intent_action.stated_call(request["messages"])
                assert stated is not None and calls[0][0] == forced == stated[0]
                assert set(calls[0][1]) <= set(stated[1])  # the stated arguments, fitted to the offered schema
                assert all(calls[0][1][k] == json.loads(json.dumps(stated[1][k])) for k in calls[0][1])
        for intent in (s for s in episode.steps if s.kind == "intent"):  # what the agent sends back of a decision
            stated = intent_action.stated_call([{"role": "assistant", "content": intent.summary}])
            assert stated is None or stated[0] == intent.function  # states the function it decided on, if any
    assert decisions > 0 and actions > 0, (decisions, actions)


def test_a_decision_without_a_stated_call_is_left_to_the_shared_rules():
    tool = {"type": "function", "function": {"name": "set_light", "parameters": {"type": "object", "properties": {
        "light_id": {"type": "string"}, "on": {"type": "boolean"}}}}}
    request = {"messages": [{"role": "user", "content": "turn on the light"},
                            {"role": "assistant", "content": "I have decided to call set_light."}],
               "tools": [tool], "tool_choice": {"type": "function", "function": {"name": "set_light"}}}
    assert intent_action.reply(request) is None
