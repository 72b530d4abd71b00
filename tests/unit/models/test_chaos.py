"""The chaos model: every agent design survives every fault, and the trace records each one."""

from __future__ import annotations

import pytest

from lares_kit import load_world, run_agent
from lares_kit.agents import AGENTS
from lares_kit.episode import STATUSES
from lares_kit.episode_steps import Error, ToolCall
from lares_kit.errors import LaresError
from lares_kit.models import make_client
from lares_kit.models.faults.chaos import FAULTS, chaos_client

INSTRUCTION = "turn on the light in the kitchen"


def run(agent: str, client, max_steps: int = 6, instruction: str = INSTRUCTION):
    return run_agent(instruction, load_world("lares-home"), agent=agent, client=client, model="chaos:offline",
                     max_steps=max_steps)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("agent", list(AGENTS))
def test_every_agent_survives_every_fault(agent, fault):
    client = chaos_client("offline", rate=1.0, seed=1, faults=(fault,), max_retries=0)
    episode = run(agent, client)
    assert episode.status in STATUSES and episode.status != "running"
    assert episode.status != "model_error", episode.error  # a broken reply is not a broken connection
    assert client._client._transport.log  # faults were really injected


def _recorded(episode, turn: int) -> bool:
    return any((isinstance(s, Error) or (isinstance(s, ToolCall) and not s.ok)) and s.turn == turn
               for s in episode.steps)


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_trace_records_each_fault(agent, seed):
    client = chaos_client("offline", rate=0.5, seed=seed, max_retries=0)
    episode = run(agent, client, max_steps=10, instruction="find my dog")
    log = client._client._transport.log
    assert log
    for number, fault in log:
        turn = episode.llm_calls[number - 1].turn  # one LLMCall per request, in order
        halted_twice = fault == "several_calls" and episode.status == "done" and turn == episode.steps[-1].turn
        assert _recorded(episode, turn) or halted_twice, (number, fault, episode.transcript())


def test_same_seed_same_faults():
    logs = []
    for _ in range(2):
        client = chaos_client("offline", rate=0.4, seed=5, max_retries=0)
        run("function-calling", client, max_steps=8, instruction="find my dog")
        logs.append(client._client._transport.log)
    assert logs[0] == logs[1] and logs[0]


def test_a_huge_reply_is_not_fed_back_to_the_model():
    client = chaos_client("offline", rate=1.0, seed=0, faults=("huge",), max_retries=0)
    episode = run("function-calling", client, max_steps=3)
    assert [c.prompt_tokens < 5_000 for c in episode.llm_calls] == [True] * 3
    assert all(isinstance(s, Error) and len(s.reply) >= 50_000 for s in episode.steps)


def test_a_moderate_rate_mostly_succeeds():
    wins = 0
    for seed in range(10):
        episode = run("intent-action", chaos_client("offline", rate=0.1, seed=seed, max_retries=0), max_steps=10)
        wins += episode.final_state["devices"]["kitchen-light"] == {"on": True}
    assert wins >= 8


def test_chaos_by_name():
    client = make_client("chaos:offline@1.0", max_retries=0)
    reply = client.chat.completions.create(model="chaos:offline@1.0", messages=[{"role": "user", "content": "hi"}])
    assert reply is not None and client._client._transport.log
    with pytest.raises(LaresError, match="chaos:<model>@<rate>"):
        make_client("chaos:offline", max_retries=0)
    with pytest.raises(ValueError, match="unknown faults"):
        chaos_client("offline", rate=0.5, faults=("gremlins",))
