"""The Lares loop: decide on a function (intent), then call it (action).

Taught in ``notebooks/04_intent_and_action.ipynb``. Each step makes two
model calls:

1. **intent**: only ``decide_best_function(reasoning, best_function)`` is
   offered, and forced with ``tool_choice``. The reasoning is chain of
   thought the model must write *before* it acts. The raw intent call is not
   kept; a one-line summary ("I have decided to call X because: ...") goes
   into the history instead, as Lares does.
2. **action**: only the chosen function is offered, forced; the model fills
   in its arguments, and the call runs. In the ``lean`` prompt style this
   call carries only what filling them in needs: the decision and the part of
   the home the arguments name (:mod:`~lares_kit.agents.action_context`).

A decision that cannot be used (bad JSON, an unknown function) is recorded
as an error step and the step is lost -- the loop goes on. A server that
ignores the forced choice (it answers in text, or calls another function)
is handled by :func:`~lares_kit.agents.forced_choice.ask_forced`: the
transcript says so, the function is offered alone with a note to call it
now, and if nothing gives a call the episode ends ``model_error``.
"""

from __future__ import annotations

import json
from typing import Any

from ..episode_steps import Intent
from .action_context import action_messages
from .agent_run import AgentRun
from .forced_choice import ask_forced
from .prompts import decide_schema

__all__ = ["run_intent_action", "read_intent"]


def run_intent_action(run: AgentRun) -> None:
    """Run decide-then-act until ``halt``, a question with no answer, or ``run.max_steps`` steps.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up: episode, home, toolbox, client; steps are appended.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"))
        >>> [s.kind for s in ep.steps]
        ['intent', 'call', 'intent', 'final']
    """
    decide = decide_schema(run.toolbox.names, short=run.prompts.tool_text == "short")
    for turn in range(1, run.max_steps + 1):
        reply = ask_forced(run, turn, "intent", decide)
        intent = read_intent(run, turn, reply) if reply is not None else None
        if intent is None:
            if run.episode.status != "running":
                return  # the server ignored the forced choice and no fallback worked: model_error
            continue  # recorded as an error step; the step is lost (Lares logs it and moves on)
        run.episode.steps.append(intent)  # kept as its summary line, never as the raw call
        reply = ask_forced(run, turn, "action", run.toolbox.schema(intent.function),
                           messages=action_messages(run, intent.function))
        if reply is not None and run.run_calls(turn, reply, one_only=True, only=intent.function):
            return  # halt, or a question nobody answered
        if run.episode.status != "running":
            return
    run.finish("step_limit", f"Stopped: {run.max_steps} steps used up before the agent called halt.")


def read_intent(run: AgentRun, turn: int, reply: Any) -> Intent | None:
    """The decision in an intent reply, or None after recording why it cannot be used.

    Args:
        run: The run the reply belongs to; an unusable decision is recorded on it as an error step.
        turn: The step number (from 1) the decision is for.
        reply: The model's message to the forced ``decide_best_function`` call (it has ``tool_calls``).
    """
    calls = reply.tool_calls
    call = calls[0]
    name = getattr(getattr(call, "function", None), "name", None)
    if len(calls) > 1:
        run.error(turn, f"Decide once per step: {len(calls)} calls came back; only the first was used.")
    if name != "decide_best_function":
        run.error(turn, f"Only decide_best_function was offered, but the reply called {name!r}.")
        return None
    try:
        args = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError as exc:
        run.error(turn, f"The arguments of decide_best_function are not valid JSON ({exc.msg}).")
        return None
    best = args.get("best_function") if isinstance(args, dict) else None
    if best not in run.toolbox.names:
        run.error(turn, f"best_function must be one of {', '.join(run.toolbox.names)}; got {best!r}.")
        return None
    return Intent(str(args.get("reasoning", "")), best, turn=turn)
