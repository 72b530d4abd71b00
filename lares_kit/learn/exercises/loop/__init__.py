"""Exercises 00-08: the home as a graph, its tools, the Lares loop, search, asking the user, evaluation.

For notebooks 00-08 of ``notebooks/`` (the course's first part); the machinery is :mod:`lares_kit.learn.checking`.
"""
