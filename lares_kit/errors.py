"""Errors a learner can fix. The CLI prints them as one sentence and exits 2.

Every exception the toolkit raises on purpose for bad input (a bad world file,
a missing API key, an unknown agent name) derives from :class:`LaresError`,
so a notebook or script can catch them all at once.

The two helpers write the end of such a sentence for a name that is not
there: :func:`did_you_mean` the closest spelling, :func:`choices` the names
that are. In a big home ``choices`` lists only the closest few, so an error
sentence stays short enough to go back to a model (a 5,000-device building
would otherwise put 5,000 ids, some 25,000 tokens, in one tool result).

A file can hold anything, so a sentence never quotes more than a little of
it: :func:`brief` is ``repr`` with a size limit (a 5 MB string or a list of a
million values shows as its first few characters or values), and
:class:`DataFileError` -- the error of every file a person writes (world
files, task suites, saved episodes, bench records) -- clips what it is given.
Files that load but look wrong (a key written twice) give a
:class:`LaresWarning`; :func:`plain_warnings` prints those as one line.

:class:`ToolError` is the other kind: not a learner's mistake but a model's.
A tool raises it with a sentence, and the dispatcher
(:class:`lares_kit.tools.toolbox.Toolbox`) hands that sentence back to the model as
an error observation. It lives here, in a module that imports nothing from
lares_kit, so every module with a tool can raise it.
"""

import contextlib
import difflib
import reprlib
import sys
import warnings
from collections.abc import Iterator

__all__ = ["LaresError", "LaresWarning", "DataFileError", "ToolError", "StopRun", "LIST_AT_MOST", "MESSAGE_AT_MOST",
           "brief", "choices", "clip", "did_you_mean", "plain_warnings"]

LIST_AT_MOST = 30  # an error sentence lists every choice up to this many, else the closest this many
MESSAGE_AT_MOST = 1000  # characters of a DataFileError's message; a longer one is cut (it quoted too much)


class LaresError(Exception):
    """Bad input with a clear message: what went wrong and what to do."""


class ToolError(Exception):
    """Raised by a tool to report a mistake; the message goes to the model as is.

    Not a :class:`LaresError`: it is the model's mistake, answered with an
    observation, never shown to a learner as a failure.

    Examples:
        >>> str(ToolError("No light found with the ID 'kitchen'."))
        "No light found with the ID 'kitchen'."
    """


class LaresWarning(UserWarning):
    """Input that works but is probably not what was meant (a key written twice in a file)."""


class DataFileError(LaresError, ValueError):
    """A file a person wrote cannot be used. ``str()`` is ``file: key.path: what was expected``.

    ``source``, ``key_path`` and ``message`` are kept apart for code that
    wants them; each is clipped, so a message never grows with the file.

    Examples:
        >>> str(DataFileError("home.yaml", "rooms[2].id", "expected an id"))
        'home.yaml: rooms[2].id: expected an id'
        >>> len(str(DataFileError("home.yaml", "", "x" * 10**6))) < 1100
        True
    """

    def __init__(self, source: str, key_path: str, message: str) -> None:
        self.source, self.key_path = clip(str(source), 300), clip(str(key_path), 200)
        self.message = clip(str(message), MESSAGE_AT_MOST)
        where = f"{self.source}: {self.key_path}: " if self.key_path else f"{self.source}: "
        super().__init__(where + self.message)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out.

    Args:
        text: Any text.
        limit: How many characters to keep.

    Examples:
        >>> clip("short", 10)
        'short'
        >>> clip("a" * 50, 10)
        'aaaaaaaaaa... (40 more characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


class _Brief(reprlib.Repr):
    # reprlib already stops after a few items and characters; numbers past ~40 digits are only described,
    # because str() of an int with more than 4,300 digits raises (Python's guard against slow conversions).
    def __init__(self) -> None:
        super().__init__()
        self.maxstring, self.maxother, self.maxlong = 60, 60, 40
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 6
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<a number of {x.bit_length():,} bits>"
        return super().repr_int(x, level)


_BRIEF = _Brief()


def brief(value: object) -> str:
    """``repr(value)`` in at most about 60 characters, however big ``value`` is.

    Args:
        value: Any value, however big.

    Examples:
        >>> brief("kitchen")
        "'kitchen'"
        >>> brief("lol" * 10**6)
        "'lollollollollollollollollol...llollollollollollollollollol'"
        >>> brief([["lol"] * 9] * 10**6)
        "[['lol', 'lol', 'lol', 'lol', 'lol', 'lol', ...], ['lol', 'lol', 'lol', 'lol', 'lol', 'lol', ...], ...]"
        >>> brief(2 ** 20000)
        '<a number of 20,001 bits>'
    """
    return _BRIEF.repr(value)


@contextlib.contextmanager
def plain_warnings() -> Iterator[None]:
    """Print each :class:`LaresWarning` as one line, ``lares: warning: ...``, on stderr (the ``lares`` command).

    Python's own format adds the library's file and line, which say nothing to
    the person whose file it is; other warnings keep that format.

    Examples:
        >>> import io
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err), plain_warnings():
        ...     warnings.warn("home.yaml: rooms[1]: the key 'id' is written twice", LaresWarning)
        >>> err.getvalue()
        "lares: warning: home.yaml: rooms[1]: the key 'id' is written twice\\n"
    """
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
            if issubclass(category, LaresWarning):
                print(f"lares: warning: {message}", file=sys.stderr if file is None else file)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def did_you_mean(word: object, options: list[str]) -> str:
    """`` Did you mean 'x'?`` for the closest option, or ``""`` when none is close.

    Args:
        word: What was given.
        options: The names that exist.

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

    Args:
        label: What the options are, capitalized: "Rooms".
        word: What was given, to rank the options by.
        options: The names that exist.
        limit: How many to list at most.

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


class StopRun(Exception):
    """Raised by a tool when the whole run must stop; :meth:`lares_kit.tools.toolbox.Toolbox.dispatch` lets it through.

    Not for a tool's own failure (that is a :class:`ToolError`, an
    observation): for a tool that runs an agent whose model failed, so the
    run ends with the status ``model_error`` and not a tool error the model
    would read and answer around (:mod:`lares_kit.agents.sage`).
    """
