"""``lares serve-home WORLD``: the home over MCP (stdio or streamable HTTP), the simulator API and events.

One Starlette app on uvicorn, as ``lares serve-model``, on loopback by default:

* ``/mcp`` -- the MCP server of :mod:`.mcp_server` (streamable HTTP);
* ``GET /world`` -- what an agent may know (the world knowledge, as JSON);
* ``POST /call`` -- one tool call, ``{"tool": NAME, "arguments": {...}}``
  (and ``"answer"`` when a previous call returned a ``question``), answered
  ``{"tool", "result", "ok"}`` (``"question"`` too when the person must
  answer first) -- the Lares demo's simulator API;
* ``GET /debug`` -- the hidden truth, only when started with ``--debug``;
* ``GET /events`` -- a server-sent event stream: one ``device`` or ``robot``
  event per change, whichever door it came through, so a page or a widget can
  follow the home live.

Every route -- MCP's included -- stands behind one
:class:`~lares_kit.models.serving.guard.AccessGuard`: the Host and Origin must be the
server's own, the caller must bring a token (``Authorization: Bearer TOKEN``,
or ``?token=TOKEN`` for a browser's event stream), a POST must be JSON, and
bodies are bounded. Each token speaks for one source (the server's
``--source``, or another given with ``--token-for SOURCE=TOKEN``), and each
source has its own safety gate (:class:`.service.HomeService`): only a
trusted source is ever asked to confirm, so only it can answer
(``docs/security.md``). The home's one clock (:mod:`lares_kit.home.clock`), which
the night rule reads, is shared by every door.

``lares serve-home WORLD --mcp stdio`` speaks MCP on standard input and
output instead, for clients that start the server themselves (a desktop
assistant's config, :func:`~lares_kit.serve.client.mcp_tools`); it serves HTTP
too only when ``--port`` is given. ``--mqtt HOST:PORT`` also puts the home on
an MQTT broker (:mod:`.mqtt`); ``--wyoming PORT`` offers its speech to text,
text to speech and agent to Home Assistant's voice pipeline (:mod:`.wyoming_door`).

:class:`HomeServer` is reusable in tests and notebooks: ``port=0`` picks a
free port, ``with HomeServer(service) as server: server.base_url``. It stops
within a second of Ctrl-C or SIGTERM, event streams and MCP sessions open or
not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Any

import uvicorn
from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..models.serving.guard import LOOPBACK_NAMES, TOKEN_ENV, ServerLimits, Tokens, new_token, open_door, source_of
from ..models.serving.server import ThreadedServer, uvicorn_config
from .mcp_server import build_mcp_server
from .service import HomeService

__all__ = ["HomeServer", "HOME_LIMITS", "cli_serve_home", "serve_stdio", "parse_tokens"]

HOME_LIMITS = ServerLimits(max_body=256 * 1024)  # a tool call or an MCP message is a few kilobytes


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _Events:
    # The subscribers of GET /events: one bounded queue each, fed from any thread, all ended when the server stops.
    def __init__(self, service: HomeService, queue_size: int) -> None:
        self.service = service
        self.queue_size = queue_size
        self.stopping = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def stream(self, request: Request) -> EventSourceResponse:
        loop = self.loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(self.queue_size)
        lagged = asyncio.Event()  # the client fell a whole queue behind: its stream ends, it re-reads /world

        def offer(event: dict[str, Any]) -> None:  # on the loop's thread
            if queue.full():
                lagged.set()
            else:
                queue.put_nowait(event)

        stop_listening = self.service.listen(lambda event: loop.call_soon_threadsafe(offer, event))

        async def events() -> Any:
            waits: set[asyncio.Future[Any]] = set()
            try:
                yield {"event": "hello", "data": json.dumps({"home": self.service.home.id})}
                while not self.stopping.is_set():
                    getting = asyncio.ensure_future(queue.get())
                    waits = {getting, asyncio.ensure_future(self.stopping.wait()), asyncio.ensure_future(lagged.wait())}
                    done, waits = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    if getting in done:
                        event = getting.result()
                        yield {"event": event["type"], "data": json.dumps(event, ensure_ascii=False)}
                    elif lagged.is_set():
                        yield {"event": "lagged", "data": json.dumps({
                            "error": f"This stream fell {self.queue_size} changes behind and was ended: read GET "
                                     "/world for the home as it is now, then follow /events again."})}
                        return
                    for wait in waits:
                        wait.cancel()
            finally:  # the client left, the server stops, or it lagged: nothing of this stream may be left waiting
                for wait in waits:
                    wait.cancel()
                stop_listening()

        return EventSourceResponse(events(), ping=15)

    def stop(self) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.stopping.set)
        else:
            self.stopping.set()


def build_app(service: HomeService, *, debug: bool = False, limits: ServerLimits = HOME_LIMITS,
              hosts: tuple[str, ...] = LOOPBACK_NAMES, origins: tuple[str, ...] = ()) -> tuple[Any, _Events]:
    """The Starlette app (MCP at ``/mcp``, the simulator API, events) and its event hub, not yet guarded.

    Args:
        service: The served home.
        debug: Serve ``GET /debug`` (the hidden truth).
        limits: The server's limits (the MCP transport's body limit, the event queues).
        hosts: The Host names the server answers to, for the MCP library's own check.
        origins: The browser origins accepted besides the server's own, for the same check.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    events = _Events(service, limits.event_queue)

    async def index(request: Request) -> JSONResponse:
        return JSONResponse({"home": service.home.id, "name": service.home.name, "tool_set": service.tool_set,
                             "mcp": "/mcp", "world": "/world", "call": "/call", "events": "/events",
                             "debug": "/debug" if debug else None, "tools": service.tool_names,
                             "source": source_of(request.scope, service.source),
                             "clock": service.home.clock.describe()})

    async def world(request: Request) -> JSONResponse:
        return JSONResponse(service.knowledge())

    async def debug_view(request: Request) -> JSONResponse:
        if not debug:
            return _error(404, "The hidden truth is not served: start the server with --debug to see it.")
        return JSONResponse(service.truth())

    async def call(request: Request) -> JSONResponse:
        body = await request.body()  # read by the guard: JSON, bounded in size, time and depth
        try:
            data = json.loads(body or b"null")
        except ValueError as exc:
            return _error(400, f"The body is not valid JSON ({exc}). Send "
                               '{"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}.')
        if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
            return _error(400, 'Send a JSON object with "tool" (a tool name) and "arguments" (an object), e.g. '
                               '{"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}. '
                               f"Tools: {', '.join(service.tool_names)}.")
        arguments, answer = data.get("arguments") or {}, data.get("answer")
        if not isinstance(arguments, (dict, str)) or (answer is not None and not isinstance(answer, str)):
            return _error(400, '"arguments" must be an object (or its JSON text) and "answer" a string.')
        from anyio.to_thread import run_sync

        source = source_of(request.scope, service.source)
        result = await run_sync(lambda: service.call(data["tool"], arguments, answer=answer, source=source))
        return JSONResponse(result.as_json())

    routes = [Route("/", index), Route("/world", world), Route("/debug", debug_view),
              Route("/call", call, methods=["POST"]), Route("/events", events.stream)]
    # The MCP library checks Host and Origin too (a second lock behind the guard's); its patterns take any port.
    names = [f"[{h}]" if ":" in h else h for h in hosts]
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=names + [f"{h}:*" for h in names],
                                         allowed_origins=[f"{scheme}://{h}:*" for h in names for scheme in ("http",
                                                                                                          "https")]
                                         + list(origins))
    app = build_mcp_server(service).streamable_http_app(custom_starlette_routes=routes, transport_security=security,
                                                        max_request_body_size=limits.max_body)
    return app, events


class _Uvicorn(uvicorn.Server):
    # uvicorn's server, ending the event streams as it stops (they would hold the graceful shutdown).
    def __init__(self, config: uvicorn.Config, events: _Events) -> None:
        super().__init__(config)
        self.events = events

    async def shutdown(self, sockets: Any = None) -> None:
        self.events.stop()
        await super().shutdown(sockets)


class HomeServer(ThreadedServer):
    """The served home over HTTP (MCP at ``/mcp`` and the simulator API). ``port=0`` picks a free port.

    Every request needs a token: ``token`` speaks as the service's source (None: a new one is made,
    :attr:`token`), ``tokens`` maps other sources to theirs. Clients send :attr:`headers`, or open
    :meth:`link` (a URL with ``?token=``). ``allow_hosts``/``allow_origins``: names and page origins accepted
    besides loopback's own; beyond loopback the names are required (:func:`~lares_kit.models.serving.guard.open_door`).
    """

    thread_name = "lares-serve-home"

    def __init__(self, service: HomeService, host: str = "127.0.0.1", port: int = 0, *, debug: bool = False,
                 token: str | None = None, tokens: dict[str, str] | None = None,
                 allow_hosts: tuple[str, ...] = (), allow_origins: tuple[str, ...] = (),
                 limits: ServerLimits = HOME_LIMITS) -> None:
        self.service = service
        self.token = token or new_token()
        self.tokens = Tokens({**(tokens or {}), service.source: self.token})
        guard = open_door(None, host, tokens=self.tokens, limits=limits, allow_hosts=allow_hosts,
                          allow_origins=allow_origins)  # checks the bind first; the app goes behind it next
        guard.app, self.events = build_app(service, debug=debug, limits=limits, hosts=guard.hosts,
                                           origins=guard.origins)
        self._listen(host, port)
        self._server = _Uvicorn(uvicorn_config(guard, limits, lifespan="on", timeout_graceful_shutdown=1),
                                self.events)

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def mcp_url(self) -> str:
        return self.base_url + "/mcp"

    @property
    def headers(self) -> dict[str, str]:
        """The header that carries the token: ``{"Authorization": "Bearer ..."}``."""
        return {"Authorization": f"Bearer {self.token}"}

    def link(self, path: str = "/") -> str:
        """A URL of this server with the token in its query (``?token=``), for a browser or an ``EventSource``.

        Args:
            path: The route, e.g. ``"/events"`` or ``"/mcp"``.
        """
        return f"{self.base_url}{path}?token={self.token}"

    def stop(self) -> None:
        """Ask the server to stop and return at once (safe from a signal handler); the event streams end now."""
        super().stop()
        self.events.stop()


async def serve_stdio(service: HomeService) -> None:
    """Speak MCP on standard input and output until the client closes them.

    Args:
        service: The served home.
    """
    from mcp.server.stdio import stdio_server

    server = build_mcp_server(service)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def parse_tokens(source: str, token: str | None, token_for: list[str] | None) -> tuple[str, dict[str, str]]:
    """The token of ``--source`` and the others' (``--token-for SOURCE=TOKEN``); a LaresError says what is wrong.

    The source's token is ``--token``, else ``$LARES_HOME_TOKEN``, else a new one.

    Args:
        source: The server's own source (``--source``).
        token: ``--token``, or None.
        token_for: The ``--token-for`` values, e.g. ``["guest=QhX0..."]``, or None.

    Examples:
        >>> own, others = parse_tokens("owner", "o" * 16, ["guest=" + "g" * 16])
        >>> own == "o" * 16, others
        (True, {'guest': 'gggggggggggggggg'})
        >>> parse_tokens("owner", None, ["guest"])  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --token-for takes SOURCE=TOKEN (e.g. --token-for guest=...), not 'guest'.
    """
    import os

    from ..errors import LaresError

    others: dict[str, str] = {}
    for given in token_for or ():
        who, _, value = given.partition("=")
        who = who.strip()
        if not who or not value:
            raise LaresError(f"--token-for takes SOURCE=TOKEN (e.g. --token-for guest=...), not {given!r}.")
        if who in others or who == source:
            raise LaresError(f"the source {who!r} was given two tokens: one each (its own is --token for --source).")
        others[who] = value
    own = token or os.environ.get(TOKEN_ENV) or new_token()
    Tokens({**others, source: own})  # checks lengths and that no two sources share a token
    return own, others


def _service(args: argparse.Namespace) -> HomeService:
    from ..home.clock import Clock, make_clock
    from ..home.worlds import load_world

    home = load_world(args.world, seed=args.seed)
    if args.clock is not None or args.time_of_day is not None:
        home.clock = make_clock(args.clock, args.time_of_day, default=home.clock)
    elif args.mqtt or any(d.mqtt for d in home.devices.values()):
        home.clock = Clock.local()  # a real device or a real Home Assistant: real night
    return HomeService(home, tool_set=args.tools, source=args.source)


def cli_serve_home(args: argparse.Namespace) -> int:
    """``lares serve-home WORLD [--mcp stdio|http] [--host] [--port N] [--token T] [--token-for SOURCE=T]...
    [--allow-host NAME]... [--allow-origin URL]... [--clock K] [--time-of-day T] [--debug] [--seed N]
    [--tools lares|ha] [--source NAME] [--mqtt HOST:PORT ...] [--wyoming PORT ...]``: serve until Ctrl-C, SIGTERM,
    or (stdio) the client leaves. Everything is checked before anything is served: a mistake is one sentence, exit 2.

    Args:
        args: The parsed command line.
    """
    from ..errors import LaresError

    http = args.mcp == "http" or args.port is not None
    try:
        service = _service(args)
        token, others = parse_tokens(service.source, args.token, args.token_for) if http else ("", {})
        server = HomeServer(service, args.host, args.port or 0, debug=args.debug, token=token, tokens=others,
                            allow_hosts=tuple(args.allow_host or ()),
                            allow_origins=tuple(args.allow_origin or ())) if http else None
    except LaresError as exc:
        print(f"lares: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"lares: cannot serve on {args.host}:{args.port} ({exc.strerror or exc}); try another --port.",
              file=sys.stderr)
        return 2
    bridge = None
    if args.mqtt:
        from .mqtt import MqttBridge, MqttError, MqttSettings

        _log_to_stderr()  # refused commands, a lost broker: the operator sees them
        try:
            bridge = MqttBridge.connect(service, args.mqtt, settings=MqttSettings.from_args(args))
        except (MqttError, LaresError) as exc:
            print(f"lares: {exc}", file=sys.stderr)
            if server is not None:
                server.close()
            return 2
    door = None
    if getattr(args, "wyoming", None):
        from .wyoming_door import WyomingDoor, parse_wyoming

        _log_to_stderr()  # a malformed event, a client that sent too much: one line each
        try:
            host, port = parse_wyoming(args.wyoming)
            door = WyomingDoor(service, host, port, source=args.wyoming_source, agent=args.wyoming_agent,
                               model=args.wyoming_model)
        except (LaresError, OSError) as exc:
            said = str(exc) if isinstance(exc, LaresError) else (f"cannot serve Wyoming on {args.wyoming} "
                                                                 f"({exc.strerror or exc}); try another port.")
            print(f"lares: {said}", file=sys.stderr)
            for other in (server, bridge):
                if other is not None:
                    other.close()
            return 2
    out = sys.stderr if args.mcp == "stdio" else sys.stdout  # stdio: standard output is the protocol's
    if server is not None:
        print(f"Serving {service.home.name} at {server.base_url} (Ctrl-C to stop)\n"
              f"  MCP: {server.mcp_url}\n  simulator: GET /world, POST /call, GET /events"
              f"{', GET /debug' if args.debug else ''}\n"
              f"  token: {server.token} (speaks as {service.source}); send 'Authorization: Bearer TOKEN', "
              f"or open {server.link()}", file=out, flush=True)
        for who in others:
            print(f"  a token speaks as {who} (--token-for)", file=out, flush=True)
    print(f"  {service.home.clock.describe()}", file=out, flush=True)
    if bridge is not None:
        print(f"  MQTT: {bridge.describe()}", file=out, flush=True)
    if door is not None:
        print(f"  Wyoming: {door.start().describe()}", file=out, flush=True)
    try:
        if args.mcp == "stdio":
            if server is not None:
                server.start()
            import anyio

            try:
                anyio.run(serve_stdio, service)
            except KeyboardInterrupt:
                pass
        else:
            assert server is not None  # --mcp http always serves HTTP
            server.serve_until_signalled()
    finally:
        if server is not None:
            server.close()
        if bridge is not None:
            bridge.close()
        if door is not None:
            door.close()
    if args.mcp != "stdio":  # a stdio server's client started it, and its stderr is often the client's
        print(f"lares serve-home: stopped after {service.calls} tool calls.", file=sys.stderr)
    return 0


def _log_to_stderr() -> None:
    logger = logging.getLogger("lares_kit.serve")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("lares serve-home: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
