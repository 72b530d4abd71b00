"""Every agent against a real server: llama.cpp's own (``python -m llama_cpp.server``) with the bundled SmolLM2.

The server is started once for the module, on a free loopback port, with
the recipe of ``docs/models.md``: the GGUF's own chat template (no
``--chat_format``: ``chatml-function-calling`` HTML-escapes every message
and drops ``role: "tool"`` content), ``--n_ctx 8192`` (the default 2,048 is
too small for a prompt with the home in it), 1 thread and a fixed seed. The
toolkit is told what it talks to with ``LARES_SERVER=llamacpp``.

What is asserted is the protocol, not the 135M model's skill: the server's
access log holds no 4xx or 5xx answer, every episode ends with an honest
status (``done``, ``step_limit``, ``no_answer``, or ``model_error`` with one
sentence), and ``lares run`` exits 0, or 1 for ``model_error``. The three
Lares scenarios run end to end; whether the small model gets them right is
printed (``-s``), not required.

Marked ``local`` (needs the ``[local]`` extra: ``make local``) and ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from installs import stop  # tests/installs.py

from lares_kit.models.local.llama import local_available
from lares_kit.run_context import RunContext

ROOT = Path(__file__).resolve().parents[2]
REASON = local_available()
pytestmark = [pytest.mark.local, pytest.mark.slow,
              pytest.mark.skipif(REASON is not None, reason="needs the [local] extra: make local")]

MODEL = "smollm2"  # any name: the server has one model
KITCHEN = "turn on the light in the kitchen"
STATUSES = {"done", "step_limit", "no_answer", "model_error"}
ACCESS = re.compile(r'"(?:GET|POST) (\S+) HTTP/[\d.]+" (\d{3})')  # uvicorn's access line


class LlamaServer:
    """llama.cpp's server on a free loopback port; its stderr (the access log) in a file."""

    def __init__(self, log: Path) -> None:
        from lares_kit.models.local.llama import gguf_path

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.log = log
        # The recipe of docs/models.md; --seed so a run repeats; one thread: the suite's other worker has a core.
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--host", "127.0.0.1",
               "--port", str(self.port), "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "1",
               "--seed", "0"]
        with open(log, "wb") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self) -> None:
        import httpx

        for _ in range(240):  # polled with sleep: a timed Event.wait never ends under faketime
            assert self.process.poll() is None, f"llama_cpp.server exited:\n{self.log.read_text()[-3000:]}"
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise AssertionError("llama_cpp.server did not start listening within 120 s")

    def answers(self) -> list[tuple[str, int]]:
        """(path, status) of every request answered so far, oldest first."""
        return [(m[1], int(m[2])) for m in ACCESS.finditer(self.log.read_text(errors="replace"))]

    def stop(self) -> None:
        stop(self.process)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    llama = LlamaServer(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        llama.wait_ready()
        yield llama
    finally:
        llama.stop()


@pytest.fixture(scope="module")
def measured():
    """Per run: (name, chat requests, 4xx/5xx answers, seconds, status); printed at the end of the module."""
    rows: list[tuple[str, int, int, float, str]] = []
    yield rows
    print("\nllama.cpp server (SmolLM2-135M, n_ctx 8192, 1 thread):")
    for name, requests, errors, seconds, status in rows:
        print(f"  {name:28s} {requests:3d} requests  {errors} 4xx/5xx  {seconds:6.1f} s  {status}")


def chat_answers(server: LlamaServer, since: int) -> list[int]:
    return [status for path, status in server.answers()[since:] if path.endswith("/chat/completions")]


def honest(status: str, final_message: str) -> None:
    assert status in STATUSES, status
    assert final_message.strip(), "an episode ends with a message"
    if status == "model_error":
        assert "\n" not in final_message and "Traceback" not in final_message, final_message


@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react", "sage"])
def test_every_agent_runs_on_llama_cpp_server_with_no_http_error(server, measured, agent):
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "unused",
           "LARES_SERVER": "llamacpp", "LARES_PROGRESS": "0"}
    world = ["--world", "sage-home"] if agent == "sage" else []
    # react's Thought is free text (up to its max_tokens) and its Action grammar-constrained, which decodes at a
    # few tokens a second on 2 busy cores: one step of it is enough to check the protocol.
    steps = "1" if agent == "react" else "2"
    cmd = [sys.executable, "-m", "lares_kit.cli.commands", "run", KITCHEN, "--agent", agent, "--model", MODEL,
           "--max-steps", steps, "--json", *world]
    since, start = len(server.answers()), time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False,
                          stdin=subprocess.DEVNULL)
    seconds, answers = time.perf_counter() - start, chat_answers(server, since)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    result = json.loads(done.stdout)
    measured.append((agent, len(answers), sum(s >= 400 for s in answers), seconds, result["status"]))
    assert [s for s in answers if s >= 400] == [], f"the server refused requests: {answers}"
    assert answers, "the agent asked the server"  # (a request the client gave up on is answered later)
    honest(result["status"], result["final_message"])
    assert done.returncode == (1 if result["status"] == "model_error" else 0)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["kitchen", "dog", "daytime"])
def test_the_lares_scenarios_run_end_to_end(server, measured, name):
    from lares_kit import load_world, run_agent
    from lares_kit.agents.scenarios import LARES_SCENARIOS
    from lares_kit.models import make_client
    from lares_kit.tools.users import ScriptedUser

    # two steps: the second request carries the first call and its result (what the server must accept)
    scenario = next(s for s in LARES_SCENARIOS if s.name == name)
    client = make_client(MODEL, api_key="unused", base_url=server.base_url, max_retries=0, timeout=300)
    since, start = len(server.answers()), time.perf_counter()
    episode = run_agent(scenario.instruction, load_world("lares-home", seed=scenario.seed), model=MODEL,
                        client=client, user=ScriptedUser(answers=list(scenario.answers)), max_steps=2,
                        context=RunContext(server="llamacpp"))
    seconds, answers = time.perf_counter() - start, chat_answers(server, since)
    success = scenario.check(episode)
    measured.append((f"scenario {name} ({'passed' if success else 'failed'})", len(answers),
                     sum(s >= 400 for s in answers), seconds, episode.status))
    assert [s for s in answers if s >= 400] == [], answers
    honest(episode.status, episode.final_message)


def test_a_forced_call_comes_back_valid_with_an_empty_content_history(server):
    # The two things the recipe is for, by hand: a forced call is constrained to the schema, and a history
    # with a tool call (content "") and its result is accepted and reaches the model.
    from lares_kit.models import make_client
    from lares_kit.models.local.llama import argument_problem

    set_light = {"type": "function", "function": {
        "name": "set_light", "description": "Switch a light on or off.",
        "parameters": {"type": "object", "required": ["light_id", "on"], "properties": {
            "light_id": {"type": "string", "enum": ["kitchen-light", "office-light"]}, "on": {"type": "boolean"}}}}}
    client = make_client(MODEL, api_key="unused", base_url=server.base_url, max_retries=0, timeout=300)
    user = [{"role": "user", "content": KITCHEN}]
    reply = client.chat.completions.create(model=MODEL, messages=user, tools=[set_light], temperature=0,
                                           tool_choice={"type": "function", "function": {"name": "set_light"}},
                                           max_tokens=64)
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "set_light"
    assert argument_problem(set_light["function"]["parameters"], json.loads(call.function.arguments)) is None
    history = [*user, {"role": "assistant", "content": "", "tool_calls": [call.model_dump()]}]
    result = {"role": "tool", "tool_call_id": call.id, "content": "The Kitchen light (kitchen-light) is now on."}
    without = client.chat.completions.create(model=MODEL, messages=history, max_tokens=1, temperature=0)
    with_result = client.chat.completions.create(model=MODEL, messages=[*history, result], max_tokens=1,
                                                 temperature=0)
    assert with_result.usage.prompt_tokens > without.usage.prompt_tokens + 10  # the tool result is in the prompt
