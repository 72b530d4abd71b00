"""The agent designs, one small spec each: what :func:`~lares_kit.agents.run_agent` builds around a loop.

Taught in ``notebooks/03_function_calling_loop.ipynb`` onwards. A loop is
one function over an :class:`~lares_kit.agents.agent_run.AgentRun`; its
:class:`AgentSpec` says what else the design is: its step limit, the
knowledge modes and formats it can take, whether it always keeps a memory,
whether a second model writes its actions, which options it reads, and how
it builds its tools and prompts. ``run_agent`` reads the spec and knows no
agent by name, so adding a design is adding a spec to :data:`AGENTS`.

A combination a design does not support (``sage`` with knowledge
``latest``, ``intent-action`` with an executor model, an unknown option)
is a :class:`~lares_kit.errors.LaresError` that says so and what to do.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..episode import KNOWLEDGE_MODES
from ..errors import LaresError
from ..knowledge.modes import KNOWLEDGE_FORMATS, get_live_context, use_id_enums
from ..memory.agent_memory import MEMORY_TOOLS, Memory, MemoryStore
from ..sentences.markers import source_line, speaker_line
from ..tools.remote import RemoteTools
from ..tools.toolbox import Toolbox
from .agent_run import AgentRun, RequestOptions, house_rules_of, where_line
from .function_calling import FunctionCallingOptions, run_function_calling
from .intent_action import run_intent_action
from .one_prompt import one_prompt_setup, run_one_prompt
from .react import MAX_ITERATIONS, ReactOptions, run_react, run_react_parallel
from .sage import run_sage, sage_setup

__all__ = ["AgentSpec", "AGENTS", "DEFAULT_MAX_STEPS", "get_agent", "lares_setup"]

DEFAULT_MAX_STEPS = 20  # Lares allows 20 ticks (its write-up says 10)


def lares_setup(run: AgentRun, tools: list[Callable[..., str]] | None, user: Any, memory: Any,
                monitor: Any) -> tuple[Toolbox, str, str]:
    """The Lares designs' Toolbox, role prompt and goal for one run (function-calling, intent-action, react).

    ``tools`` default to the home's own in the run's dialect (``run.dialect``: in Home
    Assistant's, its intent tools, ``ask_user`` and ``halt``, and its role prompt,
    :mod:`~lares_kit.agents.dialects`); a memory adds ``recall`` and
    ``remember_preference``, the ``overview`` format adds
    ``get_live_context`` (the prompt then has no states). The goal names the
    speaker (the memory's user) and a source other than the owner.

    Args:
        run: The run being set up: its home, and its episode's knowledge format and source.
        tools: The agent-facing tool functions to offer; None -> the home's own.
        user: Who answers ``ask_user`` (a Listener around the caller's User, so answers are recorded).
        memory: A :class:`~lares_kit.memory.agent_memory.Memory`, or None for no memory tools.
        monitor: A :class:`~lares_kit.persistent.monitor.Monitor` for persistent commands, or None.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> from lares_kit import RunContext
        >>> ep = run_agent("hello", load_world("lares-home"), knowledge_format="overview",
        ...                context=RunContext(source="guest"))
        >>> ep.goal_prompt.endswith("This instruction comes from guest, not from the owner of the home.")
        True
    """
    home, episode, spoken = run.home, run.episode, run.dialect
    if isinstance(tools, RemoteTools):  # a remote home's tools (lares_kit.serve.client): the home catches up first
        tools.sync(home)
    tools = list(tools if tools is not None else spoken.tools(home))  # built once
    if memory is not None:
        tools += [fn for fn in MEMORY_TOOLS if fn not in tools]
    if episode.knowledge_format == "overview" and not spoken.static:  # no states: the live-context tool has them
        tools.insert(max(0, len(tools) - 2), get_live_context)  # before ask_user and halt
    style = run.prompts
    box = Toolbox(home, tools=tools, user=user, memory=memory, monitor=monitor, source=episode.source,
                  id_enums=use_id_enums(home, episode.knowledge_format, style.enum_limit),
                  descriptions=style.tool_text)
    # The offline model reads "You are talking to <name>." to know whose "my office" this is; the source
    # line is said to the model too, and to an untrusted one the house rules it is held to (the policy is
    # enforced in the Toolbox regardless).
    goal = (style.goal + speaker_line(memory.user if memory is not None else "") + where_line(home, run.context.room)
            + source_line(episode.source) + house_rules_of(box, by_name=spoken.static))
    return box, spoken.role_prompt or style.role, goal


@dataclass(frozen=True)
class AgentSpec:
    """One agent design: its loop, and what run_agent builds around it."""

    name: str
    loop: Callable[[AgentRun], None]  # one function over an AgentRun; fits on one screen
    max_steps: int = DEFAULT_MAX_STEPS  # its step limit when the caller gives none
    knowledge: tuple[str, ...] = KNOWLEDGE_MODES  # the modes it supports; the first is its default
    formats: tuple[str, ...] = tuple(KNOWLEDGE_FORMATS)  # the knowledge formats it supports; the first is its default
    memory: bool = False  # always keeps a memory (a throwaway one when none is given), so it hears the speaker
    executor: bool = False  # a second, light model writes its actions (run_agent's executor=)
    persistent: bool = False  # registers persistent commands: a fired one runs through this design again
    options: type = RequestOptions  # the dataclass run_agent's options={...} fill in (temperature, and the design's)
    setup: Callable[..., tuple[Toolbox, str, str]] = lares_setup  # (run, tools, user, memory, monitor) -> box, prompts
    # The offline stand-in's rules that read this design's own prompt shapes, by name
    # (lares_kit.models.offline.designs.DESIGN_RULES); () -> only the core every design shares.
    stand_in: tuple[str, ...] = ()

    def settings(self, knowledge: str | None, knowledge_format: str | None,
                 max_steps: int | None) -> tuple[str, str, int]:
        """The knowledge mode, format and step limit to use (None: the design's own); a LaresError if unsupported.

        Examples:
            >>> get_agent("sage").settings(None, None, None)
            ('none', 'full', 20)
            >>> get_agent("sage").settings("latest", None, None)  # doctest: +NORMALIZE_WHITESPACE
            Traceback (most recent call last):
            ...
            lares_kit.errors.LaresError: sage does not take the knowledge mode 'latest' (it takes: none);
            leave the knowledge mode out to use sage's own (none).
        """
        if knowledge_format == "auto" and "auto" not in self.formats:
            knowledge_format = None  # a design with its own single format (sage) takes it
        if knowledge is not None and knowledge not in KNOWLEDGE_MODES:
            raise LaresError(f"unknown knowledge mode {knowledge!r}; modes: {', '.join(KNOWLEDGE_MODES)}")
        if knowledge_format is not None and knowledge_format not in KNOWLEDGE_FORMATS:
            raise LaresError(f"unknown knowledge format {knowledge_format!r}; formats: {', '.join(KNOWLEDGE_FORMATS)}")
        for what, value, supported in (("knowledge mode", knowledge, self.knowledge),
                                       ("knowledge format", knowledge_format, self.formats)):
            if value is not None and value not in supported:
                raise LaresError(f"{self.name} does not take the {what} {value!r} (it takes: {', '.join(supported)}); "
                                 f"leave the {what} out to use {self.name}'s own ({supported[0]}).")
        steps = self.max_steps if max_steps is None else max_steps
        if steps < 1:
            raise LaresError(f"max_steps must be at least 1, got {steps}")
        return knowledge or self.knowledge[0], knowledge_format or self.formats[0], steps

    def make_options(self, given: dict[str, Any] | None) -> Any:
        """The design's options dataclass filled from ``given``; a LaresError names an unknown option.

        Examples:
            >>> get_agent("react").make_options({"parser": "naive"}).parser
            'naive'
            >>> get_agent("react").make_options({"parsr": "naive"})  # doctest: +NORMALIZE_WHITESPACE
            Traceback (most recent call last):
            ...
            lares_kit.errors.LaresError: react has no option 'parsr';
            its options: action_format, parser, max_iterations, temperature, seed.
        """
        # The design's own options first, then what every design takes (RequestOptions: temperature).
        common = [f.name for f in dataclasses.fields(RequestOptions)]
        known = [f.name for f in dataclasses.fields(self.options) if f.name not in common] + common
        for name in given or {}:
            if name not in known:
                have = f"its options: {', '.join(known)}"
                raise LaresError(f"{self.name} has no option {name!r}; {have}.")
        return self.options(**(given or {}))

    def make_executor(self, executor: str | tuple[str, Any] | None, model: str) -> dict[str, Any]:
        """The executor model and client for AgentRun: ``executor`` is a model name or a (name, client) pair.

        None: ``$LARES_EXECUTOR_MODEL``, else the main model. A design with no
        executor takes none.

        Examples:
            >>> get_agent("react").make_executor(("light", "its client"), "planner")
            {'executor_model': 'light', 'executor_client': 'its client'}
            >>> get_agent("intent-action").make_executor(None, "offline")
            {}
        """
        if not self.executor:
            if executor is not None:
                raise LaresError(f"{self.name} has no executor model (only react's light model writes actions): "
                                 "leave the executor model out, or use the react agent.")
            return {}
        name, client = executor if isinstance(executor, tuple) else (executor, None)
        name = name or os.environ.get("LARES_EXECUTOR_MODEL") or model
        if client is None and name != model:
            from ..models import make_client

            client = make_client(name)
        return {"executor_model": name, "executor_client": client}

    def make_memory(self, memory: Any, person: str) -> Memory | None:
        """A Memory from what run_agent was given (a Memory, a store or a store path); a throwaway one if needed.

        A Memory keeps its own user; one made here is for ``person``, the run
        context's speaker (a task's ``setup.user``, ``lares run --person``).

        Examples:
            >>> get_agent("react").make_memory(None, "ana").user, get_agent("intent-action").make_memory(None, "ana")
            ('ana', None)
        """
        if isinstance(memory, (str, Path)):
            memory = MemoryStore(memory)
        if memory is None and self.memory:
            memory = MemoryStore(":memory:")
        if isinstance(memory, MemoryStore):
            return Memory(memory, user=person)
        if memory is not None and not isinstance(memory, Memory):
            raise LaresError(f"memory must be a Memory, a MemoryStore or a store file path, not a "
                             f"{type(memory).__name__}")
        return memory


# agent name -> its spec, in the order lists show them
AGENTS: dict[str, AgentSpec] = {spec.name: spec for spec in (
    AgentSpec("function-calling", run_function_calling, options=FunctionCallingOptions),
    AgentSpec("intent-action", run_intent_action, stand_in=("intent-action",)),
    # The smart-building paper stops after 10 rounds; react always has a memory (chat history, recall).
    AgentSpec("react", run_react, max_steps=MAX_ITERATIONS, memory=True, executor=True, options=ReactOptions,
              stand_in=("react",)),
    AgentSpec("react-parallel", run_react_parallel, max_steps=MAX_ITERATIONS, memory=True, executor=True,
              options=ReactOptions, stand_in=("react",)),
    # SAGE reads the home through its tools (no knowledge in the prompt); its coordinator is the
    # function-calling loop; the speaker's memory holds the residents' profiles.
    AgentSpec("sage", run_sage, knowledge=("none",), formats=("full",), memory=True, persistent=True,
              options=FunctionCallingOptions, setup=sage_setup, stand_in=("sage",)),
    # SAGE's one-prompt baseline: every device's state and API in one prompt, every command in one reply.
    AgentSpec("one-prompt", run_one_prompt, max_steps=1, knowledge=("latest",), formats=("full",),
              setup=lambda run, tools, user, memory, monitor: one_prompt_setup(run, tools, user, memory, monitor,
                                                                               base=lares_setup)),
)}


def get_agent(name: str) -> AgentSpec:
    """The design registered under ``name``; a LaresError lists the known names.

    Args:
        name: An agent name, a key of :data:`AGENTS` such as ``"intent-action"``.

    Examples:
        >>> get_agent("intent-action").loop.__name__
        'run_intent_action'
        >>> get_agent("telepathy")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: unknown agent 'telepathy';
        agents: function-calling, intent-action, react, react-parallel, sage, one-prompt
    """
    if name not in AGENTS:
        raise LaresError(f"unknown agent {name!r}; agents: {', '.join(AGENTS)}")
    return AGENTS[name]
