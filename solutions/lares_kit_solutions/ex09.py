"""Reference solutions for ``exercises/09_react_parser.ipynb`` (``lares_kit.learn.exercises.building.ex09``)."""

import json
import re

__all__ = ["final_answer", "parse_actions", "ignored_note"]

# %% q1
def final_answer(text):
    """The text after 'Final Answer:', stripped; None when there is none.

    Args:
        text: The planner's reply.
    """
    match = re.search(r"Final Answer\s*:\s*(.*)", text, re.IGNORECASE | re.DOTALL)
    return match.group(1).strip() if match else None

# %% q2
def parse_actions(text):
    """Every Action of a reply, in order, as {"tool": ..., "arguments": {...}}.

    Args:
        text: The executor's reply, with one or more ``Action: {...}`` lines.
    """
    actions = []
    for n, piece in enumerate(re.split(r"Action\s*:", text)[1:], 1):
        piece = re.sub(r"^\s*```(?:json)?", "", piece).strip()
        try:
            value, _ = json.JSONDecoder().raw_decode(piece)
        except json.JSONDecodeError as exc:
            raise ValueError(f"Action {n} is not valid JSON ({exc.msg}).") from None
        actions.append({"tool": value["tool"], "arguments": value.get("arguments", {})})
    return actions

# %% q3
def ignored_note(n):
    """What to tell the model when its reply had n Actions and only the first ran.

    Args:
        n: How many Actions the reply had (0 or 1: nothing to tell).
    """
    if n <= 1:
        return ""
    return (f"Your reply had {n} Actions; only the first was run and the other {n - 1} were not. "
            "Send one Action at a time.")
