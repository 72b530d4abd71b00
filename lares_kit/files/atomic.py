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

:func:`unwritable` says, before a long run, why a result file or folder
could not be written at its end -- a folder where the file should go, a file
where a folder should be, no permission -- without writing anything, so a
command can refuse at once instead of after its last episode.

What it is not: a lock. Two writers of the same path both succeed and the
last rename wins. The long-term memory (:mod:`lares_kit.memory.store`) uses
SQLite's own journal instead; ``tests/unit/memory/test_memory.py`` kills it mid-write.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["unwritable", "write_atomic", "write_json_atomic"]

_TEMP_NAME = 100  # characters of the target's name in the temporary file's: a long name still leaves room


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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:_TEMP_NAME]}.", suffix=".tmp", dir=path.parent)
    try:
        mode = _file_mode(path)
        if mode is not None:
            os.fchmod(fd, mode)  # as a plain open() would make it (mkstemp's files are the owner's alone)
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


def unwritable(path: str | os.PathLike[str], folder: bool = False) -> str | None:
    """Why ``path`` could not be written as a file (or, with ``folder``, made and filled as a folder); None if it can.

    Looks only: nothing is made or written. Missing parent folders are fine when they can be made (as
    :func:`write_atomic` makes them). The answer ends a sentence: ``f"cannot write {path}: {why}"``.

    Args:
        path: The file to write, or the folder to make or write into.
        folder: True when ``path`` is a folder (``--runs DIR``), False for a file (``--json PATH``).

    Examples:
        >>> import tempfile, pathlib
        >>> here = pathlib.Path(tempfile.mkdtemp())
        >>> unwritable(here / "new" / "results.json") is None, unwritable(here / "runs", folder=True) is None
        (True, True)
        >>> unwritable(here)
        'it is a folder, not a file'
        >>> _ = (here / "notes.txt").write_text("mine")
        >>> unwritable(here / "notes.txt" / "results.json")  # doctest: +ELLIPSIS
        '.../notes.txt is a file, not a folder'
    """
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return _creatable(path)
    except NotADirectoryError:
        return _creatable(path)  # a file where one of its folders should be: named there
    except (OSError, ValueError) as exc:
        return _reason(exc)
    if folder:
        if not stat.S_ISDIR(mode):
            return "it is a file, not a folder" if stat.S_ISREG(mode) else "it is not a folder"
        return None if os.access(path, os.W_OK | os.X_OK) else "no permission to write in it"
    if stat.S_ISDIR(mode):
        return "it is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "it is not a regular file (a pipe or a device); name a file"
    if not os.access(path, os.W_OK):  # a journal is appended to in place; a read-only file is kept as it is
        return "it is read-only"
    parent = path.parent
    # write_atomic writes a new file beside it and renames it over the old one: the folder must take new files
    return None if os.access(parent, os.W_OK | os.X_OK) else f"no permission to write in {parent}"


def _creatable(path: Path) -> str | None:
    # path does not exist: can it be made, with the folders above it that are missing?
    missing = [path]
    for ancestor in path.parents:
        try:
            mode = os.stat(ancestor).st_mode
        except FileNotFoundError:
            missing.append(ancestor)
            continue
        except NotADirectoryError:
            missing.append(ancestor)
            continue
        except OSError as exc:
            return _reason(exc)
        if not stat.S_ISDIR(mode):
            return f"{ancestor} is a file, not a folder"
        longest = _limit(ancestor, "PC_NAME_MAX", 255)
        if any(len(os.fsencode(p.name)) > longest for p in missing):
            return f"a name in it is longer than {longest} bytes, the most this file system takes"
        if len(os.fsencode(str(path))) >= _limit(ancestor, "PC_PATH_MAX", 4096):
            return "the path is too long for this file system"
        return None if os.access(ancestor, os.W_OK | os.X_OK) else f"no permission to write in {ancestor}"
    return None  # not reached: a relative path's last parent is "." and an absolute one's is "/"


def _limit(folder: Path, name: str, default: int) -> int:
    try:
        return os.pathconf(folder, name)
    except (OSError, ValueError, AttributeError):  # Windows has no pathconf
        return default


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValueError):
        return "its name holds a NUL character"
    if getattr(exc, "errno", None) == errno.ENAMETOOLONG:
        return "the name is too long for this file system"
    return f"it cannot be reached ({getattr(exc, 'strerror', None) or type(exc).__name__})"


def _file_mode(path: Path) -> int | None:
    # The replaced file's permissions, or a new file's under the process's umask (read from Linux's /proc: asking
    # os.umask() means setting it, which would race with other threads); None where neither can be known.
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        pass
    if not hasattr(os, "fchmod"):
        return None
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


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
