"""``lares serve-model``: the offline model behind an OpenAI-compatible HTTP API on loopback -- the wire
protocol, the checks a request passes, and the guard that decides who may knock (shared with ``serve-home``).

Taught in ``15_safety_and_failure`` (a faulty server in front of the model); ``docs/models.md`` has the rest.
"""
