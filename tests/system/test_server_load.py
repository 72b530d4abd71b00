"""`lares serve-model` under load and under a fuzz run of malformed requests, as a real child process.

Two runs against the command itself (its own log on stderr, its default
timeouts), each printing its figures (``pytest -s`` shows them):

* 200 clients connect at once over loopback and each asks for a chat
  completion: every one is answered, with the in-process bytes (the old
  ``http.server`` with a listen backlog of 5 left up to 53 unanswered
  after 90 s);
* a few hundred malformed requests -- the hand-written hostile ones of
  ``test_server.py`` plus seeded random damage to good ones (bytes flipped,
  cut short, methods, paths, headers, JSON values) -- each get a 200 or a
  4xx JSON error in OpenAI's shape within the read timeout, the server
  answers a good request afterwards, and its log holds no traceback.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lares_kit.models.serving.wire import handle

ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT = 10.0  # lares serve-model's default: the bound on how long a malformed request may take
INSTRUCTIONS = ["turn on the light in the kitchen", "turn on the light for my dog", "which lights are on?",
                "turn off all the lights", "make me a sandwich",
                "set the office light depending on whether it's daytime", "is the bedroom light on?",
                "close the blinds in the lounge", "hello", "turn the hallway light off"]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """``lares serve-model`` in a child process, its stderr in a file."""

    def __init__(self, log: Path) -> None:
        self.port, self.log = _free_port(), log
        with log.open("w") as stderr:
            self.proc = subprocess.Popen([sys.executable, "-m", "lares_kit.cli.commands", "serve-model", "--port",
                                          str(self.port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True)
        assert "Serving the offline model" in self.proc.stdout.readline()

    def stop(self) -> tuple[int, float, str]:
        """SIGINT; (exit code, seconds to exit, the log)."""
        start = time.perf_counter()
        self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(timeout=30)
        finally:
            self.proc.kill()
        return code, time.perf_counter() - start, self.log.read_text()


async def ask(port: int, data: bytes, timeout: float) -> tuple[int, bytes, float]:
    """One request on a new connection: (status or 0 if none came, body, seconds)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    except (OSError, asyncio.TimeoutError):
        return 0, b"no connection", loop.time() - start
    try:
        writer.write(data)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        if data.startswith(b"HEAD "):  # a reply to HEAD is its headers only
            return int(head.split()[1]), b"", loop.time() - start
        body = await asyncio.wait_for(reader.readexactly(int(length.group(1)) if length else 0), timeout)
        return int(head.split()[1]), body, loop.time() - start
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as exc:
        return 0, repr(exc).encode(), loop.time() - start
    finally:
        writer.close()


def request(body: bytes, method: str = "POST", path: str = "/v1/chat/completions") -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _body(instruction: str) -> bytes:
    return json.dumps({"model": "offline", "messages": [{"role": "user", "content": instruction}]}).encode()


def _no_clock(body: bytes) -> bytes:
    return re.sub(rb'"created": \d+', b"", body)


def test_200_concurrent_clients_are_all_answered(tmp_path):
    bodies = [_body(INSTRUCTIONS[i % len(INSTRUCTIONS)]) for i in range(200)]
    expected = {body: _no_clock(handle("POST", "/v1/chat/completions", body)[2]) for body in set(bodies)}
    server = Served(tmp_path / "server.log")

    async def everyone() -> list[tuple[int, bytes, float]]:
        return await asyncio.gather(*(ask(server.port, request(body), 90.0) for body in bodies))

    start = time.perf_counter()
    try:
        replies = asyncio.run(everyone())
    finally:
        wall = time.perf_counter() - start
        code, stopped, log = server.stop()
    answered = sum(status == 200 and _no_clock(got) == expected[body]
                   for (status, got, _), body in zip(replies, bodies))
    latencies = sorted(seconds for _, _, seconds in replies)
    print(f"\n200 concurrent clients: {answered} answered with the in-process bytes in {wall:.1f} s "
          f"(latency median {statistics.median(latencies):.2f} s, slowest {latencies[-1]:.2f} s); "
          f"stopped {stopped:.2f} s after SIGINT")
    assert answered == 200, [(body, got) for (_, got, _), body in zip(replies, bodies)
                             if _no_clock(got) != expected[body]][:2]
    assert code == 0 and "Traceback" not in log


def _damaged(rng: random.Random, good: bytes) -> bytes:
    # One good request, damaged in one of several ways a broken client or an attacker might.
    how = rng.randrange(7)
    if how == 0:  # bytes flipped anywhere
        data = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if how == 1:  # cut short: the server waits READ_TIMEOUT for the rest, then says 408
        return good[:rng.randrange(1, len(good))]
    if how == 2:  # a strange method or path
        method = rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE",
                             "X-" + "A" * rng.randint(1, 40)])
        path = rng.choice(["/v1/chat/completions", "/", "/v1/models/x", "/%00", "/v1/chat/completions?x=" + "a" * 3000])
        return request(b"{}", method, path)
    if how == 3:  # a header that is not a header
        head, body = good.split(b"\r\n\r\n", 1)
        junk = rng.choice([b"No-Colon", b" folded: line", b"Bad Name: x", b"X: \x00\x7f", b"X: " + b"v" * 9000,
                           b"Content-Length: " + str(rng.randint(0, 10**6)).encode(), b"Transfer-Encoding: gzip"])
        return head + b"\r\n" + junk + b"\r\n\r\n" + body
    if how == 4:  # a JSON value somewhere replaced
        value = json.loads(good.split(b"\r\n\r\n", 1)[1])
        key = rng.choice(["model", "messages", "n", "stream", "stream_options", "tools", "tool_choice", "max_tokens",
                          "stop", "response_format"])
        value[key] = rng.choice([None, True, -1, 10**30, "yes", [], {}, [[[]]], {"function": "halt"},
                                 [{"role": "user", "content": {"a": 1}}], "x" * 1000])
        return request(json.dumps(value).encode())
    if how == 5:  # not JSON at all
        return request(bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))))
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))) + b"\r\n\r\n"  # not HTTP at all


def test_a_fuzz_run_of_malformed_requests_leaves_no_traceback(tmp_path):
    # the hand-written ones first: garbage lines, bad lengths, deep JSON...
    from test_server import HOSTILE

    rng = random.Random(20)
    goods = [request(_body(text)) for text in INSTRUCTIONS]
    cases = [data for data, _ in HOSTILE.values()] + [_damaged(rng, rng.choice(goods)) for _ in range(380)]
    server = Served(tmp_path / "server.log")
    gate = asyncio.Semaphore(100)

    async def one(data: bytes) -> tuple[int, bytes, float]:
        async with gate:
            return await ask(server.port, data, READ_TIMEOUT + 20)

    async def run() -> list[tuple[int, bytes, float]]:
        return await asyncio.gather(*(one(data) for data in cases))

    start = time.perf_counter()
    try:
        replies = asyncio.run(run())
        after = asyncio.run(ask(server.port, goods[0], 30.0))
    finally:
        wall = time.perf_counter() - start
        code, stopped, log = server.stop()
    statuses: dict[int, int] = {}
    for status, _, _ in replies:
        statuses[status] = statuses.get(status, 0) + 1
    print(f"\nfuzz run: {len(cases)} malformed requests in {wall:.1f} s; statuses {dict(sorted(statuses.items()))}; "
          f"slowest {max(s for _, _, s in replies):.1f} s; tracebacks in the log: {log.count('Traceback')}; "
          f"stopped {stopped:.2f} s after SIGINT")
    bad = [(status, body[:120]) for data, (status, body, _) in zip(cases, replies)
           if not (status == 200 or (400 <= status < 500 and (data.startswith(b"HEAD ") or set(
               json.loads(body)["error"]) == {"message", "type", "param", "code"})))]
    assert not bad, bad[:5]
    assert max(seconds for _, _, seconds in replies) < READ_TIMEOUT + 10
    assert after[0] == 200 and code == 0
    assert "Traceback" not in log and "Exception in ASGI application" not in log
