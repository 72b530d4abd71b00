"""Text to speech with espeak-ng: a sentence in, a WAV file's bytes out, in the home's language.

Part of :mod:`lares_kit.voice`. ``espeak-ng`` is Debian's formant synthesizer
(``make`` installs it with the other system programs); it speaks about a
hundred languages with no model to download. It is run as a program, bounded
in the text it is given and in time. ``voices`` names the two English voices
the voice benchmark compares.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import LaresError
from .audio import RATE, read_wav, wav_bytes

__all__ = ["MAX_SAY", "VOICES", "speak", "speaker_missing"]

MAX_SAY = 2_000  # characters: a reply is a few sentences
SPEAK_SECONDS = 60
# Two of espeak-ng's English voices that sound apart: its default, and a variant with another pitch and pace
VOICES = {"en": ["en-us", "en-us+m3"], "de": ["de"], "fr": ["fr"], "nl": ["nl"], "es": ["es"], "it": ["it"]}


def speaker_missing() -> str | None:
    """None when espeak-ng is installed; else the sentence that says how to install it."""
    if shutil.which("espeak-ng") is None:
        return ("speaking needs espeak-ng, Debian's speech synthesizer: `make` installs it as root, or "
                "apt-get install espeak-ng")
    return None


def speak(text: str, language: str = "en", voice: str | None = None, *, words_per_minute: int = 150) -> bytes:
    """``text`` spoken by espeak-ng, as the bytes of a 16 kHz mono 16-bit WAV file (what the recognizer hears).

    Args:
        text: what to say; at most :data:`MAX_SAY` characters.
        language: the home's language code (``en``, ``de``...); picks the voice when ``voice`` is None.
        voice: an espeak-ng voice name such as ``en-us+m3``; None: the language's first voice.
        words_per_minute: how fast it speaks.

    Raises:
        LaresError: empty or over-long text, espeak-ng missing, or a voice it does not have.
    """
    if not text.strip():
        raise LaresError("there is nothing to say: the text is empty")
    if len(text) > MAX_SAY:
        raise LaresError(f"the text is {len(text)} characters; say at most {MAX_SAY} at a time")
    if (missing := speaker_missing()) is not None:
        raise LaresError(missing)
    voice = voice or VOICES.get(language, [language])[0]
    with tempfile.TemporaryDirectory(prefix="lares-say-") as folder:
        out = Path(folder) / "said.wav"  # a file, not --stdout: a stream's header cannot say its length
        try:
            done = subprocess.run(["espeak-ng", "-v", voice, "-s", str(words_per_minute), "-w", str(out), "--", text],
                                  capture_output=True, timeout=SPEAK_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise LaresError(f"espeak-ng took longer than {SPEAK_SECONDS} s to say it") from None
        said = done.stderr.decode(errors="replace").strip()
        if done.returncode != 0 or not out.exists() or out.stat().st_size <= 44:
            raise LaresError(f"espeak-ng has no voice {voice!r}" if "voice" in said.lower() or not said else
                             f"espeak-ng could not say it ({said.splitlines()[-1]})")
        audio = read_wav(out, source="espeak-ng's speech")  # 22,050 Hz: converted to 16 kHz with sox
    return wav_bytes(audio.samples, RATE)
