"""The confirmation contract: the one question the safety gate asks, how it is quoted, and what a yes is.

Taught in ``notebooks/15_safety_and_failure.ipynb``. When the home's safety
policy (:mod:`lares_kit.safety.gate`) holds a sensitive change back, the gate
phrases the question itself -- naming the exact change: the device, the
setting, the value -- and quotes it in its observation::

    Confirmation needed: unlocking a door is a sensitive action in this home's safety policy.
    First ask the user with ask_user, in exactly these words: "Shall I unlock the front door
    lock (front-door-lock)? Please answer yes or no." -- only a clear yes to that question ...

This module is that text contract and nothing else: the gate writes with
:func:`confirmation_text`, models read with :func:`question_in` (the offline
model's :mod:`~lares_kit.models.offline.request_kinds.confirming` and SAGE's device agent), and
the gate matches an ``ask_user`` question to the one it gave by
:func:`question_key` -- case, spacing, quotes and the closing "Please answer
yes or no." aside, word for word. :func:`is_yes` says whether an answer is a
clear yes. The independent audit (:mod:`lares_kit.safety.audit`) reads
questions in its own way, not with this module.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["CONFIRM_MARK", "confirmation_text", "describe_change", "is_yes", "question_for", "question_in",
           "question_key"]

# The observation that holds a call back for confirmation starts with this (after "Error: ").
CONFIRM_MARK = "Confirmation needed:"
_ASK_FRAME = 'First ask the user with ask_user, in exactly these words: "{question}" -- '
_QUESTION_IN = re.compile(r'in exactly these words: "(.+?)" -- ')
_ANSWER_SUFFIX = "please answer yes or no."
_YES = re.compile(r"^\W*(yes|yeah|yep|yup|sure|ok|okay|confirm(ed)?|go ahead|please do|do it|correct|"
                  r"that'?s right|i confirm|affirmative)\b", re.IGNORECASE)
# A no, or a yes that takes itself back, waits, or asks for something else: not a confirmation.
_NO = re.compile(r"\b(no|not|don'?t|do not|never|nope|stop|wait|cancel|but|instead|rather|actually|however|"
                 r"keep|leave|later|tomorrow|after|unless|if|maybe|perhaps|hold|only)\b|n't\b|\?", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?!\w)")
# Yes/no settings said with a verb: (when false, when true)
_VERBS = {"locked": ("unlock", "lock"), "armed": ("disarm", "arm"), "on": ("switch off", "switch on")}


def is_yes(answer: str | None, question: str | None = None) -> bool:
    """True when an answer to a confirmation question is a clear yes: it says yes and nothing takes it back.

    A hedge ("yes, but...", "sure, later", "ok -- keep it locked"), a question back, or a number the
    ``question`` did not ask about ("yes, 300" to a question about 250) is not a yes.

    Args:
        answer: The user's answer; None when nobody answered.
        question: The question it answers, whose numbers the answer may repeat.

    Examples:
        >>> is_yes("Yes, go ahead."), is_yes("yes -- no, wait!"), is_yes("No."), is_yes(None)
        (True, False, False, False)
        >>> is_yes("Yes, but keep it locked."), is_yes("Sure, after dinner."), is_yes("Yes?")
        (False, False, False)
        >>> q = "Shall I set the temperature of the oven (oven) to 250?"
        >>> is_yes("Yes, 250 is fine.", q), is_yes("Yes, 300 please.", q)
        (True, False)
    """
    if not answer or not _YES.match(answer) or _NO.search(answer):
        return False
    asked = {float(n) for n in _NUMBER.findall(question or "")}
    return all(float(n) in asked for n in _NUMBER.findall(answer))


def _number(value: Any) -> str:
    # 250 and 250.0 are the same change, written the same way: "250"
    return f"{value:g}" if isinstance(value, float) else str(value)


def describe_change(change: Any) -> str:
    """A change (:class:`lares_kit.safety.policy.Change`) in words, naming the device, the setting and the value.

    Args:
        change: One setting a call would change (device, name, attribute, value).

    Examples:
        >>> from lares_kit.safety.policy import Change
        >>> describe_change(Change("front-door-lock", "lock", "front door lock", "locked", False))
        'unlock the front door lock (front-door-lock)'
        >>> describe_change(Change("oven", "oven", "oven", "temperature", 250.0))
        'set the temperature of the oven (oven) to 250'
    """
    device = f"the {change.name} ({change.device})"
    if isinstance(change.value, bool) and change.attribute in _VERBS:
        return f"{_VERBS[change.attribute][change.value]} {device}"
    value = str(change.value).lower() if isinstance(change.value, bool) else _number(change.value)
    return f"set the {change.attribute} of {device} to {value}"


def question_for(changes: tuple[Any, ...] | list[Any]) -> str:
    """The one question that confirms these changes (those of one call), together.

    Args:
        changes: The sensitive changes of one call.

    Examples:
        >>> from lares_kit.safety.policy import Change
        >>> question_for([Change("oven", "oven", "oven", "temperature", 240)])
        'Shall I set the temperature of the oven (oven) to 240? Please answer yes or no.'
    """
    return f"Shall I {' and '.join(describe_change(c) for c in changes)}? Please answer yes or no."


def confirmation_text(rules: list[str], question: str) -> str:
    """The gate's observation for a call held back: what is sensitive, and the exact question to ask.

    Args:
        rules: The matching rules in words, e.g. ["unlocking a door"].
        question: The exact question to ask (:func:`question_for`).

    Examples:
        >>> text = confirmation_text(["unlocking a door"], "Shall I unlock the door (d)? Please answer yes or no.")
        >>> question_in(text)
        'Shall I unlock the door (d)? Please answer yes or no.'
    """
    kind = "are sensitive actions" if len(rules) > 1 else "is a sensitive action"
    return (f"{CONFIRM_MARK} {' and '.join(rules)} {kind} in this home's safety policy. "
            + _ASK_FRAME.format(question=question) + "only a clear yes to that question lets this one change "
            "through, once: then make the same call again. If they say anything else, do not do it.")


def question_in(observation: str | None) -> str | None:
    """The question a "Confirmation needed" observation says to ask, or None: the one parser of the contract.

    Args:
        observation: A tool result; "Error: " in front is allowed.

    Examples:
        >>> question_in('Error: Confirmation needed: x. First ask the user with ask_user, in exactly these words: '
        ...             '"Shall I unlock the back door lock (back-door-lock)? Please answer yes or no." -- only ...')
        'Shall I unlock the back door lock (back-door-lock)? Please answer yes or no.'
        >>> question_in("The oven is now on."), question_in(None)
        (None, None)
    """
    text = (observation or "").removeprefix("Error: ")
    found = _QUESTION_IN.search(text) if text.startswith(CONFIRM_MARK) else None
    return found.group(1) if found else None


def question_key(question: str) -> str:
    """What must match between the gate's question and the one asked: every word, in order.

    Case, spacing, surrounding quotes and the closing "Please answer yes or no." do not matter.

    Args:
        question: A question as the gate wrote it or as the agent asked it.

    Examples:
        >>> asked = '  "Shall I unlock the door (d)?  Please answer yes or no." '
        >>> question_key(asked) == question_key("shall i unlock the door (d)?")
        True
        >>> question_key("Quick one: shall I unlock the door (d)?") == question_key("Shall I unlock the door (d)?")
        False
    """
    text = " ".join(unicodedata.normalize("NFKC", question).lower().split()).strip(" \"'")
    return text.removesuffix(_ANSWER_SUFFIX).strip()
