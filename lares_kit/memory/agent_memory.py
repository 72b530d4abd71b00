"""Memory for an agent: recent turns in the prompt, older ones recalled from the store.

Taught in ``notebooks/10_memory.ipynb``. This is the memory manager of the
smart-building ReAct paper ("A general AI agent framework for smart buildings
based on large language models and ReAct strategy", 2025):

* **short-term memory** (:class:`Memory`): the recent turns of one
  conversation, given to the model as chat history. When it holds more than
  ``max_turns`` turns (or ``max_tokens`` tokens) the oldest turns leave it.
* **long-term memory** (:class:`~lares_kit.memory.store.MemoryStore`): one
  SQLite file per home. Every turn is written there *when it is said*, with
  its user and date, as one committed transaction, so a crash loses nothing
  already said; a turn that has left the prompt is reachable only through
  :func:`recall`. (The paper moves turns to a file only when they leave the
  window; writing at once gives the same long-term memory and survives a
  crash in the middle of a conversation.)
* :func:`recall`, the agent's tool: search long-term memory by words (FTS5,
  ranked by bm25) and by date, plus the user's stated preferences, which
  the :func:`remember_preference` tool stores. A
  :class:`~lares_kit.tools.toolbox.Toolbox` given ``memory=`` injects the memory.

It does not decide *what* to remember -- the agent loop calls
:meth:`Memory.add` for each user and assistant turn -- and has no embedding
search: word and date search are what the paper's memory tests need.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Callable

from ..errors import ToolError
from .store import MemoryStore, Turn, memory_path, parse_date_span, words_of

__all__ = ["Memory", "recall", "remember_preference", "estimate_tokens", "MEMORY_TOOLS", "MemoryStore", "Turn",
           "memory_path"]


def estimate_tokens(text: str) -> int:
    """About four characters per token, the usual estimate for English text.

    Args:
        text: The text to measure, e.g. one turn of a conversation; the estimate is at least 1.

    Examples:
        >>> estimate_tokens("my name is Ana")
        4
    """
    return max(1, round(len(text) / 4))


@dataclass
class Memory:
    """Short-term memory of one conversation, backed by a home's long-term store.

    ``short`` is the prompt window, oldest first. :meth:`add` stores a turn
    and returns the turns that left the window (the paper's move to
    long-term memory).

    Examples:
        >>> from datetime import datetime
        >>> store = MemoryStore(":memory:", clock=lambda: datetime(2026, 11, 29, 9, 0))
        >>> memory = Memory(store, user="ana", max_turns=2)
        >>> _ = memory.add("user", "I like the office at 21 degrees")
        >>> _ = memory.add("assistant", "Noted: 21 degrees in your office.")
        >>> [t.text for t in memory.add("user", "Open the lobby door")]
        ['I like the office at 21 degrees']
        >>> [m["role"] for m in memory.messages()]
        ['assistant', 'user']
        >>> [(t.date, t.text) for t in memory.long_term()]
        [('2026-11-29', 'I like the office at 21 degrees')]
    """

    store: MemoryStore
    user: str = ""  # whose conversation this is; "" when nobody said
    max_turns: int = 10  # the paper's threshold, in turns
    max_tokens: int | None = None  # a second threshold, in tokens of the window
    count_tokens: Callable[[str], int] = estimate_tokens
    session: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    short: list[Turn] = field(default_factory=list)  # the prompt window, oldest first

    def add(self, role: str, text: str) -> list[Turn]:
        """Store a turn and keep it in the window; return the turns that left the window."""
        self.short.append(self.store.add(role, text, user=self.user, session=self.session))
        left = []
        while len(self.short) > 1 and self._over():  # the newest turn always stays
            left.append(self.short.pop(0))
        return left

    def _over(self) -> bool:
        if len(self.short) > self.max_turns:
            return True
        return self.max_tokens is not None and sum(self.count_tokens(t.text) for t in self.short) > self.max_tokens

    def messages(self) -> list[dict[str, str]]:
        """The window as chat messages for the prompt's history."""
        return [{"role": t.role, "content": t.text} for t in self.short]

    def long_term(self) -> list[Turn]:
        """This user's stored turns that are not in the window, oldest first."""
        return self.store.turns(user=self.user, exclude=tuple(t.id for t in self.short))


def recall(memory: Memory | MemoryStore | None, query: str, date: str | None = None,
           person: str | None = None) -> str:
    """Search long-term memory: what was said earlier, with dates, best matches first.
    Use it for things said in past conversations, e.g. a user's name or usual settings.

    Args:
        memory: The conversation's memory, or a home's store (None: this run has no memory);
            supplied by the toolkit, never shown to the model.
        query: Words to look for, e.g. "office temperature". Use "" to list everything said on the date.
        date: Only turns from this day or range: "2026-11-29", "yesterday", "last 7 days", "2026-11-01..2026-11-15".
        person: Whose memories, e.g. "ana"; leave it out for the person you are talking to.

    Examples:
        >>> from datetime import datetime
        >>> store = MemoryStore(":memory:", clock=lambda: datetime(2026, 11, 30, 8, 0))
        >>> _ = store.add("user", "My name is Ana and I like the office at 21 degrees", user="ana",
        ...               at="2026-11-29 09:14:00")
        >>> print(recall(Memory(store, user="ana"), "office temperature"))  # doctest: +NORMALIZE_WHITESPACE
        1 memory matches 'office temperature' (best first):
        2026-11-29 09:14, ana said: "My name is Ana and I like the office at 21 degrees".
        >>> print(recall(Memory(store, user="ana"), "garden", date="yesterday"))
        Nothing in ana's long-term memory matches 'garden' from 2026-11-29. Try other words or another date.
    """
    if memory is None:
        raise ToolError("There is no long-term memory in this run, so there is nothing to recall.")
    store, window, who = memory, (), person
    if isinstance(memory, Memory):
        store, window = memory.store, tuple(t.id for t in memory.short)
        who = person or memory.user or None
    if not query.strip() and not date:
        raise ToolError("Give some words to look for, a date, or both.")
    try:
        turns = store.search(query, date, who, exclude=window)
        span = parse_date_span(date, store.clock().date()) if date else None
    except ValueError as exc:
        raise ToolError(f"{str(exc)[0].upper()}{str(exc)[1:]}.") from None
    # Preferences match on shared words ("temperatures" ~ "temperature"); there are few per user.
    stems = {_stem(w) for w in words_of(query)} if query.strip() else set()
    prefs = [(key, value, at) for key, value, at in (store.preference_records(who) if who else [])
             if stems & {_stem(w) for w in re.findall(r"\w+", f"{key} {json.dumps(value)}".lower())}
             and (span is None or span[0].isoformat() <= at[:10] <= span[1].isoformat())]
    when = "" if span is None else f" from {span[0]}" + (f" to {span[1]}" if span[1] != span[0] else "")
    if not turns and not prefs:
        whose = f"{who}'s long-term memory" if who else "long-term memory"
        about = f" matches {query.strip()!r}" if query.strip() else " has anything"
        return f"Nothing in {whose}{about}{when}. Try other words or another date."
    parts = []
    if turns:
        head = f"1 memory{' matches' * bool(query.strip())}" if len(turns) == 1 else \
            f"{len(turns)} memories{' match' * bool(query.strip())}"
        head += f" {query.strip()!r}{when} (best first)" if query.strip() else f"{when} (newest first)"
        said = [f'{t.at[:16]}, {_speaker(t)}: "{_clip(t.text)}"' for t in turns]
        parts.append(f"{head}: {'; '.join(said)}.")
    if prefs:
        stated = "; ".join(f"{key} = {json.dumps(value)} ({at[:10]})" for key, value, at in prefs)
        parts.append(f"Preferences {who} stated: {stated}.")
    return " ".join(parts)


def remember_preference(memory: Memory | None, key: str, value: bool | float | str) -> str:
    """Remember a preference the person you are talking to stated, for later conversations (recall finds it).

    Args:
        memory: The memory of the conversation, which knows who is speaking (None: this run has no memory);
            supplied by the toolkit, never shown to the model.
        key: What it is about, in a few words, e.g. "office temperature".
        value: What they prefer, e.g. 21, "warm", true.

    Examples:
        >>> memory = Memory(MemoryStore(":memory:"), user="ana")
        >>> remember_preference(memory, "office temperature", 21)
        'Remembered that ana prefers office temperature = 21.'
        >>> memory.store.preferences("ana")
        {'office temperature': 21}
    """
    if memory is None:
        raise ToolError("There is no long-term memory in this run, so nothing can be remembered.")
    if not isinstance(memory, Memory) or not memory.user:
        raise ToolError("I do not know who I am talking to, so I cannot remember a preference for them.")
    if not key.strip():
        raise ToolError('Say what the preference is about in the key, e.g. "office temperature".')
    memory.store.remember_preference(memory.user, key, value)
    return f"Remembered that {memory.user} prefers {key.strip().lower()} = {json.dumps(value)}."


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _speaker(turn: Turn) -> str:
    who = turn.user or "the user"
    return f"{who} said" if turn.role == "user" else f"the assistant said to {who}"


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


MEMORY_TOOLS: list[Callable[..., str]] = [recall, remember_preference]
