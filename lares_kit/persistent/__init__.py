"""Persistent commands: how people say them, the monitor that checks their conditions on the home's clock,
and the sandbox their generated code runs in.

Taught in ``13_persistent_commands``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "Monitor": "lares_kit.persistent.monitor",
    "create_condition": "lares_kit.persistent.monitor",
    "ALLOWED_FUNCTIONS": "lares_kit.persistent.sandbox",
    "ConditionError": "lares_kit.persistent.sandbox",
    "check_condition": "lares_kit.persistent.sandbox.checker",
    "run_condition": "lares_kit.persistent.sandbox.running",
}
__all__ = ["Monitor", "create_condition", "ALLOWED_FUNCTIONS", "ConditionError", "check_condition", "run_condition"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
