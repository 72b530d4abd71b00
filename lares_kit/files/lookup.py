"""Data files named by id or by path: where world files and task suites are found, and how they are read.

``load_world("lares-home")`` and ``load_suite("townhouse")`` both take an id
or a path, and both go through :func:`read_by_id_or_path`: a name that ends in
``.yaml``/``.yml`` or names an existing file is a path; anything else is an id,
looked up in the search folders (``$LARES_WORLDS``, then :data:`WORLD_DIRS`;
task suites in their ``tasks/`` subfolder), first match wins. An unknown id
lists the known ones; a folder, a missing file or a pipe is one sentence; the
file itself is read by :func:`lares_kit.files.reading.read_data_file` (size,
encoding, YAML errors, aliases and nesting within limits). Every error is the
caller's own :class:`~lares_kit.errors.DataFileError` subclass, so ``lares``
prints it without a traceback.

This module finds and reads files; what is in them is for
:mod:`lares_kit.home.worlds` and :mod:`lares_kit.bench.suites.tasks`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from .reading import path_kind, read_data_file

__all__ = ["WORLD_DIRS", "FileKind", "files_by_id", "find_by_id_or_path", "read_by_id_or_path"]

# Where files are looked up by id, after the folders in $LARES_WORLDS
# (os.pathsep-separated): the package's worlds (lares_kit/data/worlds: in a checkout, a link to its worlds/), then
# ./worlds.
WORLD_DIRS = [Path(__file__).resolve().parents[1] / "data" / "worlds", Path("worlds")]


@dataclass(frozen=True)
class FileKind:
    """One kind of data file: the subfolder its ids live in, and the words and exception of its errors.

    Examples:
        >>> kind = FileKind("world file", "worlds")
        >>> kind.folder, kind.error.__name__
        ('', 'DataFileError')
    """

    what: str  # "world file": "no world file with this id or path", "this is a folder, not a world file"
    plural: str  # "worlds": the known ids are listed after "known worlds: "
    folder: str = ""  # under each search folder: "" for world files, "tasks" for task suites
    error: Callable[[str, str, str], Exception] = DataFileError  # (file, key path, message) -> what is raised


def _search_folders(kind: FileKind) -> list[Path]:
    extra = [Path(p) for p in os.environ.get("LARES_WORLDS", "").split(os.pathsep) if p]
    return [folder / kind.folder if kind.folder else folder for folder in extra + WORLD_DIRS]


def files_by_id(kind: FileKind) -> dict[str, Path]:
    """Id -> file for every ``*.yaml`` of this kind in the search folders; the first folder wins an id.

    Args:
        kind: Which files: world files, or task suites (their ``tasks/`` subfolder).

    Examples:
        >>> paths = files_by_id(FileKind("task suite file", "suites", "tasks"))
        >>> paths["townhouse"].name, paths["townhouse"].parent.name
        ('townhouse.yaml', 'tasks')
    """
    found: dict[str, Path] = {}
    for folder in _search_folders(kind):
        if folder.is_dir():
            for path in sorted(folder.glob("*.yaml")):
                found.setdefault(path.stem, path)
    return found


def find_by_id_or_path(id_or_path: str | os.PathLike, kind: FileKind) -> Path:
    """The file an id or a path names, or ``kind.error`` saying in one sentence why there is none.

    Args:
        id_or_path: An id looked up in the search folders (``"lares-home"``), or a path to a ``.yaml`` file.
        kind: What kind of file it must be: where ids are looked up, and the words and exception of errors.

    Examples:
        >>> find_by_id_or_path("lares-home", FileKind("world file", "worlds")).name
        'lares-home.yaml'
        >>> find_by_id_or_path("no-such-home", FileKind("world file", "worlds"))
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: no-such-home: no world file with this id or path; known worlds: ...
        >>> find_by_id_or_path("no/such/home.yaml", FileKind("world file", "worlds"))
        Traceback (most recent call last):
        ...
        lares_kit.errors.DataFileError: no/such/home.yaml: file not found
    """
    text = str(id_or_path)
    path = Path(text)
    found = path_kind(path)  # never raises: a 5,000-character name is "other", not an OSError
    if not (text.endswith((".yaml", ".yml")) or found == "file"):
        known = files_by_id(kind)
        if text not in known:
            raise kind.error(text, "", f"no {kind.what} with this id or path; known {kind.plural}: "
                             + ", ".join(sorted(known)))
        path, found = known[text], path_kind(known[text])
    if found != "file":
        raise kind.error(text, "", {"folder": f"this is a folder, not a {kind.what}",
                                    "missing": "file not found"}.get(found, "not a file that can be read"))
    return path


def read_by_id_or_path(id_or_path: str | os.PathLike, kind: FileKind) -> tuple[Path, Any]:
    """The file an id or a path names and the data in it, or ``kind.error`` naming the file and what is wrong.

    Args:
        id_or_path: An id looked up in the search folders (``"lares-home"``), or a path to a ``.yaml`` file.
        kind: What kind of file it must be: where ids are looked up, and the words and exception of errors.

    Examples:
        >>> path, data = read_by_id_or_path("lares-home", FileKind("world file", "worlds"))
        >>> path.name, data["id"]
        ('lares-home.yaml', 'lares-home')
    """
    path = find_by_id_or_path(id_or_path, kind)
    return path, read_data_file(path, kind.error)
