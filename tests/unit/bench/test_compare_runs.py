"""scripts/compare_runs.py: two benchmark runs compared episode by episode."""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "compare_runs.py"
_spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
compare_runs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_runs)


def _bench(runs: Path) -> None:
    env = {**os.environ, "LARES_PROGRESS": "0"}
    subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "bench", "--suite", "lares-home", "--agent",
                    "intent-action", "--tasks", "lh-kitchen-*", "--runs", str(runs)], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)


def test_the_examples_run():
    assert doctest.testmod(compare_runs).failed == 0


def test_two_runs_of_the_same_tree_are_identical_and_a_changed_answer_is_named(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    _bench(before)
    _bench(after)
    assert compare_runs.main([str(before), str(after)]) == 0
    assert "differing records: 0" in capsys.readouterr().out

    journal = after / "episodes.jsonl"
    lines = journal.read_text().splitlines()
    data = json.loads(lines[0])
    data["episode"]["final_message"] += " (changed)"
    journal.write_text("\n".join([json.dumps(data), *lines[1:]]) + "\n")
    assert compare_runs.main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert "differing records: 1" in out and "episode.final_message" in out

    journal.write_text("\n".join(lines[1:]) + "\n")
    assert compare_runs.main([str(before), str(after)]) == 1
    assert "1 missing after" in capsys.readouterr().out


def test_a_journal_compares_with_an_older_run_of_one_file_per_episode(tmp_path, capsys):
    from lares_kit.files.atomic import write_json_atomic

    new, old = tmp_path / "new", tmp_path / "old"
    _bench(new)
    for line in (new / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        write_json_atomic(old / "intent-action" / "offline" / f"{record['task']}-s0-latest.json", record)
    assert compare_runs.main([str(old), str(new)]) == 0
    assert "differing records: 0" in capsys.readouterr().out


def test_a_missing_folder_is_one_sentence_and_exit_2(tmp_path, capsys):
    assert compare_runs.main([str(tmp_path / "nowhere"), str(tmp_path)]) == 2
    assert "is not a folder" in capsys.readouterr().err
