"""Where lares_kit keeps what it writes for a user: under the user's home, never beside its own code.

One installation may serve many people -- a JupyterHub, a lab's shared
virtual environment -- and to them it is read-only. So a file the toolkit
writes where nobody named a place goes into a folder of the user's own,
named by :func:`user_dir` -- not into the package or the repository, and not
into whatever folder a notebook's kernel happens to run in. One rule decides
which folder:

1. ``$LARES_DATA/<kind>`` when ``LARES_DATA`` is set: one folder for
   everything (a course's shared drive, a test's temporary folder);
2. else ``$XDG_DATA_HOME/lares_kit/<kind>`` (``$XDG_CACHE_HOME/lares_kit/cache``
   for the ``cache`` kind), when that variable is an absolute path, as the
   XDG Base Directory specification says;
3. else ``~/.local/share/lares_kit/<kind>`` (``~/.cache/lares_kit/cache``).

The kinds (:data:`KINDS`): ``memory`` (long-term memory stores, one SQLite
file per home: :func:`lares_kit.memory.store.memory_path`), ``runs`` (for
benchmark records), ``worlds`` (for world and task files a user makes or
imports) and ``cache`` (for anything that can be made again). A path the
caller passes always wins over these defaults; the folder is not made until
something is written there. Every user, with their own ``HOME``, gets their
own folders, so two people running the same notebook at the same time do not
see each other's files. Temporary files go where :mod:`tempfile` puts them
(``$TMPDIR``), in folders only their owner can read.

A folder inside the ``lares_kit`` package is refused, whoever names it: the
package may be read-only, and a reinstall would delete it.

Examples:
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"LARES_DATA": "/srv/course/ana"}):
    ...     user_dir("memory").as_posix()
    '/srv/course/ana/memory'
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import LaresError

__all__ = ["DATA_ENV", "KINDS", "PACKAGE_DIR", "user_dir"]

DATA_ENV = "LARES_DATA"  # the one variable that moves every kind at once
KINDS = ("memory", "runs", "worlds", "cache")  # "cache" under XDG_CACHE_HOME, the others under XDG_DATA_HOME
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # where no default may point


def _xdg(variable: str, fallback: str) -> Path:
    # The XDG spec: a relative path in these variables is invalid and is ignored.
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    try:
        return Path.home() / fallback
    except RuntimeError:  # no HOME and no password entry for the user
        raise LaresError(f"lares_kit cannot tell where your home folder is (HOME is not set): set {DATA_ENV} to a "
                         "folder of your own for its files") from None


def user_dir(kind: str) -> Path:
    """The folder of one kind of the user's files: ``$LARES_DATA/<kind>``, else under XDG_DATA_HOME or ``~``.

    The folder may not exist yet: whoever writes there makes it.

    Args:
        kind: ``"memory"``, ``"runs"``, ``"worlds"`` or ``"cache"`` (:data:`KINDS`).

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"XDG_DATA_HOME": "/home/ana/.data"}):
        ...     _ = os.environ.pop(DATA_ENV, None)  # LARES_DATA would win; the with block puts it back
        ...     user_dir("runs").as_posix()
        '/home/ana/.data/lares_kit/runs'
        >>> user_dir("logs")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: 'logs' is not a kind of lares_kit folder (memory, runs, worlds, cache)
    """
    if kind not in KINDS:
        raise LaresError(f"{kind!r} is not a kind of lares_kit folder ({', '.join(KINDS)})")
    data = os.environ.get(DATA_ENV, "")
    if data:
        folder = Path(data).expanduser().absolute() / kind
    elif kind == "cache":
        folder = _xdg("XDG_CACHE_HOME", ".cache") / "lares_kit" / "cache"
    else:
        folder = _xdg("XDG_DATA_HOME", ".local/share") / "lares_kit" / kind
    resolved = folder.resolve()
    if resolved == PACKAGE_DIR or PACKAGE_DIR in resolved.parents:
        raise LaresError(f"lares_kit will not keep your files inside its own package ({folder}): it may be "
                         f"read-only and a reinstall deletes it; set {DATA_ENV} to a folder of your own")
    return folder
