"""The ReAct output parser on its own: Thoughts, Final Answers, Actions under each policy."""

import pytest

from lares_kit.agents.react_parser import ignored_note, parse_actions, parse_thought

TWO = ('Thought: two lights.\nAction: {"tool": "set_light", "arguments": {"light_id": "a", "on": true}}\n'
       'Action: {"tool": "set_light", "arguments": {"light_id": "b", "on": true}}')


def test_a_thought_and_a_final_answer():
    assert parse_thought("Thought: done.\nFinal Answer: All set.").final_answer == "All set."
    assert parse_thought("Thought: next I read the sensor.").final_answer is None
    assert parse_thought("no labels at all").thought == "no labels at all"


@pytest.mark.parametrize("policy, ran, ignored, error", [("naive", 0, 0, True), ("one", 1, 1, False),
                                                         ("all", 2, 0, False)])
def test_several_actions_under_each_policy(policy, ran, ignored, error):
    parsed = parse_actions(TWO, policy)
    assert (len(parsed.actions), parsed.ignored, bool(parsed.error)) == (ran, ignored, error)


@pytest.mark.parametrize("text", [
    '{"tool": "read_device", "arguments": {"device_id": "x"}}',
    '```json\n{"tool": "read_device", "arguments": {"device_id": "x"}}\n```',
    'Action: {"name": "read_device", "args": {"device_id": "x"}}',
    'Action: {"action": "read_device", "action_input": "{\\"device_id\\": \\"x\\"}"}',
])
def test_action_spellings(text):
    (action,) = parse_actions(text).actions
    assert (action.tool, action.arguments) == ("read_device", {"device_id": "x"})


def test_unusable_replies_say_why():
    assert "no Action" in parse_actions("I think I should open the window.").error
    assert parse_actions("Thought: ok\nFinal Answer: Done.").final_answer == "Done."
    with pytest.raises(ValueError):
        parse_actions(TWO, "lenient")


def test_the_note_counts():
    assert "the other 1 was ignored" in ignored_note(2)
