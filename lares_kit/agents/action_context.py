"""What an intent-action step's action call carries: everything the intent call saw, or what filling it in needs.

Taught in ``notebooks/16_scaling_up.ipynb``. In the Lares write-up the action
call repeats the intent call's whole prompt -- role, world knowledge, goal,
instruction, history -- and only the offered function changes. That doubles
the cost of every step. The action call's job is narrower: fill in the
arguments of the function just chosen. In the ``lean`` prompt style
(:mod:`lares_kit.agents.prompts`) it carries

* a one-line system prompt (:data:`~lares_kit.agents.prompts.ACTION_PROMPT`),
  the instruction, and the decision (the intent summary with its reasoning);
* the part of the world knowledge the function's arguments can name, read from
  their types (:func:`knowledge_needs`): a room id -- the rooms and their
  exits; a light id -- each room's lights; a device id -- each room's
  devices; no id -- no knowledge at all (``look_with_robot``, and ``halt``,
  whose message is written from the decision: it says what was found or done).

Functions whose text depends on the conversation so far (``ask_user``, the
memory tools), tools of a remote home, and Home Assistant's dialect keep the
full prompt. The catch: the decision must say what to do. A model whose
reasoning is vague ("I will move the robot") leaves the action call to guess;
the offline model writes the call it means into its reasoning
(:mod:`lares_kit.models.offline`), and ``lares bench`` with ``--prompt-style
lares`` and ``lean`` compares the two on any model.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Callable

from ..tools.schema import INJECTED, DeviceId, LightId, RoomId
from .agent_run import AgentRun
from .prompts import ACTION_PROMPT

__all__ = ["FULL_CONTEXT", "knowledge_needs", "action_messages"]

FULL_CONTEXT = frozenset({"ask_user", "recall", "remember_preference"})  # their text is about the conversation
_PARTS = {RoomId: "rooms", LightId: "lights", DeviceId: "devices"}


def knowledge_needs(fn: Callable[..., Any]) -> set[str]:
    """The parts of the world knowledge a tool's arguments can name, from their types.

    Args:
        fn: A tool function; its parameters typed :data:`~lares_kit.tools.schema.RoomId`, ``LightId`` or ``DeviceId``
            (alone, in a list or optional) name rooms, lights or devices.

    Examples:
        >>> from lares_kit.tools.toolbox import look_with_robot, move_robot, set_light
        >>> knowledge_needs(move_robot), knowledge_needs(set_light), knowledge_needs(look_with_robot)
        ({'rooms'}, {'lights'}, set())
    """
    hints = typing.get_type_hints(fn)
    parts = set()
    for name in inspect.signature(fn).parameters:
        if name in INJECTED:
            continue
        hint = hints.get(name)
        for kind in (hint, *typing.get_args(hint)):
            if kind in _PARTS:
                parts.add(_PARTS[kind])
            for inner in typing.get_args(kind):  # list[RoomId] | None
                if inner in _PARTS:
                    parts.add(_PARTS[inner])
    return parts


def action_messages(run: AgentRun, function: str) -> list[dict[str, Any]] | None:
    """The messages of the action call for ``function``; None when it gets the intent call's (the ``lares`` style).

    Args:
        run: The run in progress; its last step is the decision (an Intent) just made.
        function: The function the decision chose, one of the run's tools.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"))
        >>> ep.prompt_style, ep.steps[0].kind
        ('lean', 'intent')
    """
    style = run.prompts
    fn = next((f for f in run.toolbox.tools or [] if f.__name__ == function), None)
    if (style.action != "needed" or run.dialect.static or function in FULL_CONTEXT or fn is None
            or getattr(fn, "schema", None) is not None):  # a remote home's tool: its types are not known here
        return None
    decision = {"role": "assistant", "content": run.episode.steps[-1].summary}
    needs = knowledge_needs(fn)
    knowledge = run.episode.knowledge_message(run.home, needs=needs) if needs else None
    return run.episode.laid_out([{"role": "system", "content": ACTION_PROMPT},
                                 {"role": "user", "content": run.episode.instruction}, decision], knowledge)
