"""Safety: the home's policy as data, the gate that asks for confirmation, the confirmation question itself,
times of day as people write them, and an audit that does not trust the gate.

Taught in ``15_safety_and_failure``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "unsafe_actions": "lares_kit.safety.audit",
    "SafetyGate": "lares_kit.safety.gate",
    "parse_policy": "lares_kit.safety.policy",
}
__all__ = ["unsafe_actions", "SafetyGate", "parse_policy"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
