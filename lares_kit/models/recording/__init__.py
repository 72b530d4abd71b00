"""Record a model once, replay it for the whole class: the recording files, how a request is matched, and
the replaying client.

Taught in ``00_start_here`` and ``16_scaling_up``; the lessons replay real models' episodes with it.
"""
