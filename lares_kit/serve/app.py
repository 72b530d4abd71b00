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

``lares serve-home WORLD --mcp stdio`` speaks MCP on standard input and
output instead, for clients that start the server themselves (a desktop
assistant's config, :func:`~lares_kit.serve.client.mcp_tools`); it serves HTTP
too only when ``--port`` is given. ``--mqtt HOST:PORT`` also puts the home on
an MQTT broker (:mod:`.mqtt`).

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

from ..models.server import ThreadedServer
from .mcp_server import build_mcp_server
from .service import HomeService

__all__ = ["HomeServer", "cli_serve_home", "serve_stdio"]

MAX_CALL_BODY = 64 * 1024  # bytes of a POST /call body


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _Events:
    # The subscribers of GET /events: one queue each, fed from any thread, all ended when the server stops.
    def __init__(self, service: HomeService) -> None:
        self.service = service
        self.stopping = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def stream(self, request: Request) -> EventSourceResponse:
        loop = self.loop = asyncio.get_running_loop()
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        stop_listening = self.service.listen(lambda event: loop.call_soon_threadsafe(queue.put_nowait, event))

        async def events() -> Any:
            waits: set[asyncio.Future[Any]] = set()
            try:
                yield {"event": "hello", "data": json.dumps({"home": self.service.home.id})}
                while not self.stopping.is_set():
                    getting = asyncio.ensure_future(queue.get())
                    waits = {getting, asyncio.ensure_future(self.stopping.wait())}
                    done, waits = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    if getting in done:
                        event = getting.result()
                        yield {"event": event["type"], "data": json.dumps(event, ensure_ascii=False)}
                    for wait in waits:
                        wait.cancel()
            finally:  # the client left, or the server stops: nothing of this stream may be left waiting
                for wait in waits:
                    wait.cancel()
                stop_listening()

        return EventSourceResponse(events(), ping=15)

    def stop(self) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.stopping.set)
        else:
            self.stopping.set()


def build_app(service: HomeService, *, debug: bool = False, host: str = "127.0.0.1") -> tuple[Any, _Events]:
    """The Starlette app (MCP at ``/mcp``, the simulator API, events) and its event hub."""
    events = _Events(service)

    async def index(request: Request) -> JSONResponse:
        return JSONResponse({"home": service.home.id, "name": service.home.name, "tool_set": service.tool_set,
                             "mcp": "/mcp", "world": "/world", "call": "/call", "events": "/events",
                             "debug": "/debug" if debug else None, "tools": service.tool_names})

    async def world(request: Request) -> JSONResponse:
        return JSONResponse(service.knowledge())

    async def debug_view(request: Request) -> JSONResponse:
        if not debug:
            return _error(404, "The hidden truth is not served: start the server with --debug to see it.")
        return JSONResponse(service.truth())

    async def call(request: Request) -> JSONResponse:
        body = await request.body()
        if len(body) > MAX_CALL_BODY:
            return _error(413, f"A call is at most {MAX_CALL_BODY} bytes of JSON.")
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

        result = await run_sync(lambda: service.call(data["tool"], arguments, answer=answer))
        return JSONResponse(result.as_json())

    routes = [Route("/", index), Route("/world", world), Route("/debug", debug_view),
              Route("/call", call, methods=["POST"]), Route("/events", events.stream)]
    app = build_mcp_server(service).streamable_http_app(custom_starlette_routes=routes, host=host)
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
    """The served home over HTTP (MCP at ``/mcp`` and the simulator API). ``port=0`` picks a free port."""

    thread_name = "lares-serve-home"

    def __init__(self, service: HomeService, host: str = "127.0.0.1", port: int = 0, *, debug: bool = False) -> None:
        self.service = service
        app, self.events = build_app(service, debug=debug, host=host)
        self._listen(host, port)
        config = uvicorn.Config(app, lifespan="on", loop="asyncio", ws="none", proxy_headers=False,
                                server_header=False, timeout_graceful_shutdown=1, log_config=None)
        self._server = _Uvicorn(config, self.events)

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def mcp_url(self) -> str:
        return self.base_url + "/mcp"

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


def _service(args: argparse.Namespace) -> HomeService:
    from ..worlds import load_world

    home = load_world(args.world, seed=args.seed)
    return HomeService(home, tool_set=args.tools, source=args.source)


def cli_serve_home(args: argparse.Namespace) -> int:
    """``lares serve-home WORLD [--mcp stdio|http] [--host] [--port N] [--debug] [--seed N] [--tools lares|ha]
    [--source NAME] [--mqtt HOST:PORT]``: serve until Ctrl-C, SIGTERM, or (stdio) the client leaves.

    Args:
        args: The parsed command line.
    """
    from ..errors import LaresError

    try:
        service = _service(args)
    except LaresError as exc:
        print(f"lares: {exc}", file=sys.stderr)
        return 2
    bridge = None
    if args.mqtt:
        from .mqtt import MqttBridge, MqttError

        _log_to_stderr()  # refused commands, a lost broker: the operator sees them

        try:
            bridge = MqttBridge.connect(service, args.mqtt)
        except MqttError as exc:
            print(f"lares: {exc}", file=sys.stderr)
            return 2
    http = args.mcp == "http" or args.port is not None
    server = None
    if http:
        try:
            server = HomeServer(service, args.host, args.port or 0, debug=args.debug)
        except OSError as exc:
            print(f"lares: cannot serve on {args.host}:{args.port} ({exc.strerror or exc}); try another --port.",
                  file=sys.stderr)
            return 2
    out = sys.stderr if args.mcp == "stdio" else sys.stdout  # stdio: standard output is the protocol's
    if server is not None:
        print(f"Serving {service.home.name} at {server.base_url} (Ctrl-C to stop)\n"
              f"  MCP: {server.mcp_url}\n  simulator: GET /world, POST /call, GET /events"
              f"{', GET /debug' if args.debug else ''}", file=out, flush=True)
    if bridge is not None:
        print(f"  MQTT: {bridge.describe()}", file=out, flush=True)
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
