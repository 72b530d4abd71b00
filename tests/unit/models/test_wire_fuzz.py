"""Fuzzing the Chat Completions wire: mangled requests get a 4xx in OpenAI's shape, never the model's 500.

hypothesis takes requests the toolkit really sends (tools, forced choices,
JSON schemas, tool-call histories, streaming) and breaks them: a value
anywhere replaced by random JSON, a key dropped, a key added. Whatever it
makes, :func:`lares_kit.models.serving.wire.handle` answers 200 with a completion or
4xx with ``{"error": {"message", "type", "param", "code"}}`` -- a malformed
request is the caller's error, never a crash in the rules. Also here: the
binary-search token limit keeps exactly the words the word-by-word rule kept.
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lares_kit import Toolbox, load_world
from lares_kit.knowledge.tokens import count_tokens
from lares_kit.models.serving.wire import handle, words_within

HOME = load_world("lares-home")
TOOLS = Toolbox(HOME).schemas()
KNOWLEDGE = {"role": "system", "content": "WORLD KNOWLEDGE (latest)\n" + HOME.render_knowledge("compact")}
SCHEMA = {"type": "object", "required": ["reasoning", "tool"], "properties": {
    "reasoning": {"type": "string"}, "tool": {"type": "string", "enum": ["set_light", "halt"]},
    "arguments": {"type": "object", "properties": {"light_id": {"type": "string"}, "on": {"type": "boolean"}}}}}
HISTORY = [{"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
    "name": "set_light", "arguments": '{"light_id": "kitchen-light", "on": true}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "The light in the Kitchen is now on."}]


def _request(instruction: str, **extra) -> dict:
    return {"model": "offline", "messages": [{"role": "system", "content": "You control a smart home."}, KNOWLEDGE,
                                             {"role": "user", "content": instruction}], **extra}


BASES = [
    _request("turn on the light in the kitchen", tools=TOOLS),
    _request("turn on the light for my dog", tools=TOOLS, tool_choice={"type": "function",
                                                                        "function": {"name": "move_robot"}}),
    _request("which lights are on?", tools=TOOLS, tool_choice="required", parallel_tool_calls=False, n=2),
    _request("turn on the light in the kitchen", response_format={"type": "json_schema", "json_schema": {
        "name": "step", "schema": SCHEMA, "strict": True}}),
    {**_request("turn on the light in the kitchen", tools=TOOLS), "stream": True,
     "stream_options": {"include_usage": True}},
    {"model": "offline-multi", "messages": [*_request("turn on the light in the kitchen")["messages"], *HISTORY],
     "tools": TOOLS, "max_tokens": 20, "stop": ["Kitchen"]},
    _request("make me a sandwich", max_completion_tokens=5, user="someone", temperature=0.2),
]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["offline", "function", "user", "tool", "text", "auto",
                                                           "object", "string", "call_1", "set_light"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.text(max_size=10), inner, max_size=3)),
                           max_leaves=8)


def _paths(value, at=()):
    # Every place in a JSON value: tuples of keys and indexes, the root first.
    yield at
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*at, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, (*at, i))


def _mutate(body: dict, pick: int, action: str, new) -> dict:
    body = copy.deepcopy(body)
    places = [p for p in _paths(body) if p]
    place = places[pick % len(places)]
    parent = body
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if action == "drop" and isinstance(parent, dict):
        del parent[last]
    elif action == "add" and isinstance(parent, dict):
        parent[str(new)[:12] if not isinstance(new, str) else new] = new
    else:
        parent[last] = new
    return body


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(BASES))),
       edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["replace", "replace", "drop", "add"]),
                                json_values), min_size=1, max_size=3))
def test_a_mangled_request_gets_a_completion_or_a_4xx_never_a_500(base, edits):
    body = BASES[base]
    for pick, action, new in edits:
        body = _mutate(body, pick, action, new)
    status, headers, raw = handle("POST", "/v1/chat/completions", json.dumps(body).encode())
    assert status != 500, raw.decode()[:400]
    if status == 200:
        if headers["content-type"] == "text/event-stream":
            assert raw.endswith(b"data: [DONE]\n\n")
        else:
            assert json.loads(raw)["choices"]
    else:
        assert 400 <= status < 500
        error = json.loads(raw)["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["message"].endswith(".")


@pytest.mark.parametrize("raw, status, param", [
    (json.dumps({"model": "offline", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                 "stream_options": "yes"}).encode(), 400, "stream_options"),
    (json.dumps({"model": "offline", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "halt"}}], "tool_choice": {"type": "function", "function": "halt"}}
                ).encode(), 400, "tool_choice"),
    (b'{"model": "offline", "messages": [{"role": "user", "content": "hi"}], "n": ' + b"9" * 5000 + b"}", 400, None),
    (b'{"model": "offline", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, None),
    (b'{"model": "offline", "messages": [{"role": "user", "content": {"text": "hi"}}]}', 400, "messages[0].content"),
    (b'{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}', 404, "model"),
])
def test_requests_that_once_crashed_the_server_get_a_clear_4xx(raw, status, param):
    got, _, body = handle("POST", "/v1/chat/completions", raw)
    error = json.loads(body)["error"]
    assert (got, error["param"]) == (status, param) and "Traceback" not in error["message"]


@pytest.mark.parametrize("name", ["offline", "offline-multi", "chaos:offline@0.2"])
def test_the_names_the_toolkit_sends_are_served(name):
    status, _, body = handle("POST", "/v1/chat/completions", json.dumps(
        {"model": name, "messages": [{"role": "user", "content": "hi"}]}).encode())
    assert status == 200 and json.loads(body)["model"] == name


def _word_by_word(words: list[str], limit: int) -> int:
    # The rule the binary search replaced (quadratic: one tokenization per word kept).
    kept: list[str] = []
    while len(kept) < len(words) and count_tokens(" ".join(kept + words[len(kept):len(kept) + 1])) <= limit:
        kept.append(words[len(kept)])
    return len(kept)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["the", "Kitchen", "light", "", "\n", "don't", "3.5", "1234567", "...", "é"]), min_size=1, max_size=60),
       limit=st.integers(1, 80))
def test_the_token_limit_keeps_what_the_word_by_word_rule_kept(words, limit):
    assert words_within(words, limit) == _word_by_word(words, limit)


def test_the_token_limit_tokenizes_a_long_reply_a_few_times_not_once_per_word(monkeypatch):
    # 5,000 unknown words echoed back, max_tokens 14,000: the word-by-word rule tokenized ~14,000 prefixes (20 s).
    from lares_kit.models.serving import wire

    calls = []
    monkeypatch.setattr(wire, "count_tokens", lambda text: calls.append(1) or count_tokens(text))
    rng = random.Random(1)
    words = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(7)) for _ in range(5000)]
    raw = json.dumps({"model": "offline", "messages": [{"role": "user", "content": " ".join(words)}],
                      "max_tokens": 14000}).encode()
    status, _, body = handle("POST", "/v1/chat/completions", raw)
    reply = json.loads(body)["choices"][0]
    assert status == 200 and reply["finish_reason"] == "length"
    assert 13_990 <= count_tokens(reply["message"]["content"]) <= 14_000
    assert len(calls) < 25  # 1 for the whole reply + log2(~10,000 words) for the search
