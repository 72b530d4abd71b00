"""react's prompts, from its real writer, read back by its own stand-in rules and then by the agent's parser.

Prompt A asks the planner for a Thought; Prompt B asks the executor for the Action, as text or as JSON for a
``response_format``. Every reply the react rules write must parse with the agent's own output parser.
"""

from __future__ import annotations

import pytest
from stand_in_requests import runs

from lares_kit.agents.react import parse_actions
from lares_kit.models.offline.designs import react


@pytest.mark.parametrize("agent, action_format", [("react", "json_schema"), ("react", "text"),
                                                  ("react-parallel", "parallel")])
def test_every_react_request_is_answered_in_a_shape_the_agents_parser_reads(agent, action_format):
    answered = 0
    for _, requests in runs(agent, options={"action_format": action_format}):
        for request in requests:
            text, calls = react.reply(request)
            assert calls == [] and text
            parsed = parse_actions(text, "all")
            assert not parsed.error, (text, parsed.error)
            assert parsed.actions or parsed.final_answer is not None or parsed.thought, text
            answered += 1
    assert answered > 0


def test_a_request_that_offers_tools_is_not_reacts():
    system = {"role": "system", "content": "Answer with Thought: then Action: or Final Answer:"}
    tool = {"type": "function", "function": {"name": "halt", "parameters": {"type": "object", "properties": {}}}}
    request = {"messages": [system, {"role": "user", "content": "hello"}], "tools": [tool]}
    assert react.reply(request) is None
    assert react.reply({**request, "tool_choice": "none"}) is not None
