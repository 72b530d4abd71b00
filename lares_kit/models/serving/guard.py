"""Who may knock on an HTTP door, and how much they may send: one guard for ``serve-home`` and ``serve-model``.

Taught in ``docs/security.md``. A server on 127.0.0.1 is not private: every
web page the user's browser opens can send it requests, a page on a domain
that resolves to 127.0.0.1 (DNS rebinding) can read its answers, and on a
shared machine (a class's JupyterHub) every student is on the same loopback.
:class:`AccessGuard` is an ASGI middleware that stands in front of every
route of a server -- MCP's included -- and answers before the app does:

* **Host** must be one of the names the server answers to (loopback names,
  and those given with ``--allow-host``), else 421: a rebinding page's
  ``Host: evil.example`` never reaches the home;
* **Origin**, when a browser sends one, must be the server's own (or one
  given with ``--allow-origin``), else 403 -- as the MCP specification asks of
  every server;
* **a token** (:class:`Tokens`), as a bearer header or a ``?token=`` query (an
  ``EventSource`` cannot send headers), else 401; each token speaks for one
  *source* (owner, guest...), which the route reads with :func:`source_of`;
* a request with a body must say ``Content-Type: application/json``, else
  415: a page's ``text/plain`` POST is a "simple" request a browser sends
  without asking the server first, a JSON one is not;
* the body is read here, at most :attr:`ServerLimits.max_body` bytes however it
  is framed (else 413, counted while reading, so a chunked body of any size is
  never held), within :attr:`ServerLimits.read_timeout` seconds (else 408), and
  a JSON body nested deeper than :attr:`ServerLimits.max_json_depth` is a 400
  before anything parses it.

:class:`ServerLimits` is the one set of numbers both servers use (the read
deadline for headers is :mod:`lares_kit.models.serving.protocol`'s). The guard
knows no route and no home: the servers give it the hosts, origins and tokens.

Examples:
    >>> Tokens({"owner": "a" * 24}).source("a" * 24), Tokens({"owner": "a" * 24}).source("b" * 24)
    ('owner', None)
    >>> json_depth(b'{"a": [1, {"b": "[[["}]}')
    3
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...errors import LaresError

__all__ = ["AccessGuard", "ServerLimits", "Tokens", "LOOPBACK_NAMES", "check_port", "is_loopback", "json_depth",
           "new_token", "open_door", "origin_of", "source_of", "TOKEN_ENV", "SOURCE_KEY"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")  # Host names a loopback server answers to
TOKEN_ENV = "LARES_HOME_TOKEN"  # the environment variable that gives serve-home's token
SOURCE_KEY = "lares_source"  # where the guard notes the caller's source, in the request's scope["state"]
MIN_TOKEN = 16  # characters: shorter tokens can be guessed


@dataclass(frozen=True)
class ServerLimits:
    """The limits of one HTTP server: what a client may send, and how slowly. Both servers take one.

    Examples:
        >>> ServerLimits().read_timeout, ServerLimits(read_timeout=0.5).read_timeout
        (10.0, 0.5)
    """

    max_body: int = 1024 * 1024  # bytes of one request's body (serve-model allows more: long chats)
    max_json_depth: int = 64  # nesting of a JSON body: arrays and objects inside one another
    read_timeout: float = 10.0  # seconds for a request's headers, then again for its body (else 408)
    keep_alive: float = 15.0  # seconds an idle connection stays open
    header_limit: int = 16 * 1024  # bytes of request line and headers (else 431)
    event_queue: int = 1000  # changes a slow event-stream client may fall behind before its stream is ended


def check_port(value: Any) -> int:
    """A TCP port, 0-65535 (0: a free one); a LaresError says why not -- never a silently wrapped number.

    Args:
        value: The port as given on a command line, e.g. ``"8000"``.

    Examples:
        >>> check_port("8000")
        8000
        >>> check_port("100939")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --port must be a number from 0 to 65535 (0 picks a free one), not '100939'.
    """
    text = str(value).strip()
    if not text.isdigit() or int(text) > 65535:
        raise LaresError(f"--port must be a number from 0 to 65535 (0 picks a free one), not {str(value)!r}.")
    return int(text)


def is_loopback(host: str) -> bool:
    """True when ``host`` (a name or address to listen on) reaches only this machine.

    Args:
        host: ``127.0.0.1``, ``localhost``, ``::1``, ``0.0.0.0``, a name...

    Examples:
        >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
        (True, True, True, False)
    """
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    """A fresh random token (32 URL-safe characters), as Jupyter makes one when none is given."""
    return secrets.token_urlsafe(24)


class Tokens:
    """Tokens and the source each speaks for; checked in constant time.

    Args:
        by_source: source -> token, e.g. ``{"owner": "...", "guest": "..."}``. Empty: no token needed.

    Examples:
        >>> Tokens({"guest": "short"})
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: the token for 'guest' is 5 characters; a token must have at least 16, so it \
cannot be guessed (leave --token out to have one made).
    """

    def __init__(self, by_source: dict[str, str] | None = None) -> None:
        self.by_source = dict(by_source or {})
        for source, token in self.by_source.items():
            if len(token) < MIN_TOKEN:
                raise LaresError(f"the token for {source!r} is {len(token)} characters; a token must have at least "
                                 f"{MIN_TOKEN}, so it cannot be guessed (leave --token out to have one made).")
        if len(set(self.by_source.values())) < len(self.by_source):
            raise LaresError("two sources were given the same token: each token speaks for one source.")

    def __bool__(self) -> bool:
        return bool(self.by_source)

    def source(self, token: str | None) -> str | None:
        """The source ``token`` speaks for, or None when it is no token of this server.

        Args:
            token: What the client sent.
        """
        if not token:
            return None
        found = None
        for source, known in self.by_source.items():  # every token compared, so the time tells nothing
            if hmac.compare_digest(known.encode(), token.encode()):
                found = source
        return found


def source_of(scope: dict[str, Any], default: str) -> str:
    """The source the guard found for this request's token; ``default`` when the server needs no token.

    Args:
        scope: The ASGI scope (``request.scope``).
        default: The server's own source.
    """
    return (scope.get("state") or {}).get(SOURCE_KEY) or default


def json_depth(body: bytes) -> int:
    """How deeply arrays and objects nest in a JSON text, read without parsing it (strings are skipped).

    Args:
        body: The JSON text, as bytes.

    Examples:
        >>> json_depth(b"[[[]]]"), json_depth(b'"{{{"'), json_depth(b"3")
        (3, 0, 0)
    """
    depth = deepest = 0
    for token in _JSON_TOKENS.findall(body):
        if token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a whole string, or one bracket


@dataclass
class AccessGuard:
    """ASGI middleware: Host, Origin, token, content type, body size, read time and JSON depth, before ``app``.

    ``error(status, message)`` builds the JSON body of a refusal in the server's own shape.
    ``hosts``: the Host names accepted (without port); ``origins``: origins accepted besides the server's own.
    """

    app: Any
    limits: ServerLimits = field(default_factory=ServerLimits)
    hosts: tuple[str, ...] = LOOPBACK_NAMES
    origins: tuple[str, ...] = ()
    tokens: Tokens = field(default_factory=Tokens)
    error: Callable[[int, str], bytes] = lambda status, message: json.dumps({"error": message}).encode()
    # () -> an awaitable that ends when the server stops: a body still arriving then gets a 503 at once
    stopping: Callable[[], Awaitable[Any]] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await self._refuse(send, *refusal)
            return
        if scope["method"] == "POST":  # the one method with a body any route here takes
            body = await self._body(headers, receive)
            if body is None:  # the client left while sending: nobody to answer
                return
            if isinstance(body, tuple):
                await self._refuse(send, *body)
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    def _refusal(self, scope: dict[str, Any], headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
        host = headers.get("host")
        # No Host at all is HTTP/1.0 from a program (h11 refuses HTTP/1.1 without one); browsers always send it.
        if host is not None and _host_name(host) not in self.hosts:
            return 421, (f"This server does not answer to the host {host!r}: it answers to "
                         f"{', '.join(self.hosts)} (start it with --allow-host NAME to add a name)."), {}
        origin = headers.get("origin")
        own = {f"http://{host}".lower(), f"https://{host}".lower()} if host else set()
        if origin is not None and origin.lower() not in own | {o.lower() for o in self.origins}:
            return 403, (f"Requests from pages at {origin!r} are refused: only the server's own pages (and "
                         "--allow-origin ones) may call it."), {}
        if self.tokens:
            source = self.tokens.source(_token(scope, headers))
            if source is None:
                return 401, ("This server needs its token: send 'Authorization: Bearer TOKEN' or add "
                             "'?token=TOKEN' to the URL (the server printed it when it started)."), \
                    {"www-authenticate": 'Bearer realm="lares"'}
            scope.setdefault("state", {})[SOURCE_KEY] = source
        if scope["method"] == "POST":
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, ("A POST must send JSON with 'Content-Type: application/json'"
                             f"{f', not {kind!r}' if kind else ''}."), {}
        return None

    async def _body(self, headers: dict[str, str], receive: Any) -> bytes | tuple[int, str, dict[str, str]] | None:
        limits = self.limits
        too_large = 413, f"A request body is at most {limits.max_body} bytes.", {}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limits.max_body:
            return too_large
        chunks: list[bytes] = []
        size = 0

        async def read() -> str:  # "done", "over" (too large) or "gone" (the client left)
            nonlocal size
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return "gone"
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limits.max_body:
                    return "over"
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return "done"

        reading = asyncio.ensure_future(read())
        waits = {reading} | ({asyncio.ensure_future(self.stopping())} if self.stopping is not None else set())
        done, pending = await asyncio.wait(waits, timeout=limits.read_timeout, return_when=asyncio.FIRST_COMPLETED)
        for wait in pending:
            wait.cancel()
        if reading not in done:
            if done:
                return 503, "The server is shutting down; try again later.", {}
            return 408, f"The request body did not arrive within {limits.read_timeout:g} seconds.", {}
        if reading.result() == "over":
            return too_large
        if reading.result() == "gone":
            return None
        body = b"".join(chunks)
        if json_depth(body) > limits.max_json_depth:
            return 400, f"The JSON body nests deeper than {limits.max_json_depth} levels.", {}
        return body

    async def _refuse(self, send: Any, status: int, message: str, extra: dict[str, str]) -> None:
        body = self.error(status, message)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")] + [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _host_name(host: str) -> str:
    # "127.0.0.1:8000" -> "127.0.0.1", "[::1]:8000" -> "::1", "Example.ORG" -> "example.org"
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _token(scope: dict[str, Any], headers: dict[str, str]) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    query = scope.get("query_string", b"").decode("latin-1")
    return next((v for k, v in parse_qsl(query) if k == "token"), None)


def _replay(body: bytes, receive: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
    # The body read once here is given to the app as one message; after it, the real receive (a disconnect).
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def origin_of(url: str) -> str:
    """The origin (``scheme://host:port``) of a URL, as browsers send it in ``Origin``.

    Args:
        url: e.g. ``"http://127.0.0.1:8888/lab?x=1"``.

    Examples:
        >>> origin_of("http://127.0.0.1:8888/lab?x=1")
        'http://127.0.0.1:8888'
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LaresError(f"{url!r} is not an origin: give one like http://127.0.0.1:8888.")
    return f"{parts.scheme}://{parts.netloc}".lower()


def open_door(app: Any, bind_host: str, *, tokens: Tokens, limits: ServerLimits | None = None,
              allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = (),
              error: Callable[[int, str], bytes] | None = None,
              stopping: Callable[[], Awaitable[Any]] | None = None) -> AccessGuard:
    """The guard in front of ``app`` for a server that listens on ``bind_host``; a LaresError if it may not.

    A loopback server answers to the loopback names, and to ``allow_hosts``. A server that listens beyond
    loopback (``0.0.0.0``, a LAN address) must be told the names clients will use (``--allow-host``) -- else
    any rebinding page's name would do -- and must have a token, or anyone on the network is its owner.

    Args:
        app: The ASGI app to guard.
        bind_host: The address the server listens on.
        tokens: The tokens it accepts (may be empty only on loopback).
        limits: Its limits; None for the defaults.
        allow_hosts: More Host names to answer to, e.g. ``("myhome.local", "192.168.1.20")``.
        allow_origins: Browser origins to accept besides the server's own, e.g. ``("http://127.0.0.1:8888",)``.
        error: ``(status, message) -> JSON bytes`` in the server's error shape; None: ``{"error": message}``.
        stopping: () -> an awaitable that ends when the server stops.

    Examples:
        >>> open_door(None, "0.0.0.0", tokens=Tokens({"owner": "x" * 20}))  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: listening on 0.0.0.0 reaches beyond this machine: give the names clients
        will use with --allow-host NAME (e.g. --allow-host myhome.local), so a page on another name cannot
        reach it.
        >>> open_door(None, "127.0.0.1", tokens=Tokens(), allow_hosts=("Home.Local",)).hosts
        ('127.0.0.1', 'localhost', '::1', 'home.local')
    """
    names = tuple(h.strip().strip("[]").lower() for h in allow_hosts if h.strip())
    if not is_loopback(bind_host):
        if not names:
            raise LaresError(f"listening on {bind_host} reaches beyond this machine: give the names clients will "
                             "use with --allow-host NAME (e.g. --allow-host myhome.local), so a page on another "
                             "name cannot reach it.")
        if not tokens:
            raise LaresError(f"listening on {bind_host} reaches beyond this machine, and without a token anyone "
                             "on the network could use it: give one with --token.")
    guard = AccessGuard(app, limits or ServerLimits(), tuple(dict.fromkeys(LOOPBACK_NAMES + names)),
                        tuple(origin_of(o) for o in allow_origins), tokens, stopping=stopping)
    if error is not None:
        guard.error = error
    return guard
