"""The real models' recorded episodes the lessons replay: every one still replays as it was recorded.

Replay answers only byte-identical requests, so a change to a prompt, a tool or a world that these episodes
cover makes them stale; this test then fails with a sentence naming the script that records them again. The
``local`` test runs ``lares run --model local-qwen --record`` for one step and checks its first request is the
shipped one's, byte for byte (``tests/unit/bench/test_record_script.py`` tests the recording script's bookkeeping).
"""

from __future__ import annotations

import json

import pytest

from lares_kit.bench.recorded import PLAN, RECORD_SCRIPT, RECORDED_ROOT, Recorded, replay, summary, table

SHIPPED = summary()
STALE = (f"the shipped recording of {{key}} no longer matches the requests the code makes today ({{why}}): "
         f"record again with `.venv/bin/python {RECORD_SCRIPT} --again` and commit lares_kit/data/recorded/")


def test_every_planned_episode_is_recorded_and_only_those():
    keys = {e.key for e in PLAN}
    assert len(keys) == len(PLAN)  # a key names one episode
    missing = sorted(keys - set(SHIPPED))
    assert not missing, f"{len(missing)} planned episodes are not recorded, e.g. {missing[:3]}: run {RECORD_SCRIPT}"
    assert not set(SHIPPED) - keys, "a recorded episode is no longer planned: record again with --again"


@pytest.mark.parametrize("episode", PLAN, ids=lambda e: e.key)
def test_a_recorded_episode_replays_as_it_was_recorded(episode):
    shipped = SHIPPED.get(episode.key)
    if shipped is None:
        pytest.fail(f"{episode.key} is not recorded: run {RECORD_SCRIPT}")
    ep = replay(episode)
    if ep.status == "model_error":
        pytest.fail(STALE.format(key=episode.key, why=ep.error[:300]))
    calls = [s.call_text for s in ep.tool_calls]
    assert (ep.status, calls, ep.final_message) == (shipped["status"], shipped["calls"], shipped["final_message"]), \
        STALE.format(key=episode.key, why="the replay took another path")


def test_the_tables_count_what_was_recorded():
    rows = list(SHIPPED.values())
    by_model = {row["model"]: row for row in table(rows, ("model",))}
    for model, row in by_model.items():
        mine = [r for r in rows if r["model"] == model]
        assert row["n"] == len(mine) and row["solved"] == sum(r["solved"] for r in mine)
        assert 0 <= row["low"] <= row["solved"] / row["n"] <= row["high"] <= 1


def test_each_recording_folder_says_what_it_holds():
    for folder in sorted(p for p in RECORDED_ROOT.iterdir() if p.is_dir()):
        readme = (folder / "README.md").read_text(encoding="utf-8")
        assert RECORD_SCRIPT in readme and "SHA-256" in readme and "recorded:" in readme
        lines = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
        sessions = [line["session"] for line in lines]
        assert len(set(sessions)) == len(sessions), "two episodes name one session file: record them again"
        assert set(sessions) == {p.name for p in folder.glob("session-*.jsonl")}  # no half-written session shipped
        for line in lines:  # each session is the one its episode's run wrote (its manifest names the episode)
            manifest = json.loads((folder / line["session"]).read_text(encoding="utf-8").splitlines()[0])
            assert f"({line['key']})" in manifest["command"], (line["key"], line["session"])


def first_request(session) -> str:
    """The first request of a session file (line 1 is its manifest), as canonical JSON."""
    exchange = json.loads(session.read_text(encoding="utf-8").splitlines()[1])
    return json.dumps(exchange["request"], sort_keys=True)


@pytest.mark.local
@pytest.mark.slow
def test_lares_run_with_local_qwen_asks_what_the_shipped_recording_asked(tmp_path):
    # Qwen's first request in the kitchen scenario, made again now through the command line: it runs, and the code
    # still asks what it asked when the lessons' episodes were recorded (a stale recording is named, with the fix).
    pytest.importorskip("llama_cpp")
    import os
    import subprocess
    import sys
    from pathlib import Path

    from lares_kit.models.local.catalog import QWEN_PARTS, part_files
    from lares_kit.models.local.llama import LocalModelMissing

    try:
        part_files(QWEN_PARTS)
    except LocalModelMissing as exc:
        pytest.skip(str(exc))
    episode = Recorded("local-qwen", "function-calling", "kitchen")
    shipped = SHIPPED[episode.key]
    env = {**os.environ, "LARES_PROGRESS": "0", "LARES_LOCAL_THREADS": "1"}
    cmd = [sys.executable, "-m", "lares_kit.cli.commands", "run", "turn on the light in the kitchen", "--model",
           "local-qwen", "--agent", "function-calling", "--max-steps", "1", "--record", str(tmp_path), "--json"]
    run = subprocess.run(cmd, cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True,
                         timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(run.stdout[run.stdout.index("{"):])
    assert result["model"] == "local-qwen" and result["llm_calls"] == 1 and result["steps"]
    assert result["steps"][0]["tool"] in {"set_light", "toggle_light", "halt", "look_with_robot", "move_robot",
                                          "ask_user"}
    live = first_request(next(tmp_path.glob("session-*.jsonl")))
    assert live == first_request(RECORDED_ROOT / "local-qwen" / shipped["session"]), \
        STALE.format(key=episode.key, why="its first request differs")
