"""The agent registry: one spec per design, run_agent built from it, one model-call path, options checked."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from pathlib import Path

import pytest
from fakes import FakeClient, call, text

import lares_kit.agents as agents
from lares_kit import load_world
from lares_kit.agents import AGENTS, AgentSpec, get_agent, run_agent
from lares_kit.episode import KNOWLEDGE_MODES
from lares_kit.episode_steps import Action, Final, Thought
from lares_kit.errors import LaresError
from lares_kit.knowledge.modes import KNOWLEDGE_FORMATS
from lares_kit.knowledge.tokens import count_request

HALT = call("halt", message_to_user="Done.")


# ------------------------------------------------------------------ registry
@pytest.mark.parametrize("name", list(AGENTS))
def test_every_agent_has_a_spec_that_run_agent_can_use(name):
    spec = AGENTS[name]
    assert isinstance(spec, AgentSpec) and spec.name == name and get_agent(name) is spec
    assert callable(spec.loop) and spec.max_steps >= 1
    assert spec.knowledge and set(spec.knowledge) <= set(KNOWLEDGE_MODES)
    assert spec.formats and set(spec.formats) <= set(KNOWLEDGE_FORMATS)
    assert dataclasses.is_dataclass(spec.options) and spec.make_options(None) == spec.options()


def test_the_designs_say_what_they_are():
    assert [n for n, s in AGENTS.items() if s.memory] == ["react", "react-parallel", "sage"]
    assert [n for n, s in AGENTS.items() if s.executor] == ["react", "react-parallel"]
    assert [n for n, s in AGENTS.items() if s.persistent] == ["sage"]
    assert AGENTS["react"].max_steps == 10 and AGENTS["intent-action"].max_steps == 20
    assert AGENTS["sage"].knowledge == ("none",)


@pytest.mark.parametrize("agent, kw, says", [
    ("sage", {"knowledge": "latest"},
     "sage does not take the knowledge mode 'latest' (it takes: none); leave the knowledge mode out"),
    ("sage", {"knowledge_format": "retrieval"}, "sage does not take the knowledge format 'retrieval'"),
    ("intent-action", {"executor": "offline"}, "intent-action has no executor model"),
    ("intent-action", {"options": {"parallel_tool_calls": True}}, "intent-action has no option 'parallel_tool_calls'; "
                                                                  "its options: temperature, seed."),
    ("function-calling", {"options": {"action_format": "text"}}, "its options: parallel_tool_calls"),
    ("function-calling", {"memory": 42}, "memory must be a Memory, a MemoryStore or a store file path"),
    ("function-calling", {"knowledge": "some"}, "unknown knowledge mode 'some'; modes: latest, initial, none"),
    ("function-calling", {"knowledge_format": "yaml"}, "unknown knowledge format 'yaml'"),
])
def test_a_combination_a_design_does_not_take_is_a_sentence(agent, kw, says):
    with pytest.raises(LaresError) as err:
        run_agent("turn on the light in the kitchen", load_world("lares-home"), agent, "fake",
                  client=FakeClient([]), **kw)
    message = str(err.value)
    assert says in message and "\n" not in message  # one sentence, no traceback


@pytest.mark.parametrize("options, says", [
    ({"action_format": "bogus"}, "option action_format must be one of json_schema, text, parallel; got 'bogus'"),
    ({"parser": "greedy"}, "option parser must be one of naive, one, all; got 'greedy'"),
    ({"max_iterations": 0}, "option max_iterations must be a whole number of at least 1"),
    ({"actionformat": "text"}, "react has no option 'actionformat'; its options: action_format, parser, "
                               "max_iterations, temperature, seed."),
    ({"temperature": -1}, "option temperature must be a number from 0 to 2, not -1"),
])
def test_react_options_are_checked_before_anything_runs(options, says):
    client = FakeClient([])
    with pytest.raises(LaresError) as err:
        run_agent("hello", load_world("smart-building"), "react", "fake", client=client, options=options)
    assert str(err.value).startswith(says)
    assert client.requests == []  # refused before any model call


def test_the_default_knowledge_is_the_designs_own():
    home = load_world("sage-home")
    assert run_agent("what is on tv tonight?", home, "sage").knowledge == "none"
    assert run_agent("hello", home, "function-calling", "fake", client=FakeClient([HALT])).knowledge == "latest"
    ep = run_agent("hello", home, "function-calling", "fake", client=FakeClient([HALT]), knowledge="initial")
    assert ep.knowledge == "initial" and ep.knowledge_format == "outline"  # "auto": a small home whole


# ----------------------------------------------------------- run_agent's size
def _lines_without_docstring(source: str) -> int:
    """Lines of a function's source without its docstring (signature included)."""
    source = textwrap.dedent(source)
    doc = ast.parse(source).body[0].body[0]
    assert isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)  # it has a docstring
    return len(source.splitlines()) - (doc.end_lineno - doc.lineno + 1)


def test_run_agent_fits_in_forty_lines():
    source = inspect.getsource(run_agent)
    assert _lines_without_docstring(source) <= 40
    assert "react" not in source.split('"""')[2] and "sage" not in source.split('"""')[2]  # no agent by name


def test_the_count_leaves_out_only_the_docstring():
    long = "def f(a,\n      b):\n    \"\"\"One.\n\n    Two.\n    \"\"\"\n" + "    a += b\n" * 40
    assert _lines_without_docstring(long) == 42


# ------------------------------------------------------ one model-call path
def _functions_calling_create() -> set[str]:
    found = set()
    for path in sorted(Path(agents.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for parent in ast.walk(tree):
            scopes = [n for n in ast.iter_child_nodes(parent) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for fn in scopes:
                owner = parent.name + "." if isinstance(parent, ast.ClassDef) else ""
                for node in ast.walk(fn):
                    if (isinstance(node, ast.Attribute) and node.attr == "create"
                            and isinstance(node.value, ast.Attribute) and node.value.attr == "completions"):
                        found.add(f"{path.stem}.{owner}{fn.name}")
    return found


def test_exactly_one_function_in_agents_calls_the_model():
    assert _functions_calling_create() == {"agent_run.AgentRun.request"}


# ------------------------------------------------------- no usage from the server
def _no_usage(reply):
    return reply.model_copy(update={"usage": None})


def test_a_tool_call_reply_without_usage_is_counted():
    client = FakeClient([_no_usage(HALT)])
    ep = run_agent("hello", load_world("lares-home"), "function-calling", "fake", client=client)
    request = client.requests[0]
    assert ep.llm_calls[0].prompt_tokens == count_request(request["messages"], request["tools"]) > 0
    assert ep.llm_calls[0].completion_tokens == 0


def test_a_text_reply_without_usage_is_counted_the_same_way():
    # react's Thought: the same path, so the same count (it used to record 0)
    client = FakeClient([_no_usage(text("Thought: nothing to do\nFinal Answer: Hello!"))])
    ep = run_agent("hello", load_world("smart-building"), "react", "fake", client=client)
    request = client.requests[0]
    assert ep.status == "done" and ep.final_message == "Hello!"
    assert ep.llm_calls[0].prompt_tokens == count_request(request["messages"]) > 0


# -------------------------------------------------------------------- react
def test_react_records_actions_as_it_runs_them():
    client = FakeClient([text("Thought: read the office sensor"),
                         text('{"tool": "read_device", "arguments": {"device_id": "office-1-sensor"}}'),
                         text("Thought: done\nFinal Answer: It is fine.")])
    ep = run_agent("is the air in office 1 ok?", load_world("smart-building"), "react", "fake", client=client)
    assert [type(s) for s in ep.steps] == [Thought, Action, Thought, Final]
    assert ep.steps[1].call_id == "call_1_1" and ep.steps[1].ok
    assert [c.phase for c in ep.llm_calls] == ["thought", "action", "thought"]
    assert client.requests[1]["response_format"]["type"] == "json_schema"


def test_the_executor_can_be_a_name_and_a_client():
    planner = FakeClient([text("Thought: read it"), text("Thought: done\nFinal Answer: ok")])
    executor = FakeClient([text('{"tool": "read_device", "arguments": {"device_id": "office-1-sensor"}}')])
    ep = run_agent("is the air in office 1 ok?", load_world("smart-building"), "react", "planner", client=planner,
                   executor=("light", executor))
    assert ep.status == "done" and [r["model"] for r in executor.requests] == ["light"]
    assert [r["model"] for r in planner.requests] == ["planner", "planner"]
