"""What an OpenAI-compatible server accepts: one capability profile per kind of server.

Taught in ``docs/models.md`` (and ``notebooks/14_a_small_local_model.ipynb``).
Every server that speaks the Chat Completions protocol speaks a slightly
different dialect of it. The offline model accepts everything; real servers
refuse or ignore parts of a request:

* llama.cpp's server (llama-cpp-python) knows ``response_format`` ``text``
  and ``json_object`` but not ``json_schema``, and answers 500 to an
  assistant message whose ``content`` is null next to its tool calls (and
  leaving the key out breaks its function-calling template): an empty string
  works;
* Ollama's OpenAI API ignores a forced ``tool_choice`` and may answer in
  plain text;
* OpenAI, vLLM and LM Studio accept all of it.

A :class:`ServerProfile` says which of these a server does; the one
model-call path of the agents (:meth:`lares_kit.agents.agent_run.AgentRun.request`)
applies it. It is declared (``LARES_SERVER=llamacpp``, ``lares run --server
llamacpp``) or learned during a run: a server that refuses a
``response_format`` kind, or ignores a forced choice, gets a profile without
it for the rest of the run (the transcript says so). Undeclared, a remote
server gets the ``auto`` profile: it assumes every feature except null
content (an empty string is accepted everywhere) and learns the rest.

This module only describes servers; it sends no request and imports no agent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Any

from ..errors import LaresError

__all__ = ["ServerProfile", "PROFILES", "FORMATS", "ENV", "profile_for", "server_profile", "refused_format",
           "in_process"]

ENV = "LARES_SERVER"  # the environment variable that declares the server
FORMATS = ("json_schema", "json_object", "text")  # response_format kinds, most constrained first


@dataclass(frozen=True)
class ServerProfile:
    """What one server accepts; the request path sends only that.

    Examples:
        >>> llama = profile_for("llamacpp")
        >>> llama.null_content, llama.response_format("json_schema")
        (False, 'json_object')
        >>> profile_for("openai").response_format("json_schema")
        'json_schema'
    """

    name: str
    forced_tool_choice: bool = True  # honours tool_choice={"type": "function", ...} (else it may answer in text)
    response_formats: tuple[str, ...] = FORMATS  # the response_format kinds it accepts, a subset of FORMATS
    null_content: bool = True  # accepts "content": null in an assistant message that carries tool calls
    context: int | None = None  # its context window in tokens when it is known (a server's default), else None
    # takes OpenAI's prompt_cache_key (the requests of one episode share a prompt prefix); others are not sent it
    cache_key: bool = False
    # Assumed, not known: a reply without the forced call then means the server ignored the choice (learned for
    # the run). A known server that honours it has a model that slipped: one bad reply, the step is lost.
    learns: bool = False

    def response_format(self, wanted: str) -> str:
        """The kind to ask for: ``wanted`` if accepted, else the next less constrained one it accepts.

        Args:
            wanted: One of :data:`FORMATS`, what the caller would like (``json_schema`` for one exact shape).

        Examples:
            >>> ServerProfile("old", response_formats=("text",)).response_format("json_schema")
            'text'
        """
        later = FORMATS[FORMATS.index(wanted):]
        return next((kind for kind in later if kind in self.response_formats), "text")

    def without_format(self, kind: str) -> ServerProfile:
        """This profile after the server refused the ``response_format`` kind ``kind`` (learned in a run).

        Args:
            kind: The refused kind, one of :data:`FORMATS`.

        Examples:
            >>> profile_for("auto").without_format("json_schema").response_formats
            ('json_object', 'text')
        """
        return replace(self, response_formats=tuple(k for k in self.response_formats if k != kind))

    def without_forced_choice(self) -> ServerProfile:
        """This profile after the server ignored a forced ``tool_choice`` (learned in a run).

        Examples:
            >>> profile_for("auto").without_forced_choice().forced_tool_choice
            False
        """
        return replace(self, forced_tool_choice=False)

    def messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` as this server takes them: ``""`` for null content beside tool calls where null is refused.

        The list given is not changed (a new list is returned when a message needs a change).

        Args:
            messages: Chat messages as the agent built them.

        Examples:
            >>> sent = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}]
            >>> profile_for("llamacpp").messages(sent)[0]["content"], sent[0]["content"]
            ('', None)
            >>> profile_for("openai").messages(sent) is sent
            True
        """
        if self.null_content:
            return messages
        return [{**m, "content": ""} if m.get("tool_calls") and m.get("content") is None else m for m in messages]


# name -> profile. "offline": the toolkit's own models (rule-based and in-process local) accept everything.
PROFILES: dict[str, ServerProfile] = {p.name: p for p in (
    ServerProfile("auto", null_content=False, learns=True),  # undeclared: the common case, learned as it goes
    ServerProfile("offline", cache_key=True),
    ServerProfile("openai", cache_key=True),
    # llama-cpp-python's server: no json_schema; null content beside tool calls is a 500; n_ctx 2,048 unless
    # started with --n_ctx.
    ServerProfile("llamacpp", response_formats=("json_object", "text"), null_content=False, context=2048),
    # Ollama's OpenAI API: a forced tool_choice is ignored (the model may answer in text); num_ctx 4,096 by default.
    ServerProfile("ollama", forced_tool_choice=False, context=4096),
    ServerProfile("vllm"),
    ServerProfile("lmstudio"),
)}


def profile_for(name: str) -> ServerProfile:
    """The profile registered as ``name``; a LaresError lists the names.

    Args:
        name: A key of :data:`PROFILES`, in any case (``llamacpp``, ``ollama``...).

    Examples:
        >>> profile_for("Ollama").forced_tool_choice
        False
        >>> profile_for("tgi")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: unknown server 'tgi'; servers: auto, offline, openai, llamacpp, ollama, vllm,
        lmstudio
    """
    key = str(name).strip().lower()
    if key not in PROFILES:
        raise LaresError(f"unknown server {name!r}; servers: {', '.join(PROFILES)}")
    return PROFILES[key]


def server_profile(name: str | ServerProfile | None = None, *, model: str | None = None,
                   client: Any = None) -> ServerProfile:
    """The profile of the server a run talks to: ``name``, else ``$LARES_SERVER``, else one for the model.

    Undeclared, the toolkit's in-process models (offline, local, chaos around them) get ``offline``
    and anything over HTTP ``auto``.

    Args:
        name: A profile, or a name in :data:`PROFILES`; None asks the environment.
        model: The model's name, used only when nothing was declared and ``client`` has no ``base_url``.
        client: The run's client: its ``base_url`` says whether the model is in process (``*.lares.invalid``).

    Examples:
        >>> import os; os.environ.pop("LARES_SERVER", None) and None
        >>> server_profile(model="offline").name, server_profile(model="llama3.2").name
        ('offline', 'auto')
        >>> server_profile("vllm").name
        'vllm'
    """
    if isinstance(name, ServerProfile):
        return name
    declared = name or os.environ.get(ENV)
    if declared:
        return profile_for(declared)
    return PROFILES["offline" if in_process(model, client) else "auto"]


def in_process(model: str | None, client: Any = None) -> bool:
    """Whether a model runs inside this Python process: the offline ones and local GGUFs, with chaos around them.

    Args:
        model: A model name (``chaos-0.2`` and ``chaos:NAME@P`` wrap another); None is the offline default.
        client: The run's client, if any: an openai client in process answers for a ``*.lares.invalid`` host.

    Examples:
        >>> in_process("offline"), in_process("chaos:local-qwen@0.2"), in_process("gpt-4o-mini")
        (True, True, False)
    """
    from .faults.chaos import parse_chaos_name

    base = getattr(client, "base_url", None)
    if base is not None:  # an openai client: in process when its transport answers for a host that cannot exist
        return str(getattr(base, "host", "")).endswith(".lares.invalid")
    from .endpoints import OFFLINE_MODELS
    from .local.llama import LOCAL_MODELS

    if not model:
        return True  # resolve_model's default is the offline model
    try:
        chaos = parse_chaos_name(model)
    except ValueError:
        return False
    return (chaos[0] if chaos else model) in (*OFFLINE_MODELS, *LOCAL_MODELS)


def refused_format(exc: BaseException) -> bool:
    """Whether a failed request was refused for its ``response_format`` (so another kind may work).

    ``exc`` is the SDK's error or one raised from it (``__cause__``, followed a few links): an HTTP
    error whose message names ``response_format``. llama-cpp-python answers a
    request it cannot validate with 500, not 400, so any status counts.

    Args:
        exc: The exception a request raised.

    Examples:
        >>> refused_format(ValueError("response_format json_schema is not supported")), refused_format(ValueError())
        (False, False)
    """
    chain, link = [], exc
    while link is not None and len(chain) < 5:  # the error, what it was raised from, and so on: a few links
        chain.append(link)
        link = link.__cause__ or link.__context__
    for error in chain:
        status = getattr(error, "status_code", None)
        if status is None or not 400 <= status < 600:
            continue
        body = getattr(error, "body", None)
        said = f"{error} {json.dumps(body, default=str) if body is not None else ''}"
        if "response_format" in said:
            return True
    return False
