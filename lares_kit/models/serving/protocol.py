"""How ``lares serve-model`` reads HTTP: uvicorn's HTTP/1.1 protocol, with JSON errors and deadlines.

Part of the server (:mod:`.server`). uvicorn and h11 parse requests, keep
connections alive and close idle ones; this subclass of uvicorn's
``H11Protocol`` adds what a broken or hostile client needs:

* a request that is not HTTP/1.1 (a garbage request line, ``Content-Length:
  abc``, a bad chunk) gets a 400 -- headers over the size limit a 431 --
  as JSON in OpenAI's error shape, where uvicorn would send plain text;
* headers that have not all arrived ``read_timeout`` seconds after their
  first byte get a 408 (a slowloris client cannot hold a connection open
  forever); a connection that sends nothing is closed like an idle
  keep-alive one;
* the app may hang up without replying, through the ``lares.hang_up`` scope
  extension: a callable that closes the connection (the ``drop`` fault).

It does not read bodies (the app bounds those: :mod:`~lares_kit.models.serving.app`) and does
not answer requests.
"""

from __future__ import annotations

import asyncio
import http
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .wire_checks import WireError, error_body

__all__ = ["ModelProtocol", "error_bytes"]


def error_bytes(status: int, message: str, code: str) -> bytes:
    """A whole HTTP/1.1 error response, JSON in OpenAI's shape, that closes the connection.

    Args:
        status: the HTTP status, e.g. 400, 408 or 431.
        message: the sentence a reader sees in ``error.message``.
        code: the machine-readable ``error.code``, e.g. ``"request_timeout"``.

    Examples:
        >>> error_bytes(408, "Too slow.", "request_timeout").split(b"\\r\\n")[0]
        b'HTTP/1.1 408 Request Timeout'
    """
    body = json.dumps(error_body(WireError(message, None, code, status))).encode()
    head = (f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode() + body


class ModelProtocol(H11Protocol):
    """uvicorn's h11 protocol with JSON 400/408/431 errors, a deadline for headers, and ``lares.hang_up``.

    Made by uvicorn for each connection: ``Config(http=functools.partial(ModelProtocol, read_timeout=10))``.
    """

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None, *, read_timeout: float = 10.0) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.read_timeout = read_timeout
        self.header_limit = config.h11_max_incomplete_event_size or 16 * 1024  # h11's own default
        self._headers_due: asyncio.TimerHandle | None = None  # armed from a request's first byte to its last header
        self._model_app, self.app = self.app, self._with_hang_up

    async def _with_hang_up(self, scope: Any, receive: Any, send: Any) -> None:
        scope.setdefault("extensions", {})["lares.hang_up"] = self.transport.close  # FIN, no reply
        await self._model_app(scope, receive, send)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A client that connects and sends nothing is closed like an idle keep-alive connection.
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def data_received(self, data: bytes) -> None:
        between = self.cycle is None or self.cycle.response_complete  # these bytes start a new request
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:  # the headers are in (the app bounds the body)
            self._stop_clock()
        elif between and self._headers_due is None and not self.transport.is_closing():
            self._headers_due = self.loop.call_later(self.read_timeout, self._headers_late)

    def _stop_clock(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _headers_late(self) -> None:
        self._headers_due = None
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._send_error(408, f"The request's headers did not all arrive within {self.read_timeout:g} seconds.",
                             "request_timeout")

    def _send_error(self, status: int, message: str, code: str) -> None:
        # Written by hand: h11 will not send a response to a request it never read.
        self.transport.write(error_bytes(status, message, code))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """What uvicorn calls when h11 cannot read a request (replaces its plain-text 400)."""
        waiting, _ = self.conn.trailing_data
        if len(waiting) > self.header_limit:
            self._send_error(431, f"The request's headers are larger than {self.header_limit} bytes.",
                             "request_header_fields_too_large")
        else:
            self._send_error(400, "The request is not valid HTTP/1.1: its request line, a header, or the framing "
                             "of its body could not be read.", "invalid_http_request")

    def _should_upgrade(self) -> bool:
        # Plain HTTP/1.1 only: an Upgrade header (websocket, h2c) is ignored and the request served as it is,
        # without uvicorn's warning that tells the user to install a websocket library.
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_clock()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._stop_clock()
        try:
            super().shutdown()
        except h11.LocalProtocolError:  # the connection already failed: nothing to say, just close it
            self.transport.close()

    def timeout_keep_alive_handler(self) -> None:
        try:
            super().timeout_keep_alive_handler()
        except h11.LocalProtocolError:
            self.transport.close()
