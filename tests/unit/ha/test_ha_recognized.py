"""scripts/ha_recognized.py: what Home Assistant's recognizer alone matches in a dataset, home by home."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("ha_recognized", ROOT / "scripts" / "ha_recognized.py")
ha_recognized = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ha_recognized)

FIXTURES = {"language": "en",
            "areas": [{"name": "Kitchen", "id": "kitchen", "floor": "Ground Floor"},
                      {"name": "Study", "id": "study", "aliases": ["Office"]}],
            "entities": [{"name": "Kitchen Light", "id": "light.kitchen", "area": "kitchen", "state": "off"},
                         {"name": "Desk Fan", "id": "fan.desk", "area": "study", "state": "off"}]}


def _home(folder: Path, fixtures: dict | None, files: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True)
    if fixtures is not None:
        (folder / "_fixtures.yaml").write_text(yaml.safe_dump(fixtures))
    for name, sentences in files.items():
        (folder / name).write_text(yaml.safe_dump({"category": "t", "tests": [{"sentences": sentences}]}))
    return folder


def test_the_examples_run():
    assert doctest.testmod(ha_recognized).failed == 0


def test_a_home_counts_what_hassil_matches_and_as_which_intent(tmp_path):
    home = _home(tmp_path / "home", FIXTURES, {
        "light_HassTurnOn.yaml": ["turn on the kitchen light", "pop the kitchen light on",
                                  "turn off the kitchen light"],  # matched, but as HassTurnOff
        "misc.yaml": ["turn on the desk fan", "turn off the lights in the office", "switch on the lights downstairs",
                      "turn on the lights on the ground floor"]})
    counts = ha_recognized.count_home(home)
    assert counts == {"sentences": 7, "recognized": 5, "as_named": 1, "named": 3, "note": ""}


def test_homes_without_names_or_with_an_unknown_language_count_as_not_matched(tmp_path):
    bare = ha_recognized.count_home(_home(tmp_path / "bare", None, {"a.yaml": ["turn on the kitchen light"]}))
    assert (bare["sentences"], bare["recognized"], bare["note"]) == (1, 0, "no _fixtures.yaml: not read")
    odd = ha_recognized.count_home(_home(tmp_path / "odd", {**FIXTURES, "language": "xx"}, {"a.yaml": ["hi"]}))
    assert (odd["sentences"], odd["recognized"]) == (1, 0) and "unknown language 'xx'" in odd["note"]


def test_a_dataset_prints_a_line_per_home_and_the_total(tmp_path, capsys):
    root = tmp_path / "set"
    _home(root / "one", FIXTURES, {"light_HassTurnOn.yaml": ["turn on the kitchen light", "pop it on"]})
    _home(root / "two", None, {"x.yaml": ["turn on the kitchen light"]})
    (root / "dataset_card.yaml").write_text("name: set\n")
    assert ha_recognized.main([str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("hassil ") and "home-assistant-intents" in lines[0]
    assert lines[2].split() == ["one", "2", "1", "1/2"]
    assert lines[3].split()[:4] == ["two", "1", "0", "-"] and "no _fixtures.yaml" in lines[3]
    assert lines[4].split() == ["all", "3", "1", "1/2", "recognized:", "33%"]


def test_a_folder_with_no_task_files_is_a_clear_error(tmp_path, capsys):
    assert ha_recognized.main([str(tmp_path)]) == 2
    assert "no task files here or below" in capsys.readouterr().err


def test_the_projects_own_fixtures_are_partly_left_to_the_rules():
    # The fixture homes mix Home Assistant's wordings with looser ones on purpose: hassil matches some, not all.
    total = [ha_recognized.count_home(h) for h in ha_recognized.homes(ROOT / "tests" / "fixtures" / "ha")]
    sentences, recognized = sum(c["sentences"] for c in total), sum(c["recognized"] for c in total)
    assert 0 < recognized < sentences
