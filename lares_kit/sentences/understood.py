"""The "did not understand" contract: how a model's final message says words of the instruction could not be read.

An agent cannot see inside a model; it sees the final message. A model that
could not read some words of an instruction -- an exception, a negation, a
time, a degree, a word it does not know -- says so by *beginning* its final
message with :data:`NOT_UNDERSTOOD_MARK` ("I did not understand"), then
quotes the words, says what it did with the rest (or that it did nothing)
and suggests a wording that works. The agent then ends the episode
``not_understood`` instead of ``done`` (:func:`final_status`), so a learner,
a benchmark and a script can tell "it could not read me" from "it did it".

A deliberate decline is not this: a safety refusal, a request nothing in the
home can do, a device the home lacks -- those are understood and end ``done``
with their reason. The offline model keeps the contract; a real model keeps
it when its prompt asks it to (a sentence in the system prompt or the halt
tool's description: "If you could not understand part of the instruction,
begin your message with 'I did not understand'"). The CLI's exit code is 0
for it, as for every status but ``model_error``.

This module is a leaf: it imports nothing from lares_kit, so both the home
side (the agents) and the models can use it.
"""

from __future__ import annotations

__all__ = ["NOT_UNDERSTOOD", "NOT_UNDERSTOOD_MARK", "final_status", "is_not_understood"]

NOT_UNDERSTOOD_MARK = "I did not understand"  # how a final message that could not read the instruction begins
NOT_UNDERSTOOD = "not_understood"  # the episode status it leads to (lares_kit.episode.STATUSES)


def is_not_understood(message: object) -> bool:
    """True when a final message says the model did not understand: it begins with :data:`NOT_UNDERSTOOD_MARK`.

    Case and leading spaces do not matter; the mark anywhere else (a quoted sentence) does not count.

    Args:
        message: The final message (the halt's ``message_to_user``, a Final Answer).

    Examples:
        >>> is_not_understood('I did not understand "except the hall", so I did nothing.')
        True
        >>> is_not_understood("The light is on. You said: I did not understand the manual.")
        False
    """
    return str(message).lstrip().lower().startswith(NOT_UNDERSTOOD_MARK.lower())


def final_status(message: object) -> str:
    """The status an episode ends with when the model halts with ``message``: ``not_understood`` or ``done``.

    Args:
        message: The final message.

    Examples:
        >>> final_status("The light in the Kitchen is now on."), final_status("I did not understand 'up a bit'.")
        ('done', 'not_understood')
    """
    return NOT_UNDERSTOOD if is_not_understood(message) else "done"
