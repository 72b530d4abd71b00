"""Personalization: who is speaking, what they asked before, and a profile summarised from it.

Taught in ``notebooks/12_personalization.ipynb``. SAGE keeps every past
request in long-term memory and a *user profile* (sports, teams, genres,
shows, genres to avoid) summarised from it, so "put the game on" means the
Canadiens for Amal and the Raptors for Dmitriy. Here both live in the same
SQLite store as the ReAct agent's memory (:mod:`lares_kit.memory.store`):
past requests are turns with the resident as ``user``, stated preferences
are rows of its ``preferences`` table.

* :func:`residents` and :func:`speaker` read the world file's ``users:``
  and who gives this instruction (a benchmark task's ``setup.user``);
* :func:`seed_memory` writes each resident's ``profile`` and
  ``past_requests`` into a store, once;
* :func:`profile_of` summarises a resident from the store: preferences,
  then what their past requests keep mentioning;
* :func:`user_profile` is the agent's tool (``memory`` is injected by the
  Toolbox); :func:`lares_kit.memory.agent_memory.recall` searches the past requests and
  :func:`lares_kit.memory.agent_memory.remember_preference` stores a new preference.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from ..errors import ToolError
from ..home.graph import Home
from .agent_memory import Memory, MemoryStore, recall, remember_preference
from .store import words_of

__all__ = ["residents", "speaker", "seed_memory", "memory_for", "profile_of", "user_profile",
           "PREFERENCE_TOOLS"]


def residents(home: Home) -> dict[str, dict[str, Any]]:
    """The world file's ``users:``, by id.

    Args:
        home: The home whose world file lists its residents; entries without an ``id`` are skipped.

    Examples:
        >>> from lares_kit import load_world
        >>> sorted(residents(load_world("sage-home")))
        ['amal', 'dmitriy']
    """
    return {u["id"]: u for u in home.extra.get("users", []) if isinstance(u, dict) and "id" in u}


def speaker(home: Home, person: str = "") -> str:
    """Who gives the instruction: ``person`` (the run context's), else the home's first resident, else ``""``.

    Args:
        home: The home the instruction is given in; its world file lists the residents.
        person: The person the run context names (a task's ``setup.user``, ``lares run --person``); "" for none.

    Examples:
        >>> from lares_kit import load_world
        >>> speaker(load_world("sage-home")), speaker(load_world("sage-home"), "dmitriy")
        ('amal', 'dmitriy')
    """
    if person:
        return person
    return next(iter(residents(home)), "")


def seed_memory(home: Home, store: MemoryStore) -> MemoryStore:
    """Write every resident's profile and past requests into ``store`` (once: a seeded store is left alone).

    Args:
        home: The home whose world file gives each resident's ``profile`` and ``past_requests``.
        store: The long-term store to write into; a resident who already has turns or preferences there is skipped.

    Examples:
        >>> from lares_kit import load_world
        >>> store = seed_memory(load_world("sage-home"), MemoryStore(":memory:"))
        >>> store.preferences("amal")["favourite team"]
        'Montreal Canadiens'
        >>> len(store.turns(user="dmitriy"))
        3
    """
    for user_id, user in residents(home).items():
        if store.preferences(user_id) or store.turns(user=user_id):
            continue  # already seeded (or already lived in): never overwrite what was said since
        for key, value in (user.get("profile") or {}).items():
            store.remember_preference(user_id, key, value, at="2024-04-01 09:00:00")
        for request in user.get("past_requests") or []:
            store.add("user", request["text"], user=user_id, at=request.get("at"))
    return store


def memory_for(home: Home, store: MemoryStore | None = None, person: str = "") -> Memory:
    """Short-term memory for the speaker, over a seeded store (a fresh in-memory one by default).

    Args:
        home: The home whose residents seed the store.
        store: The long-term store to use; None makes a fresh in-memory one, forgotten after the run.
        person: Who speaks (:func:`speaker`: "" is the home's first resident).
    """
    return Memory(seed_memory(home, store or MemoryStore(":memory:")), user=speaker(home, person))


def _preference_text(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def profile_of(store: MemoryStore, person: str, name: str = "") -> str:
    """A person's profile: their stated preferences, then the words their past requests keep using.

    Args:
        store: The long-term store holding the person's preferences and past requests.
        person: The resident's id, e.g. ``"dmitriy"``.
        name: How to call them in the text, e.g. ``"Dmitriy"``; "" uses the id.

    Examples:
        >>> from lares_kit import load_world
        >>> store = seed_memory(load_world("sage-home"), MemoryStore(":memory:"))
        >>> print(profile_of(store, "dmitriy", "Dmitriy").splitlines()[4])
        - favourite team: Toronto Raptors
    """
    prefs = store.preferences(person)
    turns = store.turns(user=person)
    requests = [t for t in turns if t.role == "user"]
    if not prefs and not requests:
        return f"Nothing is known about {name or person} yet: no preferences and no past requests."
    lines = [f"Profile of {name or person} ({person}):"]
    lines += [f"- {key}: {_preference_text(value)}" for key, value in prefs.items()]
    # What the past requests keep coming back to: the summary SAGE builds from its daily logs.
    common = Counter(w for t in requests for w in set(words_of(t.text)) if len(w) > 3)
    often = [w for w, n in common.most_common(6) if n > 1]
    if often:
        lines.append(f"- often asks about: {', '.join(often)}")
    for t in requests[-3:]:
        lines.append(f'- asked on {t.at[:10]}: "{t.text}"')
    return "\n".join(lines)


# --------------------------------------------------------------------- tools
def user_profile(memory: Memory | None, person: str = "") -> str:
    """Read a resident's profile: favourite teams and sports, TV genres they like and avoid, usual temperature,
    light colours, and their recent requests.

    Args:
        memory: The memory of the conversation, which knows who is speaking (None: this run has no memory);
            supplied by the toolkit, never shown to the model.
        person: The resident's id, e.g. "amal"; leave it empty for the person you are talking to.
    """
    if memory is None:
        raise ToolError("There is no memory in this run, so there is no profile to read.")
    who = person.strip().lower() or memory.user
    if not who:
        raise ToolError("I do not know who is speaking; name the person, e.g. person=\"amal\".")
    return profile_of(memory.store, who, who.title())


def stated(memory: Memory | None, person: str = "") -> dict[str, Any]:
    """A person's stated preferences as data (for code, not the model)."""
    if memory is None:
        return {}
    return memory.store.preferences(person or memory.user)


PREFERENCE_TOOLS: list[Callable[..., str]] = [user_profile, recall, remember_preference]

