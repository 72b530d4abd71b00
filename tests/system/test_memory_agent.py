"""Memory through the react agent: a preference told in one process is used in another."""

import json
import subprocess
import sys

from lares_kit import load_world, run_agent
from lares_kit.memory.agent_memory import Memory, MemoryStore


def lares(*args):
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", *args], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_two_sessions_in_two_processes(tmp_path):
    db = str(tmp_path / "smart-building.sqlite3")
    common = ["run", "--agent", "react", "--world", "smart-building", "--memory", db, "--person", "ana", "--json"]
    first = lares(*common, "my name is Ana and I like the office at 21 degrees")
    assert [s["tool"] for s in first["steps"]] == ["remember_preference", "halt"]
    second = lares(*common, "set my office to my usual temperature")
    assert [s["tool"] for s in second["steps"]][0] == "recall"
    assert second["state"]["office-3-thermostat"]["target"] == 21
    assert MemoryStore(db).preferences("ana") == {"office temperature": 21}


def test_nothing_remembered_means_no_guess():
    ep = run_agent("set my office to my usual temperature", load_world("smart-building"), agent="react",
                   memory=Memory(MemoryStore(":memory:"), user="ana"))
    assert ep.final_state["devices"]["office-3-thermostat"]["target"] == 19
    assert "could not find" in ep.final_message


def test_short_term_history_reaches_the_planner():
    memory = Memory(MemoryStore(":memory:"), user="ana")
    home = load_world("smart-building")
    run_agent("hello", home, agent="react", memory=memory)
    run_agent("turn on the light in office 5", home, agent="react", memory=memory)
    assert [t.role for t in memory.short] == ["user", "assistant", "user", "assistant"]
