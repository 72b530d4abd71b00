"""Saved episode records: reading them back without trusting them.

:mod:`lares_kit.bench.runner` saves one record per finished episode (a line
of the runs folder's journal, :mod:`lares_kit.bench.journal`; a folder of an
older run holds one JSON file per episode) and, run again, resumes from
them. A record is data on disk: a kill, a full disk, a hand edit or a copied
folder can leave anything there -- not JSON, not UTF-8, ``[]``, a key missing
or of the wrong kind, an episode that does not rebuild, the record of another
episode. :func:`record_problem` and :func:`saved_record` turn each of those
into a sentence (the episode is then run again), never into a traceback.

This module reads and checks records; running episodes is the runner's.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

from ..episode import Episode
from ..errors import DataFileError, LaresError, LaresWarning, brief, clip
from ..files.reading import parse_json, path_kind, read_text_file

__all__ = ["OPTIONAL_TYPES", "RECORD_TYPES", "load_episode",
           "prepare_runs", "read_record", "record_problem", "saved_record", "warn_unusable"]

# The kind of value each key of a record holds; record_problem checks them all. A record may hold more keys.
RECORD_TYPES: dict[str, tuple[type, ...]] = {
    "task": (str,), "world": (str,), "category": (str,), "agent": (str,), "model": (str,), "success": (bool,),
    "steps": (int,), "oracle_steps": (int,), "llm_calls": (int,), "prompt_tokens": (int,),
    "completion_tokens": (int,), "seconds": (int, float), "error": (str, type(None)), "seed": (int,),
    "knowledge": (str,), "fingerprint": (str,), "checks": (list,), "episode": (dict, type(None)),
}
# Keys records of older versions may lack, checked when there: the collateral damage (device or entity ids),
# the tool dialect of a run that did not offer Lares's own tools, the trial, refused calls, devices changed, and
# the configuration a run set (lares_kit.bench.configs: each only when set).
OPTIONAL_TYPES: dict[str, tuple[type, ...]] = {"collateral": (list,), "tool_set": (str,), "trial": (int,),
                                               "false_claims": (list,), "unverifiable": (bool,),
                                               "refused": (int,), "changed": (list,), "unsafe": (list,),
                                               "cached_prompt_tokens": (int,), "knowledge_format": (str,),
                                               "prompt_style": (str,), "executor_model": (str,), "options": (dict,),
                                               "own": (list,)}
WARN_AT_MOST = 10  # unusable records warned about one by one; the rest in one line


def record_problem(record: Any, identity: dict[str, Any] | None = None) -> str | None:
    """Why a saved record cannot be used, or None when it can.

    Args:
        record: A saved record as JSON read it: it should be a mapping with the result keys.
        identity: What the record must say about itself (``task``, ``agent``, ``model``, ``seed``, ``knowledge``), so a
            record copied from another episode is not taken for this one; None: not checked.

    Examples:
        >>> record_problem([])
        'it holds a list, not an episode record'
        >>> record_problem({"task": "lh-kitchen-on"})
        "the key 'world' is missing"
    """
    if not isinstance(record, dict):
        return f"it holds {_a(record)}, not an episode record"
    for key, kinds in RECORD_TYPES.items():
        if key not in record:
            return f"the key {key!r} is missing"
        value = record[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            return f"{key!r} holds {_a(value)}, {brief(value)}"
        if (isinstance(value, (int, float)) and not isinstance(value, bool)
                and not (math.isfinite(value) and value >= 0)):
            return f"{key!r} holds {brief(value)}, not a count"
    for key, kinds in OPTIONAL_TYPES.items():
        if key in record and not isinstance(record[key], kinds):
            return f"{key!r} holds {_a(record[key])}, {brief(record[key])}"
    if not all(isinstance(e, str) for e in record.get("collateral", [])):
        return "'collateral' holds something other than device or entity ids"
    for n, check in enumerate(record["checks"]):
        if not (isinstance(check, dict) and isinstance(check.get("kind"), str) and isinstance(check.get("passed"), bool)
                and isinstance(check.get("reason", ""), str)):
            return f"checks[{n}] is not a check verdict ({{kind, passed, reason}})"
    for key, value in (identity or {}).items():
        if record.get(key) != value:
            return f"it is the record of another episode ({key} {brief(record.get(key))}, not {brief(value)})"
    if record["episode"] is None:
        return None if record["error"] else "it has neither an episode nor an error"
    try:
        # Rebuilt and used once, as a replay would: a field of the wrong kind fails here, not later in a
        # widget. Anything may be wrong in a file, so any exception means "unusable".
        episode = Episode.from_dict(record["episode"])
        episode.transcript()
        episode.to_run_json()
    except Exception as exc:  # noqa: BLE001
        return f"its episode cannot be rebuilt ({type(exc).__name__})"
    return None


def _a(value: Any) -> str:
    return {type(None): "null", bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list",
            dict: "a mapping"}.get(type(value), type(value).__name__)


def read_record(path: str | Path) -> dict[str, Any]:
    """One saved record, checked with :func:`record_problem`; a DataFileError naming the file if it is unusable.

    Args:
        path: A record's JSON file, as a run saves it under its runs folder.

    Examples:
        >>> import tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "t-s0-latest.json"
        >>> _ = bad.write_bytes(b"\\xff\\xfe[]")
        >>> read_record(bad)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: .../t-s0-latest.json: not UTF-8 text: byte 0xff on line 1 cannot be read;
        save the file as UTF-8
    """
    source = str(path)
    record = parse_json(read_text_file(path), source, strict=True)
    problem = record_problem(record)
    if problem:
        raise DataFileError(source, "", problem)
    return record


def saved_record(path: Path, fingerprint: str, identity: dict[str, Any], notes: list[str]) -> dict[str, Any] | None:
    """The record at ``path`` if a resumed run may keep it, else None (the episode runs again).

    None without a word when there is no record, its task changed since (the
    ``fingerprint``) or it ended in an error worth retrying; None with a
    sentence appended to ``notes`` when the file cannot be used.

    Args:
        path: Where this episode's record would be saved.
        fingerprint: The task's :meth:`~lares_kit.bench.suites.tasks.Task.fingerprint` now: a record of an older
            definition is run again.
        identity: What the record must say about itself (see :func:`record_problem`).
        notes: Where a sentence about an unusable file is appended.

    Examples:
        >>> import tempfile, pathlib
        >>> empty = pathlib.Path(tempfile.mkdtemp()) / "t-s0-latest.json"
        >>> _ = empty.write_text("[]")
        >>> notes = []
        >>> saved_record(empty, "abc", {"task": "t"}, notes), notes
        (None, ['.../t-s0-latest.json: it holds a list, not an episode record; the episode is run again'])
    """
    kind = path_kind(path)
    if kind == "missing":
        return None
    try:
        if kind != "file":
            raise DataFileError(str(path), "", "this is not a file")
        record = parse_json(read_text_file(path), str(path), strict=True)
        if isinstance(record, dict) and record.get("fingerprint") != fingerprint:
            return None  # the task changed since: not a problem, a reason to run it again
        problem = record_problem(record, identity)
        if problem:
            raise DataFileError(str(path), "", problem)
    except DataFileError as exc:
        notes.append(f"{exc}; the episode is run again")
        return None
    # An episode the model or the network broke (record["error"] set) is run again; a task the
    # agent simply failed is a result, and is kept.
    return None if record["error"] else record


def prepare_runs(runs: Path) -> None:
    """Make the runs folder, or say in a sentence why it cannot be one -- before any episode runs.

    Args:
        runs: The runs folder to make (with its parents), or an existing folder.

    Examples:
        >>> import tempfile, pathlib
        >>> taken = pathlib.Path(tempfile.mkdtemp()) / "results.txt"
        >>> _ = taken.write_text("mine")
        >>> prepare_runs(taken)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: the runs folder .../results.txt is a file;
        name a folder for the episode records (a new one is made)
    """
    kind = path_kind(runs)
    if kind not in ("folder", "missing"):
        raise LaresError(f"the runs folder {clip(str(runs), 300)} is {'a file' if kind == 'file' else 'not a folder'}; "
                         "name a folder for the episode records (a new one is made)")
    try:
        runs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a parent folder should be, no permission
        raise LaresError(f"cannot make the runs folder {clip(str(runs), 300)} ({exc.strerror or type(exc).__name__}); "
                         "name a folder that can be written") from None


def warn_unusable(notes: list[str]) -> None:
    """A :class:`~lares_kit.errors.LaresWarning` for each unusable record (the first ten, then how many more).

    Args:
        notes: Sentences about the records that could not be used.
    """
    for note in notes[:WARN_AT_MOST]:
        warnings.warn(note, LaresWarning, stacklevel=3)
    if len(notes) > WARN_AT_MOST:
        warnings.warn(f"{len(notes) - WARN_AT_MOST} more saved records could not be used and are run again "
                      "(BenchRun.notes lists them)", LaresWarning, stacklevel=3)


def load_episode(path: str | Path) -> Episode:
    """The Episode inside one saved record, for ``print()`` or ``SearchReplay``.

    Args:
        path: A record's JSON file under a runs folder.
    """
    record = read_record(path)
    if record["episode"] is None:
        raise DataFileError(str(path), "", f"this episode did not run ({brief(record['error'])})")
    return Episode.from_dict(record["episode"])
