"""Record a model once, replay it for the whole class: no key, no model, no network, the same replies.

Taught in ``notebooks/00_start_here.ipynb`` and ``docs/models.md`` ("Record
once, replay for the class"). A teacher with one key -- or one machine
that runs the local model -- records real episodes once::

    lares run "turn on the light for my dog" --model gpt-4o-mini --record rec
    lares bench --suite lares-home --limit 5 --model gpt-4o-mini --record rec

and every learner replays them, with no key::

    lares run "turn on the light for my dog" --model replay:rec
    lares bench --suite lares-home --limit 5 --model replay:rec

In Python: ``make_client(model, record=DIR)`` records (or
``make_client(model, record=Recorder(DIR))`` to share one session between
clients), and ``make_client("replay:DIR")``, ``run_agent(...,
model="replay:DIR")`` or ``LARES_MODEL=replay:DIR`` replay.

Both work on the wire, like the chaos model (:mod:`~lares_kit.models.faults.chaos`):
:class:`RecordingTransport` wraps the HTTP transport of whatever client the
model's name builds -- the offline model, ``chaos:...``, ``local``, a remote
endpoint -- and writes each request and its reply (:mod:`~lares_kit.models.recording.sessions` has the
file format); :class:`ReplayTransport` answers the ``openai`` SDK's real
requests from the files. The SDK parses a replayed reply as it parsed the
recorded one, so the usage, the tool calls and the errors -- a 429, a 500, a
refused connection -- come back the same, and a ``lares run --json`` of the
replay prints what the recording's run printed.

**Which reply.** A request is matched on everything but the fields that
differ from run to run (:data:`~lares_kit.models.recording.sessions.IGNORED`: the run's
``prompt_cache_key``). The same request recorded several times (twice in one
episode, or in several bench trials) gets its replies in the recorded order;
asked more often than it was recorded, it gets the last one again. So the
same command replays the same way every time, and a client replays an
episode again from the start when it is made again. Episodes that run side by
side (``--concurrency`` above 1) may take identical requests' replies in
another order than they were recorded; one at a time (the default) replays
exactly.

**A request that was not recorded** -- a learner changed the prompt -- is a
:class:`~lares_kit.models.recording.sessions.NotRecorded` (a LaresError) naming the
closest recorded request and where the two differ. It is never answered by
another model. Inside an agent it ends the episode as a ``model_error`` with
that sentence; ``lares run`` and ``lares bench`` print it as one line and exit 2.

A replayed recording waits for nothing: a recorded 429's ``Retry-After`` and
the SDK's backoff are not waited again.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Sequence
from typing import Any

import openai

from ..retries import LaresOpenAI, _read_timeout
from ..transport import httpx
from .sessions import NotRecorded, Recorder, Recording, request_key

__all__ = ["PREFIX", "RecordingTransport", "ReplayOpenAI", "ReplayTransport", "command_report", "record_client",
           "recorder_of", "recording_of", "replay_client", "replay_folder"]

PREFIX = "replay:"
REPLAY_BASE_URL = "http://replay.lares.invalid/v1"  # a recording that does not say where its model was


def replay_folder(name: str | None) -> str | None:
    """``"replay:DIR"`` -> ``"DIR"``; None for a name that is not a replay.

    Args:
        name: a model name.

    Examples:
        >>> replay_folder("replay:~/class/rec"), replay_folder("offline"), replay_folder("replay:")
        ('~/class/rec', None, '')
    """
    return name[len(PREFIX):] if name and name.startswith(PREFIX) else None


def _relative(path: str, base_path: str) -> str:
    # "/v1/chat/completions" under "http://host/v1" -> "/chat/completions": a recording does not depend on the URL
    return path[len(base_path):] if base_path and path.startswith(base_path) else path


def _body(request: Any) -> Any:
    try:
        return json.loads(request.content) if request.content else None
    except ValueError:
        return request.content.decode("utf-8", "replace")


def _public(url: str) -> str:
    return re.sub(r"//[^/@]*@", "//", url)  # never a user name or password written into a manifest


class RecordingTransport(httpx.BaseTransport):
    """An HTTP transport that passes every request to ``inner`` and writes it and its reply to ``recorder``.

    Examples:
        >>> import tempfile
        >>> from lares_kit.models import make_client
        >>> client = make_client("offline", record=tempfile.mkdtemp(), max_retries=0)
        >>> _ = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
        >>> recorder = recorder_of(client)
        >>> recorder.path.name, recorder.count
        ('session-0001.jsonl', 1)
    """

    def __init__(self, inner: Any, recorder: Recorder, base_path: str = "") -> None:
        self.inner, self.recorder, self.base_path = inner, recorder, base_path

    def handle_request(self, request: Any) -> Any:
        request.read()
        method, path, body = request.method, _relative(request.url.path, self.base_path), _body(request)
        try:
            response = self.inner.handle_request(request)
        except httpx.TransportError as exc:  # no reply: a refused connection, a timeout -- replayed as raised
            self.recorder.add(method, path, body, None, {}, raised={"type": type(exc).__name__, "message": str(exc)})
            raise
        response.read()
        try:
            value = json.loads(response.content)
        except ValueError:
            self.recorder.add(method, path, body, response.status_code, dict(response.headers),
                              text=response.content.decode("utf-8", "replace"))
        else:
            self.recorder.add(method, path, body, response.status_code, dict(response.headers), value)
        return response

    def close(self) -> None:
        self.inner.close()  # the recorder stays open: other clients may share it (its file closes with it)


class ReplayTransport(httpx.BaseTransport):
    """An HTTP transport that answers from a :class:`~lares_kit.models.recording.sessions.Recording`.

    It never asks a model. ``missed`` keeps every :class:`NotRecorded` it raised; ``replayed``
    counts the requests it answered. A request whose ``model`` is a replay
    name (``replay:DIR``) is read as the recording's first model.

    Examples:
        >>> import tempfile
        >>> from lares_kit.models import make_client
        >>> folder = tempfile.mkdtemp()
        >>> ask = dict(model="offline", messages=[{"role": "user", "content": "which lights are on?"}])
        >>> said = make_client("offline", record=folder).chat.completions.create(**ask).choices[0].message.content
        >>> make_client("replay:" + folder).chat.completions.create(**ask).choices[0].message.content == said
        True
    """

    def __init__(self, recording: Recording, base_path: str = "") -> None:
        self.recording, self.base_path = recording, base_path
        models = recording.models
        self.model = models[0] if models else None
        self.queues: dict[str, list[int]] = {}  # request key -> its exchanges, in the recorded order
        for i, exchange in enumerate(recording.exchanges):
            self.queues.setdefault(exchange["key"], []).append(i)
        self.used: dict[str, int] = {}
        self.missed: list[NotRecorded] = []
        self.replayed = 0
        self._lock = threading.Lock()

    def handle_request(self, request: Any) -> Any:
        request.read()
        method, path, body = request.method, _relative(request.url.path, self.base_path), _body(request)
        if isinstance(body, dict) and replay_folder(str(body.get("model", ""))) is not None and self.model:
            body = {**body, "model": self.model}
        key = request_key(method, path, body)
        with self._lock:
            queue = self.queues.get(key)
            if not queue:
                miss = self.recording.closest(method, path, body)
                self.missed.append(miss)
                raise miss
            used = self.used.get(key, 0)
            self.used[key] = used + 1
            self.replayed += 1
            exchange = self.recording.exchanges[queue[min(used, len(queue) - 1)]]
        return _replayed(exchange, request)


def _replayed(exchange: dict[str, Any], request: Any) -> Any:
    raised = exchange.get("raised")
    if raised is not None:
        kind = getattr(httpx, str(raised.get("type")), None)
        kind = kind if isinstance(kind, type) and issubclass(kind, httpx.TransportError) else httpx.TransportError
        raise kind(raised.get("message", ""), request=request)
    headers = dict(exchange.get("headers") or {})
    if "text" in exchange:
        content = str(exchange["text"]).encode()
    else:
        content = json.dumps(exchange.get("response")).encode()
        headers.setdefault("content-type", "application/json")
    return httpx.Response(exchange.get("status") or 200, headers=headers, content=content, request=request)


class ReplayOpenAI(LaresOpenAI):
    """The replay's ``openai.OpenAI``: a remote model's retry policy, no waiting, and NotRecorded as it is.

    A recorded failure is retried as the recorded client did (a 429, a
    5xx, a lost connection; never a 4xx or a read timeout) without waiting;
    a request that was not recorded is raised as its
    :class:`NotRecorded` at once, never retried or called a connection error.
    ``recording`` is the :class:`Recording` it answers from; ``replay``, its
    transport, counts what it replayed and missed.
    """

    recording: Recording
    replay: ReplayTransport

    def _sleep_for_retry(self, **kw: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, NotRecorded):  # openai 2.x hands any transport error to the retry loop
            raise exc
        if _read_timeout(kw.get("response")) is not None:
            super()._sleep_for_retry(**kw)  # raises APITimeoutError, as the recorded client did
        # any other wait (backoff, Retry-After) was waited when it was recorded

    def request(self, *args: Any, **kw: Any) -> Any:  # noqa: D102 -- the SDK's, with NotRecorded let through
        try:
            return super().request(*args, **kw)
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, NotRecorded):  # openai 2.x wraps it once the retries are spent
                raise exc.__cause__ from None
            raise


def replay_client(folder: str | os.PathLike[str], *, max_retries: int = 2, timeout: float = 60.0,
                  only: Sequence[str] | None = None, **kw: Any) -> ReplayOpenAI:
    """An ``openai.OpenAI`` client answered from the recording in ``folder`` (``make_client("replay:DIR")``).

    Its base URL is the recorded client's, so the toolkit treats it as it
    treated that model (the server profile of an in-process or a remote
    model). ``client.recording`` is the :class:`Recording`; ``client.replay``,
    its transport, counts what it replayed and missed.

    Args:
        folder: a folder written by ``--record DIR`` or ``make_client(model, record=DIR)``.
        max_retries: how many times a recorded 429, 5xx or failed connection is asked again (without waiting).
        timeout: the client's timeout (nothing is waited for).
        only: answer only from these session files of the folder (one episode's); None: from all.
        **kw: passed on to ``openai.OpenAI``; ``api_key`` and ``base_url`` are not used.

    Examples:
        >>> replay_client("no/such/folder")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: there is no recording at no/such/folder: the folder does not exist. Record one
        with --record DIR (lares run ... --record DIR), or check the path after replay:
    """
    recording = Recording(folder, only=only)
    base_url = recording.manifests[0].get("base_url") or REPLAY_BASE_URL
    kw.pop("api_key", None)
    kw.pop("base_url", None)
    http = httpx.Client(transport=ReplayTransport(recording, ""), base_url=base_url, timeout=timeout)
    client = ReplayOpenAI(api_key="replay", base_url=base_url, http_client=http, max_retries=max_retries,
                          timeout=timeout, **kw)
    http._transport.base_path = client.base_url.path.rstrip("/")
    client.recording, client.replay = recording, http._transport
    return client


def recording_of(client: Any) -> Recording | None:
    """The :class:`Recording` a replay client answers from; None for any other client.

    Args:
        client: A run's client (any kind).

    Examples:
        >>> recording_of(object()) is None
        True
    """
    return client.recording if isinstance(client, ReplayOpenAI) else None


def recorder_of(client: Any) -> Recorder | None:
    """The :class:`Recorder` a recording client writes into (``make_client(model, record=...)``); else None.

    Args:
        client: A run's client (any kind).

    Examples:
        >>> recorder_of(object()) is None
        True
    """
    transport = getattr(getattr(client, "_client", None), "_transport", None)  # the SDK's httpx transport
    return transport.recorder if isinstance(transport, RecordingTransport) else None


def record_client(client: Any, record: str | os.PathLike[str] | Recorder, model: str) -> Any:
    """``client`` with every request and reply written to a recording (``make_client(model, record=...)``).

    Args:
        client: an ``openai.OpenAI`` client, any kind (offline, chaos, local, remote, even a replay).
        record: a folder (a new session file in it) or a :class:`Recorder` (shared with other clients).
        model: the model's name, for the manifest.
    """
    recorder = record if isinstance(record, Recorder) else Recorder(record, models=[model])
    if model not in recorder.models:
        recorder.models.append(model)
    if recorder.base_url is None:
        recorder.base_url = _public(str(client.base_url))
    http = client._client  # the SDK's httpx client: its transport, and any a proxy setting mounted
    base_path = client.base_url.path.rstrip("/")
    http._transport = RecordingTransport(http._transport, recorder, base_path)
    http._mounts = {pattern: RecordingTransport(t, recorder, base_path) if t is not None else None
                    for pattern, t in http._mounts.items()}
    return client


def command_report(clients: dict[str, Any], out: Any) -> None:
    """After a command: raise the first request a replay did not hold, else say what was replayed and recorded.

    Args:
        clients: the command's clients (:func:`lares_kit.models.client.command_clients`).
        out: where the lines go (a file: ``sys.stderr`` for ``lares run``, whose output is the episode).
    """
    unique = list({id(c): c for c in clients.values()}.values())
    replays = [c.replay for c in unique if isinstance(c, ReplayOpenAI)]
    missed = [miss for replay in replays for miss in replay.missed]
    if missed:
        raise missed[0] if len(missed) == 1 else NotRecorded(f"{len(missed)} requests were not recorded; the first: "
                                                             f"{missed[0]}")
    for replay in replays:
        print(f"replayed {replay.replayed} recorded replies from {replay.recording.given}; no model was called",
              file=out)
    recorders = {id(r): r for c in unique if (r := recorder_of(c)) is not None}
    for recorder in recorders.values():
        where = os.path.join(recorder.given, recorder.path.name) if recorder.path else recorder.given
        print(f"recorded {recorder.count} requests in {where}", file=out)
