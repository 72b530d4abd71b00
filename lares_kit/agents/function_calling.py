"""The plain function-calling loop: all tools offered, the model picks.

Taught in ``notebooks/03_function_calling_loop.ipynb``. This is the pattern
of the OpenAI docs: every tool is offered with ``tool_choice="auto"``; the
model calls one (or several with ``options={"parallel_tool_calls": True}``), each result
goes back as a tool message, and it goes round again until the model calls
``halt`` or the step limit is reached. One step is one model turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import LaresError
from .agent_run import AgentRun, RequestOptions

__all__ = ["run_function_calling", "FunctionCallingOptions"]


@dataclass(frozen=True)
class FunctionCallingOptions(RequestOptions):
    """The loop's own setting, from ``run_agent(..., options={...})`` (and ``temperature``, as every design).

    Examples:
        >>> FunctionCallingOptions(parallel_tool_calls=True).parallel_tool_calls
        True
        >>> FunctionCallingOptions(parallel_tool_calls="yes")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: option parallel_tool_calls must be true or false, not 'yes'
    """

    parallel_tool_calls: bool = False  # let the model call several tools in one reply, and run them all

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.parallel_tool_calls, bool):
            raise LaresError(f"option parallel_tool_calls must be true or false, not {self.parallel_tool_calls!r}")


def run_function_calling(run: AgentRun) -> None:
    """Run the loop until ``halt``, a question with no answer, or ``run.max_steps`` turns.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up: episode, home, toolbox, client; steps are appended.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="function-calling")
        >>> ep.status, ep.final_state["devices"]["kitchen-light"]
        ('done', {'on': True})
    """
    tools = run.toolbox.schemas()  # all of them, every turn
    parallel = run.options.parallel_tool_calls  # a FunctionCallingOptions
    for turn in range(1, run.max_steps + 1):
        reply = run.ask_model(turn, "turn", tools, tool_choice="auto", parallel=parallel)
        if reply is None:
            continue  # no usable call: recorded as an error step, the turn is lost
        if run.run_calls(turn, reply, one_only=not parallel):
            return  # halt, or a question nobody answered
    run.finish("step_limit", f"Stopped: {run.max_steps} steps used up before the agent called halt.")
