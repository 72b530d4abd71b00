"""Agent-facing tools: Python functions whose schema is their docstring and whose results are sentences,
the one dispatcher that runs them, and the person behind ``ask_user``.

Taught in ``02_agent_facing_tools`` and ``07_asking_the_user``.
"""
