"""Agent loops, by name, and :func:`run_agent`, the one way to run them.

Taught in ``notebooks/03_function_calling_loop.ipynb`` onwards. :data:`AGENTS`
maps an agent name to its :class:`~lares_kit.agents.registry.AgentSpec`: its
loop, one function over an :class:`~lares_kit.agents.agent_run.AgentRun` that
fits on one screen, and what the design needs around it:

* ``function-calling`` -- all tools offered, the model picks
  (:mod:`~lares_kit.agents.function_calling`);
* ``intent-action`` -- the Lares design: decide with reasoning, then act
  (:mod:`~lares_kit.agents.intent_action`);
* ``react`` -- the smart-building paper: a planner writes Thoughts, a light
  model writes the Actions, with memory (:mod:`~lares_kit.agents.react`);
  ``react-parallel`` is the same with parallel calls for independent actions;
* ``sage`` -- SAGE: a coordinator whose tools are sub-agents (device,
  preference, condition), a tree of prompts (:mod:`~lares_kit.agents.sage`);
* ``one-prompt`` -- SAGE's baseline: every device's state and API in one
  prompt, every command in one reply (:mod:`~lares_kit.agents.one_prompt`).

:func:`run_agent` builds the pieces from the spec (model client, Toolbox,
prompts, Episode), runs the loop and returns the Episode. It never raises for
what the model does: the outcome is in ``episode.status``. Every design speaks
either tool dialect (``tool_set``: the Lares tools, or Home Assistant's LLM
API, :mod:`~lares_kit.agents.dialects`).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..episode import Episode
from ..errors import LaresError
from ..home.graph import Home
from ..knowledge.modes import resolve_format
from ..lazy_exports import lazy_exports
from ..run_context import RunContext
from ..tools.users import NoUser, User
from .agent_run import AgentRun, Listener, ModelFailed
from .dialects import TOOL_SETS, check_tool_set, start_episode
from .prompts import prompt_style as get_style
from .registry import AGENTS, DEFAULT_MAX_STEPS, AgentSpec, get_agent

__all__ = ["AGENTS", "DEFAULT_MAX_STEPS", "TOOL_SETS", "AgentSpec", "run_agent", "get_agent", "AgentRun",
           "run_function_calling", "run_intent_action", "GOAL_PROMPT", "PROMPT_STYLES", "ROLE_PROMPT",
           "decide_schema", "forced", "PROMPT_A", "PROMPT_B", "rounds", "LARES_SCENARIOS"]


def run_agent(instruction: str, home: Home | str, agent: str = "intent-action", model: str | None = None, *,
              client: Any = None, user: User | None = None, knowledge: str | None = None,
              knowledge_format: str | None = None, tools: list[Callable[..., str]] | None = None,
              max_steps: int | None = None, memory: Any = None, monitor: Any = None,
              context: RunContext | None = None, executor: str | tuple[str, Any] | None = None,
              options: dict[str, Any] | None = None, tool_set: str = "lares",
              prompt_style: str | None = None) -> Episode:
    """Run one instruction with one agent in one home; return the Episode.

    What the agent knows and can do comes from ``knowledge``,
    ``knowledge_format``, ``tools`` and ``tool_set``; how it writes its
    prompts from ``prompt_style``; who is speaking, from where and through
    which server from ``context``; what is kept from ``memory`` and
    ``monitor``; the design's own settings from
    ``executor`` and ``options``. A setting the design does not take is a
    LaresError that says so.

    Args:
        instruction: What the user asks, in their words ("turn on the light in the kitchen").
        home: A Home (used as it is: reset it first if you need to) or a world id such as ``"lares-home"``.
        agent: The design, a name in :data:`AGENTS`: ``function-calling``, ``intent-action``, ``react``,
            ``react-parallel``, ``sage`` or ``one-prompt``.
        model: A model name for :func:`lares_kit.models.resolve_model`; None -> ``$LARES_MODEL`` -> ``"offline"``.
        client: An ``openai.OpenAI``-like client; None -> ``make_client(model)``.
        user: Who answers ``ask_user``; None is nobody, so a question ends the episode with ``no_answer``.
        knowledge: What the prompt says of the home: ``latest``, ``initial`` or ``none``; None -> the design's own.
        knowledge_format: How it is put in the prompt: ``auto`` (the whole home as an outline while it is small,
            else ``retrieval``), ``full`` (Lares's pretty JSON), ``compact``, ``outline``, ``overview`` (no
            states, plus the ``get_live_context`` tool) or ``retrieval`` (only the relevant rooms), see
            :mod:`lares_kit.knowledge.modes`; None -> the design's own, ``auto`` (sage puts no knowledge in its prompts:
            it reads the home through its tools).
        tools: The agent-facing tool functions to offer; None -> the home's own in the tool set's dialect.
        max_steps: The step limit; None -> the design's (react: 10 rounds, as in its paper; others 20).
        memory: A :class:`~lares_kit.memory.agent_memory.Memory` (its ``user`` is who is talking), a
            :class:`~lares_kit.memory.store.MemoryStore` or a store file path (then the speaker is the context's
            ``person``, as a benchmark task's ``setup.user`` or ``lares run --person`` sets it); the
            ``recall`` and ``remember_preference`` tools are then offered. React and sage always have one (a
            throwaway one when none is given).
        monitor: A :class:`~lares_kit.persistent.monitor.Monitor` for persistent commands:
            sage's condition agent registers
            conditions with it, and a fired one runs through sage again.
        context: The :class:`~lares_kit.run_context.RunContext`: who gave the instruction (``source``:
            ``"owner"`` by default, ``"guest"``, ``"letterbox"``...; the home's safety policy,
            :mod:`lares_kit.safety.gate`, decides from it what needs confirming or is refused, and the goal tells
            the model), who speaks (``person``), from which room (``room``), and what the model's server accepts
            (``server``: a name in :data:`lares_kit.models.servers.PROFILES` -- ``llamacpp``, ``ollama``,
            ``vllm``, ``openai``, ``lmstudio`` -- or a ``ServerProfile``; None -> ``$LARES_SERVER``, else
            ``offline`` for the toolkit's own models and ``auto``, learned, for others). None -> ``RunContext()``.
        executor: React's light model that writes Actions, a model name or a ``(name, client)`` pair; None ->
            ``$LARES_EXECUTOR_MODEL``, else ``model``.
        options: The design's options (every design: ``temperature``, 0 unless set; function-calling:
            ``parallel_tool_calls``; react: ``action_format``, ``parser``); None -> its defaults.
        tool_set: The tool dialect, ``"lares"`` (the Lares tools and world knowledge) or ``"ha"`` (Home Assistant's
            intent tools, its static context instead of the world knowledge, ``GetLiveContext`` for states); see
            :mod:`lares_kit.agents.dialects`. Any other is a ValueError naming the two.
        prompt_style: How the prompts are written, a name in :data:`~lares_kit.agents.prompts.PROMPT_STYLES` or a
            :class:`~lares_kit.agents.prompts.PromptStyle`: ``lean``
            (None: the default; short prompts and tool texts, the knowledge last, intent-action's action call with
            only what its arguments need) or ``lares`` (the Lares write-up's prompts and layout).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.tools.users import ScriptedUser
        >>> home = load_world("lares-home")
        >>> ep = run_agent("set the office light depending on whether it's daytime", home,
        ...                user=ScriptedUser(answers=["No, it is night."]))
        >>> ep.status, ep.asked != [], home.devices["office-light"].state
        ('done', True, {'on': True})
    """
    spec = get_agent(agent)
    check_tool_set(tool_set)
    style = get_style(prompt_style)
    knowledge, knowledge_format, steps = spec.settings(knowledge, knowledge_format, max_steps)
    opts = spec.make_options(options)
    home = _home(home)
    knowledge_format = resolve_format(home, knowledge_format)
    context = _context(context)
    model, client, context = _client(model, client, context)
    from ..models.servers import server_profile  # here: the models package imports openai

    profile = server_profile(context.server, model=model, client=client)
    episode = start_episode(tool_set, instruction, home, agent=agent, model=model, knowledge=knowledge,
                            max_steps=steps, source=context.source,  # "": nobody we trust
                            knowledge_format=knowledge_format, prompt_style=style.name, layout=style.order)
    run = AgentRun(episode, home, None, client, model, steps, opts, **spec.make_executor(executor, model),
                   server=profile, tool_set=tool_set, style=style, context=context)
    run.toolbox, episode.system_prompt, episode.goal_prompt = spec.setup(
        run, tools, Listener(user if user is not None else NoUser()), spec.make_memory(memory, context.person),
        monitor)
    if spec.persistent and monitor is not None and monitor.on_fire is None:
        monitor.on_fire = lambda firing: _run_fired(run, firing)  # a fired condition runs through this design again
    start = time.perf_counter()
    try:
        spec.loop(run)
    except ModelFailed as exc:
        episode.error = str(exc)
        run.finish("model_error", f"Stopped: the model call failed ({exc}).")
    episode.seconds = time.perf_counter() - start
    episode.final_state = home.truth()
    return episode


def _home(home: Home | str) -> Home:
    if isinstance(home, str):
        from ..home.worlds import load_world

        return load_world(home)
    return home


def _context(context: RunContext | None) -> RunContext:
    if context is None:
        return RunContext()
    if not isinstance(context, RunContext):
        raise LaresError(f"context must be a RunContext (from lares_kit import RunContext), not a "
                         f"{type(context).__name__}")
    return context


def _client(model: str | None, client: Any, context: RunContext) -> tuple[str, Any, RunContext]:
    """The model's name, a client for it, and the context naming the recording a replay client answers from.

    make_client fails at once (MissingAPIKey) for a remote model with no key.
    """
    if client is None or model is None:
        from ..models import make_client, resolve_model

        model = resolve_model(model)
        if client is None:
            client = make_client(model)
    if context.recording is None and client is not None:
        from ..models.recording.replay import recording_of  # here: the models package imports openai

        recording = recording_of(client)
        if recording is not None:
            context = context.but(recording=recording)
            if model.startswith("replay:") and recording.models:  # replay:DIR runs as the model it recorded
                model = recording.models[0]
    return model, client, context


def _run_fired(parent: AgentRun, firing: Any) -> Episode:
    """The poller's callback: run a fired instruction through the same design again, in the same home.

    It runs as the source that registered the condition (no source: an untrusted one) at the time it
    fires -- not as whoever's run set this callback, nor at that run's time: a letterbox's "when the
    fridge opens, ..." stays the letterbox's, and at 22:01 it is night. The poller moves the home's own
    clock, so the fired run's safety gate already reads the firing's time there.
    """
    home, box = parent.home, parent.toolbox
    return run_agent(firing.instruction, home, parent.episode.agent, parent.model, client=parent.client,
                     memory=box.memory, monitor=box.monitor, max_steps=parent.max_steps,
                     context=parent.context.but(source=firing.source or "", server=parent.server),
                     options={"temperature": parent.options.temperature, "seed": parent.options.seed},
                     tool_set=parent.tool_set)

# More public names, each imported from its module when first asked for
_LAZY = {
    "run_function_calling": "lares_kit.agents.function_calling",
    "run_intent_action": "lares_kit.agents.intent_action",
    "GOAL_PROMPT": "lares_kit.agents.prompts",
    "PROMPT_STYLES": "lares_kit.agents.prompts",
    "ROLE_PROMPT": "lares_kit.agents.prompts",
    "decide_schema": "lares_kit.agents.prompts",
    "forced": "lares_kit.agents.prompts",
    "PROMPT_A": "lares_kit.agents.react",
    "PROMPT_B": "lares_kit.agents.react",
    "rounds": "lares_kit.agents.react",
    "LARES_SCENARIOS": "lares_kit.agents.scenarios",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
