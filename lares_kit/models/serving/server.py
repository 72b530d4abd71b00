"""``lares serve-model``: the offline model as an OpenAI-compatible HTTP API on loopback.

Serves ``GET /v1/models`` and ``POST /v1/chat/completions`` with the same
bytes as the in-process transport (both call :func:`.wire.handle`), so other
OpenAI-compatible tools can be pointed at the offline model and tests can
drive the real SDK over real HTTP. It runs on uvicorn (HTTP parsing,
keep-alive, a listen backlog of 2,048) with a Starlette app
(:mod:`~lares_kit.models.serving.app`) and a stricter HTTP protocol (:mod:`~lares_kit.models.serving.protocol`):
every malformed request gets a 4xx JSON error in OpenAI's shape within
``read_timeout`` seconds, slow or hostile clients do not hold up the
others, and the server stops within a fraction of a second (Ctrl-C,
SIGTERM or :meth:`ModelServer.close`) even with connections held open.

:class:`ModelServer` is reusable: start it on a free port in a background
thread, use ``server.base_url``, and ``close()`` it (or use ``with``).
``intercept`` lets a caller answer a request before the model does -- a
``(method, path, body) -> (status, headers, body) | None`` callable, run in
a worker thread; it is where fault injection plugs in. :class:`Faults` is the
one the toolkit ships (``lares serve-model --fault-rate 0.3 --faults
429,500,timeout,drop``; :mod:`~lares_kit.models.faults.endpoint`), and :class:`DropConnection`, raised
from an intercept, hangs up without a reply. The ``openai`` client retries
429, 5xx, timeouts and dropped connections (``max_retries`` in
:func:`lares_kit.models.make_client`) and then gives up; the agent ends with
the status ``model_error`` and the error's text (taught in
``notebooks/15_safety_and_failure.ipynb``; tested in ``tests/system/test_faults.py``).

Examples:
    >>> import openai
    >>> with ModelServer(port=0) as server:
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    ...     client.models.list().data[0].id
    'offline'
"""

from __future__ import annotations

import argparse
import functools
import gc
import logging
import signal
import socket
import sys
import threading
from typing import Any

import uvicorn

from ..faults.endpoint import FAULT_KINDS, DropConnection, Faults, Intercept, json_error
from .app import ModelApp
from .guard import ServerLimits, Tokens, open_door
from .protocol import ModelProtocol

__all__ = ["FAULT_KINDS", "DropConnection", "Faults", "Intercept", "ModelServer", "ThreadedServer", "cli_serve",
           "listen_socket"]

BACKLOG = 2048  # connections the kernel queues while the server is busy (http.server's was 5)


class _Uvicorn(uvicorn.Server):
    # uvicorn's server, telling the app when it starts and stops serving (so every wait ends at once).
    def __init__(self, config: uvicorn.Config, app: ModelApp) -> None:
        super().__init__(config)
        self.model_app = app

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.model_app.starting()
        await super().startup(sockets)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.model_app.stop()
        await super().shutdown(sockets)


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound and listening at once, so the port is known (port=0) and a busy port fails here.

    Args:
        host: The address to listen on, e.g. ``"127.0.0.1"``.
        port: The port; 0 lets the operating system pick a free one.
    """
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # restart at once after a stop (TIME_WAIT)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


class ThreadedServer:
    """A uvicorn server on a listening socket, served from a background thread: start, stop, wait, close, ``with``.

    Subclasses set ``_server`` (a ``uvicorn.Server``), call :meth:`_listen`
    and set ``thread_name``; ``lares serve-home``'s server
    (:class:`lares_kit.serve.app.HomeServer`) is the other one.
    """

    thread_name = "lares-server"
    _server: uvicorn.Server
    _socket: socket.socket
    _address: tuple[str, int]
    _thread: threading.Thread | None = None

    def _listen(self, host: str, port: int) -> None:
        """Bind the listening socket (:func:`listen_socket`) and note its address."""
        self._socket = listen_socket(host, port)
        bound_host, bound_port = self._socket.getsockname()[:2]
        # Kept: uvicorn closes the socket when it stops, and the URLs stay readable after stop() and close().
        self._address = str(bound_host), int(bound_port)

    @property
    def address(self) -> tuple[str, int]:
        return self._address

    @property
    def url(self) -> str:
        """``http://HOST:PORT``, an IPv6 host in brackets."""
        host, port = self.address
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    def start(self) -> ThreadedServer:
        """Serve in a background thread; returns self. Clients may connect before it is up (the backlog)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]},
                                            name=self.thread_name, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the server to stop and return at once (safe from a signal handler); a second call stops harder."""
        if self._server.should_exit:
            self._server.force_exit = True  # stop waiting for connections to finish
        self._server.should_exit = True

    def wait(self) -> None:
        """Block until the server has stopped (after :meth:`stop`, from another thread or a signal)."""
        thread = self._thread
        while thread is not None and thread.is_alive():
            thread.join(0.5)  # a timeout, so Ctrl-C reaches a signal handler on every platform

    def serve_forever(self) -> None:
        """Serve until :meth:`stop` or Ctrl-C, then close."""
        self.start()
        try:
            self.wait()
        finally:
            self.close()

    def serve_until_signalled(self) -> None:
        """Serve until Ctrl-C (SIGINT) or SIGTERM, which stop it at once, then close; the handlers are put back."""

        def on_signal(signum: int, frame: Any) -> None:
            self.stop()

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.serve_forever()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread is not None:
            self.stop()
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> ThreadedServer:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class ModelServer(ThreadedServer):
    """The offline model over HTTP, on a free port unless ``port`` names one (0, the default); see ``base_url``.

    ``latency``: seconds to wait before each reply. ``intercept``: see the
    module docstring. ``verbose``: log each request to stderr. ``limits``:
    what a client may send and how slowly (:class:`~lares_kit.models.serving.guard.ServerLimits`;
    a request body may be 32 MiB here, a long chat). ``token``: the API key
    clients must send (``OPENAI_API_KEY``); None on loopback lets any local
    client in, and a server bound beyond loopback refuses to start without
    one. ``allow_hosts``/``allow_origins``: Host names and browser origins
    accepted besides loopback's own (:class:`~lares_kit.models.serving.guard.AccessGuard`).
    ``intercept`` and ``latency`` may be changed while it serves.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, latency: float = 0.0,
                 intercept: Intercept | None = None, verbose: bool = False, limits: ServerLimits | None = None,
                 token: str | None = None, allow_hosts: tuple[str, ...] = (),
                 allow_origins: tuple[str, ...] = ()) -> None:
        self.verbose = verbose
        self.limits = limits or ServerLimits(max_body=32 * 1024 * 1024)
        self.token = token
        self.app = ModelApp(intercept=intercept, latency=latency)
        guard = open_door(self.app.asgi, host, limits=self.limits, allow_hosts=allow_hosts,
                          allow_origins=allow_origins, tokens=Tokens({"client": token} if token else None),
                          error=_openai_error, stopping=lambda: self.app.stopping.wait())
        self._listen(host, port)
        self._server = _Uvicorn(uvicorn_config(guard, self.limits, lifespan="off",
                                               timeout_graceful_shutdown=5),  # the app's own waits end at stop
                                self.app)
        if verbose:
            _log_to_stderr()

    intercept = property(lambda self: self.app.intercept, lambda self, value: setattr(self.app, "intercept", value))
    latency = property(lambda self: self.app.latency, lambda self, value: setattr(self.app, "latency", value))

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def requests_served(self) -> int:
        """Responses sent so far."""
        return self._server.server_state.total_requests

    thread_name = "lares-serve-model"

    def close(self) -> None:
        """Stop serving and free the port: idle connections close, requests not yet answered get a 503."""
        super().close()


def uvicorn_config(app: Any, limits: ServerLimits, **options: Any) -> uvicorn.Config:
    """uvicorn's settings for a lares server: the strict HTTP protocol with ``limits``' deadlines, no websockets.

    Shared by ``serve-model`` and ``serve-home``, so both read requests the same way.

    Args:
        app: The ASGI app (behind its :class:`~lares_kit.models.serving.guard.AccessGuard`).
        limits: The server's limits (read deadline, keep-alive, header size).
        options: More ``uvicorn.Config`` settings (``lifespan``, ``timeout_graceful_shutdown``).
    """
    return uvicorn.Config(
        app, http=functools.partial(ModelProtocol, read_timeout=limits.read_timeout),  # type: ignore[arg-type]
        ws="none", interface="asgi3", loop="asyncio", proxy_headers=False, server_header=False,
        timeout_keep_alive=limits.keep_alive, h11_max_incomplete_event_size=limits.header_limit,  # type: ignore
        log_config=None, **options)  # log_config=None: leave the process's logging alone (verbose adds one handler)


def _openai_error(status: int, message: str) -> bytes:
    # The guard's refusals in OpenAI's error shape, which the SDK reads.
    codes = {400: "invalid_request", 401: "invalid_api_key", 403: "forbidden_origin", 408: "request_timeout",
             413: "request_too_large", 415: "unsupported_media_type", 421: "misdirected_request",
             503: "server_shutting_down"}
    return json_error(status, message, codes.get(status), "server_error" if status >= 500 else
                      "invalid_request_error")[2]


def _log_to_stderr() -> None:
    # uvicorn's loggers ("uvicorn.error": warnings and tracebacks, "uvicorn.access": one line per request).
    logger = logging.getLogger("uvicorn")
    if not any(getattr(h, "lares", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("lares serve-model: %(message)s"))
        handler.lares = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def cli_serve(args: argparse.Namespace) -> int:
    """``lares serve-model [--host] [--port] [--token T] [--allow-host NAME] [--allow-origin URL] [--latency]
    [--fault-rate R --faults K,K --retry-after S --hang S --fault-seed N]``: serve until Ctrl-C or SIGTERM,
    on a free port unless ``--port`` names one.

    The address actually bound is printed first, as ``export OPENAI_BASE_URL=...``: with no fixed port, two
    users (or two notebooks) on one machine each get their own server.

    Args:
        args: the parsed command line: ``host``, ``port`` (0 or None: a free one), ``token`` (the API key
            clients must send; required beyond loopback), ``allow_host`` and ``allow_origin`` (lists), ``latency``
            (seconds),
            ``fault_rate`` (0 to 1), ``faults``
            (kinds, comma-separated), ``fault_seed``, ``retry_after`` and ``hang`` (seconds).
    """
    faults = None
    if getattr(args, "fault_rate", 0.0):
        kinds = tuple(k.strip() for k in (args.faults or ",".join(FAULT_KINDS)).split(",") if k.strip())
        try:
            faults = Faults(args.fault_rate, kinds, args.fault_seed, retry_after=args.retry_after, hang=args.hang,
                            latency=args.latency or 1.0)
        except ValueError as exc:
            print(f"lares: {exc}", file=sys.stderr)
            return 2
    from ...errors import LaresError

    try:
        server = ModelServer(args.host, args.port or 0, latency=0.0 if faults else args.latency, intercept=faults,
                             verbose=True, token=getattr(args, "token", None),
                             allow_hosts=tuple(getattr(args, "allow_host", None) or ()),
                             allow_origins=tuple(getattr(args, "allow_origin", None) or ()))
    except LaresError as exc:
        print(f"lares: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"lares: cannot serve on {args.host}:{args.port} ({exc.strerror or exc}); try another --port.",
              file=sys.stderr)
        return 2
    print(f"Serving the offline model at {server.base_url} (Ctrl-C to stop).\n"
          f"  export OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY={server.token or 'unused'}", flush=True)
    if faults is not None:
        print(f"Injecting faults into {faults.rate:.0%} of chat completions: {', '.join(faults.kinds)} "
              f"(seed {args.fault_seed}).", flush=True)

    server.serve_until_signalled()
    print(f"lares serve-model: stopped after {server.requests_served} responses.", file=sys.stderr)
    # The process exits next. Tearing down the interpreter collects every object the model and the
    # openai SDK made (~0.5 s of CPU; over a second on a busy 2-core machine, which broke the 2 s promise);
    # frozen objects are left to the operating system instead (~0.1 s). Nothing is left to clean up.
    gc.freeze()
    return 0
