"""A recording of model requests and replies: the files, how a request is matched, and why one was not.

Part of record and replay (:mod:`.replay`, ``docs/models.md``). A recording is a folder. Each recording
session -- one ``lares run --record DIR``, one ``lares bench --record DIR``, one ``make_client(model,
record=DIR)`` -- adds one file, ``session-0001.jsonl``...: never rewriting an old one. JSON Lines, plain text:

* line 1, the session's manifest: ``{"recording": "lares_kit", "format": 1,
  "models": [...], "command": "lares run ...", "lares_kit": "0.1.0",
  "base_url": "..."}`` -- no date and no absolute path, so the same command
  recorded on another day or machine writes the same manifest;
* then one line per HTTP request, in the order they were sent: ``{"n": 1,
  "method": "POST", "path": "/chat/completions", "status": 200, "request":
  {...}, "headers": {...}, "response": {...}}`` -- the request's JSON body,
  the reply's status, a few of its headers and its JSON body (``"text"``
  instead of ``"response"`` for a body that is not JSON; ``"raised"`` for a
  request that got no reply at all, a refused connection or a timeout).

A line is written whole, with one write to a file opened for appending, as soon as the reply is in: a run that
is killed keeps every exchange before it.

**Matching.** A request is looked up by its method, its path under the base URL and its body as canonical JSON
(keys sorted), without the fields in :data:`IGNORED`, which differ from run to run by design: ``prompt_cache_key``
(a new uuid each run names the run's conversation) and the end-user ids ``user`` and ``safety_identifier``. They
are not written to the file either. Everything else must be equal: the messages, the tools, ``temperature``,
``seed`` (a benchmark trial's, the same in every run), ``max_tokens``...

This module reads and writes the files and explains a miss; the transports and clients are in :mod:`.replay`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import LaresError, brief, clip
from ...files.atomic import unwritable
from ...files.limits import MAX_BYTES
from ...files.reading import DataFileError, bounded_lines, decode_text, open_data_file, parse_json, path_kind

__all__ = ["FORMAT", "IGNORED", "NotRecorded", "Recorder", "Recording", "command_text", "first_difference",
           "request_key"]

FORMAT = 1
IGNORED = ("prompt_cache_key", "user", "safety_identifier")  # request fields that differ from run to run
KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-should-retry")  # and every x-lares-*
_SESSION = re.compile(r"^session-(\d+)\.jsonl$")
SHOWN = 60  # characters of a differing value shown in a NotRecorded sentence
MAX_RECORDING = 2**30  # bytes of session files a replay reads (a 1,000-episode bench of a real model: ~100 MB)


class NotRecorded(LaresError):
    """A request under replay that the recording does not hold (the sentence says which one is closest)."""


def request_key(method: str, path: str, body: Any) -> str:
    """The key a request is recorded and looked up by: method, path and canonical JSON without :data:`IGNORED`.

    Args:
        method: the HTTP method, ``"POST"``.
        path: the path under the client's base URL, ``"/chat/completions"``.
        body: the request's JSON body (a dict), or its text when it is not JSON.

    Examples:
        >>> a = {"model": "offline", "messages": [], "prompt_cache_key": "lares-1f0c"}
        >>> b = {"prompt_cache_key": "lares-9e2a", "messages": [], "model": "offline"}
        >>> request_key("POST", "/chat/completions", a) == request_key("POST", "/chat/completions", b)
        True
        >>> request_key("POST", "/chat/completions", {**a, "seed": 1}) == request_key("POST", "/chat/completions", a)
        False
    """
    return f"{method} {path} {json.dumps(kept(body), sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"


def kept(body: Any) -> Any:
    """The body without the fields that vary from run to run (:data:`IGNORED`); other values as they are.

    Args:
        body: a request body, a dict (anything else is returned as it is).
    """
    return {k: v for k, v in body.items() if k not in IGNORED} if isinstance(body, dict) else body


def command_text(argv: list[str] | None) -> str | None:
    """``lares ...`` as it was typed, for a manifest: without ``--record DIR``, absolute paths cut to their names.

    Args:
        argv: the command line after ``lares``; None: not a command (a recording made in Python).

    Examples:
        >>> command_text(["run", "turn on the light", "--record", "/home/ada/rec", "--runs", "/tmp/x/runs"])
        "lares run 'turn on the light' --runs runs"
        >>> command_text(["bench", "--record=rec", "--limit", "3"]), command_text(None)
        ('lares bench --limit 3', None)
    """
    if argv is None:
        return None
    words, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word == "--record":
            skip = True
        elif not word.startswith("--record="):
            words.append(os.path.basename(word.rstrip("/")) if os.path.isabs(word) else word)
    return shlex.join(["lares", *words])


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lares-kit")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def checked_folder(folder: str | os.PathLike[str], *, create: bool) -> Path:
    """``folder`` as a Path once it can be used: made when ``create`` (recording), else it must hold sessions.

    Args:
        folder: the recording's folder; ``~`` is the home folder.
        create: True to record into it (made with its parents if missing), False to replay it.
    """
    path = Path(os.path.expanduser(str(folder)))
    shown = clip(str(folder), 300)
    if not str(folder).strip():
        raise LaresError("a recording needs a folder: --record DIR to record, --model replay:DIR to replay it")
    kind = path_kind(path)  # never raises: a 5,000-character name is "other"
    if create:
        problem = "it is a file, not a folder" if kind == "file" else unwritable(path, folder=True)
        if problem is None:
            try:
                path.mkdir(parents=True, exist_ok=True)
                return path
            except OSError as exc:
                problem = exc.strerror or type(exc).__name__
        raise LaresError(f"cannot record into {shown}: {problem}; give a folder (it is made if it does not exist)")
    if kind != "folder":
        why = {"file": "it is a file, not a folder", "missing": "the folder does not exist"}.get(kind, "not a folder")
        raise LaresError(f"there is no recording at {shown}: {why}. Record one with --record DIR (lares run ... "
                         "--record DIR), or check the path after replay:")
    if not sessions(path):
        raise LaresError(f"{shown} holds no recording (no session-*.jsonl file): record one into it with "
                         "--record DIR, or check the path after replay:")
    return path


def sessions(folder: Path) -> list[Path]:
    """The session files of a recording folder, oldest first (``session-0001.jsonl``, ...).

    Args:
        folder: the recording's folder.
    """
    found = [(int(m[1]), p) for p in folder.iterdir() if (m := _SESSION.match(p.name)) and p.is_file()]
    return [p for _, p in sorted(found)]


class Recorder:
    """One recording session: its manifest, and the exchanges, written one line each to a new session file.

    The file is made at the first exchange (a client that sends nothing
    leaves nothing). Several clients may share a recorder (``lares run``
    with react's executor model, ``lares bench`` with several models); it is
    safe to use from several threads.

    Examples:
        >>> import tempfile
        >>> rec = Recorder(tempfile.mkdtemp(), models=["offline"])
        >>> rec.add("POST", "/chat/completions", {"model": "offline", "prompt_cache_key": "lares-1"}, 200, {},
        ...         {"choices": []})
        >>> rec.path.name, rec.count
        ('session-0001.jsonl', 1)
        >>> Recording(rec.folder).exchanges[0]["request"]
        {'model': 'offline'}
    """

    def __init__(self, folder: str | os.PathLike[str], models: list[str] | None = None, command: str | None = None,
                 base_url: str | None = None) -> None:
        self.given = str(folder)
        self.folder = checked_folder(folder, create=True)
        self.models, self.command, self.base_url = list(models or []), command, base_url
        self.path: Path | None = None
        self.count = 0
        self._fd: int | None = None
        self._lock = threading.Lock()

    def _open(self) -> None:
        number = max([int(m[1]) for p in self.folder.iterdir() if (m := _SESSION.match(p.name))], default=0) + 1
        while True:  # another recorder may take a number at the same moment: O_EXCL, then the next one
            path = self.folder / f"session-{number:04d}.jsonl"
            try:
                self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                number += 1
            except OSError as exc:
                raise LaresError(f"cannot record into {self.given} ({exc.strerror or type(exc).__name__}): give a "
                                 "folder you can write to") from None
        self.path = path
        self._write({"recording": "lares_kit", "format": FORMAT, "models": self.models, "command": self.command,
                     "lares_kit": _version(), "base_url": self.base_url})

    def _write(self, value: dict[str, Any]) -> None:
        data = (json.dumps(value, ensure_ascii=False) + "\n").encode()
        while data:  # one write in practice; a short write (a signal) goes on where it stopped
            data = data[os.write(self._fd, data):]

    def add(self, method: str, path: str, body: Any, status: int | None, headers: dict[str, str],
            response: Any = None, *, text: str | None = None, raised: dict[str, str] | None = None) -> None:
        """Write one exchange (a line) at the end of the session file.

        Args:
            method: the HTTP method.
            path: the path under the base URL, ``"/chat/completions"``.
            body: the request's JSON body (:data:`IGNORED` fields are left out) or its text.
            status: the reply's HTTP status; None when there was no reply (``raised``).
            headers: the reply's headers (only :data:`KEPT_HEADERS` and ``x-lares-*`` are kept).
            response: the reply's JSON body.
            text: the reply's body when it is not JSON (a stream).
            raised: ``{"type": ..., "message": ...}``: the transport's exception when there was no reply.
        """
        line: dict[str, Any] = {"n": 0, "method": method, "path": path, "status": status, "request": kept(body),
                                "headers": {k.lower(): v for k, v in headers.items()
                                            if k.lower() in KEPT_HEADERS or k.lower().startswith("x-lares-")}}
        if raised is not None:
            line["raised"] = raised
        elif text is not None:
            line["text"] = text
        else:
            line["response"] = response
        with self._lock:
            if self._fd is None:
                self._open()
            self.count += 1
            line["n"] = self.count
            self._write(line)

    def close(self) -> None:
        """Close the session file (a later exchange would start a new session)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)


def _line_problem(value: Any, manifest: bool) -> str | None:
    # What is wrong with a manifest or an exchange line (Recorder's shapes), or None: every key a replay reads
    if manifest and (not isinstance(value, dict) or value.get("recording") != "lares_kit"):
        return "not a lares_kit recording (its first line should be the session's manifest)"
    if not isinstance(value, dict):
        return f"it holds {brief(value)}, not a recorded request (an object with method, path, status...)"
    if manifest:
        bad = next((k for k in ("command", "base_url") if not isinstance(value.get(k) or "", str)), None)
        models = value.get("models") or []
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            return f"the manifest's models should be a list of names, not {brief(models)}"
        return f"the manifest's {bad} should be text, not {brief(value[bad])}" if bad else None
    missing = next((k for k in ("method", "path") if not isinstance(value.get(k), str)), None)
    status, headers, raised = value.get("status"), value.get("headers", {}), value.get("raised", {})
    if missing:
        return f"{missing} should be text, not {brief(value[missing])}" if missing in value else f"no {missing}"
    if status is not None and (type(status) is not int or not 100 <= status <= 599):
        return f"status should be an HTTP status (100 to 599) or null, not {brief(status)}"
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        return f"headers should map names to text, not {brief(headers)}"
    if not isinstance(raised, dict) or not all(isinstance(raised.get(k, ""), str) for k in ("type", "message")):
        return f"raised should be {{type, message}} as text, not {brief(raised)}"
    if not isinstance(value.get("text", ""), str):
        return f"text should be text, not {brief(value['text'])}"
    if not {"raised", "text", "response"} & set(value):
        return "it holds no response, text or raised: what the model answered is missing"
    return None


class Recording:
    """Every session of a recording folder, read: the manifests and the exchanges in order (``#1`` is the first).

    A last line cut short (a recording killed while writing it) is left out; any other line that is not
    JSON, not UTF-8, nested too deep or not of the shape :class:`Recorder` writes is a LaresError naming
    the file and the line.

    Args:
        folder: a folder written by :class:`Recorder` (``--record DIR``).
        only: only these session files (``session-0003.jsonl``): one episode's, when a request was answered
            differently in two sessions. None: every session.
    """

    def __init__(self, folder: str | os.PathLike[str], only: Sequence[str] | None = None) -> None:
        self.given = str(folder)
        self.folder = checked_folder(folder, create=False)
        self.manifests: list[dict[str, Any]] = []
        self.exchanges: list[dict[str, Any]] = []
        files = [path for path in sessions(self.folder) if only is None or path.name in only]
        if only is not None and len(files) != len(set(only)):
            raise LaresError(f"{clip(self.given, 300)} lacks a session of {clip(', '.join(only), 200)}: record again")
        if sum(path.stat().st_size for path in files) > MAX_RECORDING:
            raise LaresError(f"the recording in {clip(self.given, 300)} is bigger than {MAX_RECORDING // 2**20:,} MB, "
                             "more than a replay reads; record fewer episodes into one folder")
        for path in files:
            self._read_session(path)
        if not self.exchanges:
            raise LaresError(f"{clip(self.given, 300)} holds no recorded request: record one into it with --record DIR")

    def _read_session(self, path: Path) -> None:
        # One session file, line by line (a line at most MAX_BYTES); a line that is not what Recorder writes is a
        # sentence naming the file and line. Only a last line cut short mid-write (no newline, not JSON) is skipped.
        source = f"{path.name} in {clip(self.given, 300)}"
        damaged = lambda where, problem: LaresError(  # noqa: E731
            f"{source}, {where}: {problem}; the recording is damaged: record it again")
        manifest = None
        with open_data_file(path, lambda _file, _key, problem: damaged("the file", problem)) as handle:
            for number, raw in enumerate(bounded_lines(handle), 1):
                where = f"line {number}"
                if raw is None:
                    raise damaged(where, f"the line is longer than {MAX_BYTES // 2**20} MB, the most one may be")
                if not raw.strip():
                    continue
                try:
                    value = parse_json(decode_text(raw, source, where=where), source, strict=True)
                except DataFileError as exc:
                    if not raw.endswith(b"\n") and exc.message.startswith("not valid JSON"):
                        break  # the last line, cut short: a recording killed while writing it
                    raise damaged(where, (f"{exc.key_path}: " if exc.key_path not in ("", where) else "")
                                  + exc.message) from None
                problem = _line_problem(value, manifest is None)
                if problem:
                    raise damaged(where, problem)
                if manifest is None:
                    manifest = value
                    self.manifests.append(manifest)
                    continue
                self.exchanges.append({**value, "session": len(self.manifests) - 1,
                                       "key": request_key(value["method"], value["path"], value.get("request"))})

    @property
    def models(self) -> list[str]:
        """The models the sessions were recorded with (their manifests', then any other a request named), each once."""
        named = [e["request"].get("model") for e in self.exchanges if isinstance(e.get("request"), dict)]
        return list(dict.fromkeys([*(m for manifest in self.manifests for m in manifest.get("models") or []),
                                   *(m for m in named if isinstance(m, str))]))

    def where(self, index: int) -> str:
        """``#12 of 40, from `lares run ...```: an exchange, by its place, and the session it came from.

        Args:
            index: the exchange's position in :attr:`exchanges`, from 0.
        """
        manifest = self.manifests[self.exchanges[index]["session"]]
        models = " and ".join(manifest.get("models") or []) or "a model"
        source = f"from `{manifest['command']}`" if manifest.get("command") else f"recorded in Python with {models}"
        return f"#{index + 1} of {len(self.exchanges)}, {source}"

    def closest(self, method: str, path: str, body: Any) -> NotRecorded:
        """The sentence for a request that is not in the recording: the closest one recorded, and where they differ.

        Args:
            method: the request's HTTP method.
            path: its path under the base URL.
            body: its JSON body.
        """
        now = _leaves({"method": method, "path": path, "request": kept(body)})
        best, best_score = 0, None
        for i, exchange in enumerate(self.exchanges):
            then = exchange.setdefault("leaves", _leaves({k: exchange.get(k) for k in ("method", "path", "request")}))
            same = sum(1 for k, v in now.items() if then.get(k, _ABSENT) == v)
            score = (same, -(len(now) + len(then) - 2 * same))
            if best_score is None or score > best_score:
                best, best_score = i, score
        then = self.exchanges[best]["leaves"]
        where, recorded, current, more = first_difference(then, now)
        others = f" (and {more} other place{'s' if more != 1 else ''})" if more else ""
        return NotRecorded(f"this request was not recorded in {self.given}: the closest recorded request "
                           f"({self.where(best)}) differs in {where}{others}: recorded {recorded} vs now {current}. "
                           "Record again with --record, or undo the change.")


_ABSENT = object()


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    # {"request.messages[3].content": "..."} for every value that is not a list or dict; an empty one is a leaf
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{path}[{i}]"))
        return out
    return {path: json.dumps(value, ensure_ascii=False)}


def first_difference(then: dict[str, Any], now: dict[str, Any]) -> tuple[str, str, str, int]:
    """Where two requests' leaves first differ (in the order of ``now``), both values shown, and how many others do.

    Args:
        then: the recorded request's leaves (path -> JSON text of the value).
        now: the new request's leaves.

    Examples:
        >>> then = {"request.messages[1].content": '"turn on the light in the kitchen"', "request.seed": "1"}
        >>> now = {"request.messages[1].content": '"turn on the light in the office"', "request.seed": "1"}
        >>> first_difference(then, now)
        ('messages[1].content', "'turn on the light in the kitchen'", "'turn on the light in the office'", 0)
    """
    paths = list(now) + [p for p in then if p not in now]
    differ = [p for p in paths if then.get(p, _ABSENT) != now.get(p, _ABSENT)]
    if not differ:
        return "nothing the matching reads", "the same", "the same", 0
    path = differ[0]
    a, b = then.get(path, _ABSENT), now.get(path, _ABSENT)
    shown = path[len("request."):] if path.startswith("request.") else path
    return shown, *_shown_pair(a, b), len(differ) - 1


def _shown_pair(a: Any, b: Any) -> tuple[str, str]:
    if a is _ABSENT or b is _ABSENT:
        return ("nothing" if a is _ABSENT else _clip(json.loads(a))), ("nothing" if b is _ABSENT
                                                                         else _clip(json.loads(b)))
    x, y = json.loads(a), json.loads(b)
    if not (isinstance(x, str) and isinstance(y, str)):
        return _clip(x), _clip(y)
    same = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    start = 0 if max(len(x), len(y)) <= SHOWN else max(0, same - SHOWN // 3)  # the difference in view
    return _window(x, start), _window(y, start)


def _window(text: str, start: int) -> str:
    part = text[start:start + SHOWN]
    inner = json.dumps(part, ensure_ascii=False)[1:-1]  # a newline as \\n: one line
    return "'" + ("..." if start else "") + inner + ("..." if start + SHOWN < len(text) else "") + "'"


def _clip(value: Any) -> str:
    if isinstance(value, str):
        return _window(value, 0)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."
