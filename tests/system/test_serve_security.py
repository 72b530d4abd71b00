"""The served home's doors, attacked: each attack of the held-out run reproduced, each with its safe answer.

A web page's ``text/plain`` POST, a rebinding ``Host``, a foreign ``Origin``, no token, a guest's token
answering the owner's question, a bind beyond loopback without names or a token, body and depth bombs, slow
clients, a lagging event stream, a port out of range -- against ``lares serve-home`` (in process and as a
command) and ``lares serve-model``. The MQTT door's night is tested here too: its clock is the home's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime

import anyio
import httpx
import pytest
from mcp import Client

from lares_kit import load_world
from lares_kit.errors import LaresError
from lares_kit.home.clock import Clock
from lares_kit.models.serving.guard import ServerLimits, json_depth
from lares_kit.models.serving.server import ModelServer
from lares_kit.serve.app import HomeServer, _service, parse_tokens
from lares_kit.serve.service import HomeService

GUEST = "guest-token-0123456789"
UNLOCK = {"tool": "set_device", "arguments": {"device_id": "front-door-lock", "attribute": "locked", "value": False}}


@pytest.fixture
def townhouse():
    service = HomeService(load_world("townhouse"))
    with HomeServer(service, port=0, tokens={"guest": GUEST}) as server:
        yield server


def locked(server) -> bool:
    return server.service.home.devices["front-door-lock"].state["locked"]


def raw(server, data: bytes, timeout: float = 20.0) -> tuple[int, bytes]:
    """Send raw bytes, read one response: (status, body); status 0 when the server closed without one."""
    with socket.create_connection(server.address, timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            got += chunk
            head, _, body = got.partition(b"\r\n\r\n")
            length = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(
                b"content-length:")]
            if length and len(body) >= length[0]:
                break
    if not got.startswith(b"HTTP/1.1 "):
        return 0, got
    return int(got.split()[1]), got.partition(b"\r\n\r\n")[2]


# ------------------------------------------------------------ a web page, a rebinding name, no token
def test_a_web_pages_text_plain_posts_cannot_unlock_the_door(townhouse):
    # The attack: three "simple" POSTs a page may send anywhere without asking -- the unlock, the caller answering
    # the gate's own question, the unlock again -- with the owner's token even (say it leaked into a URL).
    page = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
    for headers in (page, {**page, **townhouse.headers}, {"Content-Type": "text/plain", **townhouse.headers}):
        for body in (UNLOCK, {"tool": "ask_user", "answer": "yes", "arguments": {
                "question": "Shall I unlock the front door lock (front-door-lock)? Please answer yes or no."}}, UNLOCK):
            reply = httpx.post(townhouse.base_url + "/call", content=json.dumps(body), headers=headers, timeout=10)
            assert reply.status_code in (401, 403, 415) and reply.json()["error"].endswith(".")
    assert locked(townhouse) and townhouse.service.calls == 0  # nothing reached the home


def test_a_foreign_origin_is_refused_on_every_route_mcp_included(townhouse):
    for method, path in (("GET", "/"), ("GET", "/world"), ("GET", "/events"), ("POST", "/call"), ("POST", "/mcp")):
        reply = httpx.request(method, townhouse.link(path), headers={"Origin": "http://evil.example"}, json={},
                              timeout=10)
        assert reply.status_code == 403, (method, path)
    own = httpx.get(townhouse.link("/world"), headers={"Origin": townhouse.base_url}, timeout=10)
    assert own.status_code == 200  # the server's own page may


def test_a_rebinding_host_gets_nothing(townhouse):
    evil = {"Host": "evil.example"}
    for method, path in (("GET", "/world"), ("GET", "/events"), ("GET", "/debug"), ("POST", "/call"),
                         ("POST", "/mcp")):
        reply = httpx.request(method, townhouse.link(path), headers=evil, json={"tool": "halt"}, timeout=10)
        assert reply.status_code == 421 and "evil.example" in reply.json()["error"], (method, path)
        assert "lares-home" not in reply.text and "front-door-lock" not in reply.text
    assert townhouse.service.calls == 0


def test_every_route_needs_the_token(townhouse):
    for method, path in (("GET", "/"), ("GET", "/world"), ("GET", "/events"), ("POST", "/call"), ("POST", "/mcp")):
        reply = httpx.request(method, townhouse.base_url + path, json={"tool": "halt"}, timeout=10)
        assert reply.status_code == 401 and "Bearer" in reply.headers["www-authenticate"], (method, path)
        wrong = httpx.request(method, townhouse.base_url + path, json={"tool": "halt"}, timeout=10,
                              headers={"Authorization": "Bearer " + "x" * 30})
        assert wrong.status_code == 401
    assert httpx.get(townhouse.base_url + "/world", headers=townhouse.headers, timeout=10).status_code == 200
    assert httpx.get(townhouse.link("/world"), timeout=10).status_code == 200  # ?token=, as an EventSource sends it

    async def mcp_without_token():
        async with Client(townhouse.mcp_url) as client:
            await client.list_tools()

    with pytest.raises(BaseException):  # noqa: B017 - the SDK raises its own group; that it raises is the point
        anyio.run(mcp_without_token)


# ------------------------------------------------------------ who may answer a confirmation
def test_a_guest_token_cannot_answer_the_gates_question_the_owner_can(townhouse):
    post = lambda body, headers: httpx.post(townhouse.base_url + "/call", json=body, headers=headers,  # noqa: E731
                                            timeout=10).json()
    guest = {"Authorization": f"Bearer {GUEST}"}
    refused = post(UNLOCK, guest)
    assert not refused["ok"] and "from 'guest', who cannot confirm it" in refused["result"]
    asked = post(UNLOCK, townhouse.headers)  # the owner's call: the gate asks its question
    question = asked["result"].split('"')[1]
    assert post({"tool": "ask_user", "arguments": {"question": question}, "answer": "Yes."}, guest)["ok"]
    assert not post(UNLOCK, guest)["ok"] and not post(UNLOCK, townhouse.headers)["ok"]  # the guest's yes is no yes
    assert locked(townhouse)
    question = post(UNLOCK, townhouse.headers)["result"].split('"')[1]
    post({"tool": "ask_user", "arguments": {"question": question}, "answer": "Yes."}, townhouse.headers)
    done = post(UNLOCK, townhouse.headers)
    assert done["ok"] and not locked(townhouse)  # the owner, authenticated, confirmed their own change


def test_a_guest_token_over_mcp_speaks_as_the_guest(townhouse):
    async def unlock():
        async with Client(f"{townhouse.mcp_url}?token={GUEST}") as client:
            return await client.call_tool("set_device", UNLOCK["arguments"])

    result = anyio.run(unlock)
    assert result.is_error and "from 'guest'" in result.content[0].text and locked(townhouse)


def test_tokens_are_declared_once_each_and_long_enough():
    own, others = parse_tokens("owner", None, ["guest=" + "g" * 20, "letterbox=" + "l" * 20])
    assert len(own) >= 16 and others == {"guest": "g" * 20, "letterbox": "l" * 20}
    for bad in (["guest"], ["guest=short"], ["guest=" + "g" * 20, "guest=" + "h" * 20], ["owner=" + "o" * 20]):
        with pytest.raises(LaresError):
            parse_tokens("owner", None, bad)
    with pytest.raises(LaresError, match="same token"):
        parse_tokens("owner", "s" * 20, ["guest=" + "s" * 20])


# ------------------------------------------------------------ beyond loopback
def test_listening_beyond_loopback_needs_the_names_to_accept():
    service = HomeService(load_world("lares-home"))
    with pytest.raises(LaresError, match="--allow-host"):
        HomeServer(service, "0.0.0.0", 0)
    with HomeServer(service, "0.0.0.0", 0, allow_hosts=("myhome.local",)) as server:
        named = httpx.get(f"http://127.0.0.1:{server.address[1]}/world", timeout=10, headers={
            **server.headers, "Host": f"myhome.local:{server.address[1]}"})
        other = httpx.get(f"http://127.0.0.1:{server.address[1]}/world", timeout=10, headers={
            **server.headers, "Host": "evil.example"})
    assert named.status_code == 200 and other.status_code == 421
    with pytest.raises(LaresError, match="token"):
        ModelServer("0.0.0.0", 0, allow_hosts=("models.local",))  # a model server beyond loopback needs a token


def lares(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lares_kit", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.parametrize("args, said", [
    (["serve-home", "lares-home", "--host", "0.0.0.0"], "--allow-host"),
    (["serve-home", "lares-home", "--port", "100939"], "0 to 65535"),
    (["serve-home", "lares-home", "--token", "short"], "at least 16"),
    (["serve-home", "lares-home", "--token-for", "guest"], "SOURCE=TOKEN"),
    (["serve-home", "lares-home", "--clock", "local", "--time-of-day", "4am"], "--clock local"),
    (["serve-home", "lares-home", "--time-of-day", "teatime"], "teatime"),
    (["serve-model", "--port", "-1"], "0 to 65535"),
    (["serve-model", "--host", "0.0.0.0", "--allow-host", "models.local"], "token"),
])
def test_a_door_that_may_not_open_exits_2_with_a_sentence(args, said):
    done = lares(*args)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------ bombs and slow clients
def test_a_chunked_body_bomb_is_refused_while_it_arrives(townhouse):
    # 150 MB announced nowhere: the guard counts while reading, answers 413 and closes -- long before the end.
    head = (f"POST /call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {townhouse.token}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    chunk = b"%x\r\n" % (1 << 20) + b"[" * (1 << 20) + b"\r\n"
    sent = 0
    with socket.create_connection(townhouse.address, timeout=20) as sock:
        sock.sendall(head)
        try:
            while sent < 150 << 20:
                sock.sendall(chunk)
                sent += 1 << 20
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(5)
        try:
            reply = sock.recv(65536)
        except OSError:
            reply = b""
    assert sent < 64 << 20, f"the server took {sent >> 20} MB before refusing"
    assert reply == b"" or reply.startswith(b"HTTP/1.1 413")


def test_an_announced_body_bomb_and_a_depth_bomb_get_one_sentence(townhouse):
    auth = f"Authorization: Bearer {townhouse.token}\r\nContent-Type: application/json\r\n"
    status, body = raw(townhouse, (f"POST /call HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Length: {150 << 20}"
                                   "\r\n\r\n").encode())
    assert status == 413 and json.loads(body)["error"].startswith("A request body is at most")
    deep = b"[" * 30_000 + b"]" * 30_000
    for path in ("/call", "/mcp"):
        status, body = raw(townhouse, (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Length: "
                                       f"{len(deep)}\r\n\r\n").encode() + deep)
        assert status == 400 and "nests deeper than" in json.loads(body)["error"]
    assert json_depth(deep) == 30_000


def test_slow_clients_are_dropped_and_live_streams_are_not():
    service = HomeService(load_world("lares-home"))
    with HomeServer(service, port=0, limits=ServerLimits(read_timeout=1.0)) as server:
        async def slow(what: bytes) -> tuple[bytes, float]:
            reader, writer = await asyncio.open_connection(*server.address)
            start = time.monotonic()
            writer.write(what)
            try:
                reply = await asyncio.wait_for(reader.read(4096), 30)
            finally:
                writer.close()
            return reply, time.monotonic() - start

        async def crowd() -> list[tuple[bytes, float]]:
            partial_headers = b"GET /world HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
            partial_body = (f"POST /call HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token}\r\n"
                            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{").encode()
            return await asyncio.gather(*(slow(partial_headers if i % 2 else partial_body) for i in range(200)))

        with httpx.stream("GET", server.link("/events"), timeout=30) as stream:  # a live stream, held open
            lines = stream.iter_lines()
            assert next(lines) == "event: hello"
            results = anyio.run(crowd)
            service.call("set_light", {"light_id": "kitchen-light", "on": True})  # after the crowd was dropped
            assert next(line for line in lines if line.startswith("data:") and "kitchen-light" in line)
        assert httpx.get(server.base_url + "/world", headers=server.headers, timeout=10).status_code == 200
    assert all(reply.startswith(b"HTTP/1.1 408") for reply, _ in results)
    assert max(seconds for _, seconds in results) < 20  # within the read deadline, give or take a busy machine


def test_an_event_stream_that_falls_behind_is_ended_not_buffered():
    from starlette.requests import Request

    from lares_kit.serve.app import _Events

    service = HomeService(load_world("lares-home"))

    async def lag() -> list[str]:
        events = _Events(service, queue_size=5)
        response = await events.stream(Request({"type": "http", "method": "GET", "headers": []}))
        stream = response.body_iterator
        kinds = [(await stream.__anext__())["event"]]  # hello
        for _ in range(50):  # fifty changes while the client reads nothing
            service.call("toggle_light", {"light_id": "kitchen-light"})
        await asyncio.sleep(0.1)  # the offers, made thread-safe, run now
        async for event in stream:
            kinds.append(event["event"])
        return kinds

    kinds = asyncio.run(lag())
    assert kinds == ["hello"] + ["device"] * 5 + ["lagged"]


# ------------------------------------------------------------ the clock every door reads
def test_a_served_homes_clock_is_the_gates_and_mqtt_defaults_to_the_machines():
    args = argparse.Namespace(world="shared-house", seed=None, tools="lares", source="owner", clock=None,
                              time_of_day=None, mqtt=None)
    assert _service(args).home.clock.kind == "simulated"
    assert _service(argparse.Namespace(**{**vars(args), "mqtt": "127.0.0.1:1883"})).home.clock.kind == "local"
    fixed = _service(argparse.Namespace(**{**vars(args), "time_of_day": "03:05"}))
    assert fixed.home.clock.kind == "fixed"
    # at 03:05 the untrusted "mqtt" source may change nothing; the owner may
    refused = fixed.command("oven", {"on": True}, source="mqtt")
    assert not refused.ok and "at night" in refused.text and not fixed.home.devices["oven"].state["on"]
    assert fixed.call("set_device", {"device_id": "oven", "attribute": "on", "value": True}).ok


def test_mqtt_at_night_on_the_machines_clock_switches_nothing_on():
    from lares_kit.serve.broker import LocalBroker, NoBroker
    from lares_kit.serve.mqtt import MqttBridge

    try:
        broker = LocalBroker.start()
    except NoBroker as missing:
        pytest.skip(str(missing))
    home = load_world("shared-house")
    home.clock = Clock.local(now=lambda: datetime(2026, 1, 1, 3, 5))  # the machine says 03:05
    service = HomeService(home)
    import paho.mqtt.client as mqtt

    heard: dict[str, str] = {}
    try:
        with MqttBridge.connect(service, broker.address):
            sender = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
            sender.on_message = lambda c, u, m: heard.update({m.topic: m.payload.decode()})
            sender.connect("127.0.0.1", broker.port)
            sender.subscribe("lares/shared-house/+/error")
            sender.loop_start()
            for device in ("oven", "stove"):
                sender.publish(f"lares/shared-house/{device}/set", "ON")
            deadline = time.monotonic() + 20
            while len(heard) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            sender.loop_stop()
            sender.disconnect()
    finally:
        broker.close()
    assert not home.devices["oven"].state["on"] and not home.devices["stove"].state["on"]
    assert all("at night" in said for said in heard.values()) and len(heard) == 2


def test_the_command_line_says_which_clock_and_token_it_runs_on():
    server = subprocess.Popen([sys.executable, "-m", "lares_kit", "serve-home", "shared-house", "--time-of-day",
                               "03:05", "--token-for", "guest=" + GUEST], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        banner = []
        while not banner or "clock:" not in banner[-1]:  # the banner ends with the clock it runs on
            banner.append(server.stdout.readline())
            assert banner[-1], server.stderr.read()
    finally:
        server.terminate()
        server.wait(timeout=30)
    text = "".join(banner)
    assert "token: " in text and "speaks as owner" in text and "speaks as guest" in text and GUEST not in text
    assert "clock: fixed at 03:05" in text
