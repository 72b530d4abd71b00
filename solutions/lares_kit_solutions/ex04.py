"""Reference solutions for ``exercises/04_intent_step.ipynb`` (``lares_kit.learn.exercises.loop.ex04``)."""

import json

from lares_kit.agents.prompts import decide_schema, forced

__all__ = ["intent_request", "read_decision", "action_request"]

# %% q1
def intent_request(messages, tool_names):
    """The request that makes the model decide (and only decide).

    Args:
        messages: The chat messages so far.
        tool_names: The names of the functions the model may decide on.
    """
    return {"model": "offline", "messages": messages, "tools": [decide_schema(tool_names)],
            "tool_choice": forced("decide_best_function")}

# %% q2
def read_decision(reply, tool_names):
    """(function, reasoning) from an intent reply; ValueError with a sentence when it cannot be used.

    Args:
        reply: The assistant message answering the intent request (it should call ``decide_best_function``).
        tool_names: The names ``best_function`` may take.
    """
    if not reply.tool_calls:
        raise ValueError("Your reply had no call: call decide_best_function.")
    fn = reply.tool_calls[0].function
    if fn.name != "decide_best_function":
        raise ValueError(f"Only decide_best_function was offered, but you called {fn.name!r}.")
    try:
        args = json.loads(fn.arguments)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The arguments of decide_best_function are not valid JSON ({exc.msg}).") from None
    best = args.get("best_function")
    if best not in tool_names:
        raise ValueError(f"best_function must be one of {', '.join(tool_names)}; got {best!r}.")
    return best, args.get("reasoning", "")

# %% q3
def action_request(messages, toolbox, function):
    """The request that makes the model call the chosen function.

    Args:
        messages: The chat messages so far, the decision's summary included.
        toolbox: The Toolbox that holds the chosen function's schema.
        function: The chosen function's name, e.g. "set_light".
    """
    return {"model": "offline", "messages": messages, "tools": [toolbox.schema(function)],
            "tool_choice": forced(function)}
