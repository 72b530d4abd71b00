"""A scripted fake model client for driving agent loops in tests.

:class:`FakeClient` looks like ``openai.OpenAI`` as far as a loop can tell:
``client.chat.completions.create(**request)`` returns real openai-typed
``ChatCompletion`` objects, taken in order from a script. Each script entry
is one reply:

* built with :func:`call`, :func:`calls`, :func:`text`, :func:`bad_args`,
  :func:`empty` or :func:`decide`;
* an exception instance, raised instead of replying (an ``openai.APIError``);
* a function ``request -> reply`` for replies that depend on the request.

Every request is kept in ``client.requests``. A script that runs out raises
:class:`ScriptExhausted`, which the loop reports as a model error.
In the style of smolagents' ``FakeToolCallModel`` and swarm's ``MockOpenAIClient``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage, ChatCompletionMessageFunctionToolCall
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_message_function_tool_call import Function
from openai.types.completion_usage import CompletionUsage

__all__ = ["FakeClient", "ScriptExhausted", "call", "calls", "text", "bad_args", "empty", "decide", "api_error"]


class ScriptExhausted(AssertionError):
    """The loop asked for more replies than the script holds."""


def _completion(message: ChatCompletionMessage | None, finish: str = "stop") -> ChatCompletion:
    choices = [] if message is None else [Choice(index=0, finish_reason=finish, message=message)]
    return ChatCompletion(id="chatcmpl-fake", object="chat.completion", created=0, model="fake", choices=choices,
                          usage=CompletionUsage(prompt_tokens=100, completion_tokens=10, total_tokens=110))


def _tool_call(i: int, name: str, arguments: str) -> ChatCompletionMessageFunctionToolCall:
    return ChatCompletionMessageFunctionToolCall(id=f"call_fake_{i}", type="function",
                                                 function=Function(name=name, arguments=arguments))


def calls(*pairs: tuple[str, dict[str, Any] | str], content: str | None = None) -> ChatCompletion:
    """A reply with several calls: ``calls(("look_with_robot", {}), ("halt", {...}))``."""
    tool_calls = [_tool_call(i, name, args if isinstance(args, str) else json.dumps(args))
                  for i, (name, args) in enumerate(pairs)]
    return _completion(ChatCompletionMessage(role="assistant", content=content, tool_calls=tool_calls), "tool_calls")


def call(name: str, **arguments: Any) -> ChatCompletion:
    """A reply with one call: ``call("set_light", light_id="kitchen-light", on=True)``."""
    return calls((name, arguments))


def decide(function: str, reasoning: str = "It is the next step.") -> ChatCompletion:
    """An intent reply: ``decide_best_function(reasoning, best_function)``."""
    return call("decide_best_function", reasoning=reasoning, best_function=function)


def bad_args(name: str, raw: str = '{"light_id": "kitchen-light",') -> ChatCompletion:
    """A call whose arguments are not valid JSON."""
    return calls((name, raw))


def text(content: str) -> ChatCompletion:
    """A plain text reply with no function call."""
    return _completion(ChatCompletionMessage(role="assistant", content=content))


def empty() -> ChatCompletion:
    """A completion with no choices at all."""
    return _completion(None)


def api_error(message: str = "The server had an error.", status: int = 500) -> openai.APIStatusError:
    """The error the openai client raises after its retries for a 5xx reply."""
    request = httpx2.Request("POST", "https://fake/v1/chat/completions")
    response = httpx2.Response(status, request=request, json={"error": {"message": message}})
    return openai.InternalServerError(message, response=response, body={"message": message})


Reply = ChatCompletion | Exception | Callable[[dict[str, Any]], Any]


class _Completions:
    def __init__(self, client: "FakeClient") -> None:
        self._client = client

    def create(self, **request: Any) -> ChatCompletion:
        client = self._client
        client.requests.append(request)
        if not client.script:
            raise ScriptExhausted(f"the script ran out after {len(client.requests) - 1} replies")
        reply = client.script.pop(0)
        if callable(reply) and not isinstance(reply, ChatCompletion):
            reply = reply(request)
        if isinstance(reply, Exception):
            raise reply
        return reply


class _Chat:
    def __init__(self, client: "FakeClient") -> None:
        self.completions = _Completions(client)


class FakeClient:
    """Replies from ``script`` in order; ``requests`` keeps every request made."""

    def __init__(self, script: list[Reply]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.chat = _Chat(self)
