"""Home Assistant's view of a home: its domains and entity ids, its exposed context, its intents and its LLM
API's tools, and the languages of its sentence templates.

Taught in ``17_home_assistant``.
"""
