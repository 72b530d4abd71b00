"""Memory: recent turns in the prompt, older ones recalled from a store on disk, and the profile of who is
speaking.

Taught in ``10_memory`` and ``12_personalization``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "Memory": "lares_kit.memory.agent_memory",
    "recall": "lares_kit.memory.agent_memory",
    "remember_preference": "lares_kit.memory.agent_memory",
    "memory_for": "lares_kit.memory.profiles",
    "profile_of": "lares_kit.memory.profiles",
    "residents": "lares_kit.memory.profiles",
    "seed_memory": "lares_kit.memory.profiles",
    "MemoryStore": "lares_kit.memory.store",
    "parse_date_span": "lares_kit.memory.store",
}
__all__ = ["Memory", "recall", "remember_preference", "memory_for", "profile_of", "residents", "seed_memory",
           "MemoryStore", "parse_date_span"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
