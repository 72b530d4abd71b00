"""How people say a persistent command: "when X, do Y", "do Y the next time X", "cancel the rule".

Two sides need to recognise the wording without knowing anything about the
home: the offline model, which hands such a request to SAGE's condition
agent, and ``lares run``, which tells a learner that only the sage agent
registers persistent commands. Both import it from here, so the stand-in
stays apart from the home side and the CLI does not reach into the stand-in.
These are patterns over the words, not an understanding: a real model
decides from the meaning.

It imports nothing from the rest of the toolkit.
"""

from __future__ import annotations

import re

__all__ = ["split_persistent", "is_persistent"]

_WHEN = r"(?:whenever|when|the next time|next time|as soon as|once)"
_ABOUT_RULES = re.compile(r"\b(cancel|stop watching|forget)\b.*\b(condition|reminder|rule|when)\b|"
                          r"\bwhat are you watching\b|\b(list|show)\b.*\b(conditions|reminders|rules)\b", re.IGNORECASE)


def split_persistent(request: str) -> tuple[str, str] | None:
    """(action, trigger) of a persistent command, or None.

    Args:
        request: What the person said.

    Examples:
        >>> split_persistent("turn on the light in the dining room when I open the fridge")
        ('turn on the light in the dining room', 'I open the fridge')
        >>> split_persistent("The next time someone opens the fridge, turn all the lights off.")
        ('turn all the lights off', 'someone opens the fridge')
        >>> split_persistent("turn on the light") is None
        True
    """
    text = request.strip().rstrip(".!")
    first = re.match(rf"^{_WHEN}\s+(.+?),\s*(?:then\s+)?(.+)$", text, re.IGNORECASE)
    if first:
        return first.group(2), first.group(1)
    last = re.match(rf"^(.+?),?\s+\b{_WHEN}\s+(.+)$", text, re.IGNORECASE)
    if last:
        return last.group(1), last.group(2)
    return None


def is_persistent(request: str) -> bool:
    """True for a "when X, do Y" command, or a question or order about the ones already set up.

    Args:
        request: What the person said.

    Examples:
        >>> is_persistent("When the door unlocks, switch on the hall light.")
        True
        >>> is_persistent("Cancel the fridge rule, please."), is_persistent("What are you watching?")
        (True, True)
        >>> is_persistent("Switch on the hall light.")
        False
    """
    return split_persistent(request) is not None or bool(_ABOUT_RULES.search(request))
