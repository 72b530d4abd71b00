"""Intent-action on servers that ignore a forced tool_choice (Ollama's OpenAI API does): recorded, then a fallback."""

import json

import pytest
from fakes import FakeClient, call, decide, text

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.agents.forced_choice import CALL_NOW, IGNORED, json_call
from lares_kit.agents.prompts import decide_schema
from lares_kit.episode_steps import Error, Intent
from lares_kit.models import make_client
from lares_kit.run_context import RunContext

HALT = call("halt", message_to_user="Done.")
KITCHEN = call("set_light", light_id="kitchen-light", on=True)


@pytest.fixture
def home():
    return load_world("lares-home")


def run(home, script, **kw):
    client = FakeClient(script)
    if "server" in kw:  # what the model's server accepts is part of the run's context
        kw["context"] = RunContext(server=kw.pop("server"))
    ep = run_agent("turn on the light in the kitchen", home, agent="intent-action", model="fake", client=client, **kw)
    return ep, client


def test_text_to_a_forced_choice_is_recorded_then_the_function_is_offered_alone(home):
    ep, client = run(home, [text("I think the light should be on."), decide("set_light"), KITCHEN,
                            decide("halt"), HALT])
    first = ep.steps[0]
    assert isinstance(first, Error) and first.message.startswith(IGNORED) and "answered in text" in first.message
    assert first.reply == "I think the light should be on."
    assert IGNORED.lower() in ep.transcript().lower()
    assert client.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "decide_best_function"}}
    fallback = client.requests[1]
    assert fallback["tool_choice"] == "auto" and [t["function"]["name"] for t in fallback["tools"]] == \
        ["decide_best_function"]
    assert fallback["messages"][-1] == {"role": "system", "content": CALL_NOW.format(name="decide_best_function")}
    # learned for the rest of the run: no forced choice again, and no second note
    assert [r["tool_choice"] for r in client.requests[2:]] == ["auto"] * 3
    assert sum(isinstance(s, Error) for s in ep.steps) == 1
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"] and len(client.requests) == 5


@pytest.mark.parametrize("script,says", [
    ([KITCHEN, decide("set_light"), KITCHEN, decide("halt"), HALT], "asked to call decide_best_function, it called "
                                                                    "set_light"),
    ([decide("set_light"), text("ok"), KITCHEN, decide("halt"), HALT], "asked to call set_light, it answered in text"),
    ([decide("set_light"), call("look_with_robot"), KITCHEN, decide("halt"), HALT], "asked to call set_light, it "
                                                                                   "called look_with_robot"),
])
def test_a_reply_that_is_not_the_forced_call_means_the_choice_was_ignored(home, script, says):
    ep, _ = run(home, script)
    notes = [s.message for s in ep.steps if isinstance(s, Error)]
    assert len(notes) == 1 and notes[0].startswith(IGNORED) and says in notes[0]
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    assert [s.tool for s in ep.tool_calls] == ["set_light", "halt"]  # the wrong call was never run


def test_a_call_written_as_json_in_the_text_is_used(home):
    as_text = [text("hm"),
               text('Here it is: {"name": "decide_best_function", "arguments": {"reasoning": "It is off.", '
                    '"best_function": "set_light"}}'),
               text('```json\n{"light_id": "kitchen-light", "on": true}\n```'),
               text('{"reasoning": "Done.", "best_function": "halt"}'),
               text('{"function": "halt", "parameters": {"message_to_user": "The light is on."}}')]
    ep, _ = run(home, as_text)
    assert ep.status == "done" and ep.final_message == "The light is on."
    assert home.devices["kitchen-light"].state["on"]
    assert [s.kind for s in ep.steps] == ["error", "intent", "call", "intent", "final"]


def test_when_nothing_gives_a_call_the_episode_ends_model_error(home):
    ep, client = run(home, [text("hm")] * 20)
    assert ep.status == "model_error" and len(client.requests) == 2  # not 20 lost steps and a silent step_limit
    assert "ignored the forced tool_choice" in ep.final_message and ep.error == ep.final_message
    assert "ignored the forced tool_choice" in ep.transcript()
    assert ep.to_run_json()["status"] == "model_error"


def test_a_server_declared_to_ignore_it_gets_the_fallback_at_once(home):
    ep, client = run(home, [decide("set_light"), KITCHEN, decide("halt"), HALT], server="ollama")
    assert [r["tool_choice"] for r in client.requests] == ["auto"] * 4
    assert all(r["messages"][-1]["content"].startswith("Call ") for r in client.requests)
    notes = [s for s in ep.steps if isinstance(s, Error)]
    assert len(notes) == 1 and "ollama server ignores a forced tool_choice" in notes[0].message
    assert ep.status == "done"


class IgnoresForcedChoice:
    """The offline model behind a server that answers a forced tool_choice in plain text, as Ollama may."""

    def __init__(self):
        self.inner = make_client("offline")
        self.chat = self
        self.completions = self
        self.forced = 0

    def create(self, **request):
        if isinstance(request.get("tool_choice"), dict):
            self.forced += 1
            request["tool_choice"] = "none"  # the model answers in words
        return self.inner.chat.completions.create(**request)


def test_the_offline_model_behind_a_server_that_ignores_forced_choice(home):
    quirk = IgnoresForcedChoice()
    ep = run_agent("turn on the light in the kitchen", home, model="offline", client=quirk,
                   context=RunContext(server="auto"))
    assert quirk.forced == 1  # tried once, then learned
    assert ep.steps[0].message.startswith(IGNORED)
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    assert [type(s) for s in ep.steps[1:]][:1] == [Intent]


@pytest.mark.parametrize("reply,expected", [
    ('{"name": "decide_best_function", "arguments": "{\\"reasoning\\": \\"x\\", \\"best_function\\": \\"halt\\"}"}',
     {"reasoning": "x", "best_function": "halt"}),
    ('{"tool": {"name": "decide_best_function"}, "arguments": {"best_function": "halt", "reasoning": "y"}}',
     {"best_function": "halt", "reasoning": "y"}),
    ('{"name": "set_light", "arguments": {"light_id": "kitchen-light"}}', None),  # a call to another function
    ('{"reasoning": "x"}', None),  # a required parameter missing
    ('{"reasoning": "x", "best_function": "halt", "colour": "red"}', None),  # something it does not take
    ('{"reasoning": "x", "best_function": ', None),  # cut off
])
def test_json_call(reply, expected):
    raw = json_call(reply, decide_schema(["set_light", "halt"]))
    assert (json.loads(raw) if raw is not None else None) == expected


def test_once_the_fallback_has_worked_a_miss_loses_one_step_only(home):
    ep, client = run(home, [text("hm"), decide("look_with_robot"), call("look_with_robot"),
                            text("I am not sure."), decide("set_light"), KITCHEN, decide("halt"), HALT])
    misses = [s for s in ep.steps if isinstance(s, Error) and s.message.startswith("No call to")]
    assert len(misses) == 1 and misses[0].reply == "I am not sure." and misses[0].turn == 2
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]


@pytest.mark.parametrize("server", ["openai", "llamacpp", "offline"])
def test_on_a_server_known_to_honour_it_a_slip_loses_the_step_as_before(home, server):
    ep, client = run(home, [text("I think so."), KITCHEN, *[decide("set_light"), KITCHEN, decide("halt"), HALT]],
                     server=server)
    assert [s.message.split(".")[0] for s in ep.steps if isinstance(s, Error)] == \
        ["Your reply had no function call", "Only decide_best_function was offered, but the reply called 'set_light'"]
    assert all(isinstance(r["tool_choice"], dict) for r in client.requests)  # still forced: nothing was learned
    assert ep.status == "done" and not any(IGNORED in getattr(s, "message", "") for s in ep.steps)
    ep, client = run(load_world("lares-home"), [text("hm")] * 20, server=server)
    assert ep.status == "step_limit" and len(client.requests) == 20


def test_an_http_client_is_assumed_not_known_whatever_the_model_is_called():
    import openai

    from lares_kit.models.servers import server_profile

    remote = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:8000/v1")
    assert server_profile(model="offline", client=remote).name == "auto"
    assert server_profile(model="offline", client=make_client("chaos:offline@0.2")).name == "offline"
