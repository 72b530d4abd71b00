"""The benchmark's documentation matches the files: the suites table in worlds/tasks/README.md, `lares bench --help`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lares_kit.agents import AGENTS
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.cli.commands import main

TASKS_DIR = Path(__file__).resolve().parents[3] / "worlds" / "tasks"
ROW = re.compile(r"^\| `([a-z0-9-]+)` \| `([a-z0-9-]+)` \| (\d+) \| (\d+) \|")


def readme_table() -> dict[str, tuple[str, int, int]]:
    """suite -> (world, tasks, held out), from the first table of worlds/tasks/README.md."""
    lines = (TASKS_DIR / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| suite | world | tasks | held out | what it is for |")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        match = ROW.match(line)
        assert match, f"a row of the suites table does not read '| `suite` | `world` | tasks | held out | ...': {line}"
        rows[match.group(1)] = (match.group(2), int(match.group(3)), int(match.group(4)))
    return rows


def test_the_readme_table_lists_every_suite_file():
    assert set(readme_table()) == {path.stem for path in TASKS_DIR.glob("*.yaml")}


@pytest.mark.parametrize("suite", sorted(path.stem for path in TASKS_DIR.glob("*.yaml")))
def test_the_readme_table_counts_match_the_file(suite):
    tasks = load_suite(TASKS_DIR / f"{suite}.yaml")
    worlds = sorted({t.world for t in tasks})
    world, count, held_out = readme_table()[suite]
    assert (world, count, held_out) == (worlds[0], len(tasks), sum(t.held_out for t in tasks)), \
        f"worlds/tasks/README.md says {suite} has {count} tasks ({held_out} held out) in {world}"


def test_bench_help_lists_the_suites_and_the_agents(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["bench", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for path in TASKS_DIR.glob("*.yaml"):
        count = len(load_suite(path))
        assert re.search(rf"^  {re.escape(path.stem)} +{count} tasks ", out, re.MULTILINE), path.stem
    for agent in AGENTS:
        assert agent in out
