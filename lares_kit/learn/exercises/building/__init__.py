"""Exercises 09-13: ReAct for a building, memory, SAGE's device documents, personalization, persistent commands.

For notebooks 09-13 of ``notebooks/``; the machinery is :mod:`lares_kit.learn.checking`.
"""
