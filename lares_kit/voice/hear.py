"""Speech to text with pocketsphinx, in two modes a lesson compares: any English, or only what the home can mean.

Part of :mod:`lares_kit.voice`. pocketsphinx is CMU's small speech
recognizer; its wheel carries the US English acoustic model, a general
language model and the CMU pronunciation dictionary, so nothing is
downloaded. ``mode="general"`` decodes with that general language model: it
may hear any English word, and on a synthetic voice it often hears the wrong
ones. ``mode="home"`` decodes with the home's own grammar
(:mod:`lares_kit.voice.grammar`): it can only hear the commands and
questions the home can mean, in its own names.

The confidence is the posterior probability of the transcript's least sure
word (0 to 1), from pocketsphinx's word lattice. It is a word's, not the
whole utterance's: the utterance's posterior also counts the ways of placing
the silence around the words, so the same command with quiet before and
after it (as every microphone recording has) scored seven to ten times lower.
Silence gives an empty transcript, never a guess.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Literal

from ..errors import LaresError
from ..home.graph import Home
from .audio import RATE, Audio, is_silent, trimmed
from .grammar import HomeGrammar, home_grammar, is_whole, pronounce, written

__all__ = ["MODES", "MIN_CONFIDENCE", "Heard", "Recognizer", "hearing_missing"]

MODES = ("home", "general")
# A whole sentence of the home's grammar whose least sure word has a lower posterior is not trusted. On our own
# sentences (tests/unit/voice, and ten that no home can mean), said with and without quiet around them, most right
# transcripts' least sure words had 0.3 or more (a few far less: "back" in "lock the back door", 0.01), and half of
# the wrong whole sentences less than 0.3. A command not carried out can be said again; a wrong one is done.
MIN_CONFIDENCE = 0.3
VOICE_EXTRA = 'the [voice] extra: pip install "lares-kit[voice]" (in a checkout: make)'


def hearing_missing() -> str | None:
    """None when pocketsphinx is installed; else the sentence naming the extra to install."""
    if importlib.util.find_spec("pocketsphinx") is None:
        return f"hearing needs pocketsphinx, in {VOICE_EXTRA}"
    return None


@dataclass(frozen=True)
class Heard:
    """What the recognizer heard.

    Attributes:
        text: the transcript in the home's written words ("" for silence, for words that make no whole
            sentence of the home's grammar, or for a sentence heard too unsurely to act on).
        confidence: the posterior probability of its least sure word, 0 to 1 (0 for "").
        mode: ``home`` (the home's grammar) or ``general`` (any English).
        raw: the words as decoded, before names and numbers were written the home's way.
        seconds: the time decoding took.
        partial: the words decoded when they are no whole sentence of the home's grammar ("set the"), else "".
        unsure: a whole sentence of the grammar heard with a confidence below :data:`MIN_CONFIDENCE`: not acted on
            (its ``text`` is ""), and the reply asks to hear it again; else "".
    """

    text: str
    confidence: float
    mode: str
    raw: str = ""
    seconds: float = 0.0
    partial: str = ""
    unsure: str = ""


class Recognizer:
    """A pocketsphinx decoder for one home (``mode="home"``) or for any English (``mode="general"``).

    Args:
        home: the home whose grammar it hears; needed for ``mode="home"``.
        mode: ``home`` or ``general``.
        min_confidence: in the home mode, a whole sentence whose least sure word has a lower posterior is
            ``unsure`` and not acted on; 0 acts on every whole sentence.

    Raises:
        LaresError: pocketsphinx missing (the sentence names the extra), an unknown mode, ``home`` mode without a
            home, or a home in a language other than English (the wheel carries only the US English model).
    """

    def __init__(self, home: Home | None = None, mode: Literal["home", "general"] = "home", *,
                 min_confidence: float = MIN_CONFIDENCE) -> None:
        if (missing := hearing_missing()) is not None:
            raise LaresError(missing)
        if mode not in MODES:
            raise LaresError(f"unknown recognizer mode {mode!r}: choose home (the home's grammar) or general")
        if mode == "home" and home is None:
            raise LaresError("the home's grammar needs a home: pass --world, or use the general mode")
        language = getattr(home, "language", "en") if home is not None else "en"
        if language != "en":
            raise LaresError(f"this home speaks {language!r}; the recognizer has only its US English model, so "
                             "lares listen hears English homes only")
        from pocketsphinx import Config, Decoder

        self.mode, self.home, self.min_confidence = mode, home, min_confidence
        self.grammar: HomeGrammar | None = home_grammar(home) if mode == "home" and home is not None else None
        config = Config(samprate=RATE, loglevel="FATAL")  # pocketsphinx logs to stderr; its errors raise
        self._decoder = Decoder(config)
        if self.grammar is not None:
            self.added = self._add_missing_words(self.grammar.words)
            self._decoder.add_jsgf_string("home", self.grammar.jsgf)
            self._decoder.activate_search("home")
        else:
            self.added = {}

    def _add_missing_words(self, words: set[str]) -> dict[str, list[str]]:
        # Words of the home's names the dictionary lacks get espeak-ng's pronunciation; without espeak-ng, none.
        missing = sorted(w for w in words if self._decoder.lookup_word(w) is None)
        found = pronounce(missing)
        for word, phones in found.items():
            self._decoder.add_word(word, " ".join(phones), False)
        unknown = [w for w in missing if w not in found]
        if unknown:
            raise LaresError(f"no pronunciation for {', '.join(unknown[:5])}: install espeak-ng (make), which "
                             "gives the recognizer the sounds of words its dictionary lacks")
        return found

    def hear(self, audio: Audio) -> Heard:
        """The transcript of ``audio`` (16 kHz mono, as :func:`lares_kit.voice.audio.read_wav` gives it).

        Args:
            audio: what was said.
        """
        start = time.perf_counter()
        if is_silent(audio):
            return Heard("", 0.0, self.mode, "", time.perf_counter() - start)
        hyp = self._decode(trimmed(audio).samples)
        raw = " ".join(hyp.hypstr.split()) if hyp is not None else ""
        confidence = self._least_sure_word() if raw else 0.0
        seconds = time.perf_counter() - start
        if raw and self.grammar is not None and not is_whole(raw, self.grammar):
            return Heard("", 0.0, self.mode, raw, seconds, partial=raw)  # cut short: no command, and it says so
        if raw and self.grammar is not None and confidence < self.min_confidence:
            return Heard("", confidence, self.mode, raw, seconds, unsure=raw)  # a command, but not one to act on
        return Heard(written(raw, self.grammar) if raw else "", confidence, self.mode, raw, seconds)

    def _least_sure_word(self) -> float:
        # The words of the best path (not its silences, fillers or sentence marks), each with its lattice posterior.
        posteriors = [seg.prob for seg in self._decoder.seg() if seg.word not in ("<s>", "</s>", "<sil>")
                      and not seg.word.startswith(("[", "+"))]
        return min(1.0, round(float(min(posteriors)), 4)) if posteriors else 0.0  # (lattice sums reach 1.0001)

    def _decode(self, samples: bytes):
        decoder = self._decoder
        decoder.start_utt()
        decoder.process_raw(samples, no_search=False, full_utt=True)
        decoder.end_utt()
        return decoder.hyp()

