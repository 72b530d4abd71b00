"""Home Assistant's view of a home: its domains and entity ids, its exposed context, its intents and its LLM
API's tools, the languages of its sentence templates, and a picture of how a template matched.

Taught in ``17_home_assistant``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "entity_ids": "lares_kit.ha.context",
    "static_context": "lares_kit.ha.context",
    "to_ha": "lares_kit.ha.domains",
    "draw_match": "lares_kit.ha.templates",
    "match_pieces": "lares_kit.ha.templates",
    "intents_for": "lares_kit.sentences.languages",
    "known_languages": "lares_kit.sentences.languages",
    "responses_for": "lares_kit.sentences.languages",
}
__all__ = ["entity_ids", "static_context", "to_ha", "draw_match", "match_pieces", "intents_for", "known_languages",
           "responses_for"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
