"""The runs folder's journal: one JSON line per finished episode, appended with one flush.

:mod:`lares_kit.bench.runner` appends each episode's record to
``<runs>/episodes.jsonl`` the moment it is finished: one ``write`` of one
line and one ``flush``, from the one process that runs the benchmark (the
workers only return records). A kill between two episodes loses nothing; a
kill in the middle of a write leaves at most one line cut short at the end
of the file, which the next reader reports and leaves out (its episode is run
again), and which the next writer closes with a newline before it appends,
so no record is ever glued to it. What is flushed is in the operating
system's hands: it survives the process being killed, as
``tests/test_journal.py`` checks by killing a writer mid-line; a power cut
may lose the last lines, which a resumed run simply runs again.

Later lines win: an episode run again (after an error, or because its task
changed) appends a new line, and readers take the last line of each episode
(:func:`latest_records`). Lines are data on disk, and not trusted: a line
that is not JSON, not UTF-8 or not a record is a sentence in ``notes``, never
a traceback.

Older runs folders hold one ``.json`` file per episode instead; they are still
read (:func:`lares_kit.bench.records.load_records`).
"""

from __future__ import annotations

import errno
import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import DataFileError, LaresWarning
from ..files.limits import MAX_BYTES
from ..files.reading import bounded_lines, decode_text, open_data_file, parse_json, path_kind, read_text_file
from .records import record_problem

__all__ = ["IDENTITY", "JOURNAL", "Journal", "identity_key", "journal_lines", "latest_records", "load_records"]

JOURNAL = "episodes.jsonl"  # the file name inside a runs folder
# What tells two episodes apart: who ran what, in which configuration (lares_kit.bench.configs). A record without
# tool_set or trial is Lares's tools and the first trial; one without a configuration field ran with the default.
IDENTITY = ("task", "agent", "model", "seed", "knowledge", "tool_set", "trial", "knowledge_format", "prompt_style",
            "executor_model", "options", "max_steps")
_DEFAULTS = {"tool_set": "lares", "trial": 0}


def identity_key(record: dict[str, Any]) -> tuple[Any, ...]:
    """The episode a record is of: task, agent, model, seed, knowledge, tool set, trial and configuration.

    The configuration's fields are None when the record has none (the default); its options are one text.

    Args:
        record: An episode record (or a job's identity), with at least the keys a record must hold.

    Examples:
        >>> identity_key({"task": "t", "agent": "a", "model": "offline", "seed": 0, "knowledge": "latest"})
        ('t', 'a', 'offline', 0, 'latest', 'lares', 0, None, None, None, None, None)
        >>> identity_key({"task": "t", "agent": "react", "model": "offline", "seed": 0, "knowledge": "latest",
        ...               "executor_model": "offline-multi", "options": {"parser": "naive"}})[-3:-1]
        ('offline-multi', '{"parser": "naive"}')
    """
    values = (record.get(k, _DEFAULTS.get(k)) for k in IDENTITY)
    # a mapping (the options) as one text, so the key can be a dict key
    return tuple(json.dumps(v, sort_keys=True, default=repr) if isinstance(v, dict) else v for v in values)


def journal_lines(path: Path, notes: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of a journal that holds a usable record, as ``(line number, record)``.

    A line that cannot be used is a sentence appended to ``notes``; the
    reader goes on with the next line.

    Args:
        path: A journal file (``<runs>/episodes.jsonl``); a missing one has no lines.
        notes: Where a sentence about each unusable line is appended.

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / JOURNAL
        >>> _ = path.write_bytes(b'[]\\n{"task": "a", "success": tr')
        >>> notes = []
        >>> list(journal_lines(path, notes)), [n.split(": ", 1)[1] for n in notes]
        ([], ['line 1: it holds a list, not an episode record', 'line 2: cut short (a run stopped while writing it)'])
    """
    if path_kind(path) == "missing":
        return
    try:
        handle = open_data_file(path)  # a regular file only: a pipe named episodes.jsonl would wait for ever
    except DataFileError as exc:
        notes.append(f"{path}: cannot be read ({exc.message})")
        return
    with handle:
        for number, raw in enumerate(bounded_lines(handle), 1):
            where = f"{path}: line {number}"
            if raw is None:
                notes.append(f"{where}: bigger than {MAX_BYTES // 2**20} MB, the most a record may be")
                continue
            if not raw.endswith(b"\n"):
                if raw.strip():
                    notes.append(f"{where}: cut short (a run stopped while writing it)")
                continue
            if not raw.strip():
                continue
            try:
                text = decode_text(raw, str(path), where=f"line {number}")
            except DataFileError as exc:
                notes.append(str(exc))
                continue
            try:
                record = parse_json(text, where, strict=True)
            except DataFileError as exc:
                notes.append(f"{where}: " + (f"{exc.key_path}: " if exc.key_path else "") + exc.message)
                continue
            problem = record_problem(record)
            if problem:
                notes.append(f"{where}: {problem}")
                continue
            yield number, record


def latest_records(path: Path, notes: list[str]) -> dict[tuple[Any, ...], tuple[int, dict[str, Any]]]:
    """The last usable line of each episode in a journal: identity -> ``(line number, record)``.

    Args:
        path: A journal file; a missing one gives an empty mapping.
        notes: Where a sentence about each unusable line is appended.
    """
    latest: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}
    for number, record in journal_lines(path, notes):
        latest[identity_key(record)] = (number, record)
    return latest


def load_records(runs: str | Path) -> list[dict[str, Any]]:
    """Every episode record saved under a runs folder: the last line of each episode in its journals.

    For reading results into a table. A runs folder of an older version, with
    one ``.json`` file per episode, is read too (sorted by path, after the
    journals). A line or file that cannot be used is warned about and left out.

    Args:
        runs: A runs folder, as ``lares bench --runs`` fills it.

    Examples:
        >>> import tempfile, pathlib
        >>> runs = pathlib.Path(tempfile.mkdtemp())
        >>> load_records(runs)  # an empty folder: no records
        []
    """
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for path in sorted(Path(runs).rglob(JOURNAL)):
        records += [record for _, record in latest_records(path, notes).values()]
    for path in sorted(Path(runs).rglob("*.json")):
        try:
            record = parse_json(read_text_file(path), str(path), strict=True)
            if not isinstance(record, dict):
                raise DataFileError(str(path), "", "it holds a list, not an episode record" if isinstance(record, list)
                                    else "it is not an episode record")
        except DataFileError as exc:
            notes.append(str(exc))
            continue
        records.append(record)
    for note in notes:
        warnings.warn(f"{note}; left out", LaresWarning, stacklevel=2)
    return records


class Journal:
    """Appends records to a journal, one line and one flush each; open it with ``with``.

    Args:
        path: The journal file (made when the first record is appended).

    Examples:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / JOURNAL
        >>> _ = path.write_bytes(b'{"task": "cut sh')  # what a kill mid-write leaves
        >>> with Journal(path) as journal:
        ...     journal.append({"task": "a"})
        >>> path.read_text().splitlines()
        ['{"task": "cut sh', '{"task":"a"}']
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one line, and flush it to the operating system.

        Args:
            record: A JSON-able episode record.
        """
        line = json.dumps(record, separators=(",", ":")) + "\n"
        if self._file is None:
            self._file = self._open()
        self._file.write(line)
        self._file.flush()

    def _open(self) -> IO[str]:
        if path_kind(self.path) not in ("file", "missing"):  # opening a pipe to write waits for a reader
            raise OSError(errno.EINVAL, "not a regular file", str(self.path))
        handle = open(self.path, "a", encoding="utf-8")
        try:
            if handle.tell() > 0:  # a line a killed run cut short: end it, so the next record starts a line
                with open(self.path, "rb") as reader:
                    reader.seek(-1, os.SEEK_END)
                    if reader.read(1) != b"\n":
                        handle.write("\n")
        except BaseException:
            handle.close()
            raise
        return handle

    def close(self) -> None:
        """Close the file (every line is already flushed)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
