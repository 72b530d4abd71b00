"""SAGE's device APIs: devices read from their documents, devices named by what is near them, and the
home's offline information sources (the TV guide, the weather).

Taught in ``11_device_apis_and_disambiguation``.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "capability_doc": "lares_kit.device_apis.documents",
    "device_capabilities": "lares_kit.device_apis.documents",
    "device_extras": "lares_kit.device_apis.documents",
    "execute_command": "lares_kit.device_apis.documents",
    "get_attribute": "lares_kit.device_apis.documents",
    "get_capability_docs": "lares_kit.device_apis.documents",
    "list_devices": "lares_kit.device_apis.documents",
    "find_device": "lares_kit.device_apis.nearby",
    "rank_devices": "lares_kit.device_apis.nearby",
    "tv_guide": "lares_kit.device_apis.tv_and_weather",
}
__all__ = ["capability_doc", "device_capabilities", "device_extras", "execute_command", "get_attribute",
           "get_capability_docs", "list_devices", "find_device", "rank_devices", "tv_guide"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
