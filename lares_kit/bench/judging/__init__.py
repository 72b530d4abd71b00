"""Judging an episode: every kind of check, the text patterns, collateral damage, the claims a final
message makes, Home Assistant's state diff, and the two oracles (the fewest calls with the truth known,
the fewest steps of an honest search).

Taught in ``08_evaluation``.
"""
