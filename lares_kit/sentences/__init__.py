"""Sentences the home side and the models share: the marked sentences one writes and the other reads,
how a model says it did not understand, English for generated sentences, times of day as people write
them, and the languages a home may speak.

Taught in ``02_agent_facing_tools`` and ``06_robot_search`` (results as sentences a model reads back),
``15_safety_and_failure`` (times of day) and ``17_home_assistant`` (languages).
"""
