"""Long-term memory on disk: one SQLite file per home, turns and stated preferences.

Taught in ``notebooks/10_memory.ipynb`` beside :mod:`lares_kit.memory.agent_memory`, which
holds the prompt window and the ``recall`` tool. This module is the store:

* one SQLite file per home (:func:`memory_path`; by default in the user's own
  folder, :func:`lares_kit.files.paths.user_dir`), in WAL mode, users as a column,
  so several users and several processes share one home's memory;
* every write is one committed transaction with ``synchronous = FULL``: a
  crash (even ``kill -9``) loses nothing already committed;
* a damaged file raises :class:`~lares_kit.errors.LaresError` naming it and
  saying what to do; ``repair=True`` keeps it as ``<name>.corrupt-<timestamp>``
  and starts a fresh store;
* word search through SQLite's FTS5 full-text index, ranked by bm25, and
  date search (:func:`parse_date_span`);
* a ``preferences`` table, one value per user and key, that user profiles
  build on.

If this Python's SQLite lacks FTS5, word search falls back to ``LIKE``:
turns matching more of the words come first, newest first among equals, and
"degrees" no longer finds "degree" (FTS5's porter stemmer did that).

It stores and finds; it does not decide what to remember, nor hold the
prompt window (:class:`lares_kit.memory.agent_memory.Memory` does).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date as Date
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import LaresError
from ..files.paths import user_dir

__all__ = ["Turn", "MemoryStore", "memory_path", "parse_date_span", "fts5_available", "words_of", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id      INTEGER PRIMARY KEY,           -- order of writing
    at      TEXT NOT NULL,                 -- local time, 'YYYY-MM-DD HH:MM:SS'
    user    TEXT NOT NULL DEFAULT '',      -- whose conversation; '' when unknown
    role    TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text    TEXT NOT NULL,
    session TEXT NOT NULL DEFAULT ''       -- one id per conversation
);
CREATE INDEX IF NOT EXISTS turns_by_user_and_date ON turns (user, at);
CREATE TABLE IF NOT EXISTS preferences (
    user  TEXT NOT NULL,
    key   TEXT NOT NULL,                   -- 'office temperature'
    value TEXT NOT NULL,                   -- JSON: 21, "warm", true
    at    TEXT NOT NULL,                   -- when it was last stated
    PRIMARY KEY (user, key)
);
"""
# The index holds the words of turns.text; triggers keep it in step in the same transaction.
_FTS_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(
    text, content='turns', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS turns_fts_add AFTER INSERT ON turns BEGIN
    INSERT INTO turns_fts (rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER IF NOT EXISTS turns_fts_remove AFTER DELETE ON turns BEGIN
    INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
"""
# Words too common to tell turns apart; dropped from word searches.
_STOPWORDS = frozenset("a an and are as at be did do does for from had has have i in is it me my of on or "
                       "our say said should so that the this to was we what when where which who with you your "
                       "about".split())


@lru_cache(maxsize=1)  # this Python's SQLite does not change while it runs, and every store opened asks
def fts5_available() -> bool:
    """True when this Python's sqlite3 has the FTS5 full-text module.

    Examples:
        >>> isinstance(fts5_available(), bool)
        True
    """
    with sqlite3.connect(":memory:") as db:
        try:
            db.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
            return True
        except sqlite3.OperationalError:
            return False


def memory_path(home_id: str, folder: str | os.PathLike | None = None) -> Path:
    """The default store file of a home: ``<folder>/<home_id>.sqlite3``.

    Args:
        home_id: The home's id, e.g. ``"smart-building"``: lowercase letters and digits, joined by ``-`` or ``_``.
        folder: Where the store files live; None means the user's own memory folder,
            :func:`lares_kit.files.paths.user_dir` ``("memory")``: ``$LARES_DATA/memory``, else
            ``~/.local/share/lares_kit/memory`` (``$XDG_DATA_HOME`` moves it) -- never the package
            or the current folder, so a shared read-only install works and users do not share a store.

    Examples:
        >>> memory_path("smart-building", "/tmp/mem").as_posix()
        '/tmp/mem/smart-building.sqlite3'
    """
    if not re.fullmatch(r"[a-z0-9]+(?:[-_][a-z0-9]+)*", home_id):
        raise LaresError(f"{home_id!r} is not a home id (lowercase letters, digits, hyphens)")
    if folder is None:
        folder = user_dir("memory")
    return Path(folder) / f"{home_id}.sqlite3"


def parse_date_span(text: str, today: Date) -> tuple[Date, Date]:
    """Read a date or a range of dates; returns (first day, last day), both included.

    Understands ``2026-11-29``, ``2026-11`` (a month), ``today``,
    ``yesterday``, ``3 days ago``, ``last 7 days``, ``this week``,
    ``last week``, and ranges ``A..B``, ``A to B``, ``from A to B``,
    ``between A and B``, ``since A``.

    Args:
        text: The date words, e.g. ``"yesterday"`` or ``"2026-11-01..2026-11-15"``; case and spacing do not matter.
        today: The day "today" means; passed in, so the same words always give the same days in a test.

    Examples:
        >>> today = Date(2026, 11, 30)
        >>> parse_date_span("yesterday", today)
        (datetime.date(2026, 11, 29), datetime.date(2026, 11, 29))
        >>> [d.isoformat() for d in parse_date_span("2026-11-01..2026-11-15", today)]
        ['2026-11-01', '2026-11-15']
        >>> [d.isoformat() for d in parse_date_span("last 7 days", today)]
        ['2026-11-24', '2026-11-30']
        >>> parse_date_span("soon", today)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: cannot read the date 'soon'; use 2026-11-29, 2026-11, today, yesterday, 3 days ago,
        last 7 days, this week, last week, or a range like 2026-11-01..2026-11-15
    """
    words = " ".join(text.lower().split())
    m = re.fullmatch(r"(?:from |between )?(.+?)(?:\.\.| to | and | - )(.+)", words)
    if m and not re.fullmatch(r"\d{4}-\d{2}(?:-\d{2})?", words):
        first, last = parse_date_span(m.group(1), today)[0], parse_date_span(m.group(2), today)[1]
        return (first, last) if first <= last else (last, first)
    if words.startswith("since "):
        return parse_date_span(words[6:], today)[0], today
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", words):
        day = Date.fromisoformat(words)
        return day, day
    if re.fullmatch(r"\d{4}-\d{2}", words):
        first = Date.fromisoformat(words + "-01")
        return first, (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    named = {"today": 0, "yesterday": 1, "the day before yesterday": 2, "day before yesterday": 2}
    if words in named:
        day = today - timedelta(days=named[words])
        return day, day
    if m := re.fullmatch(r"(\d+) days? ago", words):
        day = today - timedelta(days=int(m.group(1)))
        return day, day
    if m := re.fullmatch(r"(?:the )?(?:last|past) (\d+) days?", words):
        return today - timedelta(days=int(m.group(1)) - 1), today
    if words in ("this week", "last week"):
        monday = today - timedelta(days=today.weekday()) - timedelta(weeks=words == "last week")
        return monday, min(monday + timedelta(days=6), today)
    raise ValueError(f"cannot read the date {text!r}; use 2026-11-29, 2026-11, today, yesterday, 3 days ago, "
                     "last 7 days, this week, last week, or a range like 2026-11-01..2026-11-15")


@dataclass
class Turn:
    """One thing said, as stored: ``at`` is local time ``'YYYY-MM-DD HH:MM:SS'``."""

    id: int
    at: str
    user: str
    role: str  # "user" or "assistant"
    text: str
    session: str = ""
    score: float | None = None  # bm25 from a word search: lower is a better match

    @property
    def date(self) -> str:
        return self.at[:10]


class MemoryStore:
    """Long-term memory of one home: a SQLite file of turns and stated preferences.

    ``path`` is the file (``":memory:"`` for a throwaway store); see
    :func:`memory_path` for the default place. ``clock`` gives "now" for new
    turns and for "yesterday" in searches. A file that is not a sound
    database raises :class:`LaresError` and is left as it is; ``repair=True``
    moves it aside to ``<name>.corrupt-<timestamp>`` and starts a fresh store
    (``self.backup`` is then that path).

    Examples:
        >>> store = MemoryStore(":memory:", clock=lambda: datetime(2026, 11, 29, 9, 14))
        >>> _ = store.add("user", "My name is Ana and I like the office at 21 degrees", user="ana")
        >>> _ = store.add("user", "Turn the lobby lights off", user="ben")
        >>> [t.text for t in store.search("office temperature degree", user="ana")]
        ['My name is Ana and I like the office at 21 degrees']
        >>> store.remember_preference("ana", "office temperature", 21)
        >>> store.preferences("ana")
        {'office temperature': 21}
    """

    def __init__(self, path: str | os.PathLike = ":memory:", *, clock: Callable[[], datetime] = datetime.now,
                 repair: bool = False, full_text: bool | None = None) -> None:
        self.path = str(path)
        self.clock = clock
        self.backup: Path | None = None
        # full_text: None = FTS5 when available; False forces the LIKE fallback.
        self.full_text = fts5_available() if full_text is None else full_text
        self._lock = threading.RLock()  # one connection, shared by threads in turn
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise LaresError(f"cannot open the memory store {self.path}: {exc}") from None
            if not repair:
                raise LaresError(
                    f"the memory store {self.path} is damaged ({exc}). Nothing was changed. To keep it as a "
                    "backup and start an empty store, open it with MemoryStore(path, repair=True); or restore "
                    "a copy of the file.") from None
            self.backup = self._move_aside()
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        # isolation_level=None: transactions are explicit (see _write), never implicit.
        db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")  # a commit is on disk before add() returns
            problem = db.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {problem}")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise LaresError(f"the memory store {self.path} was written by a newer lares_kit "
                                 f"(schema {version}); upgrade lares_kit to read it")
            had_index = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'turns_fts'").fetchone()
            if had_index and not fts5_available():
                raise LaresError(f"the memory store {self.path} has an FTS5 full-text index, and this Python's "
                                 "SQLite has no FTS5 module; open it with a Python whose sqlite3 has FTS5")
            # A store first written without the index gets one built from its turns.
            index = _FTS_SCHEMA + ("" if had_index else "INSERT INTO turns_fts (turns_fts) VALUES ('rebuild');")
            db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} {index if self.full_text else ''} "
                             f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        stamp = self.clock().strftime("%Y%m%dT%H%M%S")
        backup = Path(f"{self.path}.corrupt-{stamp}")
        n = 1
        while backup.exists():
            backup, n = Path(f"{self.path}.corrupt-{stamp}-{n}"), n + 1
        os.replace(self.path, backup)
        for suffix in ("-wal", "-shm"):  # the journal belongs to the damaged file
            if os.path.exists(self.path + suffix):
                os.replace(self.path + suffix, f"{backup}{suffix}")
        return backup

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # One write = one committed transaction. IMMEDIATE takes the write lock
        # at once, so two processes never deadlock upgrading a read lock.
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _now(self, at: datetime | str | None) -> str:
        when = self.clock() if at is None else at
        return when if isinstance(when, str) else when.strftime("%Y-%m-%d %H:%M:%S")

    # ----------------------------------------------------------------- turns
    def add(self, role: str, text: str, *, user: str = "", session: str = "",
            at: datetime | str | None = None) -> Turn:
        """Store one turn, committed before this returns; ``at`` defaults to the clock."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        when = self._now(at)
        with self._write() as db:
            cur = db.execute("INSERT INTO turns (at, user, role, text, session) VALUES (?, ?, ?, ?, ?)",
                             (when, user, role, text, session))
        return Turn(cur.lastrowid, when, user, role, text, session)

    def turns(self, user: str | None = None, date: str | None = None, *, exclude: tuple[int, ...] = ()) -> list[Turn]:
        """Stored turns, oldest first, of one user (None: everyone) and dates."""
        where, params = self._filters(user, date, exclude)
        return self._select(f"SELECT {_COLUMNS}, NULL FROM turns t WHERE {where} ORDER BY t.at, t.id", params)

    def search(self, query: str, date: str | None = None, user: str | None = None, *, limit: int = 5,
               exclude: tuple[int, ...] = ()) -> list[Turn]:
        """Turns matching the words of ``query``, best first (``""``: newest first).

        ``date`` is read by :func:`parse_date_span`; ``user`` None means everyone;
        ``exclude`` lists turn ids to leave out (those already in the prompt).
        """
        where, params = self._filters(user, date, exclude)
        words = words_of(query)
        if not words:
            return self._select(f"SELECT {_COLUMNS}, NULL FROM turns t WHERE {where} "
                                "ORDER BY t.at DESC, t.id DESC LIMIT ?", [*params, limit])
        if self.full_text:
            match = " OR ".join(f'"{w}"' for w in words)  # quoted: words are never FTS5 operators
            return self._select(f"SELECT {_COLUMNS}, bm25(turns_fts) FROM turns_fts JOIN turns t "
                                f"ON t.id = turns_fts.rowid WHERE turns_fts MATCH ? AND {where} "
                                "ORDER BY bm25(turns_fts), t.at DESC LIMIT ?", [match, *params, limit])
        hits = " + ".join("(instr(lower(t.text), ?) > 0)" for _ in words)
        return self._select(f"SELECT * FROM (SELECT {_COLUMNS}, -({hits}) AS score FROM turns t WHERE {where}) "
                            "WHERE score < 0 ORDER BY score, at DESC, id DESC LIMIT ?", [*words, *params, limit])

    def _filters(self, user: str | None, date: str | None, exclude: tuple[int, ...]) -> tuple[str, list[Any]]:
        where, params = ["1"], []
        if user is not None:
            where.append("t.user = ?")
            params.append(user)
        if date:
            first, last = parse_date_span(date, self.clock().date())
            where.append("substr(t.at, 1, 10) BETWEEN ? AND ?")
            params += [first.isoformat(), last.isoformat()]
        if exclude:
            where.append(f"t.id NOT IN ({', '.join('?' * len(exclude))})")
            params += list(exclude)
        return " AND ".join(where), params

    def _select(self, sql: str, params: list[Any]) -> list[Turn]:
        with self._lock:
            return [Turn(*row) for row in self._db.execute(sql, params)]

    # ----------------------------------------------------------- preferences
    def remember_preference(self, user: str, key: str, value: Any, *, at: datetime | str | None = None) -> None:
        """Store what a user said they prefer; a later value for the same key replaces it."""
        with self._write() as db:
            db.execute("INSERT INTO preferences (user, key, value, at) VALUES (?, ?, ?, ?) ON CONFLICT (user, key) "
                       "DO UPDATE SET value = excluded.value, at = excluded.at",
                       (user, key.strip().lower(), json.dumps(value), self._now(at)))

    def forget_preference(self, user: str, key: str) -> bool:
        """Remove one stated preference; True if there was one."""
        with self._write() as db:
            return db.execute("DELETE FROM preferences WHERE user = ? AND key = ?",
                              (user, key.strip().lower())).rowcount > 0

    def preferences(self, user: str) -> dict[str, Any]:
        """A user's stated preferences, ``{key: value}`` in key order."""
        return {key: value for key, value, _ in self.preference_records(user)}

    def preference_records(self, user: str) -> list[tuple[str, Any, str]]:
        """A user's stated preferences as ``(key, value, at)``, in key order."""
        with self._lock:
            rows = self._db.execute("SELECT key, value, at FROM preferences WHERE user = ? ORDER BY key", (user,))
            return [(key, json.loads(value), at) for key, value, at in rows]

    # ----------------------------------------------------------------- upkeep
    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and the FTS5 index check; ``[]`` is healthy."""
        with self._lock:
            problems = [row[0] for row in self._db.execute("PRAGMA integrity_check") if row[0] != "ok"]
            if self.full_text:
                try:
                    self._db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as exc:
                    problems.append(f"full-text index: {exc}")
        return problems

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        search = "FTS5" if self.full_text else "LIKE"
        return f"<MemoryStore {self.path}: {search} word search>"


_COLUMNS = "t.id, t.at, t.user, t.role, t.text, t.session"


def words_of(query: str) -> list[str]:
    """The words a search looks for: lower case, once each, without common words (unless that is all).

    Args:
        query: What the user or the model asked for, e.g. ``"What did I say about the office temperature?"``.

    Examples:
        >>> words_of("What did I say about the office temperature?")
        ['office', 'temperature']
        >>> words_of("what is it")
        ['what', 'is', 'it']
    """
    words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
    return [w for w in words if w not in _STOPWORDS] or words


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    # Python >= 3.11 names the SQLite error; older ones only have the message.
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc).lower()
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or any(
        s in text for s in ("not a database", "malformed", "integrity check failed", "corrupt"))
