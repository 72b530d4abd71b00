"""`lares serve-model`: the offline model over real HTTP on loopback, driven by the real SDK."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest

from lares_kit import load_world
from lares_kit.models.server import ModelServer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def server():
    with ModelServer(port=0) as running:
        yield running


def _post(url, data: bytes, content_type="application/json"):
    request = urllib.request.Request(url, data=data, headers={"content-type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_models_endpoint(server):
    assert server.address[0] == "127.0.0.1" and server.address[1] > 0
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list().data] == ["offline"]


def test_three_scenarios_over_http(server):
    from test_offline_scenarios import drive

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
    r = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                       tools=box.schemas(), tool_choice={"type": "function", "function": {"name": "move_robot"}})
    assert r.model == "gpt-4o-mini" and r.choices[0].message.tool_calls[0].function.name == "move_robot"


@pytest.mark.parametrize("raw,param", [
    (b"{not json", None),
    (b'{"model": "offline"}', "messages"),
    (b'{"model": "offline", "messages": []}', "messages"),
    (json.dumps({"model": "offline", "messages": [{"role": "user", "content": "x"}],
                 "tools": [{"type": "function", "function": {"name": "halt"}}],
                 "tool_choice": {"type": "function", "function": {"name": "fly"}}}).encode(), "tool_choice"),
])
def test_bad_requests_get_400(server, raw, param):
    status, body = _post(server.base_url + "/chat/completions", raw)
    assert status == 400
    assert set(body["error"]) == {"message", "type", "param", "code"} and body["error"]["param"] == param


def test_sdk_maps_400_to_bad_request_error(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="offline", messages=[])
    assert info.value.body["param"] == "messages"


def test_unknown_path_is_404(server):
    status, body = _post(server.base_url + "/embeddings", b"{}")
    assert status == 404 and body["error"]["code"] == "unknown_url"


def test_intercept_answers_first_and_latency_waits():
    calls = []

    def busy(method, path, body):
        calls.append(path)
        if len(calls) == 1:
            return 429, {"content-type": "application/json"}, json.dumps(
                {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}}).encode()
        return None

    with ModelServer(port=0, intercept=busy, latency=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.models.list()
        start = time.perf_counter()
        client.models.list()
        assert time.perf_counter() - start >= 0.2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_serve_model():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "lares_kit.cli", "serve-model", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "Serving the offline model" in proc.stdout.readline()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        reply = client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hello"}])
        assert "rule-based teaching stand-in" in reply.choices[0].message.content
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_serve_model_port_in_use(server):
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli", "serve-model", "--port", str(server.address[1])],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--port" in proc.stderr
