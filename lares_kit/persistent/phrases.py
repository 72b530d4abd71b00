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

__all__ = ["TIME_TRIGGER", "split_persistent", "is_persistent"]

_WHEN = r"(?:whenever|when|the next time|next time|as soon as|once)"
_ABOUT_RULES = re.compile(r"\b(cancel|stop watching|forget)\b.*\b(condition|reminder|rule|when)\b|"
                          r"\bwhat are you watching\b|\b(list|show)\b.*\b(conditions|reminders|rules)\b", re.IGNORECASE)


_DAY = (r"(?:day|morning|evening|night|afternoon|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday"
        r"|sunday)")
_AT = r"(?:\d{1,2}[:.]\d\d(?:\s?(?:am|pm))?|\d{1,2}\s?(?:am|pm|o'?clock)|noon|midnight)"  # a time said as one
_BARE = r"(?:\d{1,2}(?:[:.]\d\d)?(?:\s?(?:am|pm|o'?clock))?|noon|midnight)"  # "at 7" after "every evening"
# A time a command is for: "every evening at 7", "at 6:30 on weekdays", "at 11pm", "in ten minutes"
TIME_TRIGGER = re.compile(
    rf"\b(?:(?:every|each) {_DAY}s?(?:\s+at\s+{_BARE})?|at {_AT}(?:\s+(?:every day|each day|daily|on {_DAY}s?|"
    rf"every {_DAY}))?|(?:on {_DAY}s?|daily) at {_BARE}|in (?:a|an|\d+|one|two|three|four|five|ten|fifteen|twenty|"
    r"thirty|forty|a few|a couple of) (?:minutes?|hours?))\b", re.IGNORECASE)


def split_persistent(request: str) -> tuple[str, str] | None:
    """(action, trigger) of a persistent command, or None.

    Args:
        request: What the person said.

    Examples:
        >>> split_persistent("turn on the light in the dining room when I open the fridge")
        ('turn on the light in the dining room', 'I open the fridge')
        >>> split_persistent("The next time someone opens the fridge, turn all the lights off.")
        ('turn all the lights off', 'someone opens the fridge')
        >>> split_persistent("every evening at 7, turn off the TV in the den")
        ('turn off the TV in the den', 'every evening at 7')
        >>> split_persistent("open the blinds at 6:30 on weekdays"), split_persistent("set the oven to 180")
        (('open the blinds', 'at 6:30 on weekdays'), None)
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
    if when := TIME_TRIGGER.search(text):  # "every evening at 7, turn off the TV": the time is the trigger
        action = " ".join(f"{text[:when.start()]} {text[when.end():]}".replace(",", " ").split())
        return (action, when.group(0)) if len(action.split()) > 1 else None
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
