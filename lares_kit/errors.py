"""Errors a learner can fix. The CLI prints them as one sentence and exits 2.

Every exception the toolkit raises on purpose for bad input (a bad world file,
a missing API key, an unknown agent name) derives from :class:`LaresError`,
so a notebook or script can catch them all at once.
"""

__all__ = ["LaresError"]


class LaresError(Exception):
    """Bad input with a clear message: what went wrong and what to do."""
