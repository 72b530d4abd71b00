"""The simulated home for outside clients: ``lares serve-home`` and :func:`mcp_tools`.

Taught in ``notebooks/18_a_real_home.ipynb``; how-to in ``docs/serve_home.md``.

* :mod:`.service` -- the served home: its Toolbox (Lares or Home Assistant
  tools), its safety gate, what an agent may know, its change events;
* :mod:`.mcp_server` -- the home as a Model Context Protocol server (the
  official ``mcp`` SDK): tools, resources, a prompt, elicitation for
  questions to the person;
* :mod:`.app` -- ``lares serve-home``: the MCP server over stdio or
  streamable HTTP (``/mcp``), beside the simulator API of the Lares demo
  (``GET /world``, ``POST /call``, ``GET /debug`` with ``--debug``) and a
  server-sent event stream of changes (``GET /events``), on uvicorn;
* :mod:`.client` -- :func:`mcp_tools`: any MCP server's tools offered to a
  lares_kit agent;
* :mod:`.mqtt` -- the home on an MQTT broker with Home Assistant discovery,
  and world devices bound to outside MQTT devices.

Nothing here is imported by ``import lares_kit``: the ``mcp`` SDK and its
web stack load only when a server or a client is made.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lares_kit.lazy_exports)
_LAZY = {
    "HomeServer": "lares_kit.serve.app",
    "LocalBroker": "lares_kit.serve.broker",
    "NoBroker": "lares_kit.serve.broker",
    "mcp_tools": "lares_kit.serve.client",
    "MqttBridge": "lares_kit.serve.mqtt",
    "HomeService": "lares_kit.serve.service",
}
__all__ = ["mcp_tools", "HomeService", "HomeServer", "LocalBroker", "NoBroker", "MqttBridge"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
