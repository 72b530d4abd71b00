"""The ``lares`` command: worlds, run, demo, bench, import-ha, serve-model, serve-home, course.

``commands`` parses the command line; ``run`` and ``bench`` are the two commands with most to say.
Every lesson shows the command it mirrors; ``00_start_here`` the first.
"""
