"""The offline model on the Chat Completions wire, through the real openai SDK in process."""

from __future__ import annotations

import asyncio
import json

import jsonschema
import openai
import pytest

from lares_kit import ScriptedUser, Toolbox, load_world
from lares_kit.knowledge.tokens import count_request
from lares_kit.models import make_async_client, make_client
from lares_kit.models.serving.wire import handle


@pytest.fixture(scope="module")
def client():
    return make_client("offline", max_retries=0)


@pytest.fixture(scope="module")
def box():
    return Toolbox(load_world("lares-home"))


def messages(instruction="turn on the light in the kitchen", home=None):
    home = home or load_world("lares-home")
    return [{"role": "system", "content": "You control a smart home."},
            {"role": "system", "content": "WORLD KNOWLEDGE (latest)\n" + home.render_knowledge("compact")},
            {"role": "user", "content": instruction}]


INSTRUCTIONS = ["turn on the light in the kitchen", "turn on the light for my dog", "which lights are on?",
                "set the office light depending on whether it's daytime", "make me a sandwich"]


@pytest.mark.parametrize("instruction", INSTRUCTIONS)
@pytest.mark.parametrize("name", ["toggle_light", "set_light", "move_robot", "look_with_robot", "ask_user", "halt"])
def test_forced_tool_choice_is_always_honoured(client, box, name, instruction):
    r = client.chat.completions.create(model="offline", messages=messages(instruction), tools=box.schemas(),
                                       tool_choice={"type": "function", "function": {"name": name}})
    calls = r.choices[0].message.tool_calls
    assert r.choices[0].finish_reason == "tool_calls"
    assert len(calls) == 1 and calls[0].function.name == name and calls[0].id.startswith("call_")
    # the arguments are a JSON object valid for the tool's schema
    args = json.loads(calls[0].function.arguments)
    jsonschema.validate(args, box.schema(name)["function"]["parameters"])
    fresh = Toolbox(load_world("lares-home"), user=ScriptedUser(fallback="yes"))
    assert fresh.dispatch(name, calls[0].function.arguments).text  # dispatchable


def test_forced_unknown_shaped_tool_gets_schema_valid_arguments(client):
    tool = {"type": "function", "function": {"name": "water_plants", "description": "Water.", "parameters": {
        "type": "object", "properties": {"litres": {"type": "number"}, "zone": {"type": "string", "enum": ["a", "b"]}},
        "required": ["litres", "zone"]}}}
    r = client.chat.completions.create(model="offline", messages=messages(), tools=[tool],
                                       tool_choice={"type": "function", "function": {"name": "water_plants"}})
    call = r.choices[0].message.tool_calls[0]
    assert call.function.name == "water_plants"
    jsonschema.validate(json.loads(call.function.arguments), tool["function"]["parameters"])


def test_intent_step_names_a_function_with_reasoning(client, box):
    decide = {"type": "function", "function": {"name": "decide_best_function", "parameters": {"type": "object",
              "properties": {"reasoning": {"type": "string"}, "best_function": {"type": "string", "enum": box.names}}}}}
    r = client.chat.completions.create(model="offline", messages=messages(), tools=[decide],
                                       tool_choice={"type": "function", "function": {"name": "decide_best_function"}})
    args = json.loads(r.choices[0].message.tool_calls[0].function.arguments)
    assert args["best_function"] == "set_light" and "Kitchen" in args["reasoning"]


def test_tool_choice_none_and_required(client, box):
    r = client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(), tool_choice="none")
    assert r.choices[0].message.tool_calls is None and r.choices[0].message.content
    r = client.chat.completions.create(model="offline", messages=messages("which lights are on?"),
                                       tools=box.schemas(["set_light", "look_with_robot"]), tool_choice="required")
    assert r.choices[0].message.tool_calls  # must call something even though it would rather answer


def test_without_halt_the_answer_is_text(client, box):
    r = client.chat.completions.create(model="offline", messages=messages("which lights are on?"),
                                       tools=box.schemas(["set_light"]))
    assert r.choices[0].finish_reason == "stop" and "Hallway" in r.choices[0].message.content


def test_parallel_tool_calls_flag(client, box):
    home = load_world("garden-flat")
    tools = Toolbox(home).schemas()
    many = client.chat.completions.create(model="offline", messages=messages("turn off all the lights", home),
                                          tools=tools)  # omitted means true, as on OpenAI
    one = client.chat.completions.create(model="offline", messages=messages("turn off all the lights", home),
                                         tools=tools, parallel_tool_calls=False)
    assert len(many.choices[0].message.tool_calls) == 2 and len(one.choices[0].message.tool_calls) == 1
    assert len({c.id for c in many.choices[0].message.tool_calls}) == 2


def test_deterministic(client, box):
    a = client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(),
                                       prompt_cache_key="first")
    b = client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(),
                                       prompt_cache_key="second")  # another conversation: its cache starts cold
    assert a.id == b.id and a.choices[0].message == b.choices[0].message and a.usage == b.usage
    again = client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(),
                                           prompt_cache_key="first")
    assert again.usage.prompt_tokens_details.cached_tokens == again.usage.prompt_tokens == a.usage.prompt_tokens
    assert a.usage.prompt_tokens_details.cached_tokens == 0
    plain = [client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas()) for _ in "ab"]
    assert plain[0].usage == plain[1].usage and plain[1].usage.prompt_tokens_details.cached_tokens == 0  # no key


def test_usage_counts_the_request(client, box):
    msgs = messages()
    r = client.chat.completions.create(model="offline", messages=msgs, tools=box.schemas())
    assert r.usage.prompt_tokens == count_request(msgs, box.schemas())
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    bare = client.chat.completions.create(model="offline", messages=msgs)
    assert bare.usage.prompt_tokens < r.usage.prompt_tokens


def test_json_schema_response_format(client):
    schema = {"type": "object", "additionalProperties": False, "required": ["reasoning", "tool", "arguments"],
              "properties": {"reasoning": {"type": "string"},
                             "tool": {"type": "string", "enum": ["set_light", "move_robot", "halt"]},
                             "arguments": {"type": "object", "properties": {"light_id": {"type": "string"},
                                                                             "on": {"type": "boolean"}}}}}
    r = client.chat.completions.create(model="offline", messages=messages(), response_format={
        "type": "json_schema", "json_schema": {"name": "step", "schema": schema, "strict": True}})
    value = json.loads(r.choices[0].message.content)
    jsonschema.validate(value, schema)
    assert value["tool"] == "set_light" and value["arguments"] == {"light_id": "kitchen-light", "on": True}


def test_json_object_response_format(client):
    msgs = messages() + [{"role": "system", "content": "Reply in JSON."}]
    r = client.chat.completions.create(model="offline", messages=msgs, response_format={"type": "json_object"})
    assert json.loads(r.choices[0].message.content)["tool"] == "set_light"


def test_stop_and_max_tokens(client):
    msgs = messages("wibble wobble flibbet")  # not understood: the long stand-in reply, which says "teaching"
    full = client.chat.completions.create(model="offline", messages=msgs).choices[0].message.content
    cut = client.chat.completions.create(model="offline", messages=msgs, stop=["teaching"]).choices[0]
    assert cut.message.content == full[:full.index("teaching")] and cut.finish_reason == "stop"
    short = client.chat.completions.create(model="offline", messages=msgs, max_tokens=5).choices[0]
    assert short.finish_reason == "length" and len(short.message.content) < len(full)


def test_n_choices(client):
    r = client.chat.completions.create(model="offline", messages=messages("which lights are on?"), n=2)
    assert [c.index for c in r.choices] == [0, 1]


def test_streaming(client, box):
    stream = client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(), stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    calls = [tc for c in chunks for ch in c.choices for tc in (ch.delta.tool_calls or [])]
    assert calls[0].function.name == "set_light"
    assert chunks[-1].usage.prompt_tokens > 0


def test_react_text_mode(client):
    system = ("Use the tools set_light(light_id, on), move_robot(destination_room_id), look_with_robot(), halt.\n"
              "Answer with Thought: then either Action: {\"tool\": ..., \"arguments\": {...}} or Final Answer: ...")
    home = load_world("lares-home")
    msgs = [{"role": "system", "content": system},
            {"role": "system", "content": "WORLD KNOWLEDGE (latest)\n" + home.render_knowledge()},
            {"role": "user", "content": "turn on the light in the kitchen"}]
    first = client.chat.completions.create(model="offline", messages=msgs, stop=["Observation:"])
    text = first.choices[0].message.content
    assert text.startswith("Thought: ") and "\nAction: " in text
    action = json.loads(text.split("Action: ", 1)[1])
    assert action == {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": True}}
    obs = Toolbox(home).dispatch(action["tool"], action["arguments"]).content
    msgs += [{"role": "assistant", "content": text}, {"role": "user", "content": f"Observation: {obs}"}]
    second = client.chat.completions.create(model="offline", messages=msgs).choices[0].message.content
    assert "Final Answer: The light in the Kitchen is now on." in second


@pytest.mark.parametrize("body,param", [
    ({"model": "offline"}, "messages"),
    ({"model": "offline", "messages": []}, "messages"),
    ({"messages": [{"role": "user", "content": "x"}]}, "model"),
    ({"model": "offline", "messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
    ({"model": "offline", "messages": [{"role": "user", "content": "x"}], "tool_choice": "auto"}, "tool_choice"),
    ({"model": "offline", "messages": [{"role": "user", "content": "x"}], "tools": [
        {"type": "function", "function": {"name": "halt"}}],
      "tool_choice": {"type": "function", "function": {"name": "fly"}}}, "tool_choice"),
    ({"model": "offline", "messages": [{"role": "user", "content": "x"},
                                       {"role": "tool", "tool_call_id": "call_1", "content": "y"}]},
     "messages.[1].role"),
    ({"model": "offline", "messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_object"}}, "messages"),
])
def test_malformed_requests_get_400_with_an_openai_error_body(client, body, param):
    status, _, raw = handle("POST", "/v1/chat/completions", json.dumps(body).encode())
    error = json.loads(raw)["error"]
    assert status == 400 and set(error) == {"message", "type", "param", "code"}
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_sdk_raises_bad_request_for_unknown_forced_tool(client, box):
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="offline", messages=messages(), tools=box.schemas(["halt"]),
                                       tool_choice={"type": "function", "function": {"name": "fly"}})
    assert info.value.status_code == 400 and "fly" in info.value.message


def test_unanswered_tool_call_is_rejected(client, box):
    msgs = messages() + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "halt", "arguments": "{}"}}]},
        {"role": "user", "content": "and?"}]
    with pytest.raises(openai.BadRequestError, match="call_a"):
        client.chat.completions.create(model="offline", messages=msgs, tools=box.schemas())


def test_async_client(box):
    async def go():
        client = make_async_client("offline", max_retries=0)
        replies = await asyncio.gather(*(client.chat.completions.create(
            model="offline", messages=messages(), tools=box.schemas()) for _ in range(3)))
        return [r.choices[0].message.tool_calls[0].function.name for r in replies]

    assert asyncio.run(go()) == ["set_light"] * 3


def test_call_ids_name_the_conversation_not_its_sampling_settings(client, box):
    def ids(instruction, **sampling):
        reply = client.chat.completions.create(model="offline", messages=messages(instruction), tools=box.schemas(),
                                               tool_choice="required", **sampling)
        return [call.id for call in reply.choices[0].message.tool_calls]

    plain = ids("turn on the light in the kitchen")
    assert plain == ids("turn on the light in the kitchen", temperature=0, max_tokens=200, seed=7)
    assert plain != ids("turn on the light in the hallway")
