"""The Wyoming door of ``lares serve-home`` (lares_kit.serve.wyoming_door), as Home Assistant reaches it.

One server runs for the module; the wyoming library's own AsyncTcpClient talks to it, as Home Assistant's
Wyoming integration does: describe, synthesize, transcribe, handle, and what a careless or hostile client sends.
"""

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("wyoming")
pytest.importorskip("pocketsphinx")

from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.error import Error  # noqa: E402
from wyoming.handle import Handled, NotHandled  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402
from wyoming.tts import Synthesize, SynthesizeVoice  # noqa: E402

from lares_kit.voice.audio import MAX_SECONDS  # noqa: E402
from lares_kit.voice.speech import VOICES, speaker_missing  # noqa: E402

pytestmark = pytest.mark.skipif(speaker_missing() is not None, reason="espeak-ng is not installed")
COMMAND = "turn on the light in the kitchen"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lares_kit", "serve-home", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.fixture(scope="module")
def served():
    """``lares serve-home lares-home --wyoming PORT``: yields (process, wyoming port, http base, token)."""
    port = free_port()
    server = start("lares-home", "--wyoming", str(port))
    try:
        lines = []
        for line in iter(server.stdout.readline, ""):
            lines.append(line)
            if "Wyoming:" in line:
                break
        text = "".join(lines)
        assert f"tcp://127.0.0.1:{port}" in text and "speaks as voice" in text, text + server.stderr.read()
        base = text.split(" at ")[1].split()[0]
        token = next(line for line in lines if "token:" in line).split()[1]
        yield server, port, base, token
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


def talk(port: int, *events, until=("transcript", "handled", "not-handled", "error", "info", "audio-stop")):
    """Send events through the wyoming client; return what came back up to the first event of a type in ``until``."""

    async def run():
        got = []
        async with AsyncTcpClient("127.0.0.1", port) as client:
            for event in events:
                await client.write_event(event.event() if hasattr(event, "event") else event)
            while (event := await asyncio.wait_for(client.read_event(), 30)) is not None:
                got.append(event)
                if event.type in until:
                    break
        return got

    return asyncio.run(run())


def world(base: str, token: str) -> dict:
    request = urllib.request.Request(f"{base}/world", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def kitchen_light(base: str, token: str) -> bool:
    known = world(base, token)
    return next(d["state"] for r in known["rooms"] for d in r["devices"] if d["id"] == "kitchen-light")["on"]


def test_describe_names_the_three_programs(served):
    _, port, _, _ = served
    (event,) = talk(port, Describe())
    info = Info.from_event(event)
    (asr,), (tts,), (handle,) = info.asr, info.tts, info.handle
    assert asr.name == "pocketsphinx" and [m.name for m in asr.models] == ["home", "general"]
    assert all(m.languages == ["en"] for m in asr.models)
    assert tts.name == "espeak-ng" and [v.name for v in tts.voices] == [v for vs in VOICES.values() for v in vs]
    assert handle.models[0].name == "lares-home"
    for program in (asr, tts, handle):
        assert program.installed and program.version and program.attribution.url.startswith("https://")


def test_synthesized_speech_comes_back_as_the_same_words_and_the_agent_acts_on_them(served):
    _, port, base, token = served
    said = talk(port, Synthesize(text=COMMAND, voice=SynthesizeVoice(name="en-us")))
    assert [e.type for e in (said[0], said[-1])] == ["audio-start", "audio-stop"]
    start = AudioStart.from_event(said[0])
    assert (start.rate, start.width, start.channels) == (16_000, 2, 1)
    audio = b"".join(AudioChunk.from_event(e).audio for e in said[1:-1])
    assert len(audio) > 16_000  # more than half a second of speech

    # Home Assistant sends the microphone's own shape: here 16 kHz, as 2 s chunks of stereo upsampled by the client
    stereo = b"".join(audio[i:i + 2] * 2 for i in range(0, len(audio), 2))
    chunks = [AudioChunk(rate=16_000, width=2, channels=2, audio=stereo[i:i + 8192])
              for i in range(0, len(stereo), 8192)]
    (heard,) = talk(port, Transcribe(name="home"), AudioStart(rate=16_000, width=2, channels=2), *chunks, AudioStop())
    assert Transcript.from_event(heard).text == COMMAND

    assert kitchen_light(base, token) is False
    (done,) = talk(port, Transcript(text=COMMAND))
    assert Handled.is_type(done.type), done
    assert "on" in Handled.from_event(done).text.lower()
    assert kitchen_light(base, token) is True  # the same home the HTTP door serves


def test_silence_and_nonsense_are_nothing_to_do(served):
    _, port, _, _ = served
    (heard,) = talk(port, AudioStart(rate=16_000, width=2, channels=1),
                    AudioChunk(rate=16_000, width=2, channels=1, audio=bytes(32_000)), AudioStop())
    assert Transcript.from_event(heard).text == ""
    (answer,) = talk(port, Transcript(text=""))
    assert NotHandled.is_type(answer.type) and NotHandled.from_event(answer).text


def test_malformed_events_and_oversize_audio_close_only_that_connection(served):
    server, port, _, _ = served
    bad = [b"this is not json\n", b'{"type": 5}\n', b'{"type": "no-such-event"}\n',
           b'{"type": "audio-chunk", "data": {"rate": 16000, "width": 2, "channels": 1}, "payload_length": 4}\n1234',
           b'{"type": "audio-start", "data": {"rate": "fast", "width": 2, "channels": 1}}\n',
           b'{"type": "synthesize", "data": {"text": 7}}\n',
           b'{"type": "audio-chunk", "payload_length": 99999999999}\n',
           b'{"type": "describe", "data_length": 5}\n[1,2]',
           b"x" * 100_000 + b"\n"]
    for garbage in bad:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(garbage)
            raw.settimeout(10)
            rest = b""
            while chunk := raw.recv(65536):  # the server hangs up
                rest += chunk
            assert b"info" not in rest
    second = AudioChunk(rate=16_000, width=2, channels=1, audio=bytes(32_000))  # one second each
    events = [AudioStart(rate=16_000, width=2, channels=1)] + [second] * (int(MAX_SECONDS) + 2) + [AudioStop()]
    got = talk(port, *events)
    assert got and Error.is_type(got[-1].type) and "at most" in Error.from_event(got[-1]).text
    assert Info.is_type(talk(port, Describe())[0].type)  # still serving
    assert server.poll() is None


def test_a_host_beyond_loopback_is_refused_with_one_sentence():
    done = subprocess.run([sys.executable, "-m", "lares_kit", "serve-home", "lares-home", "--wyoming",
                           "0.0.0.0:10300"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "loopback only" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_server_stops_within_2_s_of_sigint_with_a_client_connected():
    port = free_port()
    server = start("lares-home", "--wyoming", str(port))
    try:
        for line in iter(server.stdout.readline, ""):
            if "Wyoming:" in line:
                break
        held = socket.create_connection(("127.0.0.1", port))
        held.sendall(b'{"type": "audio-start", "data": {"rate": 16000, "width": 2, "channels": 1}}\n')
        time.sleep(0.2)
        began = time.perf_counter()
        os.kill(server.pid, signal.SIGINT)
        assert server.wait(timeout=30) == 0 and time.perf_counter() - began < 2.0
        held.close()
    finally:
        server.kill()
        server.wait()
