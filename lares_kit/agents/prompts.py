"""The words an agent sends: the role prompt, the goal, and the intent tool, in two prompt styles.

Taught in ``notebooks/04_intent_and_action.ipynb`` and ``notebooks/16_scaling_up.ipynb``.
A :class:`PromptStyle` says how an agent writes its prompts (:data:`PROMPT_STYLES`):

* ``lares`` -- the Lares write-up's texts: its role and goal prompts, each
  tool described by its whole docstring, the world knowledge as the second
  message, and an intent-action step whose action call sees everything the
  intent call saw;
* ``lean`` (the default) -- the same loops with cheaper prompts: a short role
  and goal, each tool described by the first sentence of its docstring, id
  enums only in small homes, what stays the same from call to call first and
  the world knowledge last (a prompt cache can reuse the start), and an action
  call that carries what filling in the chosen function's arguments needs:
  the decision, and the part of the home its arguments name
  (:mod:`lares_kit.agents.action_context`).

The layout of the messages is built by
:meth:`lares_kit.episode.Episode.messages`. The offline model reads the
layout (which message is the knowledge, which is the instruction), not these
exact words -- so a learner may rewrite them and still run every cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import LaresError
from ..tools.schema import ToolName, tool_schema

__all__ = ["ROLE_PROMPT", "GOAL_PROMPT", "LEAN_ROLE_PROMPT", "LEAN_GOAL_PROMPT", "ACTION_PROMPT", "REASONING_MAX_CHARS",
           "PromptStyle", "PROMPT_STYLES", "DEFAULT_STYLE", "prompt_style", "decide_best_function", "decide_schema",
           "forced"]

# The decide schema's maxLength on reasoning: a few sentences. Without a bound a small model can write
# thousands of tokens of "reasoning" before it names the function (one took 218 s on a local server).
REASONING_MAX_CHARS = 500

ROLE_PROMPT = (
    "You control a smart home through functions. You know the layout of the home: its rooms, "
    "the exits between them, the devices in each room and their current states. You do not know "
    "where movable things are (pets, people, objects) until the robot has seen them: move the "
    "robot and look with it to find them. The robot can only see in a room whose light is on. "
    "Ask the user only as a last resort, for facts you cannot find out yourself. Call halt when "
    "the task is done or you cannot go any further -- never to ask a question."
)

GOAL_PROMPT = (
    "Your goal is to carry out the user's instruction, which follows, one function call at a time. "
    "Use the world knowledge and what happened so far; change only what the instruction asks for. "
    "When the instruction is carried out, or cannot be, call halt with a short message for the user."
)


LEAN_ROLE_PROMPT = (
    "You control a smart home through functions. The world knowledge lists its rooms, exits and devices with "
    "their states; things that move (pets, people, objects) are known only once the robot has seen them, in a "
    "lit room. Ask the user only for what you cannot find out. Call halt when done or stuck, never to ask."
)
LEAN_GOAL_PROMPT = "Carry out the user's instruction, one call at a time; change only what it asks for."
# The lean action call's system message: the decision is in the conversation, the function is offered alone.
ACTION_PROMPT = "Call the function offered, with the arguments that carry out the decision above."


@dataclass(frozen=True)
class PromptStyle:
    """How an agent writes its prompts; :data:`PROMPT_STYLES` has the two the toolkit ships.

    Examples:
        >>> prompt_style("lares").order, prompt_style("lean").order
        ('lares', 'stable')
    """

    name: str
    role: str  # the role prompt (the first system message)
    goal: str  # the goal prompt (before the instruction)
    tool_text: str  # "docstring": a tool's whole docstring describes it; "short": its first sentence
    order: str  # "lares": the world knowledge second; "stable": the world knowledge last
    action: str  # intent-action's action call: "all" it saw before, or "needed" (the decision and its part)
    enum_limit: int  # id enums in tool schemas while the home has at most this many room and device ids


PROMPT_STYLES = {s.name: s for s in (
    PromptStyle("lares", ROLE_PROMPT, GOAL_PROMPT, "docstring", "lares", "all", 60),
    PromptStyle("lean", LEAN_ROLE_PROMPT, LEAN_GOAL_PROMPT, "short", "stable", "needed", 20),
)}
DEFAULT_STYLE = "lean"


def prompt_style(name: str | PromptStyle | None = None) -> PromptStyle:
    """The prompt style called ``name`` (None: the default, ``lean``); a LaresError names the styles.

    Args:
        name: ``"lares"`` or ``"lean"``, a :class:`PromptStyle`, or None.

    Examples:
        >>> prompt_style().name
        'lean'
        >>> prompt_style("terse")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: unknown prompt style 'terse'; styles: lares, lean
    """
    if isinstance(name, PromptStyle):
        return name
    key = DEFAULT_STYLE if name is None else str(name)
    if key not in PROMPT_STYLES:
        raise LaresError(f"unknown prompt style {name!r}; styles: {', '.join(PROMPT_STYLES)}")
    return PROMPT_STYLES[key]


def decide_best_function(reasoning: str, best_function: ToolName) -> str:
    """Decide which function to call next to make progress towards the goal, and say why.

    Args:
        reasoning: Why this function is the best next step, given the goal, the world knowledge
            and what happened so far.
        best_function: The name of the function to call next.
    """
    return f"I have decided to call {best_function} because: {reasoning}"


def decide_schema(names: list[str], short: bool = False) -> dict[str, Any]:
    """The intent tool's schema: ``best_function`` is an enum of the tool names; ``reasoning`` has a maxLength.

    Args:
        names: The names of the tools the model may choose from, in the order it will see them.
        short: Describe it in a few words (the ``lean`` style) instead of the Lares sentences.

    Examples:
        >>> s = decide_schema(["set_light", "halt"])
        >>> s["function"]["name"], s["function"]["parameters"]["properties"]["best_function"]["enum"]
        ('decide_best_function', ['set_light', 'halt'])
        >>> s["function"]["parameters"]["properties"]["reasoning"]["maxLength"]
        500
    """
    schema = tool_schema(decide_best_function, {ToolName: list(names)})
    params = schema["function"]["parameters"]["properties"]
    params["reasoning"]["maxLength"] = REASONING_MAX_CHARS
    if short:
        schema["function"]["description"] = "Choose the next function to call, and say why."
        params["reasoning"]["description"] = "Why it is the best next step."
        del params["best_function"]["description"]  # the enum says it
    return schema


def forced(name: str) -> dict[str, Any]:
    """The ``tool_choice`` that makes the model call exactly this function.

    Args:
        name: The function the model must call.

    Examples:
        >>> forced("halt")
        {'type': 'function', 'function': {'name': 'halt'}}
    """
    return {"type": "function", "function": {"name": name}}
