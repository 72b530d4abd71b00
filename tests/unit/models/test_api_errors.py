"""Failures a learner can act on: one sentence per failure, and only the retries that can help.

A loopback HTTP server answers each request with what a test scripts (a
status and a body, a hang, a dropped connection) and counts the requests it
received, so the retry policy is measured on the wire. The error bodies are
the real ones: recorded from llama-cpp-python 0.3's server (SmolLM2, n_ctx
2048) and, for vLLM and OpenAI, their documented wording.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from lares_kit import load_world, run_agent
from lares_kit.models import make_async_client, make_client
from lares_kit.models.api_errors import condense, context_overflow, explain

# llama-cpp-python's server, for an assistant message with tool calls and "content": null (HTTP 500).
LLAMACPP_NULL_CONTENT = (
    "7 validation errors:\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestSystemMessage', 'role'), "
    "'msg': \"Input should be 'system'\", 'input': 'assistant', 'ctx': {'expected': \"'system'\"}}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestUserMessage', 'role'), "
    "'msg': \"Input should be 'user'\", 'input': 'assistant', 'ctx': {'expected': \"'user'\"}}\n"
    "  {'type': 'string_type', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content'), "
    "'msg': 'Input should be a valid string', 'input': None}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestToolMessage', 'role'), "
    "'msg': \"Input should be 'tool'\", 'input': 'assistant', 'ctx': {'expected': \"'tool'\"}}\n"
    "  {'type': 'missing', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestToolMessage', 'tool_call_id'), "
    "'msg': 'Field required', 'input': {'role': 'assistant', 'content': None}}\n"
    "  {'type': 'literal_error', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestFunctionMessage', 'role'), "
    "'msg': \"Input should be 'function'\", 'input': 'assistant', 'ctx': {'expected': \"'function'\"}}\n"
    "  {'type': 'missing', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestFunctionMessage', 'name'), "
    "'msg': 'Field required', 'input': {'role': 'assistant', 'content': None}}\n\n"
    '  File "/work/main/.venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in '
    "create_chat_completion\n    POST /v1/chat/completions")
# The same server, for response_format json_schema (HTTP 500).
LLAMACPP_JSON_SCHEMA = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
    '  File "/work/main/.venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 376, in '
    "create_chat_completion\n    POST /v1/chat/completions")
# The same server, for a prompt longer than its context (HTTP 400).
LLAMACPP_CONTEXT = ("This model's maximum context length is 2048 tokens. However, you requested 3307 tokens (3307 in "
                    "the messages, None in the completion). Please reduce the length of the messages or completion.")
VLLM_CONTEXT = ("This model's maximum context length is 4096 tokens. However, your request has 5120 input tokens. "
                "Please reduce the length of the input messages.")
OPENAI_CONTEXT = ("This model's maximum context length is 8192 tokens. However, your messages resulted in 9,000 "
                  "tokens. Please reduce the length of the messages.")


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True  # a hanging reply must not hold the test up at shutdown

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a hanging reply closed the socket: expected here, not worth a traceback


class Loopback:
    """A server on a free loopback port; ``answer(n)`` scripts the n-th reply (from 1); ``requests`` counts them.

    An answer is ``(status, body)``, ``"hang"`` (no reply for ``hang`` seconds) or ``"drop"`` (close the socket).
    """

    def __init__(self, answer: Any, hang: float = 1.0) -> None:
        self.answer, self.hang, self.requests = answer, hang, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 -- the name http.server calls
                self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests += 1
                reply = outer.answer(outer.requests)
                if reply == "hang":
                    time.sleep(outer.hang)
                    reply = (200, {"error": "too late"})
                if reply == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                status, body = reply
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("retry-after-ms", "10")  # the SDK's backoff would otherwise wait 0.5 s and more
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Quiet(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "Loopback":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def error(status: int, message: str, **fields: Any) -> Any:
    return lambda n: (status, {"error": {"message": message, **fields}})


def client(server: Loopback, **kw: Any) -> openai.OpenAI:
    return make_client("some-model", api_key="unused", base_url=server.base_url, **kw)


def failure(server: Loopback, **kw: Any) -> openai.APIError:
    with pytest.raises(openai.APIError) as caught:
        client(server, **kw).chat.completions.create(model="some-model", messages=[{"role": "user", "content": "hi"}])
    return caught.value


# ------------------------------------------------------------------ retries
@pytest.mark.parametrize(("status", "tries"), [(400, 1), (401, 1), (404, 1), (408, 1), (409, 1), (422, 1),
                                               (429, 3), (500, 3), (503, 3)])
def test_only_429_and_5xx_are_asked_again(status, tries):
    with Loopback(error(status, "scripted")) as server:
        exc = failure(server, max_retries=2)
    assert server.requests == tries and getattr(exc, "status_code", None) == status


def test_a_500_that_refuses_the_request_schema_is_not_asked_again():
    with Loopback(error(500, LLAMACPP_NULL_CONTENT, type="internal_server_error")) as server:
        exc = failure(server, max_retries=2)
    assert server.requests == 1
    said = explain(exc, server.base_url)
    assert said.startswith("the server rejected the request (HTTP 500, InternalServerError): messages[2].content: "
                           "input should be a valid string, got null (7 validation errors)")
    assert "/work/" not in said and "File" not in said and "\n" not in said


def test_a_dropped_connection_is_asked_again():
    with Loopback(lambda n: "drop") as server:
        exc = failure(server, max_retries=2)
    assert server.requests == 3 and isinstance(exc, openai.APIConnectionError)


def test_a_timed_out_request_is_not_asked_again():
    with Loopback(lambda n: "hang", hang=1.0) as server:
        start = time.perf_counter()
        exc = failure(server, max_retries=2, timeout=0.3)
        elapsed = time.perf_counter() - start
    assert isinstance(exc, openai.APITimeoutError)
    assert server.requests == 1 and elapsed < 0.9  # one try of 0.3 s; the SDK alone would make three
    said = explain(exc, server.base_url)
    assert f"the server at {server.base_url} did not answer within 0.3 s (APITimeoutError)" in said


def test_the_async_client_keeps_the_same_policy():
    async def ask(server: Loopback) -> BaseException:
        aclient = make_async_client("some-model", api_key="unused", base_url=server.base_url, max_retries=2,
                                    timeout=0.3)
        try:
            await aclient.chat.completions.create(model="some-model", messages=[{"role": "user", "content": "hi"}])
        except openai.APIError as exc:
            return exc
        raise AssertionError("the request should have failed")

    with Loopback(lambda n: "hang", hang=1.0) as server:
        assert isinstance(asyncio.run(ask(server)), openai.APITimeoutError) and server.requests == 1
    with Loopback(error(400, "no")) as server:
        asyncio.run(ask(server))
        assert server.requests == 1
    with Loopback(lambda n: (500, {"error": {"message": "busy"}}) if n == 1 else "hang") as server:
        asyncio.run(ask(server))
        assert server.requests == 2  # the 500 asked again, the timeout not


def test_a_passing_500_is_survived():
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}]}
    with Loopback(lambda n: (500, {"error": {"message": "busy"}}) if n == 1 else (200, reply)) as server:
        answer = client(server, max_retries=2).chat.completions.create(model="m", messages=[])
    assert answer.choices[0].message.content == "hi" and server.requests == 2


# --------------------------------------------------------------- sentences
@pytest.mark.parametrize(("message", "window", "needed"), [
    (LLAMACPP_CONTEXT, 2048, 3307), (VLLM_CONTEXT, 4096, 5120), (OPENAI_CONTEXT, 8192, 9000),
    ("request (3307 tokens) exceeds the available context size (2048 tokens), try increasing it", 2048, 3307),
    ("Trying to keep the first 3307 tokens when context the overflows. However, the model is loaded with context "
     "length of only 2048 tokens, which is not enough.", 2048, 3307),
])
def test_context_overflow_in_each_server_wording(message, window, needed):
    assert context_overflow(message) == (window, needed)


@pytest.mark.parametrize(("server_kind", "setting"), [
    ("llamacpp", "llama.cpp: --n_ctx 8192"), ("vllm", "vLLM: --max-model-len 8192"),
    ("ollama", "Ollama: num_ctx 8192, or OLLAMA_CONTEXT_LENGTH=8192")])
def test_a_context_overflow_names_both_numbers_and_the_setting(server_kind, setting):
    with Loopback(error(400, LLAMACPP_CONTEXT, code="context_length_exceeded")) as server:
        exc = failure(server, max_retries=2)
    assert server.requests == 1
    assert explain(exc, server.base_url, server=server_kind) == (
        "the server rejected the request (HTTP 400, BadRequestError): its context window is 2,048 tokens and this "
        f"request needs 3,307 -- start it with a larger context ({setting})")


def test_with_no_server_named_the_common_settings_are_listed(monkeypatch):
    monkeypatch.delenv("LARES_SERVER", raising=False)
    with Loopback(error(400, VLLM_CONTEXT)) as server:
        said = explain(failure(server), server.base_url)
    assert "--n_ctx 16384" in said and "--max-model-len 16384" in said and "num_ctx 16384" in said
    monkeypatch.setenv("LARES_SERVER", "vllm")
    assert explain(failure_of(VLLM_CONTEXT)).endswith("(vLLM: --max-model-len 16384)")


def failure_of(message: str, status: int = 400) -> openai.APIError:
    with Loopback(error(status, message)) as server:
        return failure(server)


def test_unreachable_names_the_url():
    with Loopback(error(400, "unused")) as server:
        url = server.base_url
    exc = failure_of_url(url)
    said = explain(exc, url)
    assert isinstance(exc, openai.APIConnectionError) and url in said and said.startswith("Connection error")
    assert url + "/chat/completions" in explain(exc)  # no base URL given: the URL the request went to


def failure_of_url(url: str) -> openai.APIError:
    with pytest.raises(openai.APIError) as caught:
        make_client("m", api_key="k", base_url=url, max_retries=0).chat.completions.create(model="m", messages=[])
    return caught.value


@pytest.mark.parametrize(("status", "message", "says"), [
    (401, "Incorrect API key provided: sk-abc.", "refused the API key (HTTP 401, AuthenticationError): Incorrect API "
                                                 "key provided: sk-abc -- check OPENAI_API_KEY"),
    (404, "model 'llama9' not found, try pulling it first", "has no 'some-model' (HTTP 404, NotFoundError): model "
                                                            "'llama9' not found, try pulling it first -- ask it"),
    (429, "Rate limit reached", "the server is rate-limiting (HTTP 429, RateLimitError): Rate limit reached -- "),
    (503, "Service Unavailable", "the server failed (HTTP 503, InternalServerError): Service Unavailable -- the "
                                 "fault is on its side"),
    (500, LLAMACPP_JSON_SCHEMA, "rejected the request (HTTP 500, InternalServerError): response_format.type: input "
                                "should be 'text' or 'json_object', got \"json_schema\" -- the request does not fit"),
    (400, "x " * 400, "rejected the request (HTTP 400, BadRequestError): x x"),
])
def test_each_status_in_one_sentence(status, message, says):
    with Loopback(error(status, message)) as server:
        said = explain(failure(server, max_retries=0), server.base_url)
    assert says in said and "\n" not in said and len(said) < 400
    if status in (401, 404):
        assert server.base_url in said  # where the key or the model was refused


def test_a_fastapi_422_lists_its_first_problem():
    detail = [{"loc": ["body", "temperature"], "msg": "Input should be less than or equal to 2", "type": "less_than",
               "input": 9}, {"loc": ["body", "top_p"], "msg": "Input should be a number", "type": "float_type"}]
    with Loopback(lambda n: (422, {"detail": detail})) as server:
        said = explain(failure(server), server.base_url)
    assert server.requests == 1
    assert said == ("the server rejected the request (HTTP 422, UnprocessableEntityError): temperature: input should "
                    "be less than or equal to 2, got 9 (2 validation errors)")


def test_condense_keeps_a_plain_message_and_drops_paths():
    assert condense({"message": "boom in /srv/app/server/app.py at start."}) == "boom in at start"
    assert condense(None) == ""


# ------------------------------------------------------------ in an episode
def test_a_timeout_ends_the_episode_model_error_with_the_cause():
    with Loopback(lambda n: "hang", hang=1.0) as server:
        home = load_world("lares-home")
        ep = run_agent("turn on the light in the kitchen", home, agent="function-calling",
                       client=client(server, max_retries=2, timeout=0.3), model="some-model")
    assert server.requests == 1 and ep.status == "model_error"
    assert "did not answer within 0.3 s" in ep.error and server.base_url in ep.error
    assert ep.final_message == f"Stopped: the model call failed ({ep.error})."
    assert ep.llm_calls[-1].error == ep.error
