"""Writing result files so that a crash never leaves half a file behind.

Taught in ``notebooks/15_safety_and_failure.ipynb``. A benchmark runs for
minutes or hours; if it is killed (Ctrl-C, an out-of-memory kill, a laptop
lid) in the middle of writing an episode record, a plain ``write_text``
leaves a truncated JSON file that the next ``lares bench --runs`` would have
to guess about. :func:`write_atomic` writes to a temporary file in the same
folder, flushes it to disk (``fsync``), then renames it over the target with
``os.replace`` -- a rename within one file system is atomic, so a reader sees
either the old file or the new one, never a mix. The folder is fsynced too,
so the rename itself survives a power cut on POSIX systems.

What it is not: a lock. Two writers of the same path both succeed and the
last rename wins. The long-term memory (:mod:`lares_kit.memory_store`) uses
SQLite's own journal instead; ``tests/test_memory.py`` kills it mid-write.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_atomic", "write_json_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` all at once: readers see the old file or the new one, never a part.

    The parent folder is created if needed. Returns the path.

    Args:
        path: The file to write; a string or a ``Path``.
        data: The whole new content: text (encoded with ``encoding``) or bytes (written as they are).
        encoding: The text encoding used when ``data`` is a string; ignored for bytes.

    Examples:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "runs" / "result.txt"
        >>> write_atomic(target, "first\\n").read_text()
        'first\\n'
        >>> write_atomic(target, "second\\n").read_text()
        'second\\n'
        >>> sorted(p.name for p in target.parent.iterdir())  # no temporary file left behind
        ['result.txt']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode(encoding) if isinstance(data, str) else data
    # The temporary file sits beside the target: os.replace is atomic only within one file system.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
            out.flush()
            os.fsync(out.fileno())  # the bytes are on disk before the name points at them
        os.replace(tmp, path)
    except BaseException:
        # Failed or interrupted before the rename: the target is untouched; drop the partial temp file.
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_folder(path.parent)
    return path


def write_json_atomic(path: str | os.PathLike[str], value: Any, indent: int | None = 1) -> Path:
    """Write ``value`` as JSON (plus a final newline) with :func:`write_atomic`.

    Args:
        path: The ``.json`` file to write; a string or a ``Path``.
        value: Anything ``json.dumps`` accepts: dicts, lists, strings, numbers, booleans, None.
        indent: Spaces per nesting level; 1 keeps records short but diff-friendly, None writes one line.

    Examples:
        >>> import json, tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "summary.json"
        >>> json.loads(write_json_atomic(target, {"success": True}).read_text())
        {'success': True}
    """
    return write_atomic(path, json.dumps(value, indent=indent) + "\n")


def _fsync_folder(folder: Path) -> None:
    # Makes the rename durable on POSIX; Windows cannot open a folder, and does not need it.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
