"""The words an agent sends: the role prompt, the goal, and the intent tool.

Taught in ``notebooks/04_intent_and_action.ipynb``. These texts follow the Lares
write-up; the layout of the messages that carry them is built by
:meth:`lares_kit.episode.Episode.messages`. The offline model reads the
layout (which message is the knowledge, which is the instruction), not these
exact words -- so a learner may rewrite them and still run every cell.
"""

from __future__ import annotations

from typing import Any

from ..schema import ToolName, tool_schema

__all__ = ["ROLE_PROMPT", "GOAL_PROMPT", "REASONING_MAX_CHARS", "decide_best_function", "decide_schema", "forced"]

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


def decide_best_function(reasoning: str, best_function: ToolName) -> str:
    """Decide which function to call next to make progress towards the goal, and say why.

    Args:
        reasoning: Why this function is the best next step, given the goal, the world knowledge
            and what happened so far.
        best_function: The name of the function to call next.
    """
    return f"I have decided to call {best_function} because: {reasoning}"


def decide_schema(names: list[str]) -> dict[str, Any]:
    """The intent tool's schema: ``best_function`` is an enum of the tool names; ``reasoning`` has a maxLength.

    Args:
        names: The names of the tools the model may choose from, in the order it will see them.

    Examples:
        >>> s = decide_schema(["set_light", "halt"])
        >>> s["function"]["name"], s["function"]["parameters"]["properties"]["best_function"]["enum"]
        ('decide_best_function', ['set_light', 'halt'])
        >>> s["function"]["parameters"]["properties"]["reasoning"]["maxLength"]
        500
    """
    schema = tool_schema(decide_best_function, {ToolName: list(names)})
    schema["function"]["parameters"]["properties"]["reasoning"]["maxLength"] = REASONING_MAX_CHARS
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
