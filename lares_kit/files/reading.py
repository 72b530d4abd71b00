"""Reading the YAML and JSON files people write: world files, task suites, saved episodes, bench records.

A file written by hand -- or by someone testing the toolkit -- can hold
anything: bytes that are not UTF-8, a date that does not exist, a number of
5,000 digits, JSON nested 100,000 deep, or a YAML *alias bomb* (a few lines
whose aliases repeat each other into billions of values). This module turns
every file into plain data (dicts, lists, text, numbers, true/false, null) or
into one :class:`~lares_kit.errors.DataFileError` sentence naming the file
and the key; no ValueError, RecursionError or MemoryError gets through.

The limits (kept in :mod:`lares_kit.files.limits`, which the YAML reader
shares), and why they are where they are (a 5,000-device building is a
1 MB file of about 86,000 keys and values, 7 levels deep):

* :data:`MAX_BYTES` -- the file itself (8 MB);
* :data:`MAX_VALUES` -- keys, values and what aliases repeat (500,000, a
  25,000-device building), counted before each repeat is copied, so a bomb
  stops there, never after a billion, and within a second or two;
* :data:`MAX_TEXT` -- characters of text once aliases are repeated;
* :data:`MAX_DEPTH` -- levels of nesting (50), so code that walks the data
  recursively (``copy.deepcopy``, ``json.dumps``) never runs out of stack.

Every file is opened by :func:`open_data_file`, which opens only a regular
file: a named pipe, a device or a socket where a file should be is a
sentence, never a read that waits for ever (opening a pipe waits for a
writer) or never ends (``/dev/zero``). JSON Lines files (bench journals,
model recordings) are read a line at a time with :func:`bounded_lines`,
which never holds more than :data:`MAX_BYTES` of one line.

JSON goes to the ``json`` module (a 5,000-device world reads in a
hundredth of a second), then through the same limits; YAML to
:mod:`lares_kit.files.yamldata`, which counts as it reads. YAML is read as YAML
1.2's core schema: ``on``/``yes`` are words (only true/false are booleans)
and dates are text (``2024-02-30`` is the text "2024-02-30", not a failed
date). A key written twice in one mapping is a :class:`DuplicateKeyWarning`
(the later value wins, as in PyYAML and JSON).

This module reads files; checking what the data means is
:mod:`lares_kit.home.worlds` and :mod:`lares_kit.bench.suites.tasks`.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Iterator
from typing import Any, BinaryIO

from ..errors import DataFileError, brief, clip
from .limits import (
    INT_RANGE,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_TEXT,
    MAX_VALUES,
    DuplicateKeyWarning,
    Error,
    key_path,
    warn_duplicates,
)

__all__ = ["INT_RANGE", "MAX_BYTES", "MAX_DEPTH", "MAX_TEXT", "MAX_VALUES", "DuplicateKeyWarning", "key_path",
           "bounded_lines", "decode_text", "open_data_file", "parse_data", "parse_json", "path_kind", "read_data_file",
           "read_text_file", "warn_duplicates"]


def path_kind(path: str | os.PathLike) -> str:
    """``"file"``, ``"folder"``, ``"missing"`` or ``"other"`` (a device, a pipe, a name the system refuses).

    Unlike ``Path.is_file()``, never raises: a 5,000-character name is "other", not an OSError.

    Args:
        path: Any path, even one the system refuses.

    Examples:
        >>> path_kind("worlds"), path_kind("no/such/file.yaml"), path_kind("x" * 5000)
        ('folder', 'missing', 'other')
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError):  # a name too long, a NUL byte in it, no permission to look
        return "other"
    return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else "other"


def open_data_file(path: str | os.PathLike, error: Error = DataFileError) -> BinaryIO:
    """``path`` opened for reading in binary, once it is known to be a regular file; else ``error(file, "", sentence)``.

    Every data file the toolkit reads is opened here. A named pipe (FIFO), a device or a socket is refused
    before it is opened -- opening a pipe waits until something writes into it, which may be never -- and
    the file is opened without waiting and checked again, so a pipe put in its place meanwhile is refused too.

    Args:
        path: The file.
        error: (file, key path, message) -> the exception to raise.

    Examples:
        >>> with open_data_file("worlds/lares-home.yaml") as f:
        ...     f.read(14)
        b'# The default '
        >>> open_data_file("worlds")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: worlds: this is a folder, not a file

    (A named pipe is ``...: not a regular file (a named pipe); name a file``: ``tests/unit/cli/test_bad_inputs.py``
    checks it in a process of its own, so a mistake there cannot make the test wait for ever.)
    """
    source = str(path)
    try:
        problem = _not_regular(os.stat(path).st_mode)
        if problem is None:
            # O_NONBLOCK: a pipe put there after the stat opens at once instead of waiting for a writer (then refused)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise error(source, "", "file not found") from None
    except OSError as exc:  # a name too long, no permission, a file where a folder should be
        raise error(source, "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    except ValueError:  # a NUL character in the name
        raise error(source, "", "cannot be read (its name holds a NUL character)") from None
    if problem is None:
        try:
            problem = _not_regular(os.fstat(fd).st_mode)
            if problem is None:
                if hasattr(os, "set_blocking"):
                    os.set_blocking(fd, True)  # a regular file: reads as usual
                return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise error(source, "", problem)


NEWLINE = b"\n"
_SPECIAL = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
            (stat.S_ISSOCK, "a socket"))


def _not_regular(mode: int) -> str | None:
    # None for a regular file, else why it is not one, as the end of a sentence
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "this is a folder, not a file"
    return f"not a regular file ({next((name for test, name in _SPECIAL if test(mode)), 'not a file')}); name a file"


def bounded_lines(handle: BinaryIO, limit: int = MAX_BYTES) -> Iterator[bytes | None]:
    """Each line of a binary file, its newline kept (the last may have none); None for a line over ``limit`` bytes.

    Never holds more than ``limit`` bytes of one line: the rest of a longer line is read in pieces and dropped,
    so a file of one endless line cannot fill the memory.

    Args:
        handle: A file opened for reading in binary (:func:`open_data_file`).
        limit: The most bytes a line may have.

    Examples:
        >>> import io
        >>> list(bounded_lines(io.BytesIO(b'{"a": 1}\\n' + b"x" * 50 + b"\\n{}"), limit=20))
        [b'{"a": 1}\\n', None, b'{}']
    """
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):  # the rest of the over-long line, piece by piece
            raw = handle.readline(2**20)
        yield None


def decode_text(raw: bytes, source: str, error: Error = DataFileError, where: str = "") -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped), or ``error`` naming the byte and its line.

    Args:
        raw: The bytes.
        source: The file they came from, for messages.
        error: (file, key path, message) -> the exception to raise.
        where: Which line of a file they are (``"line 12"``); "" for a whole file (the sentence names the line
            and says to save the file as UTF-8).

    Examples:
        >>> decode_text(b"caf\\xc3\\xa9", "x.yaml")
        'café'
        >>> decode_text(b"a\\nb\\xff", "x.yaml")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.yaml: not UTF-8 text: byte 0xff on line 2 cannot be read;
        save the file as UTF-8
        >>> decode_text(b"\\xff", "episodes.jsonl", where="line 3")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: episodes.jsonl: line 3: not UTF-8 text: byte 0xff cannot be read
    """
    try:
        return raw.decode("utf-8-sig")  # -sig: a byte-order mark some editors write is not part of the text
    except UnicodeDecodeError as exc:
        # a whole file: which line, and what to do; a line of a file a program wrote (a journal): only the byte
        on = f" on line {raw[:exc.start].count(NEWLINE) + 1}" if not where else ""
        advice = "; save the file as UTF-8" if not where else ""
        raise error(source, where, f"not UTF-8 text: byte 0x{raw[exc.start]:02x}{on} cannot be read{advice}") from None


def read_text_file(path: str | os.PathLike, error: Error = DataFileError) -> str:
    """The text of a UTF-8 file of at most :data:`MAX_BYTES`, or ``error(file, "", sentence)``.

    Args:
        path: The file: a regular file (:func:`open_data_file`), never a pipe or a device.
        error: (file, key path, message) -> the exception to raise.

    Examples:
        >>> read_text_file("no/such/file.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: no/such/file.yaml: file not found
    """
    source = str(path)
    with open_data_file(path, error) as f:
        try:
            raw = f.read(MAX_BYTES + 1)  # read() with a limit: a file growing as it is read cannot grow this
        except OSError as exc:
            raise error(source, "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > MAX_BYTES:
        raise error(source, "", f"the file is bigger than {MAX_BYTES // 2**20} MB, the most these files may be")
    return decode_text(raw, source, error)


def read_data_file(path: str | os.PathLike, error: Error = DataFileError) -> Any:
    """The data in a YAML or JSON file, within the limits above, or ``error(file, key path, sentence)``.

    Args:
        path: A YAML or JSON file.
        error: (file, key path, message) -> the exception to raise.

    Examples:
        >>> import tempfile, pathlib
        >>> bomb = pathlib.Path(tempfile.mkdtemp()) / "bomb.yaml"
        >>> _ = bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\\n"
        ...     + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\\n"
        ...               for p, c in zip("abcdefgh", "bcdefghi")))
        >>> read_data_file(bomb)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: .../bomb.yaml: f[3]: the file holds more than 500,000 values
        once its aliases (*name) are repeated: ...
    """
    return parse_data(read_text_file(path, error), str(path), error)


def parse_data(text: str, source: str = "<text>", error: Error = DataFileError) -> Any:
    """YAML (or JSON, which is YAML too and reads much faster) as plain data, within the limits above.

    Args:
        text: YAML or JSON text.
        source: The file it came from, for messages.
        error: (file, key path, message) -> the exception to raise.

    Examples:
        >>> parse_data("state: {on: false}\\nname: 2024-02-30")
        {'state': {'on': False}, 'name': '2024-02-30'}
        >>> parse_data('{"state": {"on": false}}')
        {'state': {'on': False}}
        >>> parse_data("level: !!int 0x", "home.yaml")
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: home.yaml: level: '0x' is not a whole number (line 1)
    """
    if text.lstrip()[:1] in ("{", "[", "\""):
        # Generated worlds are JSON (`lares worlds generate`): the json module reads a 5,000-device world
        # in a hundredth of a second, a YAML parser in seconds.
        try:
            return parse_json(text, source, error)
        except _NotJson:
            pass  # YAML flow style that is not JSON: the YAML reader below says what is wrong, if anything
    # Imported here for start-up cost: PyYAML takes ~15 ms to import, and `import lares_kit` reads no file.
    from .yamldata import read_yaml_data

    return read_yaml_data(text, source, error)


class _NotJson(Exception):
    pass


def parse_json(text: str, source: str = "<text>", error: Error = DataFileError, *, strict: bool = False) -> Any:
    """JSON as plain data, within the limits above; ``strict``: a syntax error is an error (else :class:`_NotJson`).

    Args:
        text: JSON text.
        source: The file it came from, for messages.
        error: (file, key path, message) -> the exception to raise.
        strict: True: a syntax error is ``error``; False: it is ``_NotJson`` (try YAML next).

    Examples:
        >>> parse_json('{"rooms": [{"id": "hall"}]}', "x.json")
        {'rooms': [{'id': 'hall'}]}
        >>> parse_json('{"rooms": [{"id": "hall"}', "x.json", strict=True)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.json: not valid JSON at line 1, column 26: Expecting ',' delimiter
        >>> parse_json("[" * 100_000, "x.json", strict=True)
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: x.json: the data is nested more than 50 levels deep
    """
    # Every value but the first in a list or mapping follows a comma, every key comes before a colon, so
    # this counts an upper bound of the values before the parser builds any of them.
    estimate = text.count(",") + text.count(":") + 2 * (text.count("{") + text.count("[")) + 1
    if estimate > 2 * MAX_VALUES:
        raise error(source, "", f"the file holds more than {MAX_VALUES:,} values, more than these files may hold")
    doubled: list[tuple[dict[str, Any], list[str]]] = []  # mappings that had a key twice, and those keys

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping = dict(pairs)
        if len(mapping) != len(pairs):
            doubled.append((mapping, [k for k, n in Counter(k for k, _ in pairs).items() if n > 1]))
        return mapping

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        if not strict:
            raise _NotJson() from None
        raise error(source, "", f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise error(source, "", f"the data is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # the json module's other complaint: an integer of more than 4,300 digits
        raise error(source, "", f"a number in the file cannot be read ({clip(str(exc), 80)})") from None
    try:
        counted = _check_tree(data)
    except _Refused as bad:
        path = ""
        for key in reversed(bad.keys):
            path = f"{path}[{key}]" if type(key) is int else key_path(path, key)
        raise error(source, path, bad.message) from None
    if counted > MAX_VALUES:
        raise error(source, "", f"the file holds more than {MAX_VALUES:,} values, more than these files may hold")
    if doubled:
        places = {id(m): keys for m, keys in doubled}
        found = [(key_path(path, key), key) for path, mapping in _mappings(data, "") if id(mapping) in places
                 for key in places[id(mapping)]]
        warn_duplicates(source, found)
    return data


class _Refused(Exception):
    """A limit broken somewhere in JSON data; ``keys`` collects the key path on the way out, innermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message, self.keys = message, []


def _check_tree(value: Any, depth: int = 0) -> int:
    # The depth and number limits on data that came from JSON; returns how many values it holds.
    # No key paths are built on the way in (a 5,000-device world has 90,000 values): only on the way out of a refusal.
    if depth > MAX_DEPTH:
        raise _Refused(f"the data is nested more than {MAX_DEPTH} levels deep")
    kind = type(value)
    count = 1
    if kind is dict:
        for key, inner in value.items():
            try:
                count += 1 + _check_tree(inner, depth + 1)
            except _Refused as bad:
                bad.keys.append(str(key))  # JSON keys are text; a list index below stays an int
                raise
    elif kind is list:
        for n, inner in enumerate(value):
            try:
                count += _check_tree(inner, depth + 1)
            except _Refused as bad:
                bad.keys.append(n)
                raise
    elif kind is int and not INT_RANGE[0] <= value <= INT_RANGE[1]:
        raise _Refused(f"the number {brief(value)} is too large; whole numbers here fit in 64 bits")
    return count


def _mappings(value: Any, path: str) -> Any:
    # (key path, mapping) for every mapping in the data, to name where a doubled key is
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            yield from _mappings(v, key_path(path, k))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _mappings(v, f"{path}[{n}]")
