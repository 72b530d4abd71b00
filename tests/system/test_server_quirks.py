"""The toolkit against the quirks of servers that cannot run here, copied by a loopback proxy.

Each test puts :class:`quirk_proxy.QuirkProxy` -- one quirk switched on --
in front of the offline model's own HTTP server and runs an agent through
the real ``openai`` SDK. What is checked is the protocol and what a learner
sees: which requests the server refused (the proxy's log is the server's
access log), the episode's status, and a one-sentence reason. The offline
model's skill is not in question: behind a proxy with no quirk, every
episode here succeeds (the first test).

The quirks, and the server each one comes from, are described in
``tests/quirk_proxy.py``; the recipes for those servers in ``docs/models.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from quirk_proxy import QuirkProxy, Quirks, closed_port_url

from lares_kit import load_world, run_agent
from lares_kit.run_context import RunContext

ROOT = Path(__file__).resolve().parents[2]
KITCHEN = "turn on the light in the kitchen"
DEVICE_AGENT = "You are SAGE's device agent"  # the first words of the device sub-agent's system prompt


def run(quirks: Quirks, agent: str, server: str | None, *, world: str = "lares-home", retries: int = 0):
    """Run KITCHEN with ``agent`` behind a proxy with ``quirks``; (episode, home, proxy log)."""
    home = load_world(world)
    with QuirkProxy(quirks) as proxy:
        client = openai.OpenAI(base_url=proxy.base_url, api_key="unused", max_retries=retries, timeout=30)
        episode = run_agent(KITCHEN, home, agent=agent, client=client, model="smollm2",
                            context=RunContext(server=server))
    return episode, home, proxy.log


def statuses(log: list[tuple[int, str]]) -> set[int]:
    return {status for status, _ in log}


def kitchen_on(home) -> bool:
    return home.devices["kitchen-light"].state.get("on") is True


def one_sentence(text: str) -> bool:
    # What a learner reads: one line, no server dump (pydantic's error list, a file path of the server).
    return "\n" not in text and "validation errors:" not in text and 'File "' not in text


def lares_run(base_url: str, *args: str, server: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "unused", "LARES_PROGRESS": "0"}
    env.pop("LARES_SERVER", None)
    if server:
        env["LARES_SERVER"] = server
    cmd = [sys.executable, "-m", "lares_kit.cli.commands", "run", KITCHEN, "--model", "smollm2", "--json", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(autouse=True)
def _no_declared_server(monkeypatch):
    monkeypatch.delenv("LARES_SERVER", raising=False)  # each test says which server it declares


# ------------------------------------------------------------------ no quirk: the control
@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react"])
def test_through_a_proxy_with_no_quirk_every_agent_succeeds(agent):
    episode, home, log = run(Quirks(), agent, "auto")
    assert episode.status == "done" and kitchen_on(home)
    assert statuses(log) == {200} and len(log) == len(episode.llm_calls)


# ------------------------------------------------------------------ Ollama: a forced tool_choice is ignored
def test_ignored_forced_choice_is_named_in_the_transcript_and_the_call_is_read_from_the_text():
    episode, home, log = run(Quirks(ignore_forced_choice=True), "intent-action", "auto")
    assert "ignored the forced tool_choice" in episode.transcript()
    assert any("ignored the forced choice" in what for _, what in log)  # the quirk did happen
    assert episode.status == "done" and kitchen_on(home)


def test_ignored_forced_choice_then_the_function_offered_alone_is_called():
    # The model answers a forced choice in prose, but calls the function once it is offered alone.
    episode, home, _ = run(Quirks(ignore_forced_choice=True, text_reply="prose"), "intent-action", "auto")
    assert "ignored the forced tool_choice" in episode.transcript()
    assert episode.status == "done" and kitchen_on(home)


def test_a_model_that_only_writes_json_in_text_still_gets_its_calls_run():
    episode, home, log = run(Quirks(ignore_forced_choice=True, text_only=True), "intent-action", "auto")
    assert "ignored the forced tool_choice" in episode.transcript()
    assert {what for _, what in log} <= {"ignored the forced choice (json)", "answered in text (json)"}
    assert episode.status == "done" and kitchen_on(home)


def test_ignored_forced_choice_with_no_call_at_all_ends_model_error_not_a_silent_step_limit():
    quirks = Quirks(ignore_forced_choice=True, text_only=True, text_reply="prose")
    episode, home, log = run(quirks, "intent-action", "auto")
    assert episode.status == "model_error", episode.final_message
    assert "ignored the forced tool_choice" in episode.final_message and one_sentence(episode.final_message)
    assert len(log) == 2 and not kitchen_on(home)  # the forced request and the fallback: no 20 lost steps


def test_declared_ollama_intent_action_works_without_a_forced_choice_error():
    episode, home, log = run(Quirks(ignore_forced_choice=True), "intent-action", "ollama")
    assert episode.status == "done" and kitchen_on(home)
    assert statuses(log) == {200}


# ------------------------------------------------------------------ llama-cpp-python: no json_schema
def test_declared_llamacpp_react_never_sends_json_schema():
    episode, home, log = run(Quirks(refuse_json_schema=True), "react", "llamacpp")
    assert statuses(log) == {200}, log
    assert episode.status == "done" and kitchen_on(home)


def test_an_undeclared_server_that_refuses_json_schema_is_learned_once():
    episode, home, log = run(Quirks(refuse_json_schema=True), "react", "auto", retries=2)
    refused = [i for i, (_, what) in enumerate(log) if what == "refused json_schema"]
    assert refused, "the first executor request asks for json_schema"
    assert refused == list(range(refused[0], refused[-1] + 1)) and len(refused) <= 3  # one request, its retries
    assert episode.status == "done" and kitchen_on(home)


# ------------------------------------------------------------------ llama.cpp: no null content
@pytest.mark.parametrize("server", ["llamacpp", "auto"])
def test_tool_call_messages_go_with_empty_content_where_null_is_refused(server):
    episode, home, log = run(Quirks(refuse_null_content=True), "function-calling", server)
    assert statuses(log) == {200}, log
    assert episode.status == "done" and kitchen_on(home)


def test_a_refused_request_is_explained_in_one_sentence_not_the_servers_dump():
    # Declared "offline" (accepts null content) but it is not: the server's 500 reaches the learner.
    episode, _, log = run(Quirks(refuse_null_content=True), "function-calling", "offline", retries=2)
    assert episode.status == "model_error" and (500, "refused null content") in log
    assert one_sentence(episode.final_message), episode.final_message
    assert "500" in episode.final_message and "content" in episode.final_message


# ------------------------------------------------------------------ a SAGE sub-agent's model fails
def test_a_sub_agent_model_failure_ends_the_run_model_error():
    before = load_world("sage-home").device_states()
    episode, home, log = run(Quirks(fail_marker=DEVICE_AGENT, fail_times=100), "sage", "auto", world="sage-home")
    assert (500, f"failed {DEVICE_AGENT!r}") in log
    assert episode.status == "model_error", episode.final_message
    assert one_sentence(episode.final_message)
    assert home.device_states() == before  # nothing was switched


@pytest.mark.slow
def test_a_sub_agent_model_failure_exits_1_from_lares_run():
    with QuirkProxy(Quirks(fail_marker=DEVICE_AGENT, fail_times=100)) as proxy:
        done = lares_run(proxy.base_url, "--agent", "sage", "--world", "sage-home", "--max-steps", "4")
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "model_error" and one_sentence(result["final_message"])
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------ a context window too small
def test_a_context_window_refusal_names_both_numbers_and_the_fix():
    episode, _, log = run(Quirks(context=512), "function-calling", "llamacpp", retries=2)
    assert log == [(400, "context window exceeded")]  # a 400 is not retried
    assert episode.status == "model_error"
    message = episode.final_message
    assert one_sentence(message) and "512" in message and "n_ctx" in message, message


# ------------------------------------------------------------------ nothing listening
def test_an_unreachable_server_is_named_by_its_url():
    url = closed_port_url()
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=5)
    episode = run_agent(KITCHEN, load_world("lares-home"), agent="function-calling", client=client,
                        model="smollm2", context=RunContext(server="auto"))
    assert episode.status == "model_error"
    assert url.rsplit("/v1", 1)[0].split("//")[1] in episode.final_message, episode.final_message
    assert one_sentence(episode.final_message)


@pytest.mark.slow
def test_an_unreachable_server_exits_1_from_lares_run_with_the_url():
    url = closed_port_url()
    done = lares_run(url, "--max-steps", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "model_error" and url.split("//")[1].split("/")[0] in result["final_message"]
    assert "Traceback" not in done.stderr
