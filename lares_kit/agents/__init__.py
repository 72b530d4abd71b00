"""Agent loops, by name, and :func:`run_agent`, the one way to run them.

Taught in ``notebooks/03_function_calling_loop.ipynb`` onwards. :data:`AGENTS`
maps an agent name to its loop; each loop is one function over an
:class:`~lares_kit.agents.shared.AgentRun` and fits on one screen:

* ``function-calling`` -- all tools offered, the model picks
  (:mod:`~lares_kit.agents.function_calling`);
* ``intent-action`` -- the Lares design: decide with reasoning, then act
  (:mod:`~lares_kit.agents.intent_action`);
* ``react`` -- the smart-building paper: a planner writes Thoughts, a light
  model writes the Actions, with memory (:mod:`~lares_kit.agents.react`);
  ``react-parallel`` is the same with parallel calls for independent actions;
* ``sage`` -- SAGE: a coordinator whose tools are sub-agents (device,
  preference, condition), a tree of prompts (:mod:`~lares_kit.agents.sage`).

:func:`run_agent` builds the pieces (model client, Toolbox, Episode), runs
the loop and returns the Episode. It never raises for what the model does:
the outcome is in ``episode.status``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from ..episode import KNOWLEDGE_MODES, Episode
from ..errors import LaresError
from ..home import Home
from ..tools import Toolbox
from ..users import NoUser, User
from .function_calling import run_function_calling
from .intent_action import run_intent_action
from .prompts import GOAL_PROMPT, ROLE_PROMPT
from .react import MAX_ITERATIONS, run_react, run_react_parallel
from .sage import run_sage
from .shared import AgentRun, Listener, ModelFailed

__all__ = ["AGENTS", "DEFAULT_MAX_STEPS", "run_agent", "get_agent", "AgentRun"]

# agent name -> loop. Later designs (react, sage) add themselves here.
AGENTS: dict[str, Callable[[AgentRun], None]] = {
    "function-calling": run_function_calling,
    "intent-action": run_intent_action,
    "react": run_react,
    "react-parallel": run_react_parallel,
    "sage": run_sage,
}
DEFAULT_MAX_STEPS = 20  # Lares allows 20 ticks (its write-up says 10)
# Agents whose design sets another limit: the smart-building paper stops after 10 rounds.
AGENT_MAX_STEPS = {"react": MAX_ITERATIONS, "react-parallel": MAX_ITERATIONS}


def get_agent(name: str) -> Callable[[AgentRun], None]:
    """The loop registered under ``name``; a LaresError lists the known names.

    Examples:
        >>> get_agent("intent-action").__name__
        'run_intent_action'
        >>> get_agent("telepathy")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: unknown agent 'telepathy'; agents: function-calling, intent-action, react, react-parallel, sage
    """
    if name not in AGENTS:
        raise LaresError(f"unknown agent {name!r}; agents: {', '.join(AGENTS)}")
    return AGENTS[name]


def run_agent(
    instruction: str,
    home: Home | str,
    agent: str = "intent-action",
    model: str | None = None,
    client: Any = None,
    knowledge: str = "latest",
    user: User | None = None,
    max_steps: int | None = None,
    tools: list[Callable[..., str]] | None = None,
    parallel_tool_calls: bool = False,
    executor_model: str | None = None,
    executor_client: Any = None,
    memory: Any = None,
    person: str | None = None,
    options: dict[str, Any] | None = None,
    source: str | None = None,
    monitor: Any = None,
    knowledge_format: str = "full",
) -> Episode:
    """Run one instruction with one agent in one home; return the Episode.

    ``home`` is a Home (used as it is: reset it first if you need to) or a
    world id. ``model`` goes through :func:`lares_kit.models.resolve_model`
    (None -> ``$LARES_MODEL`` -> ``"offline"``); ``client`` defaults to
    ``make_client(model)``. ``knowledge`` is ``latest``, ``initial`` or
    ``none``. ``user`` answers ``ask_user`` (default: nobody, so a question
    ends the episode with ``no_answer``). ``tools`` defaults to the home's
    default tools.

    ``executor_model`` / ``executor_client``: the react agent's light model
    that writes Actions (default: ``$LARES_EXECUTOR_MODEL``, else the
    planner's ``model``). ``memory``: a :class:`~lares_kit.memory.Memory`, a
    :class:`~lares_kit.memory_store.MemoryStore` or a store file path; the
    ``recall`` and ``remember_preference`` tools are then offered, and
    ``person`` (or the Memory's user) is who is talking. The react agent
    always has a memory (a throwaway one when none is given). ``options``
    are agent settings (react: ``action_format``, ``parser``). ``monitor``: a
    :class:`~lares_kit.monitor.Monitor` for persistent commands (the sage
    agent's condition agent registers conditions with it). ``source``: who gave the instruction
    (``"owner"`` by default, ``"guest"``, ``"letterbox"``...): the home's
    safety policy (:mod:`lares_kit.safety`) decides from it what needs
    confirming or is refused, and the goal tells the model who is speaking.
    ``knowledge_format``: how the knowledge is put in the prompt -- ``full``
    (Lares's pretty JSON), ``compact``, ``overview`` (no states, plus the
    ``get_live_context`` tool) or ``retrieval`` (only the relevant rooms);
    see :mod:`lares_kit.knowledge`. Except for ``full``, a big home's ids
    are left out of the tool schemas' enums.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.users import ScriptedUser
        >>> home = load_world("lares-home")
        >>> ep = run_agent("set the office light depending on whether it's daytime", home,
        ...                user=ScriptedUser(answers=["No, it is night."]))
        >>> ep.status, ep.asked != [], home.devices["office-light"].state
        ('done', True, {'on': True})
    """
    loop = get_agent(agent)
    from ..knowledge import STRATEGIES, get_live_context, use_id_enums

    if knowledge_format not in STRATEGIES:
        raise LaresError(f"unknown knowledge format {knowledge_format!r}; formats: {', '.join(STRATEGIES)}")
    if knowledge not in KNOWLEDGE_MODES:
        raise LaresError(f"unknown knowledge mode {knowledge!r}; modes: {', '.join(KNOWLEDGE_MODES)}")
    steps = AGENT_MAX_STEPS.get(agent, DEFAULT_MAX_STEPS) if max_steps is None else max_steps
    if steps < 1:
        raise LaresError(f"max_steps must be at least 1, got {steps}")
    if isinstance(home, str):
        from ..worlds import load_world

        home = load_world(home)
    name = model
    if client is None or model is None:
        from ..models import make_client, resolve_model

        name = resolve_model(model)
        if client is None:
            client = make_client(name)  # fails at once (MissingAPIKey) for a remote model with no key
    memory = _memory(memory, person, home, agent.startswith("react"))
    if memory is not None:
        from ..memory import MEMORY_TOOLS
        from ..tools import default_tools

        tools = list(tools if tools is not None else default_tools(home))
        tools += [fn for fn in MEMORY_TOOLS if fn not in tools]
    if knowledge_format == "overview":  # states are left out of the prompt: the live-context tool reports them
        from ..tools import default_tools

        tools = list(tools if tools is not None else default_tools(home))
        tools.insert(max(0, len(tools) - 2), get_live_context)  # before ask_user and halt
    source = "owner" if source is None else source  # "" is a source nobody trusts, not the owner
    toolbox = Toolbox(home, tools=tools, user=Listener(user if user is not None else NoUser()), memory=memory,
                      monitor=monitor, source=source, id_enums=use_id_enums(home, knowledge_format))
    # The offline model reads "You are talking to <name>." to know whose "my office" this is.
    goal = GOAL_PROMPT + (f" You are talking to {memory.user}." if memory is not None and memory.user else "")
    if source != "owner":  # said to the model too; the policy is enforced in the Toolbox regardless
        goal += f" This instruction comes from {source.strip() or 'an unknown source'}, not from the owner of the home."
    episode = Episode.start(instruction, home, agent=agent, model=name, knowledge=knowledge, max_steps=steps,
                            system_prompt=ROLE_PROMPT, goal_prompt=goal, source=source,
                            knowledge_format=knowledge_format)
    executor_name = executor_model or os.environ.get("LARES_EXECUTOR_MODEL") or name
    if executor_client is None and executor_name != name:
        from ..models import make_client

        executor_client = make_client(executor_name)
    run = AgentRun(episode, home, toolbox, client, name, steps, parallel_tool_calls,
                   executor_client=executor_client, executor_model=executor_name, options=dict(options or {}))
    start = time.perf_counter()
    try:
        loop(run)
    except ModelFailed as exc:
        episode.error = str(exc)
        run.finish("model_error", f"Stopped: the model call failed ({exc}).")
    episode.seconds = time.perf_counter() - start
    episode.final_state = home.truth()
    return episode


def _memory(memory: Any, person: str | None, home: Home, needed: bool) -> Any:
    """A Memory from what run_agent was given (None, a Memory, a store or a path); a throwaway one if needed."""
    from ..memory import Memory, MemoryStore

    if isinstance(memory, Memory):
        if person:
            memory.user = person
        return memory
    if isinstance(memory, (str, Path)):
        memory = MemoryStore(memory)
    if isinstance(memory, MemoryStore):
        return Memory(memory, user=person or "")
    if memory is None and needed:
        return Memory(MemoryStore(":memory:"), user=person or "")
    return memory
