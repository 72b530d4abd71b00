"""The local model (SmolLM2-135M through llama.cpp): prompt, grammar and parsing always; the model with the extra.

Tests marked ``local`` need the optional ``[local]`` extra (``make local``)
and are skipped without it, with that reason. They run a few requests and
scenarios only -- the 20-task slice is ``benchmarks/bench_local.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lares_kit.models.local import (
    CONSTRAINED,
    UNCONSTRAINED,
    LocalModelMissing,
    argument_problem,
    call_schema,
    chat_messages,
    local_available,
    parse_call,
)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "14_a_small_local_model.ipynb"
REASON = local_available()


def needs_local(test):
    """Mark a test ``local`` and skip it, with the make target as the reason, when the extra is missing."""
    return pytest.mark.skipif(REASON is not None, reason="needs the [local] extra: make local")(pytest.mark.local(test))


SET_LIGHT = {"type": "function", "function": {
    "name": "set_light", "description": "Switch a light on or off.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["light_id", "on"],
                   "properties": {"light_id": {"type": "string", "enum": ["kitchen-light", "office-light"]},
                                  "on": {"type": "boolean"}}}}}
HALT = {"type": "function", "function": {
    "name": "halt", "description": "Stop and report.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["message_to_user"],
                   "properties": {"message_to_user": {"type": "string"}}}}}


# ------------------------------------------------------------ always (no extra needed)
def test_history_becomes_alternating_turns_with_the_functions_last():
    messages = [{"role": "system", "content": "Role."}, {"role": "system", "content": "WORLD KNOWLEDGE {}"},
                {"role": "user", "content": "turn on the light in the kitchen"},
                {"role": "assistant", "content": "I have decided to call set_light because: it is dark."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "set_light", "arguments": '{"light_id": "kitchen-light", "on": true}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "The Kitchen light (kitchen-light) is now on."}]
    turns = chat_messages(messages, [SET_LIGHT, HALT], {"type": "function", "function": {"name": "halt"}})
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[0]["content"] == "Role.\n\nWORLD KNOWLEDGE {}"
    assert turns[2]["content"].endswith('{"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}')
    assert turns[3]["content"].startswith("Result of set_light: The Kitchen light")
    offered = turns[3]["content"].split("Call the function halt now.\n", 1)[1]
    assert offered.startswith("halt(message_to_user: string) - Stop and report.") and "set_light" not in offered


def test_call_schema_has_one_branch_per_offered_function_and_bounds_free_text():
    schema = call_schema([SET_LIGHT, HALT], "auto")
    names = [b["properties"]["name"]["const"] for b in schema["anyOf"]]
    assert names == ["set_light", "halt"]
    assert schema["anyOf"][1]["properties"]["arguments"]["properties"]["message_to_user"]["maxLength"] == 200
    forced = call_schema([SET_LIGHT, HALT], {"type": "function", "function": {"name": "set_light"}})
    assert forced["properties"]["name"] == {"const": "set_light"} and "anyOf" not in forced
    assert call_schema([], "auto") is None and call_schema([HALT], "none") is None


@pytest.mark.parametrize("text, expected", [
    ('{"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}',
     ("set_light", {"light_id": "kitchen-light", "on": True})),
    ('I will call {"name": "halt", "parameters": {"message_to_user": "ok"}} now', ("halt", {"message_to_user": "ok"})),
    ('<tool_call>[{"name": "look_with_robot", "arguments": {}}]</tool_call>', ("look_with_robot", {})),
    ('{"light_id": "kitchen-light"}', None),
    ("set_light(kitchen-light, on)", None),
    ('{"name": "halt", "arguments": {"message_to_user": "cut o', None),
])
def test_parse_call(text, expected):
    assert parse_call(text) == expected


@pytest.mark.parametrize("args, problem", [
    ({"light_id": "kitchen-light", "on": True}, None),
    ({"light_id": "kitchen-light"}, "missing 'on'"),
    ({"light_id": "attic-light", "on": True}, "'light_id' must be one of ['kitchen-light', 'office-light']"),
    ({"light_id": "kitchen-light", "on": "yes"}, "'on' must be a boolean"),
    ({"light_id": "kitchen-light", "on": True, "colour": "red"}, "unknown argument 'colour'"),
])
def test_argument_problem(args, problem):
    assert argument_problem(SET_LIGHT["function"]["parameters"], args) == problem


def test_missing_extra_fails_at_once_with_the_make_target(monkeypatch):
    from lares_kit.models import local_wire
    from lares_kit.models.client import make_client

    monkeypatch.setattr(local_wire, "local_available", lambda: "the local model needs the [local] extra: make local")
    with pytest.raises(LocalModelMissing, match="make local"):
        make_client(CONSTRAINED)


def test_gguf_env_names_a_missing_file(monkeypatch, tmp_path):
    from lares_kit.models.local import gguf_path

    monkeypatch.setenv("LARES_LOCAL_GGUF", str(tmp_path / "nope.gguf"))
    with pytest.raises(LocalModelMissing, match="LARES_LOCAL_GGUF"):
        gguf_path()


def test_bench_slice_flags_parse():
    from lares_kit.cli import build_parser

    args = build_parser().parse_args(["bench", "--model", "local", "--limit", "5", "--tasks", "lh-*"])
    assert args.limit == 5 and args.tasks == ["lh-*"]




# ------------------------------------------------------------ with the [local] extra
def _first_request(model: str, instruction: str = "turn on the light in the kitchen") -> dict:
    from lares_kit import load_world
    from lares_kit.agents.prompts import GOAL_PROMPT, ROLE_PROMPT
    from lares_kit.episode import Episode
    from lares_kit.tools import Toolbox

    home = load_world("lares-home")
    episode = Episode.start(instruction, home, agent="function-calling", model=model, knowledge="latest",
                            max_steps=5, system_prompt=ROLE_PROMPT, goal_prompt=GOAL_PROMPT)
    return {"model": model, "messages": episode.messages(home), "tools": Toolbox(home).schemas(),
            "tool_choice": "auto"}


@needs_local
def test_a_constrained_reply_is_a_valid_call_and_the_same_request_gets_the_same_reply():
    from lares_kit.models import make_client

    client = make_client(CONSTRAINED, max_retries=0)
    assert [m.id for m in client.models.list().data] == [CONSTRAINED, UNCONSTRAINED]
    request = _first_request(CONSTRAINED)
    first, again = (client.chat.completions.create(**request) for _ in range(2))
    call = first.choices[0].message.tool_calls[0]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
    assert first.choices[0].finish_reason == "tool_calls"
    assert argument_problem(schemas[call.function.name], json.loads(call.function.arguments)) is None
    assert first.usage.prompt_tokens > 300 and first.usage.completion_tokens > 0
    repeat = again.choices[0].message.tool_calls[0].function
    assert (repeat.name, repeat.arguments) == (call.function.name, call.function.arguments)


@needs_local
def test_forced_choice_and_unconstrained_replies():
    from lares_kit.models import make_client

    forced = _first_request(CONSTRAINED) | {"tool_choice": {"type": "function", "function": {"name": "halt"}}}
    reply = make_client(CONSTRAINED, max_retries=0).chat.completions.create(**forced)
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "halt" and isinstance(json.loads(call.function.arguments)["message_to_user"], str)
    free = make_client(UNCONSTRAINED, max_retries=0).chat.completions.create(**_first_request(UNCONSTRAINED))
    message = free.choices[0].message
    assert message.tool_calls or message.content  # a call if it wrote one, else its text
    with pytest.raises(Exception, match="does not stream"):
        make_client(CONSTRAINED, max_retries=0).chat.completions.create(**_first_request(CONSTRAINED), stream=True)


@needs_local
def test_kitchen_scenario_constrained_every_reply_is_a_valid_call():
    from lares_kit import load_world, run_agent
    from lares_kit.models.local import LocalStats, get_local_model

    get_local_model().stats[CONSTRAINED] = LocalStats()
    episode = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="function-calling",
                        model=CONSTRAINED, max_steps=3)
    stats = get_local_model().stats[CONSTRAINED]
    assert episode.status in ("done", "step_limit") and not episode.error
    assert stats.requests == len(episode.llm_calls) and stats.valid_calls == stats.requests
    assert not [s for s in episode.steps if s.kind == "error"]  # no reply without a usable call
    assert stats.tokens_per_second > 0


@needs_local
@pytest.mark.slow
def test_the_local_notebook_passes_nbval(tmp_path, years_ahead):
    env = {**os.environ, "LARES_PROGRESS": "0", "TQDM_DISABLE": "1"}
    env.pop("MPLBACKEND", None)
    cmd = years_ahead([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                       "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
                       "-p", "no:cacheprovider", "-q", str(NOTEBOOK)])
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False)
    assert run.returncode == 0, f"nbval failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"


# llama.cpp's own server (python -m llama_cpp.server) with these weights: tests/test_real_server.py.
