"""``lares serve-model``: the offline model as an OpenAI-compatible HTTP API on loopback.

Serves ``GET /v1/models`` and ``POST /v1/chat/completions`` with the same
bytes as the in-process transport (both call :func:`.wire.handle`), so other
OpenAI-compatible tools can be pointed at the offline model and tests can
drive the real SDK over real HTTP. Standard library only
(``http.server.ThreadingHTTPServer``): fine for a classroom, not for
production.

:class:`ModelServer` is reusable: start it on a free port in a background
thread, use ``server.base_url``, and ``close()`` it (or use ``with``).
``intercept`` lets a caller answer a request before the model does -- a
``(method, path, body) -> (status, headers, body) | None`` callable; it is
where fault injection plugs in. :class:`Faults` is the one the toolkit ships
(``lares serve-model --fault-rate 0.3 --faults 429,500,timeout,drop``): at a
seeded rate, a chat completion gets a 429 with ``Retry-After``, a 500, a
reply that stalls past the client's timeout, a dropped connection (raise
:class:`DropConnection` from an intercept), or extra latency. The ``openai``
client retries 429, 5xx, timeouts and dropped connections (``max_retries``
in :func:`lares_kit.models.make_client`) and then gives up; the agent ends
with the status ``model_error`` and the error's text (taught in
``notebooks/15_safety_and_failure.ipynb``; tested in ``tests/test_faults.py``).

Examples:
    >>> import openai
    >>> with ModelServer(port=0) as server:
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    ...     client.models.list().data[0].id
    'offline'
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .wire import handle

__all__ = ["FAULT_KINDS", "DropConnection", "Faults", "Intercept", "ModelServer", "cli_serve"]

Response = tuple[int, dict[str, str], bytes]
Intercept = Callable[[str, str, bytes], "Response | None"]


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    disable_nagle_algorithm = True  # headers and body are two writes: without this each reply stalls ~40 ms on a delayed ACK

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner = self.server.owner
        try:
            reply = owner.intercept(self.command, self.path, raw) if owner.intercept else None
        except DropConnection:  # hang up without a word, as a crashed proxy or a flaky network does
            self.close_connection = True
            return
        if reply is None:
            if owner.latency:
                time.sleep(owner.latency)
            reply = handle(self.command, self.path, raw)
        status, headers, body = reply
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: object) -> None:
        if self.server.owner.verbose:
            sys.stderr.write(f"lares serve-model: {format % args}\n")


class DropConnection(Exception):
    """Raised by an intercept: close the connection without sending any reply."""


FAULT_KINDS = ("429", "500", "timeout", "drop", "latency")


class Faults:
    """An intercept that breaks a seeded share of chat completions: the faulty endpoint.

    ``kinds`` from :data:`FAULT_KINDS`: ``429`` (rate limited, with
    ``Retry-After: retry_after`` seconds), ``500`` (server error),
    ``timeout`` (the reply stalls ``hang`` seconds -- longer than the
    client's timeout -- then comes), ``drop`` (the connection is closed with
    no reply), ``latency`` (``latency`` seconds more, then the real reply).
    ``limit`` stops after that many faults (None: no limit). ``log`` lists
    ``(request number, kind)``; ``requests`` counts chat completions seen.

    Examples:
        >>> faults = Faults(rate=1.0, kinds=("500",), seed=1, limit=1)
        >>> faults("POST", "/v1/chat/completions", b"{}")[0], faults("POST", "/v1/chat/completions", b"{}")
        (500, None)
        >>> faults.log
        [(1, '500')]
    """

    def __init__(self, rate: float = 0.2, kinds: tuple[str, ...] = FAULT_KINDS, seed: int = 0, *,
                 retry_after: float = 1.0, hang: float = 30.0, latency: float = 1.0, limit: int | None = None) -> None:
        unknown = [k for k in kinds if k not in FAULT_KINDS]
        if unknown or not kinds:
            raise ValueError(f"unknown faults {', '.join(unknown) or '(none given)'}; faults are: {', '.join(FAULT_KINDS)}")
        if not 0 <= rate <= 1:
            raise ValueError(f"the fault rate is a share between 0 and 1, got {rate}")
        self.rate, self.kinds, self.retry_after, self.hang, self.latency, self.limit = \
            rate, tuple(kinds), retry_after, hang, latency, limit
        self.rng = random.Random(seed)
        self.log: list[tuple[int, str]] = []
        self.requests = 0
        self._lock = threading.Lock()  # the server answers each connection in its own thread

    def __call__(self, method: str, path: str, body: bytes) -> Response | None:
        if method != "POST" or not path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            return None
        with self._lock:
            self.requests += 1
            spent = self.limit is not None and len(self.log) >= self.limit
            kind = self.rng.choice(self.kinds) if self.rng.random() < self.rate and not spent else None
            if kind is not None:
                self.log.append((self.requests, kind))
        if kind == "429":
            # Both headers: the openai SDK reads retry-after-ms first, then retry-after (whole seconds).
            headers = {"retry-after": str(math.ceil(self.retry_after)), "retry-after-ms": str(int(self.retry_after * 1000))}
            return _error(429, "Rate limit reached: too many requests. Retry after the time in Retry-After.",
                          "rate_limit_exceeded", "requests", headers)
        if kind == "500":
            return _error(500, "The server had an error while processing your request (injected fault).",
                          "server_error", "server_error")
        if kind == "drop":
            raise DropConnection
        if kind in ("timeout", "latency"):
            time.sleep(self.hang if kind == "timeout" else self.latency)
        return None  # the model answers (late, for timeout and latency)


def _error(status: int, message: str, code: str, kind: str, headers: dict[str, str] | None = None) -> Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ModelServer


class ModelServer:
    """The offline model over HTTP. ``port=0`` picks a free port; see ``base_url``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8000, *, latency: float = 0.0,
                 intercept: Intercept | None = None, verbose: bool = False) -> None:
        self.latency, self.intercept, self.verbose = latency, intercept, verbose
        self._http = _HTTPServer((host, port), _Handler)
        self._http.owner = self
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._http.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def start(self) -> ModelServer:
        """Serve in a background thread; returns self."""
        self._thread = threading.Thread(target=self._http.serve_forever, name="lares-serve-model", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._http.serve_forever()

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> ModelServer:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def cli_serve(args: argparse.Namespace) -> int:
    """``lares serve-model [--host] [--port] [--latency] [--fault-rate R --faults K,K --retry-after S --hang S
    --fault-seed N]``: serve until Ctrl-C."""
    faults = None
    if getattr(args, "fault_rate", 0.0):
        kinds = tuple(k.strip() for k in (args.faults or ",".join(FAULT_KINDS)).split(",") if k.strip())
        try:
            faults = Faults(args.fault_rate, kinds, args.fault_seed, retry_after=args.retry_after, hang=args.hang,
                            latency=args.latency or 1.0)
        except ValueError as exc:
            print(f"lares: {exc}", file=sys.stderr)
            return 2
    try:
        server = ModelServer(args.host, args.port, latency=0.0 if faults else args.latency, intercept=faults,
                             verbose=True)
    except OSError as exc:
        print(f"lares: cannot serve on {args.host}:{args.port} ({exc.strerror or exc}); try another --port.",
              file=sys.stderr)
        return 2
    print(f"Serving the offline model at {server.base_url} (Ctrl-C to stop).\n"
          f"  export OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY=unused", flush=True)
    if faults is not None:
        print(f"Injecting faults into {faults.rate:.0%} of chat completions: {', '.join(faults.kinds)} "
              f"(seed {args.fault_seed}).", flush=True)
    try:
        server.serve_forever()
    finally:
        server.close()
    return 0
