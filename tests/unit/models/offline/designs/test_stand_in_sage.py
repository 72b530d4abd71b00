"""sage's prompts, from its real writer (the coordinator and its sub-agents), read back by SAGE's stand-in rules.

Each agent of SAGE's tree is told apart by the tools it is offered; every call the rules make is one of those.
"""

from __future__ import annotations

from stand_in_requests import runs

from lares_kit.models.offline.designs import DESIGN_RULES


def test_every_sage_request_is_answered_with_a_tool_it_offered_or_a_sentence():
    rules = DESIGN_RULES["sage"]
    offered_tools_used = set()
    for episode, requests in runs("sage", suites=("sage-home",), per_suite=12):
        for request in requests:
            text, calls = rules.reply(request)
            offered = {t["function"]["name"] for t in request["tools"]}
            assert [name for name, _ in calls if name not in offered] == [], (calls, offered)
            assert calls or text
            offered_tools_used |= {name for name, _ in calls}
        assert episode.status in ("done", "no_answer", "not_understood"), episode.transcript()
    # the coordinator and the device agent's own tools were reached
    assert {"device_agent", "find_device", "execute_command", "halt"} <= offered_tools_used
