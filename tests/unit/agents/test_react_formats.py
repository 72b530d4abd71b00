"""React's executor on servers that refuse response_format json_schema (llama.cpp's does): declared or learned."""

import json

import httpx2
import openai
import pytest

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.agents.agent_run import MAX_TOKENS
from lares_kit.agents.agent_run import REFUSED_FORMAT as REFUSED
from lares_kit.episode_steps import Error
from lares_kit.models import make_client
from lares_kit.run_context import RunContext

LIGHT = "turn on the light in meeting room 1"


class Server:
    """The offline model behind a server that refuses some response_format kinds with an HTTP error."""

    def __init__(self, refuses=(), status=400, message="response_format of type '{kind}' is not supported"):
        self.inner = make_client("offline")
        self.chat = self
        self.completions = self
        self.refuses, self.status, self.message = refuses, status, message
        self.requests = []

    def create(self, **request):
        self.requests.append(request)
        kind = (request.get("response_format") or {}).get("type")
        if kind in self.refuses:
            message = self.message.format(kind=kind)
            response = httpx2.Response(self.status, request=httpx2.Request("POST", "http://127.0.0.1:8080/v1"),
                                       json={"error": {"message": message}})
            raise openai.APIStatusError(message, response=response, body={"message": message})
        return self.inner.chat.completions.create(**request)


def executor_requests(server):
    return [r for r in server.requests if r["messages"][0]["content"].startswith("You write tool calls")]


def run(client, agent="react", **kw):
    home = load_world("smart-building")
    if "server" in kw:  # what the model's server accepts is part of the run's context
        kw["context"] = RunContext(server=kw.pop("server"))
    ep = run_agent(LIGHT, home, agent=agent, model="offline", client=client, **kw)
    return ep, home


def test_a_declared_llamacpp_server_gets_json_object_and_the_schema_in_the_prompt():
    server = Server(refuses=("json_schema",))
    ep, home = run(server, server="llamacpp")
    sent = executor_requests(server)
    assert sent and all(r["response_format"] == {"type": "json_object"} for r in sent)
    shape = sent[0]["messages"][0]["content"].split("The JSON schema of your reply: ")[1]
    assert json.loads(shape)["required"] == ["tool", "arguments"]
    assert all(r["max_tokens"] == MAX_TOKENS["action"] for r in sent)
    assert ep.status == "done" and home.devices["meeting-room-1-light"].state["on"]
    assert not any(isinstance(s, Error) for s in ep.steps)


def test_a_refused_json_schema_is_learned_once_and_recorded():
    server = Server(refuses=("json_schema",))
    ep, home = run(server, server="auto")
    notes = [s.message for s in ep.steps if isinstance(s, Error)]
    assert notes == [f"{REFUSED} json_schema; this run now asks for json_object with the schema in the prompt."]
    kinds = [(r.get("response_format") or {}).get("type") for r in executor_requests(server)]
    assert kinds[0] == "json_schema" and set(kinds[1:]) == {"json_object"}  # refused once, never asked again
    assert ep.llm_calls[1].error and not any(c.error for c in ep.llm_calls[2:])
    assert ep.status == "done" and home.devices["meeting-room-1-light"].state["on"]
    # a wire note stays out of the prompts: the planner and the executor see the task, not the protocol
    assert not any(REFUSED in json.dumps(r["messages"]) for r in server.requests)


def test_llamacpp_answers_its_validation_error_with_500_and_that_is_learned_too():
    server = Server(refuses=("json_schema",), status=500,
                    message="1 validation error for CreateChatCompletionRequest response_format.type Input should "
                            "be 'text' or 'json_object'")
    ep, _ = run(server)  # undeclared: the offline model's name gives the offline profile, which learns as well
    assert ep.status == "done" and any(REFUSED in getattr(s, "message", "") for s in ep.steps)


def test_a_server_that_refuses_json_altogether_gets_the_schema_in_a_plain_prompt():
    server = Server(refuses=("json_schema", "json_object"))
    ep, _ = run(server, server="auto")
    notes = [s.message for s in ep.steps if isinstance(s, Error)]
    assert len(notes) == 2 and notes[1].endswith("now asks for text with the schema in the prompt.")
    last = executor_requests(server)[-1]
    assert "response_format" not in last and "The JSON schema of your reply" in last["messages"][0]["content"]
    assert ep.status == "done"


def test_another_refusal_is_a_model_error_not_a_format_change():
    server = Server(refuses=("json_schema",), message="this request needs 3307 tokens, the context is 2048")
    ep, _ = run(server, server="auto")
    assert ep.status == "model_error" and not any(REFUSED in getattr(s, "message", "") for s in ep.steps)
    assert len(executor_requests(server)) == 1


@pytest.mark.parametrize("fmt,kind", [("text", None), ("json_schema", "json_schema")])
def test_the_action_format_option_is_sent_as_asked(fmt, kind):
    server = Server()
    ep, _ = run(server, options={"action_format": fmt})
    assert [(r.get("response_format") or {}).get("type") for r in executor_requests(server)] == \
        [kind] * len(executor_requests(server))
    assert ep.status == "done"


def test_parallel_actions_get_room_for_a_list():
    server = Server(refuses=("json_schema",))
    ep, _ = run(server, agent="react-parallel", server="llamacpp")
    sent = executor_requests(server)
    assert all(r["max_tokens"] == MAX_TOKENS["actions"] for r in sent)
    assert '"actions"' in sent[0]["messages"][0]["content"].split("The JSON schema of your reply: ")[1]
    assert ep.status == "done"
