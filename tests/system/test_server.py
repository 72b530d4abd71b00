"""`lares serve-model`: the offline model over real HTTP on loopback, driven by the real SDK and by raw sockets.

What is checked: the replies are the in-process transport's bytes; every
malformed or hostile request gets a 4xx JSON error in OpenAI's shape within
a bounded time while the server keeps answering others; slow clients
(slowloris headers, short bodies, silent connections) are cut off; and the
server stops within 2 s of close(), SIGINT or SIGTERM with connections held
open and requests in flight. The 200-client load run and the fuzz run of the
command are in ``tests/system/test_server_load.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from lares_kit import load_world
from lares_kit.models.offline.prompt_cache import PROMPT_CACHE
from lares_kit.models.serving.guard import ServerLimits
from lares_kit.models.serving.server import DropConnection, Faults, ModelServer
from lares_kit.models.serving.wire import handle

ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT = 1.0  # the strict server's: slow clients are cut off after this many seconds
MAX_BODY = 256 * 1024
STOP_BOUND = 2.0  # seconds: the promise for stopping (docs/models.md); 0.2-0.3 s measured


@pytest.fixture(scope="module")
def server():
    with ModelServer(port=0) as running:
        yield running


@pytest.fixture(scope="module")
def strict():
    limits = ServerLimits(read_timeout=READ_TIMEOUT, keep_alive=2.0, max_body=MAX_BODY)
    with ModelServer(port=0, limits=limits) as running:
        yield running


def exchange(address: tuple[str, int], data: bytes, timeout: float = 15.0) -> tuple[int, dict[str, str], bytes, float]:
    """Send raw bytes on a new connection, read one response: (status, headers, body, seconds); 0 if none came."""
    start = time.perf_counter()
    raw = b""
    with socket.create_connection(address, timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:  # the server answered and closed before reading it all (a 413, a 431)
            pass
        try:
            while b"\r\n\r\n" not in raw or len(raw.split(b"\r\n\r\n", 1)[1]) < _length(raw):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                raw += chunk
        except ConnectionResetError:  # closed with our bytes unread: what came before the reset still counts
            pass
    seconds = time.perf_counter() - start
    if b"\r\n\r\n" not in raw:
        return 0, {}, raw, seconds
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body[:_length(raw)], seconds


def _length(raw: bytes) -> int:
    match = re.search(rb"\r\ncontent-length: (\d+)", raw.split(b"\r\n\r\n", 1)[0], re.IGNORECASE)
    return int(match.group(1)) if match else 0


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", *extra]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in extra):
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def is_openai_error(body: bytes) -> bool:
    error = json.loads(body)["error"]
    return set(error) == {"message", "type", "param", "code"} and error["message"].endswith(".")


def chat(content="turn on the light in the kitchen", **extra) -> bytes:
    return json.dumps({"model": "offline", "messages": [{"role": "user", "content": content}], **extra}).encode()


# ------------------------------------------------------------------ the SDK over HTTP
def test_models_endpoint(server):
    assert server.address[0] == "127.0.0.1" and server.address[1] > 0
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["offline"]


def test_its_url_stays_readable_once_it_has_stopped():
    # uvicorn closes the listening socket when it stops: a recording made through the server names the URL it
    # served on after the server is gone (tests/system/test_replay.py), so the address is kept, not asked of the socket.
    srv = ModelServer(port=0).start()
    url = srv.base_url
    srv.stop()
    srv.wait()
    assert srv._socket.fileno() == -1  # uvicorn has closed it
    assert srv.base_url == url
    srv.close()
    assert srv.base_url == url and srv.address[1] > 0


def test_three_scenarios_over_http(server):
    from drivers import drive

    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=10)
    home = load_world("lares-home")
    drive(home, "turn on the light in the kitchen", client=client)
    assert home.devices["kitchen-light"].state["on"]
    home = load_world("lares-home").reset(seed=2)
    drive(home, "turn on the light for my dog", client=client, style="intent")
    assert home.is_lit(home.items["bruno"].room)
    home = load_world("lares-home")
    _, user = drive(home, "set the office light depending on whether it's daytime", client=client,
                    answers=["no, it's night"])
    assert user.asked and home.devices["office-light"].state["on"]


def test_forced_choice_over_http(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    from lares_kit import Toolbox

    box = Toolbox(load_world("lares-home"))
    r = client.chat.completions.create(model="offline-multi", messages=[{"role": "user", "content": "hi"}],
                                       tools=box.schemas(),
                                       tool_choice={"type": "function", "function": {"name": "move_robot"}})
    assert r.model == "offline-multi" and r.choices[0].message.tool_calls[0].function.name == "move_robot"


def test_a_model_it_does_not_serve_is_a_404(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert info.value.body["code"] == "model_not_found" and "offline" in info.value.message


REQUESTS = [
    ("GET", "/v1/models", b""),
    ("POST", "/v1/chat/completions", chat()),
    ("POST", "/v1/chat/completions", chat("turn on the light for my dog", n=2, max_tokens=3)),
    ("POST", "/v1/chat/completions", chat("which lights are on?", stream=True, stream_options={"include_usage": True})),
    ("POST", "/v1/chat/completions", b"{not json"),
    ("POST", "/v1/chat/completions", chat(stream_options="yes")),
    ("PATCH", "/v1/chat/completions", chat()),
    ("GET", "/v1/models/gpt-5", b""),
    ("POST", "/v1/embeddings", b"{}"),
]


@pytest.mark.parametrize("method, path, body", REQUESTS)
def test_replies_are_the_in_process_bytes(server, method, path, body):
    data = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    PROMPT_CACHE.clear()  # both start cold: the second would find the first's prompt in the cache they share
    status, headers, got, _ = exchange(server.address, data)
    PROMPT_CACHE.clear()
    want_status, want_headers, want = handle(method, path, body)
    created = re.compile(rb'"created": \d+')  # the only field that reads the clock
    assert (status, headers["content-type"]) == (want_status, want_headers["content-type"])
    assert created.sub(b"", got) == created.sub(b"", want)


@pytest.mark.parametrize("raw, param", [
    (b"{not json", None),
    (b'{"model": "offline"}', "messages"),
    (b'{"model": "offline", "messages": []}', "messages"),
    (json.dumps({"model": "offline", "messages": [{"role": "user", "content": "x"}],
                 "tools": [{"type": "function", "function": {"name": "halt"}}],
                 "tool_choice": {"type": "function", "function": {"name": "fly"}}}).encode(), "tool_choice"),
])
def test_bad_requests_get_400(server, raw, param):
    request = urllib.request.Request(server.base_url + "/chat/completions", data=raw, method="POST",
                                     headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)
    body = json.loads(info.value.read())
    assert info.value.code == 400 and set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["param"] == param


def test_sdk_maps_400_to_bad_request_error(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="offline", messages=[])
    assert info.value.body["param"] == "messages"


def test_intercept_answers_first_and_latency_waits():
    calls = []

    def busy(method, path, body):
        calls.append(path)
        if len(calls) == 1:
            return 429, {"content-type": "application/json"}, json.dumps(
                {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}}).encode()
        if len(calls) == 2:
            raise DropConnection
        return None

    with ModelServer(port=0, intercept=busy, latency=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.models.list()
        with pytest.raises(openai.APIConnectionError):
            client.models.list()
        start = time.perf_counter()
        client.models.list()
        assert time.perf_counter() - start >= 0.2


# ------------------------------------------------------------------ hostile and broken clients
HOSTILE = {
    "garbage request line": (b"HELLO THERE\r\n\r\n", 400),
    "a TLS hello": (bytes.fromhex("16030100a5010000a10303") + bytes(32) + b"\r\n\r\n", 400),
    "no Host header": (b"GET /v1/models HTTP/1.1\r\n\r\n", 400),
    "a non-ASCII path": ("GET /v1/modèles HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(), 400),
    "Content-Length: abc": (post("/v1/chat/completions", chat(), "Content-Length: abc"), 400),
    "Content-Length: -5": (post("/v1/chat/completions", chat(), "Content-Length: -5"), 400),
    "two Content-Lengths": (post("/v1/chat/completions", chat(), "Content-Length: 5", "Content-Length: 6"), 400),
    "a bad chunk size": (post("/v1/chat/completions", b"zz\r\nhello\r\n0\r\n\r\n", "Transfer-Encoding: chunked"), 400),
    "20 KB of headers, unfinished": (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                     + b"".join(b"X-Filler-%d: %s\r\n" % (i, b"y" * 200) for i in range(100)), 431),
    "PATCH": (b"PATCH /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}", 405),
    "an unknown method": (b"BREW /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n", 405),
    "a body over the limit, announced": (post("/v1/chat/completions", b"", f"Content-Length: {10**9}"), 413),
    "a chunked body over the limit": (post("/v1/chat/completions", b"40000\r\n" + b"x" * 0x40000 + b"\r\n10\r\n"
                                           + b"x" * 16 + b"\r\n0\r\n\r\n", "Transfer-Encoding: chunked"), 413),
    "a short body": (post("/v1/chat/completions", b'{"model": ', "Content-Length: 100"), 408),
    "headers that never end": (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 408),
    "an unknown model": (post("/v1/chat/completions", chat(model="gpt-4o")), 404),
    "object content": (post("/v1/chat/completions", b'{"model": "offline", "messages": [{"role": "user", '
                                                     b'"content": {"text": "hi"}}]}'), 400),
    "stream_options: yes": (post("/v1/chat/completions", chat(stream=True, stream_options="yes")), 400),
    "tool_choice.function a string": (post("/v1/chat/completions", chat(tools=[{"type": "function", "function": {
        "name": "halt"}}], tool_choice={"type": "function", "function": "halt"})), 400),
    "n with 5,000 digits": (post("/v1/chat/completions", chat()[:-1] + b', "n": ' + b"7" * 5000 + b"}"), 400),
    "JSON 100,000 deep": (post("/v1/chat/completions", b"[" * 100_000 + b"]" * 100_000), 400),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_request_gets_a_json_4xx_in_bounded_time(strict, case, caplog):
    data, want = HOSTILE[case]
    status, headers, body, seconds = exchange(strict.address, data)
    assert status == want and headers["content-type"] == "application/json" and is_openai_error(body)
    assert seconds < READ_TIMEOUT + 5  # the slow ones take READ_TIMEOUT; the rest are answered at once
    assert not [r for r in caplog.records if r.exc_info]  # no traceback anywhere in the server's log


def test_what_http_allows_is_served(strict):
    chunked = post("/v1/chat/completions", hex(len(chat()))[2:].encode() + b"\r\n" + chat() + b"\r\n0\r\n\r\n",
                   "Transfer-Encoding: chunked")
    many_headers = post("/v1/chat/completions", chat(), *[f"X-H{i}: {i}" for i in range(150)])
    http10 = b"GET /v1/models HTTP/1.0\r\n\r\n"
    upgrade = b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    for data in (chunked, many_headers, http10, upgrade):
        status, _, body, _ = exchange(strict.address, data)
        assert status == 200 and "error" not in json.loads(body)


def test_a_silent_connection_is_closed(strict):
    with socket.create_connection(strict.address, timeout=15) as sock:
        start = time.perf_counter()
        assert sock.recv(100) == b""  # closed, with nothing said: no request was made
        assert time.perf_counter() - start < 2.0 + 5


async def _slowloris(address: tuple[str, int], clients: int) -> list[tuple[bytes, float]]:
    # Each client sends part of its headers, then a byte every 0.2 s, until the server replies or hangs up.
    async def one() -> tuple[bytes, float]:
        loop = asyncio.get_running_loop()
        reader, writer = await asyncio.open_connection(*address)
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        start = loop.time()
        try:
            while loop.time() - start < 20:
                try:
                    reply = await asyncio.wait_for(reader.read(4096), 0.2)
                    return reply, loop.time() - start
                except asyncio.TimeoutError:
                    writer.write(b"z")
            return b"", loop.time() - start
        finally:
            writer.close()

    return await asyncio.gather(*(one() for _ in range(clients)))


def test_100_slowloris_clients_are_cut_off_and_others_still_served(strict):
    answered: list[float] = []

    def a_real_client():
        time.sleep(0.3)  # the slow clients are connected by now
        client = openai.OpenAI(base_url=strict.base_url, api_key="unused", max_retries=0, timeout=30)
        start = time.perf_counter()
        client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hello"}])
        answered.append(time.perf_counter() - start)

    meanwhile = threading.Thread(target=a_real_client)
    meanwhile.start()
    results = asyncio.run(_slowloris(strict.address, 100))
    meanwhile.join()
    assert all(reply.startswith(b"HTTP/1.1 408") for reply, _ in results)
    assert max(seconds for _, seconds in results) < READ_TIMEOUT + 5
    assert answered and answered[0] < 5  # served while 100 connections dragged on


# ------------------------------------------------------------------ stopping
def _blocking(seen: list[str]):
    def intercept(method, path, body):  # a plain intercept that blocks its worker thread for a minute
        if path.endswith("/chat/completions"):
            seen.append(path)
            time.sleep(60)

    return intercept


@pytest.mark.parametrize("stall", ["a timeout fault", "a blocking intercept"])
def test_close_within_2s_with_a_stalled_reply_and_held_connections(stall):
    seen: list[str] = []
    faults = Faults(rate=1.0, kinds=("timeout",), hang=60)
    srv = ModelServer(port=0, intercept=faults if stall == "a timeout fault" else _blocking(seen)).start()
    errors: list[Exception] = []

    def stalled():
        client = openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0, timeout=60)
        try:
            client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
        except openai.APIError as exc:
            errors.append(exc)

    caller = threading.Thread(target=stalled)
    caller.start()
    idle = socket.create_connection(srv.address)
    idle.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    idle.recv(65536)  # answered; the connection stays open (keep-alive)
    half = socket.create_connection(srv.address)
    half.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 50\r\n\r\n{")
    while not (faults.requests or seen):
        time.sleep(0.05)
    start = time.perf_counter()
    srv.close()
    stopped = time.perf_counter() - start
    caller.join(10)
    assert stopped < STOP_BOUND, f"close() took {stopped:.2f} s"
    assert isinstance(errors[0], openai.InternalServerError) and "shutting down" in errors[0].message
    assert half.recv(4096).startswith(b"HTTP/1.1 503")
    idle.close()
    half.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hold_and_load(port: int) -> tuple[list[socket.socket], threading.Event, list[threading.Thread]]:
    """Connections held open (idle keep-alive, half-sent headers, half-sent body) and 4 clients asking in a loop."""
    idle = socket.create_connection(("127.0.0.1", port))
    idle.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    idle.recv(65536)
    headers = socket.create_connection(("127.0.0.1", port))
    headers.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    body = socket.create_connection(("127.0.0.1", port))
    body.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{")
    done = threading.Event()

    def ask():
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=10)
        while not done.is_set():
            try:
                client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "turn on "
                                                                           "the light in the kitchen"}])
            except openai.APIError:
                return  # stopped under us: expected

    load = [threading.Thread(target=ask) for _ in range(4)]
    for thread in load:
        thread.start()
    time.sleep(0.5)
    return [idle, headers, body], done, load


def test_cli_serve_model_stops_within_2s_of_sigterm_under_load(tmp_path):
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "lares_kit.cli.commands", "serve-model", "--port", str(port)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert "Serving the offline model" in proc.stdout.readline()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        reply = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hello"}])
        assert "rule-based teaching stand-in" in reply.choices[0].message.content
        held, done, load = hold_and_load(port)
        start = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        stopped = time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()
    done.set()
    for thread in load:
        thread.join(10)
    for sock in held:
        sock.close()
    print(f"\nlares serve-model exited {stopped:.2f} s after SIGTERM (3 held connections, 4 clients asking)")
    assert code == 0 and stopped < STOP_BOUND
    assert "Traceback" not in log.read_text() and "stopped after" in log.read_text()


def test_cli_serve_model_port_in_use(server):
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "serve-model", "--port",
                           str(server.address[1])],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--port" in proc.stderr

