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
where fault injection (429s, 500s, slow replies) plugs in.

Examples:
    >>> import openai
    >>> with ModelServer(port=0) as server:
    ...     client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    ...     client.models.list().data[0].id
    'offline'
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .wire import handle

__all__ = ["Intercept", "ModelServer", "cli_serve"]

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
        reply = owner.intercept(self.command, self.path, raw) if owner.intercept else None
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
    """``lares serve-model [--host] [--port] [--latency]``: serve until Ctrl-C."""
    try:
        server = ModelServer(args.host, args.port, latency=args.latency, verbose=True)
    except OSError as exc:
        print(f"lares: cannot serve on {args.host}:{args.port} ({exc.strerror or exc}); try another --port.",
              file=sys.stderr)
        return 2
    print(f"Serving the offline model at {server.base_url} (Ctrl-C to stop).\n"
          f"  export OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY=unused", flush=True)
    try:
        server.serve_forever()
    finally:
        server.close()
    return 0
