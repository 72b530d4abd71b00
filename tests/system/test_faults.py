"""The faulty endpoint: 429s, 500s, timeouts and dropped connections over real HTTP on loopback.

Each test starts the offline model's server itself on a free loopback port
(``port=0``) with a :class:`~lares_kit.models.serving.server.Faults` intercept, and
drives it with the real ``openai`` client from
:func:`~lares_kit.models.make_client`-style settings. What is checked: the
client retries what is worth retrying, an agent gives up with the status
``model_error`` and the error's text, the benchmark keeps going and records
the failure, and a resumed benchmark re-runs only what failed. The last tests
run ``lares serve-model --fault-rate ...`` as a child process, and stop it
with Ctrl-C (SIGINT) with a connection held open: it exits within 2 s.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import openai
import pytest

from lares_kit import load_world, run_agent
from lares_kit.bench.runner import run_bench
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.models.serving.server import Faults, ModelServer

INSTRUCTION = "turn on the light in the kitchen"


def client_for(server: ModelServer, max_retries: int = 2, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=max_retries, timeout=timeout)


def run(client: openai.OpenAI):
    home = load_world("lares-home")
    return run_agent(INSTRUCTION, home, agent="function-calling", client=client, model="offline"), home


@pytest.mark.parametrize("kind", ["500", "drop", "429"])
def test_a_passing_fault_is_retried_and_the_episode_succeeds(kind):
    faults = Faults(rate=1.0, kinds=(kind,), limit=1, retry_after=0.3)
    with ModelServer(port=0, intercept=faults) as server:
        start = time.perf_counter()
        episode, home = run(client_for(server))
    assert episode.status == "done" and home.devices["kitchen-light"].state == {"on": True}
    assert faults.log == [(1, kind)] and faults.requests == 3  # the failed request, its retry, then halt
    if kind == "429":
        assert time.perf_counter() - start >= 0.3  # Retry-After was honoured


@pytest.mark.parametrize(("kind", "text"), [("500", "InternalServerError"), ("429", "RateLimitError"),
                                            ("drop", "APIConnectionError")])
def test_a_lasting_fault_ends_with_model_error_after_the_retries(kind, text):
    faults = Faults(rate=1.0, kinds=(kind,), retry_after=0.05)
    with ModelServer(port=0, intercept=faults) as server:
        episode, home = run(client_for(server, max_retries=2))
    assert episode.status == "model_error" and text in episode.error
    assert faults.requests == 3  # one try and two retries, then the client gives up
    assert episode.final_message.startswith("Stopped: the model call failed")
    assert home.devices["kitchen-light"].state == {"on": False}


def test_a_timeout_is_retried_then_given_up():
    faults = Faults(rate=1.0, kinds=("timeout",), hang=1.5)
    with ModelServer(port=0, intercept=faults) as server:
        start = time.perf_counter()
        episode, _ = run(client_for(server, max_retries=1, timeout=0.4))
        elapsed = time.perf_counter() - start
    assert episode.status == "model_error" and "APITimeoutError" in episode.error
    assert faults.requests == 2 and elapsed < 3  # two tries of 0.4 s each (plus backoff), not two hangs


def test_the_benchmark_records_failures_and_a_resume_reruns_only_them(tmp_path):
    tasks = [t for t in load_suite("lares-home") if t.category == "direct" and not t.held_out]
    faults = Faults(rate=1.0, kinds=("500",), limit=2)  # the first two requests fail: two episodes of three
    with ModelServer(port=0, intercept=faults) as server:
        first = run_bench(tasks, agents=["function-calling"], models=["offline"], runs=tmp_path,
                          clients={"offline": client_for(server, max_retries=0)})
    failed = [r["task"] for r in first.records if r["error"]]
    assert failed and len(failed) < len(tasks)  # some episodes failed, and the others still ran
    assert all("InternalServerError" in r["error"] and r["status"] == "model_error" for r in first.records
               if r["error"])
    saved = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(saved) == len(tasks)  # the failures are on disk too, with their error
    assert sorted(r["task"] for r in saved if r["error"]) == sorted(failed)

    with ModelServer(port=0) as healthy:
        second = run_bench(tasks, agents=["function-calling"], models=["offline"], runs=tmp_path,
                           clients={"offline": client_for(healthy)})
    assert second.resumed == len(tasks) - len(failed)
    assert all(r["error"] is None and r["success"] for r in second.records)
    rerun = [r["task"] for r in second.records if r["seconds"] and r["task"] in failed]
    assert sorted(rerun) == sorted(failed)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_model_with_fault_flags():
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "lares_kit.cli.commands", "serve-model", "--port", str(port),
                               "--fault-rate", "1", "--faults", "500", "--fault-seed", "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        banner = [server.stdout.readline() for _ in range(3)]
        assert "Injecting faults into 100% of chat completions: 500" in "".join(banner)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=1, timeout=5)
        assert client.models.list().data[0].id == "offline"  # only chat completions are broken
        with pytest.raises(openai.InternalServerError, match="injected fault"):
            client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
        held = socket.create_connection(("127.0.0.1", port))  # a keep-alive connection left open
        held.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        held.recv(65536)
        start = time.perf_counter()
        os.kill(server.pid, signal.SIGINT)
        code = server.wait(timeout=30)
        assert code == 0 and time.perf_counter() - start < 2.0  # the promise (docs/models.md): stopped within 2 s
        held.close()
    finally:
        server.kill()
        server.wait()


def test_bad_fault_flags_exit_2():
    done = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "serve-model", "--port", "0", "--fault-rate",
                           "0.5", "--faults", "500,gremlins"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "unknown faults gremlins" in done.stderr
