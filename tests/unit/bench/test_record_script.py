"""scripts/record_real_models.py: one planned episode recorded, and a session left half-written forgotten on resume.

The real models take minutes an episode, so here the model's name is answered by the offline stand-in: what is
tested is the script's bookkeeping (one session file and one ``episodes.jsonl`` line per finished episode, the
resume that deletes what an interrupted episode left), not a model. ``tests/system/test_recorded.py`` records
Qwen live through ``lares run --record``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lares_kit.bench.recorded import Recorded, summary
from lares_kit.models import make_client

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import record_real_models

    # "local-qwen" answered by the offline stand-in, through the same recording client the script builds
    monkeypatch.setattr(record_real_models, "make_client",
                        lambda name, **kw: make_client("offline" if name == "local-qwen" else name, **kw))
    yield record_real_models
    sys.modules.pop("record_real_models", None)


def test_an_episode_is_one_session_and_one_summary_line(script, tmp_path):
    episode = Recorded("local-qwen", "function-calling", "kitchen")
    line = script.record(episode, tmp_path, max_steps=3)
    folder = tmp_path / "local-qwen"
    sessions = sorted(folder.glob("session-*.jsonl"))
    assert [p.name for p in sessions] == [line["session"]]
    assert summary(tmp_path) == {episode.key: line}
    manifest, *exchanges = [json.loads(x) for x in sessions[0].read_text(encoding="utf-8").splitlines()]
    assert f"({episode.key})" in manifest["command"]
    assert len(exchanges) == line["llm_calls"] >= 1
    assert exchanges[0]["request"]["model"] == "local-qwen"


def test_resuming_forgets_only_a_session_no_finished_episode_names(script, tmp_path):
    line = script.record(Recorded("local-qwen", "function-calling", "kitchen"), tmp_path, max_steps=2)
    folder = tmp_path / "local-qwen"
    half = folder / "session-0099.jsonl"  # what a run stopped in the middle of an episode leaves
    half.write_text('{"manifest": true}\n', encoding="utf-8")
    script.forget_unfinished(folder)
    assert not half.exists() and (folder / line["session"]).exists()
