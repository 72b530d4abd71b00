"""Sound as bytes: WAV files read within limits and converted to what the recognizer hears.

Part of :mod:`lares_kit.voice`. The recognizer hears 16 kHz, mono, 16-bit
PCM. A WAV file in another shape is converted with ``sox`` (Debian's sound
converter, which ``make`` installs) when it is on the machine, else refused
with a sentence that says how to convert it. Everything is bounded: the file's
size is known before it is read, its length is read from its header, and
``sox`` runs with a timeout. Silence is told by its loudness, so an empty room
gives an empty transcript, not a guess.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import LaresError, brief
from ..files.reading import open_data_file, path_kind

__all__ = ["RATE", "MAX_SECONDS", "MAX_WAV_BYTES", "Audio", "read_wav", "wav_bytes", "is_silent", "trimmed"]

RATE = 16_000  # what the recognizer's acoustic model was trained on: 16 kHz, mono, 16-bit
MAX_SECONDS = 30.0  # a spoken command; a longer recording is refused before it is decoded
# the largest WAV read at all: 30 s of 48 kHz stereo 32-bit float, with room for a header
MAX_WAV_BYTES = int(MAX_SECONDS * 48_000 * 2 * 4) + 1_000_000
SILENCE_RMS = 100.0  # below this loudness (16-bit samples, root mean square) nobody spoke: about -50 dBFS
SOX_SECONDS = 30  # the most a conversion may take


@dataclass(frozen=True)
class Audio:
    """Sound the recognizer can hear: 16 kHz, mono, 16-bit little-endian samples.

    Attributes:
        samples: the PCM bytes, two per sample.
        source: where it came from, for sentences about it ("command.wav").
        converted: what it was before ``sox`` converted it ("44100 Hz stereo"), or "" when it came as it is.
    """

    samples: bytes
    source: str = "audio"
    converted: str = ""

    @property
    def seconds(self) -> float:
        """Its length."""
        return len(self.samples) / 2 / RATE


def _shape(rate: int, channels: int, width: int) -> str:
    return f"{rate} Hz {'mono' if channels == 1 else 'stereo' if channels == 2 else f'{channels} channels'} " \
           f"{8 * width}-bit"


def _refuse(source: str, why: str) -> LaresError:
    return LaresError(f"{source}: {why}")


def read_wav(data: bytes | str | Path, source: str | None = None) -> Audio:
    """A WAV file (its path, or its bytes) as 16 kHz mono 16-bit :class:`Audio`; one sentence when it cannot be.

    Args:
        data: the file's path, or the bytes of a whole WAV file.
        source: how to name it in a sentence; default: the path, or "the audio".

    Raises:
        LaresError: not a WAV file, a truncated one, one longer than :data:`MAX_SECONDS`, or one in another shape
            while ``sox`` is not installed to convert it.

    Examples:
        >>> import io, wave
        >>> buffer = io.BytesIO()
        >>> with wave.open(buffer, "wb") as w:
        ...     w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(bytes(32000))
        >>> read_wav(buffer.getvalue()).seconds
        1.0
        >>> read_wav(b"RIFF....WAVEfmt ")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: the audio: not a WAV file that can be read (fmt chunk and/or data chunk missing)
    """
    if isinstance(data, (str, Path)):
        source = source or str(data)
        kind = path_kind(data)
        if kind != "file":
            raise _refuse(brief(source), "no such file" if kind == "missing" else f"this is a {kind}, not a WAV file")
        if Path(data).stat().st_size > MAX_WAV_BYTES:
            raise _refuse(brief(source), f"larger than {MAX_WAV_BYTES // 1_000_000} MB; a spoken command is at most "
                                         f"{MAX_SECONDS:.0f} seconds")
        with open_data_file(data, error=lambda f, key, why: _refuse(brief(source), why)) as f:
            data = f.read(MAX_WAV_BYTES + 1)
    source = source or "the audio"
    if len(data) > MAX_WAV_BYTES:
        raise _refuse(source, f"larger than {MAX_WAV_BYTES // 1_000_000} MB; a spoken command is at most "
                              f"{MAX_SECONDS:.0f} seconds")
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            rate, channels, width, frames = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
            if rate <= 0 or channels <= 0:
                raise _refuse(source, "its header gives no sample rate or no channels")
            if frames / rate > MAX_SECONDS:
                raise _refuse(source, f"{frames / rate:.0f} seconds long; a spoken command is at most "
                                      f"{MAX_SECONDS:.0f} seconds")
            samples = w.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise _refuse(source, f"not a WAV file that can be read ({exc or 'it ends early'})") from None
    if len(samples) < frames * channels * width:
        raise _refuse(source, f"truncated: its header promises {frames / rate:.1f} seconds, the file holds "
                              f"{len(samples) / (channels * width * rate):.1f}")
    if (rate, channels, width) == (RATE, 1, 2):
        return Audio(samples, source)
    return Audio(_convert(data, source, _shape(rate, channels, width)), source, _shape(rate, channels, width))


def _convert(data: bytes, source: str, shape: str) -> bytes:
    sox = shutil.which("sox")
    if sox is None:
        raise _refuse(source, f"{shape}; the recognizer hears 16 kHz mono 16-bit, and sox is not installed to "
                              f"convert it (apt-get install sox, or: sox IN.wav -r 16000 -c 1 -b 16 OUT.wav)")
    try:
        # -R: sox's "repeatable" mode seeds its dither, so the same file converts to the same samples every time
        # (otherwise a converted command, and what the recognizer hears in it, differs from run to run)
        done = subprocess.run([sox, "-R", "-t", "wav", "-", "-t", "raw", "-r", str(RATE), "-c", "1", "-b", "16",
                               "-e", "signed-integer", "-L", "-"], input=data, capture_output=True,
                              timeout=SOX_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise _refuse(source, f"converting it from {shape} took longer than {SOX_SECONDS} s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise _refuse(source, f"sox could not convert it from {shape} ({said[-1] if said else 'no reason given'})")
    return done.stdout


def wav_bytes(samples: bytes, rate: int = RATE) -> bytes:
    """Mono 16-bit samples as the bytes of a WAV file.

    Args:
        samples: little-endian 16-bit PCM.
        rate: samples per second.

    Examples:
        >>> wav_bytes(bytes(4))[:4], len(wav_bytes(bytes(4)))
        (b'RIFF', 48)
    """
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples)
    return buffer.getvalue()


def is_silent(audio: Audio) -> bool:
    """Whether nobody spoke: the loudest tenth of a second is quieter than :data:`SILENCE_RMS`.

    Args:
        audio: what was heard.

    Examples:
        >>> is_silent(Audio(bytes(32000)))
        True
    """
    samples = np.frombuffer(audio.samples[: len(audio.samples) // 2 * 2], dtype="<i2").astype(np.float64)
    if samples.size == 0:
        return True
    step = RATE // 10
    frames = [samples[i:i + step] for i in range(0, samples.size, step)]
    return max(float(np.sqrt(np.mean(f * f))) for f in frames if f.size) < SILENCE_RMS


def trimmed(audio: Audio, margin: float = 0.4) -> Audio:
    """The audio without the quiet before and after the words, keeping ``margin`` seconds of it on each side.

    The recognizer normalizes the sound by its average over the whole recording, so seconds of quiet around a
    command (as a microphone records it, and a synthesizer does not) shift what the words sound like to it.

    Args:
        audio: what was heard.
        margin: seconds of quiet kept before the first loud hundredth of a second and after the last.

    Examples:
        >>> import numpy as np
        >>> words = np.full(RATE // 2, 2000, dtype="<i2").tobytes()  # half a second of sound
        >>> trimmed(Audio(bytes(RATE * 2) + words + bytes(RATE * 2))).seconds  # two seconds of quiet on each side
        1.3
        >>> trimmed(Audio(bytes(RATE))).seconds  # all quiet: kept as it is, for is_silent to say so
        0.5
    """
    samples = np.frombuffer(audio.samples[: len(audio.samples) // 2 * 2], dtype="<i2").astype(np.float64)
    step = RATE // 100
    loud = [i for i in range(0, samples.size, step) if np.sqrt(np.mean(samples[i:i + step] ** 2)) >= SILENCE_RMS]
    if not loud:
        return audio
    start = max(0, loud[0] - int(margin * RATE))
    end = min(samples.size, loud[-1] + step + int(margin * RATE))
    return Audio(audio.samples[start * 2:end * 2], audio.source)
