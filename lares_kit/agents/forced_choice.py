"""Asking for one named function, on servers that honour a forced ``tool_choice`` and on servers that do not.

Taught in ``notebooks/04_intent_and_action.ipynb`` (the intent-action loop
forces both of its calls) and ``docs/models.md``. A forced choice,
``tool_choice={"type": "function", "function": {"name": X}}``, makes OpenAI,
vLLM and llama.cpp's server call X. Ollama's OpenAI API ignores it: the
model may answer in plain text, or call another function. Without a plan
for that, intent-action loses every step and stops at its step limit with
nothing that says why.

:func:`ask_forced` asks for X:

1. with the forced choice, while the server is believed to honour it. On
   a server whose profile is assumed (``auto``: undeclared, over HTTP), a
   reply without a call to X means it does not: a step says "The server
   ignored the forced tool_choice", and the run's profile learns it. On a
   server known to honour it (the offline model, OpenAI, vLLM, llama.cpp),
   such a reply is the model's slip: an error step, the step is lost;
2. then X is offered alone (``tool_choice="auto"``) with a note to call it
   now; a reply that still has no call is searched for a call written as
   JSON in its text (:func:`json_call`);
3. if that fails too, the episode ends ``model_error`` with that sentence,
   not a silent ``step_limit`` -- unless the fallback has given a call
   before in this run: then it was one bad reply, and the step is lost, as
   with any unusable reply.

A server declared not to honour it (``LARES_SERVER=ollama``) goes straight
to step 2, and the transcript says so once.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from .agent_run import EMPTY_REPLY, NO_CALL, AgentRun
from .prompts import forced

__all__ = ["ask_forced", "json_call", "IGNORED", "CALL_NOW"]

IGNORED = "The server ignored the forced tool_choice"  # the start of the step that records it
CALL_NOW = "Call {name} now: reply with a call to {name} and nothing else."  # the fallback's note to the model


def ask_forced(run: AgentRun, turn: int, phase: str, tool: dict[str, Any],
               messages: list[dict[str, Any]] | None = None) -> Any | None:
    """Ask the model to call ``tool``; its message with the call, or None (recorded why).

    None with the episode still running: the step is lost (an empty reply).
    None with the status ``model_error``: the server ignored the forced
    choice and no fallback got a call.

    Args:
        run: The run in progress; its ``server`` profile says whether a forced choice is honoured, and learns it.
        turn: The step number, for the records.
        phase: The phase the request's usage is recorded under (``intent``, ``action``).
        tool: The schema of the one function to call.
        messages: The request's messages; None: the episode's (:meth:`~lares_kit.episode.Episode.messages`).

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> from lares_kit import RunContext
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"),
        ...                context=RunContext(server="ollama"))
        >>> ep.status, ep.steps[0].message.split(":")[0]
        ('done', 'The ollama server ignores a forced tool_choice')
    """
    name = tool["function"]["name"]
    server = run.server
    messages = run.episode.messages(run.home) if messages is None else messages
    if server is None or server.forced_tool_choice:
        message = run.request(turn, phase, messages, tools=[tool], tool_choice=forced(name),
                              parallel_tool_calls=False)
        if message is None:
            run.error(turn, EMPTY_REPLY)
            return None
        if _calls(message, name):
            return message
        if server is None or not server.learns:  # a server known to honour it: the model slipped, once
            if not message.tool_calls:
                run.error(turn, NO_CALL, reply=message.content or "")
                return None
            return message  # a call to another function: the loop says it was not offered, and does not run it
        run.server = server.without_forced_choice()  # learned: for the rest of this run
        got = f"called {_first(message)}" if message.tool_calls else "answered in text"
        run.error(turn, f"{IGNORED}: asked to call {name}, it {got}. From now on {name} and every forced "
                        "function is offered alone, with a note to call it now.", reply=message.content or "")
    elif not any("forced tool_choice" in getattr(s, "message", "") for s in run.episode.steps):  # said once
        run.error(turn, f"The {server.name} server ignores a forced tool_choice: the function to call is offered "
                        "alone, with a note to call it now.")
    return _fallback(run, turn, phase, tool, messages)


def _fallback(run: AgentRun, turn: int, phase: str, tool: dict[str, Any],
              messages: list[dict[str, Any]]) -> Any | None:
    """Offer ``tool`` alone and say "call it now"; else read a JSON call from the text; else end model_error."""
    name = tool["function"]["name"]
    messages = [*messages, {"role": "system", "content": CALL_NOW.format(name=name)}]
    message = run.request(turn, phase, messages, tools=[tool], tool_choice="auto", parallel_tool_calls=False)
    if message is not None and _calls(message, name):
        run.fallback_worked = True
        return message
    raw = json_call(message.content or "", tool) if message is not None else None
    if raw is not None:  # a call written as text: made into the call it describes
        run.fallback_worked = True
        call = SimpleNamespace(id="", type="function", function=SimpleNamespace(name=name, arguments=raw))
        return SimpleNamespace(content="", tool_calls=[call])
    if message is None:
        run.error(turn, EMPTY_REPLY)
    else:
        run.error(turn, f"No call to {name} in this reply either.", reply=message.content or "")
    if run.fallback_worked:
        return None  # it has worked in this run: one bad reply, the step is lost (as any unusable reply)
    why = (f"Stopped: the server ignored the forced tool_choice (asked to call {name}), and offered {name} alone "
           "with a note to call it now it still gave no call to it, as a tool call or as JSON in its text.")
    run.episode.error = why
    run.finish("model_error", why)
    return None


def _first(message: Any) -> str:
    return str(getattr(getattr(message.tool_calls[0], "function", None), "name", None) or "another function")


def _calls(message: Any, name: str) -> bool:
    # The reply calls `name` first: what a forced choice guarantees (later calls are the loop's to refuse).
    return bool(message.tool_calls) and _first(message) == name


def json_call(text: str, tool: dict[str, Any]) -> str | None:
    """A call of ``tool`` written as JSON in ``text``: its arguments as JSON text, or None.

    Read as a call: ``{"name": NAME, "arguments": {...}}`` (also ``function``
    or ``tool`` for the name and ``parameters`` for the arguments, as models
    write them), or the arguments alone when they hold every required
    parameter and nothing the function does not take.

    Args:
        text: A reply's text, which may wrap the JSON in prose or a code fence.
        tool: The schema of the function the call must be to.

    Examples:
        >>> from lares_kit.agents.prompts import decide_schema
        >>> decide = decide_schema(["set_light", "halt"])
        >>> json_call('Sure! {"name": "decide_best_function", "arguments": {"reasoning": "dark", '
        ...           '"best_function": "set_light"}}', decide)
        '{"reasoning": "dark", "best_function": "set_light"}'
        >>> json_call('```json\\n{"reasoning": "done", "best_function": "halt"}\\n```', decide)
        '{"reasoning": "done", "best_function": "halt"}'
        >>> json_call("I would turn the light on.", decide) is None
        True
    """
    fn = tool["function"]
    params = fn.get("parameters") or {}
    known, required = set(params.get("properties") or {}), set(params.get("required") or [])
    for value in _json_objects(text):
        named = value.get("name") or value.get("function") or value.get("tool")
        if isinstance(named, dict):
            named = named.get("name")
        args = value.get("arguments", value.get("parameters"))
        if named == fn["name"] and args is not None:
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    continue
            if isinstance(args, dict):
                return json.dumps(args)
        elif value and required <= set(value) <= known:
            return json.dumps(value)
    return None


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text`` that is not inside another one, first first."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        at = text.find("{", end)
    return found
