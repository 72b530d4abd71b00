"""The lessons a learner runs, copied out of the installed package: ``lares lessons DIR``.

The package carries the course: the notebooks, the exercise notebooks, the world files and their task suites
(``lares_kit/data/lessons/`` and ``lares_kit/data/worlds/``; in a checkout these are links to its ``notebooks/``,
``exercises/`` and ``worlds/`` folders, and a wheel holds them as files). :func:`copy_lessons` copies the notebooks
and exercises into a folder of the learner's, laid out as in the repository (``notebooks/``, ``exercises/``), so the
lessons run from there -- on a hub, in Colab, in a plain ``pip install`` -- with nothing read from a checkout.

A file that is already in the folder is kept as it is: the learner's work is never overwritten.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LaresError

__all__ = ["LESSONS_ROOT", "Copied", "copy_lessons", "cli_lessons"]

LESSONS_ROOT = Path(__file__).resolve().parent.parent / "data" / "lessons"
_PARTS = {"notebooks": ("*.ipynb",), "exercises": ("*.ipynb", "*.md")}


@dataclass
class Copied:
    """What :func:`copy_lessons` did: the files it wrote and the ones it kept because they were there."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    def sentence(self) -> str:
        """One line for the command: how many files, where, and which notebook to open first."""
        notebooks = sum(p.parent.name == "notebooks" for p in self.written + self.kept)
        exercises = sum(p.parent.name == "exercises" and p.suffix == ".ipynb" for p in self.written + self.kept)
        kept = f"; kept {len(self.kept)} file(s) already there (yours: not overwritten)" if self.kept else ""
        return (f"{notebooks} notebooks and {exercises} exercises in {self.folder}{kept}. Open "
                f"{self.folder / 'notebooks' / '00_start_here.ipynb'} to begin.")


def copy_lessons(folder: str | Path, root: Path | None = None) -> Copied:
    """Copy the notebooks and exercises into ``folder`` (made if missing), keeping any file already there.

    Args:
        folder: Where the lessons go; ``notebooks/`` and ``exercises/`` are made inside it.
        root: Where the lessons are read from; None: the installed package's.

    Raises:
        LaresError: ``folder`` is a file, cannot be written, or the package carries no lessons.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     first, again = copy_lessons(tmp), copy_lessons(tmp)
        >>> len(first.written) > 30 and not first.kept, len(again.kept) == len(first.written) and not again.written
        (True, True)
    """
    source = root or LESSONS_ROOT
    files = {part: sorted(p for pattern in patterns for p in (source / part).glob(pattern))
             for part, patterns in _PARTS.items()}
    if not files["notebooks"]:
        raise LaresError(f"found no lessons in {source}: reinstall lares_kit (pip install lares-kit, or make)")
    target = Path(folder).expanduser()
    if target.exists() and not target.is_dir():
        raise LaresError(f"{target}: this is a file, not a folder; name a folder for the lessons")
    done = Copied(target.resolve())
    try:
        for part, paths in files.items():
            (target / part).mkdir(parents=True, exist_ok=True)
            for path in paths:
                to = target / part / path.name
                if to.exists():
                    done.kept.append(to)
                    continue
                shutil.copyfile(path, to)
                done.written.append(to)
    except OSError as exc:
        raise LaresError(f"{target}: cannot write the lessons there ({exc.strerror or exc})") from None
    return done


def cli_lessons(args) -> int:
    """``lares lessons DIR``: copy the lessons into DIR and say what was done; 0 (a bad folder: LaresError, exit 2).

    Args:
        args: The parsed command line; ``args.folder`` is DIR.
    """
    print(copy_lessons(args.folder).sentence())
    return 0
