"""Sentences the home side and the models share: the marked sentences one writes and the other reads,
how a model says it did not understand, and English for generated sentences.

Taught in ``02_agent_facing_tools`` and ``06_robot_search`` (results as sentences a model reads back).
"""
