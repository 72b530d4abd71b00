"""The one-prompt baseline: every device, its state and its API in one large prompt; the commands in one go.

Taught in ``notebooks/08b_comparing_agents.ipynb`` (the seeds side by side). SAGE
(Rivkin et al., 2023) measures its tree of prompts against a simpler design:
put the whole home -- each device's current state and the documentation of
what it can do -- into a single prompt, and ask the model for the commands
that carry out the request, all at once. Nothing comes back to the model: it
cannot read a result, look something up, ask the person, or try again.

Here that is one request:

* the prompt: the role (:data:`ONE_PROMPT_ROLE`), the device API of every
  device the assistant may use (:func:`device_api_text`: where it is, and its
  capability documents with ranges and current values, or its settings when
  it has no documents), the WORLD KNOWLEDGE with every state (knowledge mode
  ``latest``, format ``full``: a dump, as the paper's baseline), the goal and
  the instruction;
* the tools: only those that change a device, and ``halt`` for an answer or
  a refusal (:data:`ONE_PROMPT_TOOLS`); parallel calls are allowed, since all
  commands must come in this one reply;
* every call of the reply runs in order; the episode then ends ``done`` with
  the reply's ``halt`` message, else its text, else a list of what was sent.

The paper's second baseline, a re-implementation of another system (Sasha),
is not here. The offline model answers this request by its ordinary rules
for parallel calls (:mod:`lares_kit.models.offline`); nothing in it was
written for this design.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..device_apis.documents import capability_doc, device_capabilities
from ..errors import LaresError
from ..home.devices import attributes_of
from ..home.graph import Home
from ..tools.toolbox import Toolbox
from .agent_run import AgentRun, _json_object

__all__ = ["HA_READERS", "ONE_PROMPT_ROLE", "ONE_PROMPT_TOOLS", "device_api_text", "one_prompt_setup", "run_one_prompt"]

ONE_PROMPT_ROLE = (
    "You control a smart home. Below is every device in the home: where it is, what it can do, and its current "
    "state. Answer the person's request in ONE reply: call every function needed to carry it out, all at once, "
    "in the order they must run. You will not see their results and you cannot ask anything. If the request "
    "needs no device, or cannot be done with these devices, call halt with a short answer instead."
)
# The tools a one-go reply can use: the ones that change a device, and halt. Reading, moving the robot and
# asking are left out on purpose: their answers would need a second round, which this design does not have.
ONE_PROMPT_TOOLS = ("set_light", "toggle_light", "set_device", "halt")
# In Home Assistant's dialect every intent tool changes a device except these readers (and ask_user).
HA_READERS = ("GetDateTime", "GetLiveContext", "ask_user")


def device_api_text(home: Home) -> str:
    """Every device the assistant may use, with where it is and its API, as one block of prompt text.

    A device with capability documents (the SAGE home's) gets them in full,
    with ranges and current values (:func:`lares_kit.device_apis.documents.capability_doc`);
    any other device lists its settings and their ranges.

    Args:
        home: The home whose exposed devices are described; it is only read.

    Examples:
        >>> from lares_kit import load_world
        >>> text = device_api_text(load_world("lares-home"))
        >>> print(text.splitlines()[0]); print(text.splitlines()[1])
        DEVICE API (5 devices)
        - bedroom-light: Light in the Bedroom. Settings: on (true or false).
        >>> "setTvChannel(channel: a number from 1 to 10)" in device_api_text(load_world("sage-home"))
        True
    """
    shown = [d for d in home.devices.values() if d.exposed]
    lines = [f"DEVICE API ({len(shown)} devices)"]
    for dev in sorted(shown, key=lambda d: d.id):
        where = f"- {dev.id}: {dev.name} in the {home.room_name(dev.room)}"
        if dev.description:
            where += f" -- {dev.description.rstrip('.')}"
        docs = device_capabilities(home, dev.id)
        if docs:
            lines.append(where + ".")
            lines += ["  " + line for cap in docs for line in capability_doc(home, dev.id, cap).splitlines()]
            continue
        specs = attributes_of(dev.type, dev.capabilities)
        settings = [f"{attr} ({spec.describe()})" for attr, spec in specs.items()
                    if attr in dev.state and not spec.read_only]
        if "on" in dev.state and "on" not in specs:
            settings.insert(0, "on (true or false)")
        lines.append(f"{where}. Settings: {', '.join(settings) or 'none (it can only be read)'}.")
    return "\n".join(lines)


def one_prompt_setup(run: AgentRun, tools: list[Callable[..., str]] | None, user: Any, memory: Any,
                     monitor: Any, *, base: Callable[..., tuple[Toolbox, str, str]]) -> tuple[Toolbox, str, str]:
    """The one-prompt design's Toolbox (device-changing tools and halt), role prompt with the device API, and goal.

    Args:
        run: The run being set up: its home and its episode (whose knowledge is the full dump).
        tools: The tool functions to choose from; None -> the home's own (Home Assistant's intent tools with
            Home Assistant's dialect). Only :data:`ONE_PROMPT_TOOLS` are kept (in that dialect: all but
            :data:`HA_READERS`).
        user: Who would answer ``ask_user``; kept for the Toolbox, though this design offers no question.
        memory: Unused (the design has no memory tools); accepted so every design's setup takes the same arguments.
        monitor: Unused (no persistent commands in one go).
        base: The Lares set-up (``lares_kit.agents.registry.lares_setup``: Toolbox, house rules, goal) this
            design narrows; the registry passes it (this module cannot import the registry that imports it).

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="one-prompt")
        >>> ep.system_prompt.startswith("You control a smart home. Below is every device")
        True
    """
    ha = run.dialect.static  # Home Assistant's intent tools: every one but the readers is a command
    offered = list(tools if tools is not None else run.dialect.tools(run.home))
    kept = [fn for fn in offered if (fn.__name__ not in HA_READERS if ha else fn.__name__ in ONE_PROMPT_TOOLS)]
    if not any(fn.__name__ == "halt" for fn in kept):
        raise LaresError("one-prompt needs the halt tool among the tools it is given, to answer or refuse.")
    box, _role, goal = base(run, kept, user, None, None)
    return box, ONE_PROMPT_ROLE + "\n\n" + device_api_text(run.home), goal


def _said(message: Any) -> str:
    # The halt message of the reply, if it has one (its arguments may be broken JSON: then none).
    for call in message.tool_calls or []:
        fn = getattr(call, "function", None)
        if getattr(fn, "name", "") == "halt":
            args = _json_object(getattr(fn, "arguments", "") or "") or {}
            return str(args.get("message_to_user") or "")
    return ""


def run_one_prompt(run: AgentRun) -> None:
    """Ask once for every command, run them all in order, and end the episode.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up with :func:`one_prompt_setup`; steps are appended.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="one-prompt")
        >>> ep.status, ep.final_state["devices"]["kitchen-light"], len(ep.llm_calls)
        ('done', {'on': True}, 1)
    """
    tools = run.toolbox.schemas()
    message = run.request(1, "turn", run.episode.messages(run.home), tools=tools, tool_choice="auto",
                          parallel_tool_calls=True)
    if message is None:  # no choices at all: nothing to run, nothing to say
        run.error(1, "The model sent an empty reply (no choices).")
        run.finish("done", "Stopped: the model sent no commands and no answer.")
        return
    if message.tool_calls and run.run_calls(1, message):
        return  # the reply's halt ended it (its message is the final one), or a call ended it
    # No halt: the commands are all there is; the episode ends after its one reply, by design.
    ran = [f"{s.tool} {json.dumps(s.arguments, sort_keys=True)}" for s in run.episode.tool_calls
           if getattr(s, "ok", False)]
    text = (message.content or "").strip() or _said(message)
    if not text:
        text = f"Sent {len(ran)} command(s): {'; '.join(ran)}." if ran else "Sent no command."
    run.finish("done", text)
