"""Reference solutions for ``exercises/10_memory_by_date.ipynb`` (``lares_kit.learn.exercises.building.ex10``)."""

from datetime import date

__all__ = ["in_span", "said_on", "first_mention"]

# %% q1
def in_span(at, span):
    """Whether a stored time 'YYYY-MM-DD HH:MM:SS' falls in (first day, last day), both included.

    Args:
        at: A stored time, e.g. '2026-11-24 09:30:00'.
        span: The (first day, last day) pair of ``datetime.date``.
    """
    first, last = span
    return first <= date.fromisoformat(at[:10]) <= last

# %% q2
def said_on(store, when):
    """The texts said on a day or range ('yesterday', '2026-11-20', 'last 7 days'), oldest first.

    Args:
        store: The MemoryStore to read.
        when: The day or range, in words or as ISO dates.
    """
    return [turn.text for turn in store.turns(date=when)]

# %% q3
def first_mention(store, word):
    """The day ('YYYY-MM-DD') a word was first said, or None.

    Args:
        store: The MemoryStore to read.
        word: The word to look for.
    """
    found = store.search(word, limit=100)
    return min(turn.at for turn in found)[:10] if found else None
