"""The tool dialects an agent can speak: the Lares tools, or Home Assistant's LLM API.

The lesson is planned as ``notebooks/17_home_assistant.ipynb`` (issue 20).
``run_agent(..., tool_set=...)`` takes one of :data:`TOOL_SETS`:

* ``"lares"`` (the default) -- the Lares tools (:mod:`lares_kit.tools.toolbox`:
  lights and the robot by id, ``set_device``/``read_device``) and the world
  knowledge, with every state, in the prompt (:mod:`lares_kit.knowledge.modes`);
* ``"ha"`` -- Home Assistant's contract: the intent tools of
  :mod:`lares_kit.ha.tools` that the home's exposed devices call for
  (:func:`lares_kit.ha.tools.ha_tools_for`), targets by name and area, and
  instead of the world knowledge the **static context** -- the exposed
  devices' names, domains and areas, no states
  (:func:`lares_kit.ha.context.static_context`) -- in the knowledge
  message's place (still sent on every turn, as the world knowledge is; it
  never changes, so it is taken once, at the start, and kept in the
  :class:`HAEpisode`). The state comes from ``GetLiveContext``. The role
  prompt carries Home Assistant's instructions (:data:`HA_ROLE_PROMPT`).

What each design keeps of its own tools with ``"ha"``: what is not device
control -- ``ask_user`` and ``halt`` for every design, ``recall`` and
``remember_preference`` where there is a memory (react always). The robot is
not part of Home Assistant's API: ``move_robot`` and ``look_with_robot`` are
not offered, so a search for a lost dog cannot be done in this dialect. The
knowledge mode still applies (``none``: no static context); the knowledge
format does not (the static context is the format). SAGE's coordinator keeps
its sub-agents; its device agent speaks Home Assistant (static context and
intent tools instead of the capability documents), its condition agent still
reads capability documents to write conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from ..episode import Episode
from ..errors import LaresError
from ..ha.context import static_context
from ..ha.tools import HA_API_PROMPT, ha_tools_for
from ..home.graph import Home
from ..tools.toolbox import ask_user, default_tools, halt

__all__ = ["TOOL_SETS", "HA_ROLE_PROMPT", "Dialect", "HAEpisode", "UnknownToolSet", "check_tool_set", "dialect",
           "dialect_tools", "start_episode"]

TOOL_SETS = ("lares", "ha")

HA_ROLE_PROMPT = (
    "You control a smart home through Home Assistant's tools. The static context lists its devices by name, "
    "domain and area, not their states. " + HA_API_PROMPT + " Ask the user only as a last resort, for facts you "
    "cannot find out yourself. Call halt when the task is done or you cannot go any further -- never to ask a "
    "question."
)


class UnknownToolSet(LaresError, ValueError):
    """A tool set that is neither ``lares`` nor ``ha``; the message names both."""


def check_tool_set(tool_set: str) -> str:
    """``tool_set`` when it is one of :data:`TOOL_SETS`; else an :class:`UnknownToolSet` naming them.

    Args:
        tool_set: The dialect asked for, e.g. ``"ha"``.

    Examples:
        >>> check_tool_set("ha")
        'ha'
        >>> check_tool_set("homeassistant")
        Traceback (most recent call last):
        ...
        lares_kit.agents.dialects.UnknownToolSet: unknown tool set 'homeassistant'; tool sets: lares \
(the Lares tools), ha (Home Assistant's LLM API)
    """
    if tool_set not in TOOL_SETS:
        raise UnknownToolSet(f"unknown tool set {tool_set!r}; tool sets: lares (the Lares tools), "
                             "ha (Home Assistant's LLM API)")
    return tool_set


@dataclass
class HAEpisode(Episode):
    """An Episode in Home Assistant's dialect: its knowledge message is the static context, taken at the start.

    Saved with :meth:`Episode.to_dict`, it keeps ``tool_set`` and the static context beside the rest.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> ep = start_episode("ha", "hi", home, agent="function-calling", model="offline")
        >>> print(ep.messages(home)[1]["content"].splitlines()[0])
        Static Context: An overview of the areas and the devices in this smart home:
    """

    tool_set: str = "ha"
    static_context: str = ""
    KNOWLEDGE_CHANGES: ClassVar[bool] = False  # names and areas: the same every turn, so it stays second

    def knowledge_message(self, home: Home | None = None, needs: Any = None) -> dict[str, Any] | None:
        """The static context as a system message (None in knowledge mode ``none``).

        Args:
            home: Not read: the static context was taken at the start (names and areas do not change).
            needs: Not read: the static context is small, and every call gets all of it.
        """
        return None if self.knowledge == "none" else {"role": "system", "content": self.static_context}


def start_episode(tool_set: str, instruction: str, home: Home, **kwargs: Any) -> Episode:
    """A new running Episode for a dialect: an :class:`HAEpisode` for ``"ha"``, else a plain Episode.

    Args:
        tool_set: One of :data:`TOOL_SETS`.
        instruction: What the user asks.
        home: The home, as the episode starts.
        **kwargs: The Episode's other fields (agent, model, knowledge, prompts...).
    """
    if dialect(tool_set).static:
        return HAEpisode.start(instruction, home, static_context=static_context(home), **kwargs)
    return Episode.start(instruction, home, **kwargs)


def dialect_tools(home: Home) -> list[Callable[..., str]]:
    """The tools of the ``ha`` dialect for a home: its HA intent tools, then ``ask_user`` and ``halt``.

    Args:
        home: The home whose exposed devices decide which intent tools are offered.

    Examples:
        >>> from lares_kit import load_world
        >>> [fn.__name__ for fn in dialect_tools(load_world("lares-home"))][-3:]
        ['GetLiveContext', 'ask_user', 'halt']
    """
    return [*ha_tools_for(home), ask_user, halt]


@dataclass(frozen=True)
class Dialect:
    """One tool dialect, as the designs need it: its tools, its role prompt, how its knowledge names things.

    A design asks the run's dialect (``run.dialect``) instead of testing the
    tool set's name, so what differs between the dialects is said here once.

    Examples:
        >>> dialect("ha").static, dialect("lares").static
        (True, False)
        >>> from lares_kit import load_world
        >>> [fn.__name__ for fn in dialect("lares").tools(load_world("lares-home"))][:2]
        ['toggle_light', 'set_light']
    """

    name: str  # one of TOOL_SETS
    # Home Assistant's static context in the knowledge's place: names and areas, no states (GetLiveContext has
    # them), devices named by name only, the knowledge not sliced per call; False: the Lares world knowledge.
    static: bool
    role_prompt: str | None  # the dialect's own role prompt; None: the prompt style's
    tools: Callable[[Home], list[Callable[..., str]]]  # the tools a home offers in it, built once per run


DIALECTS: dict[str, Dialect] = {d.name: d for d in (
    Dialect("lares", static=False, role_prompt=None, tools=default_tools),
    Dialect("ha", static=True, role_prompt=HA_ROLE_PROMPT, tools=dialect_tools),
)}


def dialect(tool_set: str) -> Dialect:
    """The :class:`Dialect` called ``tool_set``; an :class:`UnknownToolSet` naming both for any other.

    Args:
        tool_set: ``"lares"`` or ``"ha"``.
    """
    return DIALECTS[check_tool_set(tool_set)]

