"""Sentences the home side and the models share: the marked sentences one writes and the other reads,
how a model says it did not understand, English for generated sentences, and the claims a final message makes,
checked against the home.

Taught in ``02_agent_facing_tools`` and ``06_robot_search`` (results as sentences a model reads back) and
``08_evaluation`` (claims).
"""
