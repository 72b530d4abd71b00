"""Errors a learner can fix. The CLI prints them as one sentence and exits 2.

Every exception the toolkit raises on purpose for bad input (a bad world file,
a missing API key, an unknown agent name) derives from :class:`LaresError`,
so a notebook or script can catch them all at once.

The two helpers write the end of such a sentence for a name that is not
there: :func:`did_you_mean` the closest spelling, :func:`choices` the names
that are. In a big home ``choices`` lists only the closest few, so an error
sentence stays short enough to go back to a model (a 5,000-device building
would otherwise put 5,000 ids, some 25,000 tokens, in one tool result).
"""

import difflib

__all__ = ["LaresError", "LIST_AT_MOST", "choices", "did_you_mean"]

LIST_AT_MOST = 30  # an error sentence lists every choice up to this many, else the closest this many


class LaresError(Exception):
    """Bad input with a clear message: what went wrong and what to do."""


def did_you_mean(word: object, options: list[str]) -> str:
    """`` Did you mean 'x'?`` for the closest option, or ``""`` when none is close.

    Examples:
        >>> did_you_mean("kitchen-lihgt", ["kitchen-light", "office-light"])
        " Did you mean 'kitchen-light'?"
        >>> did_you_mean("zzz", ["kitchen-light"])
        ''
    """
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def choices(label: str, word: object, options: list[str], limit: int = LIST_AT_MOST) -> str:
    """``"Label: a, b, c."``: every option when there are at most ``limit``, else the ``limit`` closest to ``word``.

    Examples:
        >>> choices("Rooms", "atic", ["hall", "attic", "cellar"])
        'Rooms: hall, attic, cellar.'
        >>> ids = [f"f{f}-room{r}-light" for f in range(1, 40) for r in range(1, 40)]
        >>> choices("Lights", "f7-room3-ligth", ids, limit=3)
        'Lights (the 3 closest of 1521): f7-room3-light, f7-room13-light, f7-room23-light.'
        >>> choices("Devices", "x", [])
        'Devices: none.'
    """
    if not options:
        return f"{label}: none."
    if len(options) <= limit:
        return f"{label}: {', '.join(options)}."
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(str(word))  # seq2 is the one SequenceMatcher caches
    scored = []
    for i, option in enumerate(options):
        matcher.set_seq1(option)
        scored.append((-matcher.ratio(), i, option))
    nearest = [option for _, _, option in sorted(scored)[:limit]]
    return f"{label} (the {limit} closest of {len(options)}): {', '.join(nearest)}."
