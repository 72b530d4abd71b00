"""Record once, replay for the class: `--record DIR` keeps every request and reply, `--model replay:DIR` answers
from them with no model and no key (lares_kit.models.recording.replay and .recording)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from lares_kit import load_world, run_agent
from lares_kit.cli.commands import main
from lares_kit.errors import LaresError
from lares_kit.models import make_client
from lares_kit.models.local.llama import local_available
from lares_kit.models.recording.replay import record_client
from lares_kit.models.recording.sessions import NotRecorded, Recorder, Recording, request_key
from lares_kit.models.transport import httpx

ROOT = Path(__file__).resolve().parents[2]
DOG = "turn on the light for my dog"
LOCAL_REASON = local_available()


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    for name in ("OPENAI_API_KEY", "LARES_MODEL", "LARES_EXECUTOR_MODEL", "LARES_SERVER", "LARES_CHAOS_SEED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


def lares(capsys, *argv: str) -> tuple[int, str, str]:
    """`lares ARGV` in this process: (exit status, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def lares_elsewhere(cwd: Path, *argv: str, env: dict[str, str] | None = None,
                    prelude: str = "") -> subprocess.CompletedProcess:
    """`lares ARGV` in a new process with no key and no LARES_MODEL (``prelude`` runs first, e.g. to hide a module)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LARES_MODEL")}
    code = f"{prelude}\nimport sys\nfrom lares_kit.cli.commands import main\nsys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**clean, "LARES_PROGRESS": "0", "TQDM_DISABLE": "1", **(env or {})})


def forbid_models(monkeypatch):
    """Any model answering (offline, chaos around it, local) fails the test: a replay must build none."""
    def refuse(*args, **kw):
        raise AssertionError("a model was asked under replay")

    monkeypatch.setattr("lares_kit.models.transport.OfflineTransport.handle_request", refuse)
    monkeypatch.setattr("lares_kit.models.faults.chaos.ChaosTransport.handle_request", refuse)
    monkeypatch.setattr("lares_kit.models.serving.wire.handle", refuse)
    monkeypatch.setattr("lares_kit.models.local.wire.LocalTransport.handle_request", refuse)


# ------------------------------------------------------------ lares run

@pytest.mark.parametrize("model,how", [("offline", "--model"), ("chaos:offline@0.3", "LARES_MODEL")])
def test_a_recorded_run_replays_the_same_json_in_a_process_with_no_key(capsys, tmp_path, model, how):
    code, recorded, err = lares(capsys, "run", DOG, "--model", model, "--record", str(tmp_path / "rec"), "--json")
    assert code == 0 and err.startswith("recorded ") and json.loads(recorded)["model"] == model
    if how == "--model":
        done = lares_elsewhere(tmp_path, "run", DOG, "--model", "replay:rec", "--json")
    else:  # LARES_MODEL names the recording as well as --model does
        done = lares_elsewhere(tmp_path, "run", DOG, "--json", env={"LARES_MODEL": "replay:rec"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == recorded  # the same episode, to the byte: model name, steps, usage, state
    assert done.stderr.startswith("replayed ") and "no model was called" in done.stderr


def test_replay_asks_no_model(capsys, tmp_path, monkeypatch):
    rec = tmp_path / "rec"
    code, recorded, _ = lares(capsys, "run", DOG, "--model", "chaos:offline@0.3", "--record", str(rec), "--json")
    text = lares(capsys, "run", DOG, "--model", "chaos:offline@0.3", "--record", str(tmp_path / "text"))[1]
    forbid_models(monkeypatch)
    code, replayed, err = lares(capsys, "run", DOG, "--model", f"replay:{rec}", "--json")
    assert code == 0 and replayed == recorded, err
    assert lares(capsys, "run", DOG, "--model", f"replay:{tmp_path / 'text'}")[1] == text  # the transcript too


def test_react_with_its_executor_model_replays(capsys, tmp_path, monkeypatch):
    rec = tmp_path / "rec"
    argv = ["run", DOG, "--agent", "react", "--json"]
    code, recorded, _ = lares(capsys, *argv, "--executor-model", "chaos:offline@0.5", "--record", str(rec))
    assert Recording(rec).manifests[0]["models"] == ["offline", "chaos:offline@0.5"]
    forbid_models(monkeypatch)
    assert lares(capsys, *argv, "--model", f"replay:{rec}")[1] == recorded


@pytest.mark.local
@pytest.mark.slow
@pytest.mark.skipif(LOCAL_REASON is not None, reason="needs the [local] extra: make local")
def test_the_local_model_recorded_replays_where_it_is_not_installed(capsys, tmp_path):
    argv = ["run", "turn on the light in the kitchen", "--json"]
    code, recorded, _ = lares(capsys, *argv, "--model", "local", "--record", str(tmp_path / "rec"))
    assert code == 0 and json.loads(recorded)["model"] == "local"
    hidden = "import sys\nsys.modules['llama_cpp'] = None  # importing llama.cpp now fails: the extra is not there"
    done = lares_elsewhere(tmp_path, *argv, "--model", "replay:rec", prelude=hidden)
    assert done.returncode == 0, done.stderr
    assert done.stdout == recorded


# ------------------------------------------------------------ lares bench

def test_a_recorded_bench_replays_the_same_results(capsys, tmp_path):
    argv = ["bench", "--suite", "lares-home", "--limit", "3", "--agent", "intent-action", "--trials", "2"]
    code, out, _ = lares(capsys, *argv, "--model", "chaos:offline@0.3", "--model", "offline",
                         "--record", str(tmp_path / "rec"), "--json", str(tmp_path / "a.json"), "--runs",
                         str(tmp_path / "runs-a"))
    assert code == 0 and "requests in" in out
    assert Recording(tmp_path / "rec").manifests[0]["models"] == ["chaos:offline@0.3", "offline"]
    done = lares_elsewhere(tmp_path, *argv, "--model", "replay:rec", "--json", "b.json", "--runs", "runs-b")
    assert done.returncode == 0, done.stderr
    assert "no model was called" in done.stdout

    def kept(value):  # everything but the wall-clock times
        if isinstance(value, dict):
            return {k: kept(v) for k, v in value.items() if k != "seconds"}
        return [kept(v) for v in value] if isinstance(value, list) else value

    recorded, replayed = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    assert {r["model"] for r in replayed["results"]} == {"chaos:offline@0.3", "offline"}
    assert kept(replayed) == kept(recorded)
    # Recording changes nothing: the chaos model breaks the same replies, seeded per episode, as it does unrecorded.
    code, out, _ = lares(capsys, *argv, "--model", "chaos:offline@0.3", "--model", "offline",
                         "--json", str(tmp_path / "c.json"), "--runs", str(tmp_path / "runs-c"))
    assert code == 0
    unrecorded = json.loads((tmp_path / "c.json").read_text())
    assert kept(unrecorded) == kept(recorded)


# ------------------------------------------------------------ a request that was not recorded

def test_a_changed_prompt_is_named_with_the_closest_recorded_request(capsys, tmp_path):
    rec = tmp_path / "rec"
    lares(capsys, "run", DOG, "--record", str(rec))
    code, out, err = lares(capsys, "run", "turn on the light for my cat", "--model", f"replay:{rec}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"lares: this request was not recorded in {rec}: the closest recorded request (#1 of 34, "
                          f"from `lares run '{DOG}'`) differs in messages[2].content: recorded "
                          "'turn on the light for my dog' vs now 'turn on the light for my cat'. "
                          "Record again with --record, or undo the change.")
    code, out, err = lares(capsys, "run", "turn on the light for my cat", "--model", f"replay:{rec}", "--json")
    assert code == 2 and json.loads(out)["status"] == "error" and "not recorded" in json.loads(out)["error"]


def test_in_python_the_episode_ends_with_the_sentence_and_no_other_model_answers(tmp_path, monkeypatch):
    folder = str(tmp_path / "rec")
    recorded = run_agent(DOG, load_world("lares-home"), client=make_client("offline", record=folder), model="offline")
    forbid_models(monkeypatch)
    replayed = run_agent(DOG, load_world("lares-home"), model=f"replay:{folder}")
    assert {**replayed.to_run_json(), "model": "offline"} == recorded.to_run_json()
    changed = run_agent(DOG, load_world("lares-home"), model=f"replay:{folder}", knowledge="none")
    assert changed.status == "model_error"
    assert changed.error.startswith(f"NotRecorded: this request was not recorded in {folder}: the closest recorded "
                                    "request (#1 of 34, recorded in Python with offline) differs in messages[3]")
    client = make_client(f"replay:{folder}")
    with pytest.raises(NotRecorded, match="differs in messages"):  # a LaresError, raised at once, never retried
        client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "hi"}])
    assert len(client.replay.missed) == 1


def test_a_long_prompt_shows_where_it_changed(tmp_path):
    text = "You control a home. " * 20
    rec = _recording(tmp_path, [({"messages": [{"role": "system", "content": text + "Be brief."}]}, "ok")])
    sentence = str(rec.closest("POST", "/chat/completions",
                               {"model": "offline", "messages": [{"role": "system", "content": text + "Be long."}]}))
    assert "differs in messages[0].content: recorded '... control a home. Be brief.' vs now " \
           "'... control a home. Be long.'" in sentence


# ------------------------------------------------------------ matching

def _completion(text: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "offline",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


def _recording(tmp_path: Path, exchanges: list[tuple[dict, str]]) -> Recording:
    recorder = Recorder(tmp_path / "rec", models=["offline"], base_url="http://offline.lares.invalid/v1/")
    for body, text in exchanges:
        recorder.add("POST", "/chat/completions", {"model": "offline", **body}, 200,
                     {"content-type": "application/json"}, _completion(text))
    recorder.close()
    return Recording(tmp_path / "rec")


def test_matching_ignores_the_runs_prompt_cache_key_and_nothing_else():
    body = {"model": "offline", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0, "seed": 1}
    key = request_key("POST", "/chat/completions", {**body, "prompt_cache_key": "lares-0a1b"})
    assert key == request_key("POST", "/chat/completions", {**body, "prompt_cache_key": "lares-ffff", "user": "u7"})
    for change in ({"seed": 2}, {"temperature": 0.5}, {"messages": []}, {"model": "gpt-4o-mini"}):
        assert request_key("POST", "/chat/completions", {**body, **change}) != key


def test_the_same_request_gets_its_replies_in_the_recorded_order_then_the_last_again(tmp_path):
    hi = {"messages": [{"role": "user", "content": "hi"}]}
    _recording(tmp_path, [(hi, "first"), ({"messages": []}, "other"), (hi, "second")])
    client = make_client(f"replay:{tmp_path / 'rec'}", max_retries=0)

    def ask(key: str) -> str:
        return client.chat.completions.create(model="offline", prompt_cache_key=key, **hi).choices[0].message.content

    assert [ask("lares-a"), ask("lares-b"), ask("lares-c"), ask("lares-d")] == ["first", "second", "second", "second"]
    fresh = make_client(f"replay:{tmp_path / 'rec'}")  # a new client starts from the beginning again
    assert fresh.chat.completions.create(model=f"replay:{tmp_path / 'rec'}", **hi).choices[0].message.content == "first"


def test_recording_twice_gives_the_same_files_with_no_run_ids(tmp_path):
    recorded = [run_agent(DOG, load_world("lares-home"), model="chaos:offline@0.3",
                          client=make_client("chaos:offline@0.3", record=tmp_path / name)).to_run_json()
                for name in ("one", "two")]
    assert recorded[0] == recorded[1]
    # the same lines but for the second each reply was made in (its "created")
    one, two = (re.sub(r'"created": \d+', '"created": T', (tmp_path / n / "session-0001.jsonl").read_text())
                for n in ("one", "two"))
    assert one == two and "prompt_cache_key" not in one and not re.search(r"lares-[0-9a-f]{32}", one)
    for name in ("one", "two"):  # either recording replays the episode
        replayed = run_agent(DOG, load_world("lares-home"), model=f"replay:{tmp_path / name}").to_run_json()
        assert {**replayed, "model": "chaos:offline@0.3"} == recorded[0]


def test_a_second_session_is_a_new_file_and_the_first_is_kept(tmp_path):
    folder = tmp_path / "rec"
    for _ in range(2):
        make_client("offline", record=folder).chat.completions.create(
            model="offline", messages=[{"role": "user", "content": "which lights are on?"}])
    first = (folder / "session-0001.jsonl").read_text()
    assert sorted(p.name for p in folder.iterdir()) == ["session-0001.jsonl", "session-0002.jsonl"]
    assert (folder / "session-0002.jsonl").read_text() == first
    rec = Recording(folder)
    assert len(rec.exchanges) == 2 and rec.where(1) == "#2 of 2, recorded in Python with offline"
    shared = Recorder(tmp_path / "shared")  # one session for several clients, each closed after its request
    for model in ("offline", "chaos:offline@0.2"):
        with make_client(model, record=shared) as client:
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    assert [p.name for p in (tmp_path / "shared").iterdir()] == ["session-0001.jsonl"]
    assert Recording(tmp_path / "shared").models == ["offline", "chaos:offline@0.2"]


def test_the_manifest_has_no_date_and_no_absolute_path(capsys, tmp_path):
    rec = tmp_path / "rec"
    lares(capsys, "run", "turn on the light in the kitchen", "--record", str(rec), "--memory", str(tmp_path / "m.db"))
    manifest = json.loads((rec / "session-0001.jsonl").read_text().splitlines()[0])
    assert manifest == {"recording": "lares_kit", "format": 1, "models": ["offline"],
                        "command": "lares run 'turn on the light in the kitchen' --memory m.db",
                        "lares_kit": manifest["lares_kit"], "base_url": "http://offline.lares.invalid/v1/"}


# ------------------------------------------------------------ failures, recorded and replayed

class _Flaky(httpx.BaseTransport):
    """A server that answers 429 once, then a completion; or refuses every connection."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse, self.calls = refuse, 0

    def handle_request(self, request):
        self.calls += 1
        if self.refuse:
            raise httpx.ConnectError("Connection refused", request=request)
        if self.calls == 1:
            return httpx.Response(429, headers={"retry-after": "30"}, request=request,
                                  json={"error": {"message": "slow down", "type": "rate_limit"}})
        return httpx.Response(200, json=_completion("fine"), request=request)


def _remote(transport, record) -> openai.OpenAI:
    from lares_kit.models.retries import LaresOpenAI

    client = LaresOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=1,
                         http_client=httpx.Client(transport=transport))
    client._sleep_for_retry = lambda **kw: None  # the recording run does not wait either
    return record_client(client, record, "gpt-test")


def test_a_rate_limit_and_a_refused_connection_replay_as_recorded_without_waiting(tmp_path):
    import time

    hi = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}
    assert _remote(_Flaky(), tmp_path / "ok").chat.completions.create(**hi).choices[0].message.content == "fine"
    with pytest.raises(openai.APIConnectionError):
        _remote(_Flaky(refuse=True), tmp_path / "down").chat.completions.create(**hi)
    start = time.perf_counter()
    replay = make_client(f"replay:{tmp_path / 'ok'}", max_retries=1)
    assert str(replay.base_url) == "http://127.0.0.1:9/v1/"  # the recorded client's: a remote model's profile
    assert replay.chat.completions.create(**hi).choices[0].message.content == "fine"  # 429, then the reply
    assert time.perf_counter() - start < 5  # the recorded Retry-After: 30 was not waited again
    with pytest.raises(openai.APIConnectionError):
        make_client(f"replay:{tmp_path / 'down'}", max_retries=1).chat.completions.create(**hi)


# ------------------------------------------------------------ bad folders

@pytest.mark.parametrize("model,said", [
    ("replay:", "a recording needs a folder: --record DIR to record, --model replay:DIR to replay it"),
    ("replay:nowhere", "there is no recording at nowhere: the folder does not exist. Record one with --record DIR"),
    ("replay:empty", "empty holds no recording (no session-*.jsonl file)"),
])
def test_a_replay_of_no_recording_says_so(capsys, tmp_path, monkeypatch, model, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    code, out, err = lares(capsys, "run", DOG, "--model", model)
    assert code == 2 and err.startswith(f"lares: {said}") and err.count("\n") == 1
    code, out, err = lares(capsys, "bench", "--suite", "lares-home", "--limit", "1", "--model", model)
    assert code == 2 and err.startswith(f"lares: {said}")


def test_recording_into_a_file_or_with_worker_processes_says_so(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = lares(capsys, "run", DOG, "--record", str(tmp_path / "file"))
    assert code == 2 and err == f"lares: cannot record into {tmp_path / 'file'}: it is a file, not a folder; give a " \
                                "folder (it is made if it does not exist)\n"
    code, _, err = lares(capsys, "bench", "--limit", "1", "--record", str(tmp_path / "rec"), "--executor", "processes")
    assert code == 2 and "leave --executor processes out" in err
    with pytest.raises(LaresError, match="sync client"):
        from lares_kit.models import make_async_client

        make_async_client(f"replay:{tmp_path}")


def test_a_model_over_http_is_recorded_and_replays_once_its_server_is_gone(capsys, tmp_path, monkeypatch):
    from lares_kit.models.retries import LaresOpenAI
    from lares_kit.models.serving.server import ModelServer

    server = ModelServer().start()  # the offline model on a loopback port: a remote endpoint to the client
    try:
        client = record_client(LaresOpenAI(api_key="unused", base_url=server.base_url, max_retries=0),
                               tmp_path / "rec", "offline")
        recorded = run_agent(DOG, load_world("lares-home"), model="offline", client=client).to_run_json()
    finally:
        server.stop()
    assert recorded["status"] == "done"
    assert Recording(tmp_path / "rec").manifests[0]["base_url"] == server.base_url + "/"
    forbid_models(monkeypatch)
    code, out, err = lares(capsys, "run", DOG, "--model", f"replay:{tmp_path / 'rec'}", "--json")
    assert code == 0, err
    assert json.loads(out) == recorded  # the same requests (a remote server's profile), the same replies
