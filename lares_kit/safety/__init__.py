"""Safety: the home's policy as data, the gate that asks for confirmation, the confirmation question itself,
times of day as people write them, and an audit that does not trust the gate.

Taught in ``15_safety_and_failure``.
"""
