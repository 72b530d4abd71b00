"""The served home as a Model Context Protocol server, on the official ``mcp`` SDK's low-level ``Server``.

What an MCP client sees:

* **tools** -- the home's tools in the served dialect (the Lares tools, or
  Home Assistant's intent tools), with the same JSON schemas an in-process
  agent gets and the same sentence results; a refused or failed call is a
  result with ``isError`` and the sentence saying why;
* **resources** -- what an agent may know, as JSON: ``lares://home/knowledge``
  (the whole world knowledge), ``lares://home/rooms/<id>`` and
  ``lares://home/devices/<id>``. Never the hidden truth (where the dog is);
* **a prompt**, ``control-the-home``, with one argument, ``instruction``:
  the role and goal prompts a lares_kit agent starts from;
* **elicitation** -- a tool that must ask the person (``ask_user``, or the
  safety gate's confirmation through it) asks the client's user: on the
  2026-07-28 protocol with an "input required" round, on earlier ones with an
  ``elicitation/create`` request. A client that declares no elicitation gets
  an error result that says so in a sentence.

Every call goes through the :class:`~.service.HomeService`, so the home's
safety policy applies, with the source of the caller's token over HTTP
(:mod:`~lares_kit.models.serving.guard`) and the server's own over stdio.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import Server

from ..models.serving.guard import source_of
from .client import JSON_ERRORS
from .service import CallResult, HomeService

__all__ = ["build_mcp_server", "ANSWER_KEY", "PROMPT_NAME", "KNOWLEDGE_URI"]

ANSWER_KEY = "answer"  # the key of the elicitation round and of the field the person fills in
PROMPT_NAME = "control-the-home"
KNOWLEDGE_URI = "lares://home/knowledge"
ROOM_URI, DEVICE_URI = "lares://home/rooms/", "lares://home/devices/"
_ANSWER_SCHEMA = {"type": "object", "required": [ANSWER_KEY],
                  "properties": {ANSWER_KEY: {"type": "string", "title": "Your answer",
                                              "description": "What you want to tell the home's assistant."}}}
NO_ELICITATION = ("This tool must ask the person: {question!r} -- but this MCP client does not support elicitation "
                  "(asking its user a question), so nothing was asked or done. Ask the person yourself and tell the "
                  "home what they said, or use a client that supports elicitation.")


def _text(text: str, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _json(uri: str, value: Any) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(
        uri=uri, mime_type="application/json", text=json.dumps(value, ensure_ascii=False, indent=1))])


def _can_elicit(ctx: Any) -> bool:
    caps = ctx.session.client_capabilities
    return caps is not None and caps.elicitation is not None


def _answer_in(response: Any) -> str | None:
    # The person's words in an elicitation result, or None when they declined or cancelled.
    if response is None or getattr(response, "action", None) != "accept":
        return None
    return str((getattr(response, "content", None) or {}).get(ANSWER_KEY, "")).strip() or None


def build_mcp_server(service: HomeService, *, name: str = "lares-home") -> Server[Any]:
    """The MCP server (low-level ``mcp.server.Server``) of one served home.

    Run it over stdio with ``server.run(read, write, server.create_initialization_options())``, or over
    streamable HTTP with ``server.streamable_http_app()`` (:mod:`.app` does both).

    Args:
        service: The served home.
        name: The server's name, as clients show it.
    """
    home = service.home

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        json_errors = {fn.__name__ for fn in service.toolbox.tools if getattr(fn, "json_errors", False)}
        return types.ListToolsResult(tools=[
            types.Tool(name=s["function"]["name"], description=s["function"]["description"],
                       input_schema=s["function"]["parameters"],
                       meta={JSON_ERRORS: True} if s["function"]["name"] in json_errors else None)
            for s in service.schemas()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        name, arguments = params.name, params.arguments or {}
        # Who calls: over HTTP, the source of the request's token (the server's guard found it); over stdio,
        # the server's own source -- the client that started the process.
        request = getattr(ctx, "request", None)
        source = source_of(request.scope, service.source) if request is not None else service.source
        responses = params.input_responses or {}
        if ANSWER_KEY in responses:  # the second round: the client's user answered the question
            answer = _answer_in(responses[ANSWER_KEY])
            if answer is None:
                return _text("The person did not answer, so nothing was done.", error=True)
            return _result(await _call(name, arguments, answer, source))
        result = await _call(name, arguments, None, source)
        if result.question is None:
            return _result(result)
        if not _can_elicit(ctx):
            return _text(NO_ELICITATION.format(question=result.question), error=True)
        ask = types.ElicitRequestFormParams(message=result.question, requested_schema=_ANSWER_SCHEMA)
        if not ctx.session.can_send_request:  # 2026-07-28: the client asks, then sends the call again
            return types.InputRequiredResult(input_requests={ANSWER_KEY: types.ElicitRequest(params=ask)},
                                             result_type="input_required")
        reply = await ctx.session.elicit_form(ask.message, _ANSWER_SCHEMA, related_request_id=ctx.request_id)
        answer = _answer_in(reply)
        if answer is None:
            return _text("The person did not answer, so nothing was done.", error=True)
        return _result(await _call(name, arguments, answer, source))

    async def _call(name: str, arguments: dict[str, Any], answer: str | None, source: str) -> CallResult:
        # In a worker thread: a tool bound to an outside MQTT device waits for its reply.
        return await anyio.to_thread.run_sync(lambda: service.call(name, arguments, answer=answer, source=source))

    def _result(result: CallResult) -> types.CallToolResult:
        return _text(result.text, error=not result.ok)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        known = service.knowledge()
        resources = [types.Resource(uri=KNOWLEDGE_URI, name="knowledge", mime_type="application/json",
                                    description="What an agent may know of the home: rooms, exits, devices and "
                                                "their states, the robot, what it has seen.")]
        for room in known["rooms"]:
            resources.append(types.Resource(uri=ROOM_URI + room["id"], name=f"room {room['id']}",
                                            title=room["name"], mime_type="application/json",
                                            description=f"The {room['name']}: its exits and devices."))
            resources += [types.Resource(uri=DEVICE_URI + d["id"], name=f"device {d['id']}",
                                         title=f"{d['name']} ({room['name']})", mime_type="application/json",
                                         description=f"A {d['type']} in the {room['name']}, with its state.")
                          for d in room["devices"]]
        return types.ListResourcesResult(resources=resources)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        known = service.knowledge()
        if uri == KNOWLEDGE_URI:
            return _json(uri, known)
        rooms = {room["id"]: room for room in known["rooms"]}
        if uri.startswith(ROOM_URI) and uri[len(ROOM_URI):] in rooms:
            return _json(uri, rooms[uri[len(ROOM_URI):]])
        devices = {d["id"]: {**d, "room": room["id"]} for room in known["rooms"] for d in room["devices"]}
        if uri.startswith(DEVICE_URI) and uri[len(DEVICE_URI):] in devices:
            return _json(uri, devices[uri[len(DEVICE_URI):]])
        raise ValueError(f"There is no resource {uri!r} in {home.name}: list the resources to see them.")

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT_NAME, title="Control the home",
            description="The role and goal a lares_kit agent starts from, with the person's instruction.",
            arguments=[types.PromptArgument(name="instruction", required=True,
                                            description="What the person asks, e.g. 'turn on the kitchen light'.")])])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise ValueError(f"There is no prompt {params.name!r}; the one prompt is {PROMPT_NAME!r}.")
        instruction = (params.arguments or {}).get("instruction", "").strip()
        role, goal = role_and_goal(service)
        text = f"{role}\n\n{goal}\n\nInstruction: {instruction}" if instruction else f"{role}\n\n{goal}"
        return types.GetPromptResult(description=f"Control {home.name}", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])

    return Server(name, version=_version(), title=home.name,
                  instructions=f"{home.name}: {home.description}".strip().rstrip(":") + ". Read "
                               f"{KNOWLEDGE_URI} for what you may know of it; change it with the tools.",
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_resources=list_resources,
                  on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def role_and_goal(service: HomeService) -> tuple[str, str]:
    """The role prompt of the served dialect and the goal prompt (with who speaks, for the safety policy)."""
    from ..agents.dialects import dialect
    from ..agents.prompts import GOAL_PROMPT, ROLE_PROMPT
    from ..sentences.markers import source_line

    role = dialect(service.tool_set).role_prompt or ROLE_PROMPT
    return role, GOAL_PROMPT + source_line(service.source)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lares_kit")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
        return "0"
