"""Agent-facing tools: Python functions whose schema is their docstring and whose results are sentences,
the one dispatcher that runs them, and the person behind ``ask_user``.

Taught in ``02_agent_facing_tools`` and ``07_asking_the_user``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "set_device": "lares_kit.tools.device_tools",
    "DeviceId": "lares_kit.tools.schema",
    "SchemaError": "lares_kit.tools.schema",
    "tool_schema": "lares_kit.tools.schema",
    "Toolbox": "lares_kit.tools.toolbox",
    "halt": "lares_kit.tools.toolbox",
    "set_light": "lares_kit.tools.toolbox",
    "NoAnswer": "lares_kit.tools.users",
    "ScriptedUser": "lares_kit.tools.users",
}
__all__ = ["set_device", "DeviceId", "SchemaError", "tool_schema", "Toolbox", "halt", "set_light", "NoAnswer",
           "ScriptedUser"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
