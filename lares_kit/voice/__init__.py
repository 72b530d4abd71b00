"""Voice: the home heard and spoken, offline -- the ReAct paper's spoken loop, and Home Assistant's voice parts.

Hearing is pocketsphinx (the ``[voice]`` extra), in two modes: any English,
or only the sentences this home can mean (its own grammar); speaking is
espeak-ng (a Debian program). ``lares listen FILE.wav`` hears a command,
acts on it and speaks the reply; ``lares say "..."`` speaks a sentence; in
a notebook, :class:`~lares_kit.voice.record.Microphone` is a record button.
Lesson 19 (``notebooks/19_talk_to_the_home.ipynb``) teaches it; the two commands are its doors.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

# Public names, each imported from its module when first asked for (lazy_exports)
_LAZY = {
    "Audio": "lares_kit.voice.audio",
    "read_wav": "lares_kit.voice.audio",
    "wav_bytes": "lares_kit.voice.audio",
    "HomeGrammar": "lares_kit.voice.grammar",
    "home_grammar": "lares_kit.voice.grammar",
    "is_whole": "lares_kit.voice.grammar",
    "spoken": "lares_kit.voice.grammar",
    "Heard": "lares_kit.voice.hear",
    "Recognizer": "lares_kit.voice.hear",
    "speak": "lares_kit.voice.speech",
    "Microphone": "lares_kit.voice.record",
}
__all__ = ["Audio", "read_wav", "wav_bytes", "HomeGrammar", "home_grammar", "is_whole", "spoken", "Heard", "Recognizer",
           "speak", "Microphone"]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
