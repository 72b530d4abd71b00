"""World knowledge in the prompt: when it is taken (latest, initial, none), how it is written (one renderer
per format), which rooms an instruction is about, and how many tokens a text or a request takes.

Taught in ``05_world_knowledge`` (modes) and ``16_scaling_up`` (formats and retrieval).
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "knowledge_header": "lares_kit.knowledge.formats",
    "KNOWLEDGE_FORMATS": "lares_kit.knowledge.modes",
    "knowledge_prompt": "lares_kit.knowledge.modes",
    "knowledge_text": "lares_kit.knowledge.modes",
    "resolve_format": "lares_kit.knowledge.modes",
    "relevant_rooms": "lares_kit.knowledge.retrieval",
}
__all__ = ["knowledge_header", "KNOWLEDGE_FORMATS", "knowledge_prompt", "knowledge_text", "resolve_format",
           "relevant_rooms"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
