"""The chaos model: any model, but at a set rate its replies come back broken.

Taught in ``notebooks/15_safety_and_failure.ipynb``. Real models misbehave:
they send arguments that are not JSON, call tools that do not exist, forget
a required argument, answer in prose when a call was forced, send two calls
where one was asked for, ramble for pages, or send no choice at all. An
agent loop must survive every one of these -- end with a status, and record
what went wrong -- and this model makes them happen on purpose, at a rate
and with a seed, so the damage can be measured (``benchmarks/chaos_curve.py``).

How to get one (both give a real ``openai.OpenAI`` client):

* by name: ``make_client("chaos:offline@0.2")`` -- the offline model with
  20% of replies broken; also ``--model chaos:offline@0.2`` on the command
  line and in ``lares bench``; ``chaos:gpt-4o-mini@0.05`` wraps a remote
  model. The seed is ``$LARES_CHAOS_SEED`` (default 0);
* in Python: ``chaos_client("offline", rate=0.2, seed=7, faults=("empty",))``.

It works on the wire: :class:`ChaosTransport` wraps the HTTP transport the
SDK talks through, lets the real model answer, and rewrites the JSON of a
successful ``chat.completion`` before the SDK parses it. Which fault, and
whether one happens at all, comes from a ``random.Random(seed)``: the same
seed and the same requests give the same faults. Every fault is logged in
``transport.log`` as ``(request number, fault)`` and named in the reply's
``x-lares-chaos`` header.

It is not a model of *how often* real models fail; the rate is yours to set.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
from typing import Any

import openai

from ..endpoints import OFFLINE_BASE_URL, OFFLINE_MODELS, remote_settings
from ..transport import OfflineTransport, httpx

__all__ = ["FAULTS", "ChaosTransport", "chaos_client", "parse_chaos_name"]

# The faults, one way each that a real model's reply can be broken.
FAULTS = ("bad_json", "unknown_tool", "missing_argument", "text", "several_calls", "huge", "empty")
HUGE_CHARS = 60_000  # a reply of ~15k tokens: pages of rambling, no call
_NAME = re.compile(r"^chaos:(?P<inner>.+)@(?P<rate>[0-9.]+)$")
_SHORT = re.compile(r"^chaos-(?P<rate>[0-9.]+)$")  # "chaos-0.2": the offline model, 20% broken


def parse_chaos_name(name: str) -> tuple[str, float] | None:
    """``"chaos:offline@0.2"`` -> ``("offline", 0.2)``; None for a name that is not a chaos model.

    Args:
        name: a model name; a chaos model is spelled ``chaos:<model>@<rate>`` with a rate from 0 to 1, or
            ``chaos-<rate>`` for the offline model.

    Examples:
        >>> parse_chaos_name("chaos:offline@0.2"), parse_chaos_name("chaos-0.2"), parse_chaos_name("offline")
        (('offline', 0.2), ('offline', 0.2), None)
        >>> parse_chaos_name("chaos:offline@2")
        Traceback (most recent call last):
        ...
        ValueError: chaos rate must be between 0 and 1, got 2.0 in 'chaos:offline@2'
    """
    match = _NAME.match(name) or _SHORT.match(name)
    if match is None:
        return None
    inner = match.groupdict().get("inner") or "offline"
    rate = float(match["rate"])
    if not 0 <= rate <= 1:
        raise ValueError(f"chaos rate must be between 0 and 1, got {rate} in {name!r}")
    return inner, rate


class ChaosTransport(httpx.BaseTransport):
    """An HTTP transport that breaks a ``rate`` share of chat completions, chosen by ``seed``.

    Examples:
        >>> client = chaos_client("offline", rate=1.0, seed=3, faults=("empty",))
        >>> reply = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
        >>> reply.choices, client._client._transport.log
        ([], [(1, 'empty')])
    """

    def __init__(self, inner: Any, rate: float, seed: int = 0, faults: tuple[str, ...] = FAULTS,
                 model: str | None = None) -> None:
        unknown = [f for f in faults if f not in FAULTS]
        if unknown or not faults:
            raise ValueError(f"unknown faults {unknown}; faults are: {', '.join(FAULTS)}")
        self.inner, self.rate, self.faults, self.model = inner, rate, tuple(faults), model
        self.rng = random.Random(seed)
        self.log: list[tuple[int, str]] = []  # (request number from 1, fault), oldest first
        self.requests = 0
        self._lock = threading.Lock()  # one client may be shared by the benchmark's threads

    def handle_request(self, request: Any) -> Any:
        request.read()
        if self.model is not None and request.url.path.endswith("/chat/completions"):
            request = _renamed(request, self.model)  # the endpoint gets the wrapped model's own name
        response = self.inner.handle_request(request)
        if not request.url.path.endswith("/chat/completions") or response.status_code != 200:
            return response
        with self._lock:
            self.requests += 1
            number = self.requests
            fault = self.rng.choice(self.faults) if self.rng.random() < self.rate else None
        if fault is None:
            return response
        response.read()
        try:
            body = json.loads(response.content)
        except ValueError:
            return response  # a stream or something else: left alone
        body = break_reply(body, fault, json.loads(request.content or b"{}"))
        with self._lock:
            self.log.append((number, fault))
        headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        headers["x-lares-chaos"] = fault
        return httpx.Response(200, headers=headers, content=json.dumps(body).encode(), request=request)

    def close(self) -> None:
        self.inner.close()


def _renamed(request: Any, model: str) -> Any:
    try:
        body = json.loads(request.content)
    except ValueError:
        return request
    body["model"] = model
    headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
    return httpx.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode())


def break_reply(body: dict[str, Any], fault: str, request: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completion`` JSON object with one fault put in (a new object; ``body`` is not changed).

    Examples:
        >>> ok = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
        ...       "content": None, "tool_calls": [{"id": "c1", "type": "function",
        ...       "function": {"name": "set_light", "arguments": '{"light_id": "k", "on": true}'}}]}}]}
        >>> break_reply(ok, "bad_json", {})["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        '{"light_id": "k", "'
        >>> break_reply(ok, "several_calls", {})["choices"][0]["message"]["tool_calls"][1]["id"]
        'c1_again'
    """
    body = json.loads(json.dumps(body))  # a deep copy
    if fault == "empty":
        body["choices"] = []
        return body
    choice = body["choices"][0] if body.get("choices") else None
    if choice is None:
        return body
    message = choice["message"]
    calls = message.get("tool_calls") or []
    if fault == "huge":
        words = ("Let me think about this very carefully from the beginning once more, " * 1000)[:HUGE_CHARS]
        message.update(content=words, tool_calls=None)
        choice["finish_reason"] = "length"
    elif fault == "text":
        message.update(content="I think I know what to do here, but I will just describe it instead of calling "
                       "a function.", tool_calls=None)
        choice["finish_reason"] = "stop"
    elif not calls:  # a text reply (the react agent's Thought or Action): break the text itself
        content = message.get("content") or ""
        message["content"] = {"bad_json": content[: len(content) // 2],
                              "unknown_tool": json.dumps({"tool": "teleport_robot", "arguments": {}}),
                              "missing_argument": json.dumps({"tool": _a_tool(request), "arguments": {}}),
                              "several_calls": f"{content}\n{content}"}[fault]
    elif fault == "bad_json":
        fn = calls[0]["function"]
        fn["arguments"] = fn["arguments"][: max(1, len(fn["arguments"]) * 2 // 3)]
    elif fault == "unknown_tool":
        calls[0]["function"]["name"] = "teleport_robot"
    elif fault == "missing_argument":
        calls[0]["function"]["arguments"] = _drop_required(calls[0]["function"], request)
    elif fault == "several_calls":
        twin = json.loads(json.dumps(calls[0]))
        twin["id"] = f"{calls[0]['id']}_again"
        calls.insert(1, twin)
    return body


def _a_tool(request: dict[str, Any]) -> str:
    # A tool the request offers, for an Action without its arguments: set_light where it is offered (the Lares
    # tools) or nothing is named, else the first one that is not halt (Home Assistant's dialect: HassTurnOn).
    names = [t.get("function", {}).get("name") for t in request.get("tools") or []]
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    one = schema.get("properties", {}).get("actions", {}).get("items", schema)  # react-parallel: a list of them
    names += one.get("properties", {}).get("tool", {}).get("enum") or []
    for message in request.get("messages") or []:  # react's prompts describe the tools as "- name(args): ..."
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            names += re.findall(r"^- (\w+)\(", message["content"], re.MULTILINE)
    names = [n for n in names if n and n != "halt"]
    return "set_light" if not names or "set_light" in names else names[0]


def _drop_required(fn: dict[str, Any], request: dict[str, Any]) -> str:
    # The call's arguments without its last required argument (for decide_best_function, the choice
    # itself); "{" (not JSON) when the tool requires none.
    schema = next((t["function"].get("parameters") or {} for t in request.get("tools") or []
                   if t.get("function", {}).get("name") == fn["name"]), {})
    required = schema.get("required") or []
    try:
        args = json.loads(fn["arguments"] or "{}")
    except ValueError:
        return "{"
    if not required or not isinstance(args, dict):
        return "{"
    args.pop(required[-1], None)
    return json.dumps(args)


def chaos_client(model: str = "offline", rate: float = 0.1, seed: int | None = None,
                 faults: tuple[str, ...] = FAULTS, *, max_retries: int = 2, timeout: float = 60.0,
                 **kw: Any) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for ``model`` whose replies are broken at ``rate`` (see the module doc).

    ``seed`` defaults to ``$LARES_CHAOS_SEED``, else 0. ``faults`` limits the
    kinds of fault (default: all of :data:`FAULTS`).

    Args:
        model: the model whose replies get broken: ``"offline"`` or any remote model name.
        rate: the share of chat completions broken, from 0 (none) to 1 (every one).
        seed: seeds the choice of which replies break and how; None reads ``$LARES_CHAOS_SEED``, else 0.
        faults: the kinds of fault to choose from, names from :data:`FAULTS` (default: all).
        max_retries: how many times the SDK retries a 429 or 5xx reply before raising.
        timeout: seconds the SDK waits for each reply.
        **kw: passed on to ``openai.OpenAI`` (e.g. ``api_key``, ``base_url`` for a remote model).

    Examples:
        >>> client = chaos_client("offline", rate=0.0)
        >>> reply = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
        >>> reply.choices[0].message.role
        'assistant'
    """
    seed = int(os.environ.get("LARES_CHAOS_SEED", "0")) if seed is None else seed
    if model in OFFLINE_MODELS:
        transport = ChaosTransport(OfflineTransport(), rate, seed, faults)
        http = httpx.Client(transport=transport, base_url=OFFLINE_BASE_URL, timeout=timeout)
        return openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, http_client=http,
                             max_retries=max_retries, timeout=timeout, **kw)
    settings = remote_settings(model, kw)
    transport = ChaosTransport(httpx.HTTPTransport(), rate, seed, faults, model=model)
    return openai.OpenAI(**settings, http_client=httpx.Client(transport=transport, timeout=timeout),
                         max_retries=max_retries, timeout=timeout, **kw)
