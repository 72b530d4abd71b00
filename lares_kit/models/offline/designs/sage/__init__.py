"""The offline model as SAGE's agents: reading a SAGE request, its tree of prompts, the device agent and the
condition agent (conditions from documents, and from the clock).

Seen at work in ``11_device_apis_and_disambiguation`` and ``13_persistent_commands``.
"""
