"""Any MCP server's tools for a lares_kit agent: :func:`mcp_tools`.

``run_agent(instruction, home, tools=mcp_tools(TARGET))`` offers the tools of
the MCP server at TARGET to any agent design, through the official ``mcp``
SDK's client: the schemas as the server gives them, the results as text. A
result the server flags as an error reaches the model as an error
observation, as a local tool's mistake does. TARGET is

* a command that starts a server speaking MCP on stdio:
  ``mcp_tools("lares serve-home lares-home --mcp stdio")``;
* or the URL of a streamable-HTTP server: ``mcp_tools("http://127.0.0.1:8765/mcp")``,
  with ``headers`` for one that needs a token (Home Assistant's MCP server:
  ``headers={"Authorization": "Bearer <long-lived token>"}``).

**The home the agent knows.** A lares_kit agent re-reads the home's
knowledge every turn, so with a remote home the local :class:`~lares_kit.home.graph.Home`
must follow it. When the server publishes the world knowledge
(``lares serve-home`` does, as the ``lares://home/knowledge`` resource),
:meth:`McpTools.home` builds a local copy of what an agent may know, and after
every call the copy is brought up to date (device states, the robot, what it
has seen). A server without that resource (Home Assistant's) leaves the home
you pass as it is: the tools' results are then the agent's only news.

**Questions to the person.** When the server asks the person (MCP
elicitation: ``ask_user``, a safety confirmation), the question goes to the
``user`` of the run, as a local ``ask_user`` would; no user, or no answer,
ends the run ``no_answer`` as it would in process.

The session runs in a background thread (an ``anyio`` blocking portal), so
the agents' synchronous loops can call it; :meth:`McpTools.close` (or
``with``) ends it and, for a command, the server process.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

from ..errors import LaresError, ToolError
from ..home.graph import Home, Item
from ..tools.remote import RemoteTools
from ..tools.users import NoAnswer

__all__ = ["mcp_tools", "McpTools", "McpConnectError", "KNOWLEDGE_URI"]

KNOWLEDGE_URI = "lares://home/knowledge"  # the resource lares serve-home publishes (mcp_server.KNOWLEDGE_URI)
JSON_ERRORS = "lares/json_errors"  # tool meta: the tool's errors are Home Assistant-shaped JSON


class McpConnectError(LaresError):
    """The MCP server could not be started or reached; the message says which and what to try."""


def mcp_tools(target: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0) -> McpTools:
    """Connect to the MCP server at ``target`` and return its tools as lares_kit tool functions.

    Args:
        target: A command that starts a stdio server (``"lares serve-home lares-home --mcp stdio"``), or
            the ``http(s)://`` URL of a streamable-HTTP server.
        headers: HTTP headers for a URL (a token: ``{"Authorization": "Bearer ..."}``).
        timeout: Seconds to wait for the server to answer one request.
    """
    return McpTools(target, headers=headers, timeout=timeout)


def _quiet_sdk_logs() -> None:
    # The SDK logs a traceback for each line a stdio server prints that is not JSON-RPC (a program that is not
    # an MCP server); the McpConnectError sentence says it better. Left alone where a learner set the level.
    sdk = logging.getLogger("mcp.client.stdio")
    if sdk.level == logging.NOTSET:
        sdk.setLevel(logging.CRITICAL)


def _transport(target: str, headers: dict[str, str] | None, timeout: float, errlog: IO[str]) -> Any:
    # The SDK's transport for a URL or a command; a command's standard error goes to ``errlog`` (a notebook's
    # sys.stderr is no file a process can write to), so a failure can quote what the server said.
    _quiet_sdk_logs()
    if target.startswith(("http://", "https://")):
        if not headers:
            return target
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(target, http_client=httpx2.AsyncClient(headers=headers, timeout=timeout))
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    argv = shlex.split(target)
    env = None
    if argv and argv[0] == "lares" and shutil.which("lares") is None:  # a notebook whose PATH lacks the venv's bin
        argv = [sys.executable, "-m", "lares_kit", *argv[1:]]
        env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this lares_kit, installed or not
    return stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], env=env), errlog=errlog)


class McpTools(RemoteTools):
    """The tools of one MCP server, as tool functions for a Toolbox (a list: ``tools=`` takes it as it is).

    Each function carries the server's schema (``fn.schema``) and, when
    called by a Toolbox, sends the call, waits for the result, and brings
    the run's home up to date. Use it in a ``with`` block or call
    :meth:`close` when done.
    """

    def __init__(self, target: str, *, headers: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        super().__init__()
        from anyio.from_thread import start_blocking_portal
        from mcp import Client

        self.target = re.sub(r"([?&]token=)[^&]+", r"\1...", target)  # shown in messages: never the token itself
        self._user: Any = None  # who answers the server's questions during the current call
        self._no_answer: str | None = None  # the question nobody answered during the current call
        if not target.strip():
            raise McpConnectError("mcp_tools needs a server: a command such as 'lares serve-home lares-home --mcp "
                                  "stdio', or a URL such as 'http://127.0.0.1:8765/mcp'.")
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # a stdio server's stderr
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        client = Client(_transport(target, headers, timeout, self._errlog), elicitation_callback=self._elicit,
                        read_timeout_seconds=timeout, cache=None)
        self._session_cm = self._portal.wrap_async_context_manager(client)
        try:
            self._client = self._session_cm.__enter__()
            listed = self._portal.call(self._client.list_tools)
        except Exception as exc:  # the SDK's errors vary by transport: say what failed, in one sentence
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = None
            said = self._last_words()
            said = f" The server said: {said.rstrip('.')}." if said else ""
            raise McpConnectError(f"Could not connect to the MCP server {target!r}: {_reason(exc)}.{said} Check the "
                                  "command or URL (a lares serve-home server prints its MCP URL when it "
                                  "starts).") from None
        self.extend(self._tool(tool) for tool in listed.tools)
        self.publishes_knowledge = self._has_knowledge()

    def _last_words(self) -> str:
        # The last line a stdio server wrote to its standard error ("" for none, or for a URL).
        self._errlog.flush()
        self._errlog.seek(0)
        lines = [line.strip() for line in self._errlog.read().splitlines() if line.strip()]
        self._errlog.close()
        return lines[-1] if lines else ""

    # ------------------------------------------------------------ tools
    def _tool(self, tool: Any) -> Callable[..., str]:
        name = tool.name

        def call(home: Home, user: Any, **arguments: Any) -> str:
            return self.call(name, arguments, home=home, user=user)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = tool.description or name
        call.schema = {"type": "function", "function": {  # type: ignore[attr-defined]
            "name": name, "description": tool.description or name,
            "parameters": tool.input_schema or {"type": "object", "properties": {}}}}
        call.json_errors = bool((tool.meta or {}).get(JSON_ERRORS))  # type: ignore[attr-defined]
        return call

    def call(self, name: str, arguments: dict[str, Any], *, home: Home | None = None, user: Any = None) -> str:
        """Send one call; its text, or ToolError with the server's error text (NoAnswer if a question had none).

        Args:
            name: The tool's name.
            arguments: Its arguments.
            home: The local home to bring up to date afterwards (None: none).
            user: Who answers the server's questions during this call (None: nobody).
        """
        self._user, self._no_answer = user, None
        try:
            result = self._portal.call(self._client.call_tool, name, arguments)
        except Exception as exc:  # a transport or protocol failure: the model reads it, the run goes on
            raise ToolError(f"The MCP server did not complete the call ({_reason(exc)}).") from None
        finally:
            self._user = None
        if home is not None:
            self.sync(home)
        if self._no_answer is not None:
            raise NoAnswer(self._no_answer)
        text = "\n".join(getattr(part, "text", "") for part in result.content if getattr(part, "type", "") == "text")
        if result.is_error:
            raise ToolError(text or f"The MCP server reported an error from {name} with no message.")
        return text

    async def _elicit(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        question, user = str(params.message), self._user
        try:
            if user is None:
                raise NoAnswer(question)
            answer = user.ask(question)
        except NoAnswer:
            self._no_answer = question
            return types.ElicitResult(action="decline")
        properties = (getattr(params, "requested_schema", None) or {}).get("properties") or {"answer": {}}
        return types.ElicitResult(action="accept", content={next(iter(properties)): answer})

    # ------------------------------------------------------------ the home
    def _has_knowledge(self) -> bool:
        try:
            listed = self._portal.call(self._client.list_resources)
        except Exception:  # a server without resources
            return False
        return any(str(r.uri) == KNOWLEDGE_URI for r in listed.resources)

    def knowledge(self) -> dict[str, Any]:
        """The server's world knowledge (the ``lares://home/knowledge`` resource)."""
        if not self.publishes_knowledge:
            raise McpConnectError(f"The MCP server {self.target!r} does not publish {KNOWLEDGE_URI}: pass your own "
                                  "home to run_agent.")
        result = self._portal.call(self._client.read_resource, KNOWLEDGE_URI)
        return json.loads(result.contents[0].text)

    def home(self) -> Home:
        """A local Home of what an agent may know of the served home (no hidden things), kept up to date by calls."""
        return mirror_home(self.knowledge())

    def sync(self, home: Home) -> None:
        """Bring ``home`` up to date with the server's knowledge (nothing when the server publishes none)."""
        if self.publishes_knowledge:
            apply_knowledge(home, self.knowledge())

    def close(self) -> None:
        """End the session (and a stdio server's process)."""
        if getattr(self, "_portal_cm", None) is None:
            return
        try:
            self._session_cm.__exit__(None, None, None)
        except Exception:  # noqa: S110 - the server may already be gone; closing must not fail
            pass
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = None
            self._errlog.close()

    def __enter__(self) -> McpTools:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"McpTools({self.target!r}: {', '.join(fn.__name__ for fn in self)})"


def _reason(exc: BaseException) -> str:
    # The innermost useful message of an exception group or a chained error.
    while getattr(exc, "exceptions", None):  # an exception group (anyio's task groups raise them)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def mirror_home(known: dict[str, Any]) -> Home:
    """A Home built from world knowledge (:meth:`Home.knowledge`): the layout, devices, robot and sightings.

    Args:
        known: The knowledge, as a server publishes it.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> copy = mirror_home(home.knowledge())
        >>> copy.knowledge() == home.knowledge(), sorted(copy.items)
        (True, [])
    """
    from ..home.worlds import parse_world

    world: dict[str, Any] = {"id": known["home"], "name": known.get("name", known["home"]), "rooms": [],
                             "devices": [], "robot": {"id": known["robot"]["id"], "room": known["robot"]["room"]}}
    for room in known["rooms"]:
        world["rooms"].append({k: room[k] for k in ("id", "name", "aliases", "floor", "exits") if k in room})
        world["devices"] += [{**{k: d[k] for k in ("id", "name", "type", "state", "aliases") if k in d},
                              "room": room["id"]} for d in room["devices"]]
    world["items"] = [{"id": item_id, "name": s["name"], "type": s["type"], "room": s["room"]}
                      for item_id, s in known.get("seen", {}).items()]
    if "language" in known:
        world["language"] = known["language"]
    if known.get("floors"):
        world["floors"] = [{k: f[k] for k in ("id", "name", "aliases") if k in f} for f in known["floors"]]
    home = parse_world(world, f"the knowledge of {known['home']}")
    apply_knowledge(home, known)
    return home


def apply_knowledge(home: Home, known: dict[str, Any]) -> None:
    """Bring ``home`` to what ``known`` says: device states, the robot's room, sightings and time.

    Device changes go through :meth:`Home.update_device`, so an agent loop
    that notes changes sees them as its call's.

    Args:
        home: The local home.
        known: World knowledge of the same home, newer.
    """
    for room in known["rooms"]:
        for d in room["devices"]:
            device = home.devices.get(d["id"])
            if device is not None and device.state != d["state"]:
                home.update_device(d["id"], {k: v for k, v in d["state"].items() if device.state.get(k) != v})
    if home.robot.room != known["robot"]["room"] and known["robot"]["room"] in home.graph:
        home.move_robot(known["robot"]["room"])
    seen = {item_id: where for item_id, where in known.get("seen", {}).items() if where["room"] in home.graph}
    for item_id, where in seen.items():
        if item_id not in home.items:  # first seen: the copy learns of it
            home.items[item_id] = Item(item_id, where["name"], where["type"], where["room"])
        elif home.items[item_id].room != where["room"]:
            home.move_item(item_id, where["room"])  # the copy's best guess: where it was last seen
    home.seen = {item_id: {"room": s["room"], "time": s["time"]} for item_id, s in seen.items()}
    home.time = known.get("time", home.time)
