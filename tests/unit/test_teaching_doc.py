"""docs/teaching.md: every command in its shell blocks names something that exists.

A ``lares`` line must parse with the real command line (so a renamed option
fails here, not in a teacher's class); an ``nbgrader`` line must name one of
nbgrader's subcommands; a ``make`` target must be in the Makefile; a test file
or notebook a command names must exist. The commands themselves were run
when the guide was written; the nbgrader term runs in tests/system/test_course.py.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from lares_kit.cli.commands import build_parser

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "teaching.md"


def shell_lines() -> list[str]:
    """The commands of the guide's ```bash blocks, continuation lines joined, comments dropped."""
    text = GUIDE.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()  # a comment, at the start or after a space
            if line:
                lines.append(line)
    return lines


def _commands(line: str) -> list[list[str]]:
    # "a && b" is two commands; "$(...)" is kept as one word (shlex would split it).
    return [shlex.split(part) for part in re.split(r"\s+&&\s+", line) if part.strip()]


def test_the_guide_exists_and_has_commands():
    assert len(shell_lines()) >= 15


@pytest.mark.parametrize("line", shell_lines())
def test_every_command_names_something_that_exists(line):
    from nbgrader.apps.nbgraderapp import NbGraderApp

    for words in _commands(line):
        program = words[0].split("/")[-1]
        if program == "lares":
            try:
                build_parser().parse_args(words[1:])
            except SystemExit as exc:
                pytest.fail(f"`{line}` does not parse with the lares command line (exit {exc.code})")
        elif program == "nbgrader":
            assert words[1] in NbGraderApp.subcommands, f"nbgrader has no subcommand {words[1]!r}"
        elif program == "make":
            makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
            for target in words[1:]:
                assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"no make target {target}"
        for word in words:
            if re.fullmatch(r"(tests|notebooks|exercises|docs)/[\w./-]+\.(py|ipynb|md)", word):
                assert (ROOT / word).exists(), f"`{line}` names {word}, which does not exist"
