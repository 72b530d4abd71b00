"""The plain function-calling loop: all tools offered, the model picks.

Taught in ``notebooks/03_function_calling_loop.ipynb``. This is the pattern
of the OpenAI docs: every tool is offered with ``tool_choice="auto"``; the
model calls one (or several when ``parallel_tool_calls`` is on), each result
goes back as a tool message, and it goes round again until the model calls
``halt`` or the step limit is reached. One step is one model turn.
"""

from __future__ import annotations

from .shared import AgentRun

__all__ = ["run_function_calling"]


def run_function_calling(run: AgentRun) -> None:
    """Run the loop until ``halt``, a question with no answer, or ``run.max_steps`` turns.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="function-calling")
        >>> ep.status, ep.final_state["devices"]["kitchen-light"]
        ('done', {'on': True})
    """
    tools = run.toolbox.schemas()  # all of them, every turn
    for turn in range(1, run.max_steps + 1):
        reply = run.ask_model(turn, "turn", tools, tool_choice="auto")
        if reply is None:
            continue  # no usable call: recorded as an error step, the turn is lost
        if run.run_calls(turn, reply, one_only=not run.parallel_tool_calls):
            return  # halt, or a question nobody answered
    run.finish("step_limit", f"Stopped: {run.max_steps} steps used up before the agent called halt.")
