"""Memory: the prompt window, the SQLite store, recall by words and dates, crash safety."""

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta

import pytest

from lares_kit import Toolbox, load_world
from lares_kit.errors import LaresError
from lares_kit.memory.agent_memory import MEMORY_TOOLS, Memory, recall
from lares_kit.memory.store import MemoryStore, memory_path
from lares_kit.tools.toolbox import ToolError, halt


class Clock:
    """A clock the test moves by hand; every reading advances it a minute."""

    def __init__(self, start="2026-11-30 09:00:00"):
        self.now = datetime.fromisoformat(start)

    def __call__(self):
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "home.sqlite3", clock=Clock()) as s:
        yield s


def run_python(code, *args):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


# ------------------------------------------------------------ short and long
def test_oldest_turns_leave_the_window_and_keep_their_dates(store):
    memory = Memory(store, user="ana", max_turns=3)
    left = [memory.add("user" if n % 2 == 0 else "assistant", f"turn {n}") for n in range(5)]
    assert [[t.text for t in batch] for batch in left] == [[], [], [], ["turn 0"], ["turn 1"]]
    assert [m["content"] for m in memory.messages()] == ["turn 2", "turn 3", "turn 4"]
    assert [(t.text, t.at) for t in memory.long_term()] == [("turn 0", "2026-11-30 09:01:00"),
                                                            ("turn 1", "2026-11-30 09:02:00")]
    assert len(store.turns(user="ana")) == 5  # every turn was stored when it was said


def test_token_threshold_keeps_the_newest_turn(store):
    memory = Memory(store, user="ana", max_turns=100, max_tokens=10)
    memory.add("user", "x" * 20)  # 5 tokens
    memory.add("assistant", "y" * 20)  # 10 in the window: not over
    assert len(memory.short) == 2
    assert [t.text for t in memory.add("user", "z" * 80)] == ["x" * 20, "y" * 20]
    assert [t.text for t in memory.short] == ["z" * 80]  # over on its own, yet kept


def test_roles_are_checked(store):
    with pytest.raises(ValueError, match="role must be 'user' or 'assistant'"):
        store.add("tool", "hello")


# ------------------------------------------------------------------ recall
@pytest.fixture
def history(store):
    said = [("2026-11-27 10:00:00", "ana", "The lobby is cold this morning"),
            ("2026-11-28 11:00:00", "ana", "I like the office at 21 degrees, that is my usual temperature"),
            ("2026-11-29 12:00:00", "ana", "Open the office window please"),
            ("2026-11-29 13:00:00", "ben", "My office should be at 19 degrees"),
            ("2026-11-30 08:00:00", "ana", "Turn on the stairs light")]
    for at, user, text in said:
        store.add("user", text, user=user, at=at)
    return store


def test_recall_by_words_is_ranked(history):
    text = recall(Memory(history, user="ana"), "office temperature")
    assert text.startswith("2 memories match 'office temperature' (best first): 2026-11-28 11:00, ana said: "
                           '"I like the office at 21 degrees')
    assert text.index("21 degrees") < text.index("Open the office window")
    assert "19 degrees" not in text and "lobby" not in text
    scores = [t.score for t in history.search("office temperature", user="ana")]
    assert scores == sorted(scores)  # bm25: lower is better


def test_recall_by_date(history):
    memory = Memory(history, user="ana")
    assert recall(memory, "", date="yesterday") == \
        '1 memory from 2026-11-29 (newest first): 2026-11-29 12:00, ana said: "Open the office window please".'

    assert "lobby" in recall(memory, "", date="2026-11-27") and "office" not in recall(memory, "", date="2026-11-27")
    ranged = recall(memory, "", date="2026-11-27..2026-11-28")
    assert ranged.startswith("2 memories from 2026-11-27 to 2026-11-28 (newest first)")
    assert ranged.index("21 degrees") < ranged.index("lobby")
    assert "stairs" in recall(memory, "light", date="today")
    assert recall(memory, "office", date="last 2 days").count("ana said") == 1
    assert recall(memory, "garden") == \
        "Nothing in ana's long-term memory matches 'garden'. Try other words or another date."
    with pytest.raises(ToolError, match="Cannot read the date 'next tuesday'"):
        recall(memory, "office", date="next tuesday")
    with pytest.raises(ToolError, match="Give some words to look for, a date, or both"):
        recall(memory, " ")


def test_recall_keeps_users_apart(history):
    ana, ben = Memory(history, user="ana"), Memory(history, user="ben")
    assert "19 degrees" not in recall(ana, "office degrees")
    assert "21 degrees" not in recall(ben, "office degrees") and "19 degrees" in recall(ben, "office degrees")
    assert "19 degrees" in recall(ana, "office degrees", person="ben")  # asked for by name
    history.remember_preference("ana", "office temperature", 21)
    history.remember_preference("ben", "office temperature", 19)
    assert history.preferences("ana") == {"office temperature": 21}
    assert history.preferences("ben") == {"office temperature": 19}
    assert history.preferences("cleo") == {}
    assert recall(ana, "usual temperatures").endswith("Preferences ana stated: office temperature = 21 (2026-11-30).")


def test_recall_leaves_out_what_is_already_in_the_prompt(store):
    memory = Memory(store, user="ana", max_turns=1)
    memory.add("user", "the office is at 21 degrees")
    assert recall(memory, "office").startswith("Nothing in ana's long-term memory")
    memory.add("user", "thanks")
    assert "21 degrees" in recall(memory, "office")


def test_preferences_replace_and_forget(store):
    store.remember_preference("ana", "Office temperature ", 21)
    store.remember_preference("ana", "office temperature", 22.5)
    store.remember_preference("ana", "lights", {"brightness": 40, "colour": "warm"})
    assert store.preferences("ana") == {"lights": {"brightness": 40, "colour": "warm"}, "office temperature": 22.5}
    assert store.forget_preference("ana", "lights") and not store.forget_preference("ana", "lights")
    assert list(store.preferences("ana")) == ["office temperature"]


def test_recall_as_a_tool_in_a_toolbox(history):
    home = load_world("lares-home")
    box = Toolbox(home, tools=[*MEMORY_TOOLS, halt], memory=Memory(history, user="ana"))
    params = box.schema("recall")["function"]["parameters"]
    assert list(params["properties"]) == ["query", "date", "person"] and params["required"] == ["query"]
    assert box.dispatch("remember_preference", {"key": "Lobby lights", "value": "dim"}).content == \
        'Remembered that ana prefers lobby lights = "dim".'
    assert history.preferences("ana") == {"lobby lights": "dim"}
    assert "lobby lights" in box.dispatch("recall", {"query": "lights"}).content
    obs = box.dispatch("recall", {"query": "usual temperature"})
    assert obs.ok and "21 degrees" in obs.text
    bad = box.dispatch("recall", {"query": "office", "date": "someday"})
    assert not bad.ok and bad.content.startswith("Error: Cannot read the date 'someday'")
    none = Toolbox(home, tools=[*MEMORY_TOOLS, halt])
    assert none.dispatch("recall", {"query": "office"}).content == \
        "Error: There is no long-term memory in this run, so there is nothing to recall."
    assert none.dispatch("remember_preference", {"key": "x", "value": 1}).content == \
        "Error: There is no long-term memory in this run, so nothing can be remembered."
    anonymous = Toolbox(home, tools=[*MEMORY_TOOLS, halt], memory=Memory(history))
    assert anonymous.dispatch("remember_preference", {"key": "x", "value": 1}).content.startswith(
        "Error: I do not know who I am talking to")


def test_like_fallback_ranks_by_words_matched(tmp_path):
    path = tmp_path / "plain.sqlite3"
    with MemoryStore(path, full_text=False, clock=Clock()) as plain:
        plain.add("user", "the office window is open", user="ana")
        plain.add("user", "the office temperature is 21", user="ana")
        plain.add("user", "the lobby is quiet", user="ana")
        assert [t.text for t in plain.search("office temperature")] == [
            "the office temperature is 21", "the office window is open"]
        assert "turns_fts" not in {r[0] for r in plain._db.execute("SELECT name FROM sqlite_master")}
    with MemoryStore(path, clock=Clock()) as indexed:  # FTS5 now: the index is built from the old turns
        assert indexed.full_text and indexed.check() == []
        assert indexed.search("temperatures")[0].text == "the office temperature is 21"


# ----------------------------------------------------------- the store file
def test_store_is_one_wal_file_per_home(tmp_path, monkeypatch):
    monkeypatch.setenv("LARES_DATA", str(tmp_path))
    path = memory_path("smart-building")
    assert path == tmp_path / "memory" / "smart-building.sqlite3"
    with MemoryStore(path) as store:
        store.add("user", "hello")
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    monkeypatch.delenv("LARES_DATA")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "ana"))  # the user's own folder, never ./runs or the package
    assert memory_path("smart-building") == tmp_path / "ana/.local/share/lares_kit/memory/smart-building.sqlite3"
    with pytest.raises(LaresError, match="is not a home id"):
        memory_path("../etc")


def test_memory_persists_across_processes(tmp_path):
    path = tmp_path / "home.sqlite3"
    run_python("""
        import sys
        from lares_kit.memory.agent_memory import Memory, MemoryStore
        memory = Memory(MemoryStore(sys.argv[1]), user="ana")
        for n in range(3):
            memory.add("user", f"note {n} about the boiler")
    """, path)
    out = run_python("""
        import sys
        from lares_kit.memory.store import MemoryStore
        print(len(MemoryStore(sys.argv[1]).search("boiler", user="ana")))
    """, path)
    assert out.strip() == "3"


def test_issue_scenario_name_and_usual_temperature_in_a_new_process(tmp_path):
    # Session 1 (one process): Ana says her name and her usual office temperature.
    path = tmp_path / "smart-building.sqlite3"
    run_python("""
        import sys
        from lares_kit.memory.agent_memory import Memory, MemoryStore
        store = MemoryStore(sys.argv[1])
        memory = Memory(store, user="ana")
        memory.add("user", "my name is Ana and I like the office at 21 degrees")
        memory.add("assistant", "Nice to meet you, Ana. I will remember 21 degrees for your office.")
        store.remember_preference("ana", "office temperature", 21)
    """, path)
    # Session 2 (a new process): a fresh window, so only recall can find it.
    out = run_python("""
        import json, sys
        from lares_kit.memory.agent_memory import Memory, MemoryStore, recall
        store = MemoryStore(sys.argv[1])
        memory = Memory(store, user="ana")
        # What the react agent does with it: recall through its Toolbox, then set Ana's office.
        from lares_kit import Toolbox, load_world
        from lares_kit.tools.toolbox import set_device
        box = Toolbox(load_world("smart-building"), tools=[recall, set_device], memory=memory)
        print(json.dumps({"recall": recall(memory, "office temperature"), "prefs": store.preferences("ana"),
                          "window": memory.messages(),
                          "tool": box.dispatch("recall", {"query": "my usual temperature"}).content,
                          "set": box.dispatch("set_device", {"device_id": "office-3-thermostat",
                                                             "attribute": "target", "value": 21}).text}))
    """, path)
    found = json.loads(out)
    assert found["window"] == []
    assert 'ana said: "my name is Ana and I like the office at 21 degrees"' in found["recall"]
    assert found["recall"].endswith("Preferences ana stated: office temperature = 21 (%s)." % time.strftime("%Y-%m-%d"))
    assert found["prefs"] == {"office temperature": 21}
    # No turn has "usual" or "temperature" in it: the stated preference is what word search finds.
    assert found["tool"] == "Preferences ana stated: office temperature = 21 (%s)." % time.strftime("%Y-%m-%d")
    assert found["set"] == "The target of the thermostat in the Office 3 (office-3-thermostat) is now 21 (was 19)."


WRITER = """
import sys
from lares_kit.memory.store import MemoryStore
store = MemoryStore(sys.argv[1])
run, n = sys.argv[2], 0
while True:
    turn = store.add("user", f"record {run}-{n} about the office temperature", user=f"writer-{run}")
    print(turn.id, run, n, flush=True)  # printed only after the commit
    n += 1
"""


@pytest.mark.slow
def test_killed_writers_lose_nothing_committed(tmp_path):
    path = tmp_path / "crash.sqlite3"
    rng = random.Random(7)
    committed = {}  # turn id -> text the writer said it committed
    kills = 50
    for run in range(kills):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(run)],
                                  stdout=subprocess.PIPE, text=True)
        lines = []
        if run % 5:  # most runs: kill mid-stream, after the first commits
            lines.append(writer.stdout.readline())
            time.sleep(rng.uniform(0, 0.03))
        else:  # some runs: kill at any moment, even while the store is being created
            time.sleep(rng.uniform(0, 0.3))
        os.kill(writer.pid, signal.SIGKILL)
        lines += writer.stdout.read().splitlines()
        writer.wait()
        assert writer.returncode == -signal.SIGKILL
        for line in lines:
            if m := re.fullmatch(r"(\d+) (\d+) (\d+)\n?", line):
                committed[int(m[1])] = f"record {m[2]}-{m[3]} about the office temperature"
    assert len(committed) > kills
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    raw.close()
    with MemoryStore(path) as store:
        assert store.check() == []
        stored = {t.id: t.text for t in store.turns()}
        lost = {i for i in committed if stored.get(i) != committed[i]}
        assert not lost, f"{len(lost)} committed records lost"
        assert len(store.search("office temperature", limit=10_000)) == len(stored)


def test_several_processes_write_to_one_home(tmp_path):
    path = tmp_path / "shared.sqlite3"  # created by whichever process comes first
    code = ("import sys\nfrom lares_kit.memory.store import MemoryStore\ns = MemoryStore(sys.argv[1])\n"
            "for n in range(40): s.add('user', f'note {n}', user=sys.argv[2])\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"u{k}"]) for k in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    with MemoryStore(path) as store:
        assert len(store.turns()) == 160 and len(store.turns(user="u2")) == 40


def test_garbage_file_gives_a_clear_error_and_is_kept(tmp_path):
    path = tmp_path / "home.sqlite3"
    garbage = bytes(random.Random(1).randrange(256) for _ in range(8192))
    path.write_bytes(garbage)
    with pytest.raises(LaresError) as err:
        MemoryStore(path)
    message = str(err.value)
    assert str(path) in message and "is damaged" in message and "repair=True" in message
    assert path.read_bytes() == garbage  # nothing touched without repair=True
    with MemoryStore(path, repair=True) as store:
        assert store.backup.name.startswith("home.sqlite3.corrupt-") and store.backup.read_bytes() == garbage
        store.add("user", "a fresh start")
        assert store.check() == [] and len(store.turns()) == 1
    with MemoryStore(path) as again:  # the repaired file is a sound store
        assert [t.text for t in again.turns()] == ["a fresh start"]


def test_damaged_pages_are_caught_on_open(tmp_path):
    path = tmp_path / "home.sqlite3"
    with MemoryStore(path) as store:
        for n in range(300):
            store.add("user", f"turn number {n} " + "words " * 20, user="ana")
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096 * 3: 4096 * 3 + 200] = b"\xff" * 200  # the header of a page inside the file
    path.write_bytes(bytes(data))
    with pytest.raises(LaresError, match="is damaged"):
        MemoryStore(path)
    with MemoryStore(path, repair=True) as store:
        assert store.backup.exists() and store.turns() == []


def test_a_folder_in_the_way_is_a_clear_error(tmp_path):
    (tmp_path / "home.sqlite3").mkdir()
    with pytest.raises(LaresError, match="cannot open the memory store"):
        MemoryStore(tmp_path / "home.sqlite3")
