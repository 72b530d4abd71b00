"""``lares serve-home WORLD --wyoming PORT``: the home's voice door, as Home Assistant's Wyoming integration uses it.

Wyoming is Home Assistant's voice protocol: JSON event lines over TCP, some followed by a payload (audio). The door
serves, in the one served home (:class:`~lares_kit.serve.service.HomeService`, so MCP, HTTP and MQTT see its changes):

* speech to text: ``transcribe`` (model ``home``, the home's grammar, the default; or ``general``, any English),
  ``audio-start``, ``audio-chunk``..., ``audio-stop`` -> ``transcript``. The audio, in the client's rate, width
  and channels, is wrapped in a WAV file that :func:`~lares_kit.voice.audio.read_wav` converts with sox;
* text to speech: ``synthesize`` -> ``audio-start``, ``audio-chunk``..., ``audio-stop`` (espeak-ng, 16 kHz mono);
* intent handling: a ``transcript`` -> the home's agent acts on it -> ``handled`` (its reply) or ``not-handled``;
* ``describe`` -> ``info``, ``ping`` -> ``pong``.

Wyoming has no authentication, by design: so the door listens on loopback only, speaks as the untrusted source
``voice`` unless ``--wyoming-source`` says otherwise, and bounds an event's header, data and payload and an
utterance's bytes and seconds (:data:`~lares_kit.voice.audio.MAX_SECONDS`). Too much is an ``error`` event and
the connection closes; a malformed event (an unknown type, audio before ``audio-start``, a wrong payload, bytes
that are no event) is one log line and the connection closes. The server keeps serving.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import ipaddress
import json
import logging
import socket
import threading
import wave
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from ..errors import LaresError
from ..voice.audio import MAX_SECONDS, MAX_WAV_BYTES, RATE
from .service import HomeService

__all__ = ["WyomingDoor", "add_wyoming_arguments", "wyoming_missing", "parse_wyoming", "MAX_AUDIO_BYTES"]

log = logging.getLogger("lares_kit.serve.wyoming")

MAX_LINE = MAX_DATA = 64 * 1024  # bytes: an event's JSON header line, and its extra JSON data (data_length)
MAX_PAYLOAD = 1024 * 1024  # one event's payload: an audio chunk is a few kilobytes
MAX_AUDIO_BYTES = MAX_WAV_BYTES - 1_000  # one utterance in the client's format, with room for the WAV header
IDLE_SECONDS = 120.0  # a connection that sends nothing this long is closed
CHUNK_BYTES = 4096  # the speech sent back, per audio-chunk: 1024 samples
HANDLE_FAILED = {"not_understood", "step_limit", "no_answer", "model_error"}
ESPEAK_URL, POCKETSPHINX_URL = "https://github.com/espeak-ng/espeak-ng", "https://github.com/cmusphinx/pocketsphinx"
LARES_URL = "https://interconnected.org/home/"  # Matt Webb's, whose Lares the agent follows


class _Malformed(Exception):  # no well-formed Wyoming event here: log it and hang up
    pass


class _TooMuch(Exception):  # more than the door takes: tell the client (an error event) and hang up
    pass


def wyoming_missing() -> str | None:
    """None when the Wyoming door can run; else the sentence naming what to install (the [voice] extra)."""
    from ..voice.hear import VOICE_EXTRA, hearing_missing
    from ..voice.speech import speaker_missing

    if importlib.util.find_spec("wyoming") is None:
        return f"--wyoming needs the wyoming package, in {VOICE_EXTRA}"
    return f"--wyoming: {missing}" if (missing := hearing_missing() or speaker_missing()) else None


def parse_wyoming(text: str) -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` as (host, port); a LaresError when the host is not loopback.

    Args:
        text: The ``--wyoming`` value.

    Examples:
        >>> parse_wyoming("10300"), parse_wyoming("localhost:10300")
        (('127.0.0.1', 10300), ('127.0.0.1', 10300))
        >>> parse_wyoming("0.0.0.0:10300")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: the Wyoming door listens on loopback only (127.0.0.1), not '0.0.0.0': ...
    """
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise LaresError(f"--wyoming takes PORT or 127.0.0.1:PORT (e.g. --wyoming 10300), not {text!r}.")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise LaresError(f"the Wyoming door listens on loopback only (127.0.0.1), not {host!r}: Wyoming has no "
                         "authentication, so anyone who reaches the port could speak to the home.")
    return ("127.0.0.1" if host == "localhost" else host), int(port)


def add_wyoming_arguments(parser: argparse.ArgumentParser) -> None:
    """``--wyoming [127.0.0.1:]PORT`` and its settings, on the ``serve-home`` parser.

    Args:
        parser: The ``serve-home`` parser.
    """
    parser.add_argument("--wyoming", default=None, metavar="PORT",
                        help="also serve the home's speech to text, text to speech and agent over Wyoming "
                             "(Home Assistant's voice protocol) on this loopback port; needs the [voice] extra")
    parser.add_argument("--wyoming-source", default="voice", metavar="NAME",
                        help="who the safety policy takes a Wyoming speaker for (default: voice, untrusted)")
    parser.add_argument("--wyoming-agent", default="intent-action", help="the agent that handles spoken commands")
    parser.add_argument("--wyoming-model", default=None, help="its model: offline (default, also LARES_MODEL)")


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:  # pragma: no cover - wyoming_missing() checked it is installed
        return "unknown"


def _espeak_version() -> str:
    import subprocess

    try:  # it says "eSpeak NG text-to-speech: 1.51  Data at: ..."
        said = subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, timeout=10, check=False)
        return (said.stdout.split(":", 1)[-1].split() or ["unknown"])[0]
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def describe(service: HomeService) -> Any:
    """The Wyoming ``info`` of the door: one ASR, one TTS and one HANDLE program.

    Args:
        service: The served home (its id, name and language name the handle program's model).
    """
    from wyoming import info as wy

    from ..voice.speech import VOICES

    sphinx, sphinx_version = wy.Attribution("CMU Sphinx (pocketsphinx)", POCKETSPHINX_URL), _version("pocketsphinx")
    espeak, espeak_version = wy.Attribution("eSpeak NG", ESPEAK_URL), _espeak_version()
    lares, lares_version = wy.Attribution("lares_kit (after Matt Webb's Lares)", LARES_URL), _version("lares-kit")
    home = service.home
    asr = wy.AsrProgram(name="pocketsphinx", attribution=sphinx, installed=True, version=sphinx_version,
                        description="CMU's small speech recognizer",
                        models=[wy.AsrModel(name=name, attribution=sphinx, installed=True, version=sphinx_version,
                                            description=what, languages=["en"])
                                for name, what in (("home", f"only what {home.name} can mean: its own grammar"),
                                                   ("general", "any English: the general US English model"))])
    tts = wy.TtsProgram(name="espeak-ng", attribution=espeak, installed=True, version=espeak_version,
                        description="Debian's formant speech synthesizer",
                        voices=[wy.TtsVoice(name=voice, attribution=espeak, installed=True, version=espeak_version,
                                            description=f"espeak-ng's {voice}", languages=[language])
                                for language, voices in VOICES.items() for voice in voices])
    handle = wy.HandleProgram(name="lares", attribution=lares, installed=True, version=lares_version,
                              description=f"the agent of {home.name}", supports_home_control=True,
                              models=[wy.HandleModel(name=home.id, attribution=lares, installed=True,
                                                     version=lares_version, description=home.name,
                                                     languages=[home.language])])
    return wy.Info(asr=[asr], tts=[tts], handle=[handle])


async def _read_event(reader: asyncio.StreamReader) -> Any:
    # One event, every length bounded before it is read (the wyoming library's reader trusts the lengths); None: EOF.
    from wyoming.event import Event

    try:
        line = await asyncio.wait_for(reader.readline(), IDLE_SECONDS)
    except ValueError:  # longer than the stream's limit
        raise _Malformed(f"an event header longer than {MAX_LINE} bytes") from None
    if not line:
        return None
    try:
        header = json.loads(line)
    except ValueError:
        raise _Malformed("bytes that are no JSON event header") from None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise _Malformed("a header that is no JSON object with a type")
    data, lengths = header.get("data") or {}, []
    for key, most in (("data_length", MAX_DATA), ("payload_length", MAX_PAYLOAD)):
        length = header.get(key) or 0
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise _Malformed(f"a {key} that is no count of bytes")
        if length > most:
            raise _TooMuch(f"{key} {length} is more than the {most} bytes one event may carry")
        lengths.append(length)
    if not isinstance(data, dict):
        raise _Malformed("data that is no JSON object")
    if lengths[0]:
        try:
            more = json.loads(await reader.readexactly(lengths[0]))
        except ValueError:
            more = None
        if not isinstance(more, dict):
            raise _Malformed("data that is no JSON object")
        data.update(more)
    payload = await reader.readexactly(lengths[1]) if lengths[1] else None
    return Event(type=header["type"], data=data, payload=payload)


class _Connection:
    # One client: its events in order, the utterance it is sending, and the replies.
    def __init__(self, door: WyomingDoor, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.door, self.reader, self.writer = door, reader, writer
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "a client"
        self.model = "home"
        self.shape: tuple[int, int, int] | None = None  # rate, width, channels of the utterance being sent
        self.audio = bytearray()

    async def run(self) -> None:
        from wyoming.error import Error
        try:
            while (event := await _read_event(self.reader)) is not None:
                await self.handle(event)
        except _TooMuch as exc:
            log.info("%s sent too much (%s): disconnected", self.peer, exc)
            with contextlib.suppress(ConnectionError):
                await self.send(Error(text=f"Too much: {exc}. Disconnecting.", code="too-much").event())
        except _Malformed as exc:
            log.info("%s sent %s: disconnected", self.peer, exc)
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError):
            pass  # the client left mid-event, or said nothing for IDLE_SECONDS
        except Exception as exc:  # a payload the event's class cannot read...: this connection ends, not the server
            log.info("%s sent a malformed event (%s: %s): disconnected", self.peer, type(exc).__name__, exc)
        finally:
            self.writer.close()

    async def send(self, event: Any) -> None:
        from wyoming.event import async_write_event

        await async_write_event(event, self.writer)  # a client gone: ConnectionError, caught in run()

    async def handle(self, event: Any) -> None:
        from wyoming.asr import Transcribe, Transcript
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.info import Describe
        from wyoming.ping import Ping, Pong
        from wyoming.tts import Synthesize

        kind = event.type
        if Describe.is_type(kind):
            await self.send(self.door.info.event())
        elif Ping.is_type(kind):
            await self.send(Pong(text=Ping.from_event(event).text).event())
        elif Transcribe.is_type(kind):
            name = Transcribe.from_event(event).name or "home"
            if name not in ("home", "general"):
                raise _Malformed(f"a transcribe for the model {name!r} (this door has home and general)")
            self.model = name
        elif AudioStart.is_type(kind):
            start = AudioStart.from_event(event)
            shape = (start.rate, start.width, start.channels)
            if not all(isinstance(v, int) for v in shape) or not (8_000 <= start.rate <= 192_000 and
                                                                  start.width in (1, 2, 3, 4) and
                                                                  1 <= start.channels <= 8):
                raise _Malformed(f"an audio-start in a shape no WAV file has ({shape})")
            self.shape, self.audio = shape, bytearray()
        elif AudioChunk.is_type(kind):
            if self.shape is None:
                raise _Malformed("an audio-chunk before audio-start")
            self.audio += AudioChunk.from_event(event).audio
            rate, width, channels = self.shape
            if len(self.audio) > MAX_AUDIO_BYTES or len(self.audio) / (rate * width * channels) > MAX_SECONDS:
                raise _TooMuch(f"an utterance is at most {MAX_SECONDS:.0f} seconds and {MAX_AUDIO_BYTES} bytes")
        elif AudioStop.is_type(kind):
            if self.shape is None:
                raise _Malformed("an audio-stop before any audio-start")
            text = await self.door.work(self.hear)
            await self.send(Transcript(text=text).event())
        elif Synthesize.is_type(kind):
            await self.synthesize(Synthesize.from_event(event))
        elif Transcript.is_type(kind):
            await self.send(await self.door.work(lambda: self.door.act(Transcript.from_event(event).text)))
        else:
            raise _Malformed(f"an event of a type this door does not serve ({kind[:40]!r})")

    def hear(self) -> str:
        from ..voice.audio import read_wav

        assert self.shape is not None
        rate, width, channels = self.shape
        buffer, frame, samples = io.BytesIO(), width * channels, bytes(self.audio)
        self.shape, self.audio = None, bytearray()
        with wave.open(buffer, "wb") as w:
            w.setparams((channels, width, rate, 0, "NONE", "not compressed"))
            w.writeframes(samples[: len(samples) // frame * frame])
        try:
            audio = read_wav(buffer.getvalue(), source="the Wyoming audio")
        except LaresError as exc:
            log.info("%s: %s", self.peer, exc)
            return ""
        return self.door.hear(audio, self.model)

    async def synthesize(self, request: Any) -> None:
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.error import Error

        from ..voice.audio import read_wav
        from ..voice.speech import VOICES, speak

        voice = request.voice.name if request.voice is not None else None
        if not isinstance(request.text, str) or not isinstance(voice, (str, type(None))):
            raise _Malformed("a synthesize whose text or voice is no string")
        if voice is not None and not any(voice in voices for voices in VOICES.values()):
            await self.send(Error(text=f"There is no voice {voice!r}: choose one of "
                                       f"{', '.join(v for vs in VOICES.values() for v in vs)}.").event())
            return
        try:
            wav = await self.door.work(lambda: speak(request.text, self.door.service.home.language, voice))
        except LaresError as exc:
            await self.send(Error(text=str(exc)).event())
            return
        samples = read_wav(wav).samples
        await self.send(AudioStart(rate=RATE, width=2, channels=1).event())
        for at in range(0, len(samples), CHUNK_BYTES):
            await self.send(AudioChunk(rate=RATE, width=2, channels=1, audio=samples[at:at + CHUNK_BYTES]).event())
        await self.send(AudioStop().event())


class WyomingDoor:
    """The Wyoming server of a served home, in a thread of its own; bound at once, serving after :meth:`start`.

    Args:
        service: The served home (the same one the other doors serve).
        host: A loopback address (:func:`parse_wyoming` refuses any other).
        port: The TCP port; 0 picks a free one (:attr:`port`).
        source: Who a speaker is taken for by the safety policy (default ``voice``, untrusted).
        agent: The agent design that handles spoken commands.
        model: Its model (None: ``$LARES_MODEL``, else offline).

    Raises:
        LaresError: the [voice] extra or espeak-ng missing, or a home the recognizer cannot hear (one sentence).
        OSError: the port cannot be bound.
    """

    def __init__(self, service: HomeService, host: str = "127.0.0.1", port: int = 0, *, source: str = "voice",
                 agent: str = "intent-action", model: str | None = None) -> None:
        if (missing := wyoming_missing()) is not None:
            raise LaresError(missing)
        parse_wyoming(f"{host}:{port or 1}")  # loopback only
        from ..voice.hear import Recognizer

        self.service, self.source, self.agent, self.model = service, source, agent, model
        self._recognizers = {"home": Recognizer(service.home, "home")}  # a home it cannot hear fails here
        self._hearing = threading.Lock()  # a pocketsphinx decoder hears one utterance at a time
        self.info = describe(service)
        self._socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((host, port))
            self._socket.listen(16)
        except OSError:
            self._socket.close()
            raise
        self.host, self.port = host, self._socket.getsockname()[1]
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lares-wyoming-work")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready, self._thread = threading.Event(), None

    def describe(self) -> str:
        """One line for the server's banner: where it listens and who it speaks as."""
        return (f"tcp://{self.host}:{self.port} (speech to text, text to speech, the {self.agent} agent; speaks as "
                f"{self.source}; Home Assistant: Add integration > Wyoming Protocol, {self.host}, {self.port})")

    def start(self) -> WyomingDoor:
        """Serve in a background thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), name="lares-wyoming", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    async def _serve(self) -> None:
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        connections: set[asyncio.Task[None]] = set()

        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(_Connection(self, reader, writer).run())
            connections.add(task)
            task.add_done_callback(connections.discard)

        server = await asyncio.start_server(accept, sock=self._socket, limit=MAX_LINE)
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(connections):
                task.cancel()
            await asyncio.gather(*connections, return_exceptions=True)

    async def work(self, job: Callable[[], Any]) -> Any:
        """Run a blocking job (hearing, speaking, an agent's episode) on the door's workers.

        Args:
            job: What to run.
        """
        return await asyncio.get_running_loop().run_in_executor(self._pool, job)

    def hear(self, audio: Any, model: str) -> str:
        """The transcript of 16 kHz mono ``audio`` by the ``home`` or ``general`` recognizer.

        Args:
            audio: A :class:`~lares_kit.voice.audio.Audio`.
            model: ``home`` (the home's grammar) or ``general`` (any English).
        """
        from ..voice.hear import Recognizer

        with self._hearing:
            if model not in self._recognizers:
                self._recognizers[model] = Recognizer(self.service.home, model)  # type: ignore[arg-type]
            return self._recognizers[model].hear(audio).text

    def act(self, text: Any) -> Any:
        """The agent's answer to ``text``, acted on in the served home: a Wyoming ``handled`` or ``not-handled``.

        Args:
            text: What was said (a transcript's text).
        """
        from wyoming.handle import Handled, NotHandled

        from ..agents import run_agent
        from ..tools.users import NoUser

        if not isinstance(text, str) or not text.strip() or len(text) > 1_000:  # no command is this long
            return NotHandled(text="I heard no command I could act on, so I did nothing.").event()
        try:
            episode = self.service.episode(lambda home: run_agent(
                text, home, self.agent, self.model, user=NoUser(), tool_set=self.service.tool_set,
                context=self.service.context.but(source=self.source)))
        except LaresError as exc:
            log.info("the agent could not act on %r: %s", text[:80], exc)
            return NotHandled(text=f"I could not act on that: {exc}").event()
        reply = episode.final_message or "I did nothing."
        return (NotHandled if episode.status in HANDLE_FAILED else Handled)(text=reply).event()

    def close(self) -> None:
        """Stop serving (open connections are closed) and free the port; returns within about a second."""
        if self._loop is not None and self._stopping is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=1.5)
            self._thread = None
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._socket.close()
