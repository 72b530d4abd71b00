"""Models that fail on purpose: the chaos model (broken replies at a set rate) and the faulty endpoint (429s,
500s, stalls and hang-ups), for measuring how an agent copes.

Taught in ``15_safety_and_failure``.
"""
