"""Persistent commands: how people say them, the monitor that checks their conditions on the home's clock,
and the sandbox their generated code runs in.

Taught in ``13_persistent_commands``.
"""
