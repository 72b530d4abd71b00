"""Server capability profiles, and the bounded request every agent sends (issue 19)."""

import httpx2
import openai
import pytest
from fakes import FakeClient, call, decide

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.agents.agent_run import MAX_TOKENS
from lares_kit.agents.prompts import REASONING_MAX_CHARS
from lares_kit.errors import LaresError
from lares_kit.models.servers import PROFILES, ServerProfile, refused_format, server_profile
from lares_kit.run_context import RunContext

HALT = call("halt", message_to_user="Done.")
KITCHEN = call("set_light", light_id="kitchen-light", on=True)


def test_profiles_as_agreed():
    llama, ollama = PROFILES["llamacpp"], PROFILES["ollama"]
    assert "json_schema" not in llama.response_formats and not llama.null_content and llama.forced_tool_choice
    assert not ollama.forced_tool_choice and ollama.null_content
    for name in ("offline", "openai", "vllm", "lmstudio"):
        p = PROFILES[name]
        assert p.forced_tool_choice and p.null_content and p.response_formats == ("json_schema", "json_object", "text")


def test_server_profile_reads_the_environment(monkeypatch):
    monkeypatch.setenv("LARES_SERVER", "llamacpp")
    assert server_profile(model="qwen").name == "llamacpp"
    assert server_profile("ollama", model="qwen").name == "ollama"  # a declared name wins over the environment
    monkeypatch.setenv("LARES_SERVER", "tgi")
    with pytest.raises(LaresError, match="unknown server 'tgi'; servers: auto, offline, openai, llamacpp"):
        server_profile(model="qwen")
    monkeypatch.delenv("LARES_SERVER")
    assert [server_profile(model=m).name for m in ("offline", "local", "chaos:offline@0.5", "gpt-4o")] == \
        ["offline", "offline", "offline", "auto"]


@pytest.mark.parametrize("wanted,accepted,expected", [
    ("json_schema", ("json_schema", "json_object", "text"), "json_schema"),
    ("json_schema", ("json_object", "text"), "json_object"),
    ("json_schema", ("text",), "text"),
    ("json_object", ("json_schema", "text"), "text"),
])
def test_response_format_falls_to_the_next_kind(wanted, accepted, expected):
    assert ServerProfile("x", response_formats=accepted).response_format(wanted) == expected


def _status_error(status, message):
    request = httpx2.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
    response = httpx2.Response(status, request=request, json={"error": {"message": message}})
    return openai.APIStatusError(message, response=response, body={"message": message})


def test_refused_format_reads_the_error_and_its_cause():
    refusal = _status_error(400, "response_format: json_schema is not supported")
    assert refused_format(refusal)
    try:
        try:
            raise _status_error(500, "1 validation error: response_format.type: Input should be 'text' or "
                                     "'json_object'")
        except openai.APIStatusError as exc:
            raise RuntimeError("the model call failed") from exc
    except RuntimeError as wrapped:
        assert refused_format(wrapped)  # llama-cpp-python answers a validation error with 500
    assert not refused_format(_status_error(400, "context length exceeded"))
    assert not refused_format(RuntimeError("response_format"))  # not an HTTP answer


# ------------------------------------------------------------ the request
def _run(script, agent="function-calling", **kw):
    client = FakeClient(script)
    if "server" in kw:  # what the model's server accepts is part of the run's context
        kw["context"] = RunContext(server=kw.pop("server"))
    ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent=agent, model="fake",
                   client=client, **kw)
    return ep, client


def test_every_request_is_bounded_and_says_its_temperature():
    ep, client = _run([decide("set_light"), KITCHEN, decide("halt"), HALT], "intent-action")
    assert ep.status == "done"
    assert [r["max_tokens"] for r in client.requests] == [MAX_TOKENS["intent"], MAX_TOKENS["action"]] * 2
    assert all(r["temperature"] == 0 for r in client.requests)
    reasoning = client.requests[0]["tools"][0]["function"]["parameters"]["properties"]["reasoning"]
    assert reasoning["maxLength"] == REASONING_MAX_CHARS


def test_temperature_is_an_option_passed_through_unchanged():
    _, client = _run([KITCHEN, HALT], options={"temperature": 0.7})
    assert [r["temperature"] for r in client.requests] == [0.7, 0.7]
    assert {r["max_tokens"] for r in client.requests} == {MAX_TOKENS["turn"]}


@pytest.mark.parametrize("server,content", [("llamacpp", ""), ("auto", ""), ("openai", None), ("offline", None)])
def test_tool_call_messages_carry_empty_content_where_null_is_refused(server, content):
    ep, client = _run([KITCHEN, HALT], server=server)
    assistant = [m for m in client.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant[0]["tool_calls"] and assistant[0]["content"] == content
    assert "content" in assistant[0]  # left out, llama.cpp's function-calling template breaks
    assert ep.steps[0].text == ""  # the record keeps what the model said; only the request changes


@pytest.mark.parametrize("limit", [REASONING_MAX_CHARS, 30])
def test_the_offline_reasoning_fits_the_schema(limit):
    import json

    from lares_kit.agents.prompts import decide_schema, forced
    from lares_kit.models import make_client

    home = load_world("lares-home")
    ep = run_agent("turn on the light in the kitchen", home, max_steps=1, prompt_style="lares")
    schema = decide_schema(["set_light", "halt"])
    schema["function"]["parameters"]["properties"]["reasoning"]["maxLength"] = limit
    messages = ep.messages(load_world("lares-home"))[:4]  # the prompt of the first intent, the light still off
    reply = make_client("offline").chat.completions.create(
        model="offline", messages=messages, tools=[schema], tool_choice=forced("decide_best_function"))
    args = json.loads(reply.choices[0].message.tool_calls[0].function.arguments)
    assert 0 < len(args["reasoning"]) <= limit and args["best_function"] == "set_light"
