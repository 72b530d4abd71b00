"""Adding to a to-do or shopping list: "add oat milk to the shopping list", "put call mum on my tasks".

Part of the offline model (:mod:`lares_kit.models.offline`). Home Assistant's
recognizer (:mod:`~lares_kit.models.offline.ha.recognizer`) reads the list sentences its templates have,
with the list's exact name; this rule reads the looser English ones in a home
that has lists (``todo`` devices): a verb of adding, the item, then "to" / "on"
and the list, named by any word of its name ("my tasks" for Personal Tasks) or
just "the list" when the home has one. Several lists that fit are a question.
The goal is the change ``items: {"add": item}``, which the planner writes as
``add_to_list`` or Home Assistant's ``HassListAddItem``.
"""

from __future__ import annotations

import re

from ..goals import Change, Goal
from ..reading import Beliefs, Dev
from ..vocabulary import describe, words_of

__all__ = ["WHICH_LIST", "recognise_list"]

WHICH_LIST = "Which list do you mean: "
_ADD = re.compile(r"^(?:please |can you |could you |would you )*(?:add|put|write|jot down|note down|pop|stick)\s+"
                  r"(?P<item>.+?)\s+(?:to|on|onto|in|into)\s+(?:the |my |our |your )?(?P<list>.+?)(?:,? please)?$",
                  re.IGNORECASE)
_LIST_WORDS = {"list", "lists", "todo", "to", "do", "the", "my", "our", "your", "s"}


def _words(text: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words_of(text).split()} - _LIST_WORDS


def recognise_list(b: Beliefs) -> Goal | None:
    """The list add the instruction asks for (or which list it means), or None when it asks none.

    Args:
        b: what the model read from the request: the instruction, its lists, answers to "which list?".

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> lists = {"t": Dev("t", "Personal Tasks", "todo", "k"), "s": Dev("s", "Groceries", "todo", "k")}
        >>> ask = lambda text: recognise_list(Beliefs(text, "latest", {"k": Room("k", "Kitchen")}, lists, None, {}, []))
        >>> ask("Put call the plumber on my task list.").changes
        [Change(device='t', attribute='items', value={'add': 'call the plumber'})]
        >>> ask("Please add Mum's birthday card to the groceries, please!").changes[0].value
        {'add': "Mum's birthday card"}
        >>> ask("Add oat milk to the List").question
        'Which list do you mean: the personal tasks in the Kitchen or the groceries in the Kitchen?'
        >>> ask("put the book on the shelf") is None
        True
    """
    lists = [d for d in b.devices.values() if d.type == "todo"]
    m = _ADD.match(re.sub(r"[\s.!?]+$", "", b.instruction.strip())) if lists else None  # the item as said
    if m is None:
        return None
    said, item = words_of(m.group("list")), m.group("item").strip(" '\"")
    fits = _best(lists, _words(said))
    if not fits and not re.search(r"\b(?:list|lists|todo|to do)\b", said):
        return None  # "put the book on the shelf": no list is meant
    answered = [a for q, a in b.answers if q.startswith(WHICH_LIST)]
    fits = (_best(fits or lists, _words(answered[-1])) if answered else []) or fits or lists
    if len(fits) > 1:
        names = [describe(b, d.id) for d in fits]
        return Goal("clarify", question=f"{WHICH_LIST}{', '.join(names[:-1])} or {names[-1]}?")
    return Goal("control", changes=[Change(fits[0].id, "items", {"add": item})])


def _best(lists: list[Dev], said: set[str]) -> list[Dev]:
    # The lists sharing the most words with what was said; [] when none shares any.
    scores = {d.id: len(_words(d.name) & said) for d in lists}
    top = max(scores.values(), default=0)
    return [d for d in lists if top and scores[d.id] == top]
