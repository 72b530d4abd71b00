"""The learner corpus (issue 38): it loads and validates, it runs, and its figures match the recorded baseline.

The baseline (lares_kit/data/corpus/baseline.json) holds the counts measured before the offline model was changed;
a change to the stand-in shows up here as a difference, and the baseline is rewritten on purpose with
``scripts/learner_corpus.py --write-baseline``. Whatever the baseline, no design may make a silent wrong action.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from lares_kit.errors import DataFileError
from lares_kit.files.reading import read_data_file

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("learner_corpus", ROOT / "scripts" / "learner_corpus.py")
learner_corpus = importlib.util.module_from_spec(_spec)
sys.modules["learner_corpus"] = learner_corpus  # dataclasses look their module up
_spec.loader.exec_module(learner_corpus)


def test_the_corpus_covers_every_world_and_kind():
    corpus = learner_corpus.load_corpus()
    assert len(corpus) >= 200
    worlds = {p.stem for p in (ROOT / "worlds").glob("*.yaml")}
    assert {s.world for s in corpus} == worlds
    assert {t for s in corpus for t in s.tags} == set(learner_corpus.TAGS)


def test_no_sentence_is_a_benchmark_wording():
    def plain(text):
        return " ".join(re.findall(r"\w+", text.lower()))

    tasks = {plain(t["instruction"]) for p in (ROOT / "worlds" / "tasks").glob("*.yaml")
             for t in (read_data_file(p).get("tasks") or []) if isinstance(t.get("instruction"), str)}
    assert tasks and not [s.say for s in learner_corpus.load_corpus() if plain(s.say) in tasks]


@pytest.mark.parametrize("change, key", [
    (lambda d: d.pop("format"), "format"),
    (lambda d: d["sentences"][0].update(world="nowhere"), "sentences[0].world"),
    (lambda d: d["sentences"][1].update(id=d["sentences"][0]["id"]), "sentences[1].id"),
    (lambda d: d["sentences"][0]["expect"].update(reply="answer"), "sentences[0].expect"),
    (lambda d: d["sentences"][0].update(expect={"changes": {"no-such-lamp": {"on": True}}}),
     "sentences[0].expect.changes.no-such-lamp"),
    (lambda d: d["sentences"][0].update(expect={"reply": "maybe"}), "sentences[0].expect.reply"),
    (lambda d: d["sentences"][0].update(tags=["poetry"]), "sentences[0].tags"),
    (lambda d: d["sentences"][0].update(expect={"changes": {"kitchen-light": {"on": {"min": 1}}}}),
     "sentences[0].expect.changes.kitchen-light.on"),
])
def test_a_bad_entry_is_one_sentence_naming_file_and_key(tmp_path, change, key):
    data = read_data_file(learner_corpus.CORPUS)
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataFileError) as err:
        learner_corpus.load_corpus(path)
    assert str(err.value).startswith(f"{path}: {key}: ") and "\n" not in str(err.value)
    assert learner_corpus.main(["--corpus", str(path)]) == 2


def test_the_classification_reads_state_claims_and_trouble():
    from lares_kit import load_world
    from lares_kit.agents import run_agent

    sentence = learner_corpus.Sentence("x", "lares-home", "turn on the kitchen light", (),
                                       {"kitchen-light": {"on": True}}, None)
    right = run_agent(sentence.say, load_world("lares-home"), "react", "offline")
    assert learner_corpus.classify(sentence, right, load_world("lares-home"))[0] == "correct"
    wrong = learner_corpus.Sentence("y", "lares-home", sentence.say, (), {"office-light": {"on": True}}, None)
    assert learner_corpus.classify(wrong, right, load_world("lares-home"))[0] == "silent wrong"
    asks = learner_corpus.Sentence("z", "lares-home", sentence.say, (), None, "question")
    assert learner_corpus.classify(asks, right, load_world("lares-home"))[0] == "silent wrong"


@pytest.mark.slow
def test_the_corpus_runs_and_matches_the_recorded_baseline(capsys):
    corpus = learner_corpus.load_corpus()
    rows = learner_corpus.run_corpus(corpus)
    assert len(rows) == len(corpus) * len(learner_corpus.DESIGNS)
    assert {r["verdict"] for r in rows} <= set(learner_corpus.VERDICTS)
    print(learner_corpus.table(rows))
    baseline = json.loads(learner_corpus.BASELINE.read_text(encoding="utf-8"))
    silent = [f"{r['design']} {r['id']}" for r in rows if r["verdict"] == "silent wrong"]
    assert not silent, f"silent wrong actions (the goal is none): {', '.join(silent)}"
    assert learner_corpus.counts(rows) == baseline, (
        "the offline model's figures on the learner corpus changed: if on purpose, run "
        "scripts/learner_corpus.py --write-baseline and report the new figures")
