"""Where benchmark tasks come from: the suite files and their validation, tasks for generated homes, and
Home Assistant's evaluation datasets read as suites.

Taught in ``08_evaluation`` and ``17_home_assistant``.
"""
