"""A record button for a notebook: the learner's own voice, from the browser's microphone to the recognizer.

Part of :mod:`lares_kit.voice`. :class:`Microphone` is an anywidget (a Jupyter
widget whose front end is a few lines of JavaScript, so it works in
JupyterLab, Notebook 7, Voila and VS Code without an extension to install).
Press **Record**, speak, press **Stop**: the browser's sound is mixed to mono,
resampled to 16 kHz, sent to the kernel as a 16-bit WAV file, and every
function given to :meth:`Microphone.on_recording` is called with it.

A browser gives a page the microphone only when the page is served from
``localhost`` or over HTTPS and the person allows it. Where it does not (Binder
served over plain HTTP, a denied permission, no microphone at all), the
widget says so in one sentence and the lesson's synthesized commands still
work. Google Colab does not show third-party widgets unless
``google.colab.output.enable_custom_widget_manager()`` is called first.

A recording stops by itself at :data:`lares_kit.voice.audio.MAX_SECONDS`; what
arrives is read with :func:`lares_kit.voice.audio.read_wav`, so a page that
sends something else gets one sentence in :attr:`Microphone.status`, never a
traceback.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import traitlets

from ..errors import LaresError
from .audio import MAX_SECONDS, RATE, Audio, read_wav

__all__ = ["Microphone", "recording_missing"]


def recording_missing() -> str | None:
    """None when anywidget is installed; else the sentence naming the extra to install."""
    if importlib.util.find_spec("anywidget") is None:
        return 'the record button needs anywidget, in the [voice] extra: pip install "lares-kit[voice]" (in a ' \
               "checkout: make)"
    return None


# The front end. It records raw samples with the Web Audio API (MediaRecorder would give compressed audio the
# kernel would have to decode), mixes them to mono, resamples them to the recognizer's rate, and sends
# a WAV file as one binary buffer.
_ESM = """
function wav(samples, rate) {
  const out = new DataView(new ArrayBuffer(44 + samples.length * 2));
  const text = (at, s) => { for (let i = 0; i < s.length; i++) out.setUint8(at + i, s.charCodeAt(i)); };
  text(0, "RIFF"); out.setUint32(4, 36 + samples.length * 2, true); text(8, "WAVE"); text(12, "fmt ");
  out.setUint32(16, 16, true); out.setUint16(20, 1, true); out.setUint16(22, 1, true);
  out.setUint32(24, rate, true); out.setUint32(28, rate * 2, true); out.setUint16(32, 2, true);
  out.setUint16(34, 16, true); text(36, "data"); out.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    out.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
  }
  return out.buffer;
}

async function resample(chunks, from, to) {
  // The browser's own resampler (an OfflineAudioContext at the recognizer's rate) filters out what 16 kHz cannot
  // hold, so the recognizer hears no aliasing.
  const n = chunks.reduce((sum, c) => sum + c.length, 0);
  if (n === 0) return new Float32Array(0);
  const offline = new OfflineAudioContext(1, Math.max(1, Math.round(n * to / from)), to);
  const buffer = offline.createBuffer(1, n, from);
  let at = 0;
  for (const c of chunks) { buffer.copyToChannel(c, 0, at); at += c.length; }
  const source = offline.createBufferSource();
  source.buffer = buffer;
  source.connect(offline.destination);
  source.start();
  return (await offline.startRendering()).getChannelData(0);
}

function render({ model, el }) {
  const button = document.createElement("button");
  const status = document.createElement("span");
  button.className = "lares-record";
  status.className = "lares-record-status";
  status.style.marginLeft = "0.6em";
  el.append(button, status);
  let live = null;
  const show = () => {
    button.textContent = live ? "\\u25A0 Stop" : "\\u25CF Record";
    status.textContent = model.get("status");
  };
  model.on("change:status", show);
  const say = (sentence) => { model.set("status", sentence); model.save_changes(); };

  async function start() {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      say("This page may not use a microphone: browsers allow one only on localhost or over https.");
      return;
    }
    let stream;
    try {
      // The sound as the microphone gives it: a call's echo cancelling, noise suppression and gain control
      // reshape speech in ways the recognizer's acoustic model never heard.
      stream = await navigator.mediaDevices.getUserMedia({ audio: {
        channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
    } catch (error) {
      say(`No microphone: ${error.message || error.name}.`);
      return;
    }
    const context = new AudioContext();
    const source = context.createMediaStreamSource(stream);
    const tap = context.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    const limit = model.get("max_seconds") * context.sampleRate;
    let held = 0;
    tap.onaudioprocess = (event) => {
      if (!live) return;
      const input = event.inputBuffer, mono = new Float32Array(input.length);
      for (let c = 0; c < input.numberOfChannels; c++) {
        const data = input.getChannelData(c);
        for (let i = 0; i < data.length; i++) mono[i] += data[i] / input.numberOfChannels;
      }
      chunks.push(mono);
      held += mono.length;
      if (held >= limit) stop();
    };
    source.connect(tap);
    tap.connect(context.destination);
    live = { stream, context, source, tap, chunks };
    say("Listening... press Stop when you have finished.");
    show();
  }

  async function stop() {
    const { stream, context, source, tap, chunks } = live;
    live = null;
    tap.onaudioprocess = null;
    source.disconnect();
    tap.disconnect();
    stream.getTracks().forEach((t) => t.stop());
    show();
    context.close();
    say("Sending the recording to the kernel...");
    const samples = await resample(chunks, context.sampleRate, model.get("rate"));
    model.send({ kind: "recording" }, undefined, [wav(samples, model.get("rate"))]);
  }

  button.addEventListener("click", () => (live ? stop() : start()));
  show();
  return () => { if (live) stop(); };
}

export default { render };
"""


try:  # the [voice] extra; without it the class exists, and making one is a sentence naming the extra
    from anywidget import AnyWidget as _Widget
except ModuleNotFoundError:  # pragma: no cover - the test environment has the extra
    from ipywidgets import DOMWidget as _Widget


class Microphone(_Widget):
    """A record button: what the learner says, as :class:`lares_kit.voice.audio.Audio` in the kernel.

    Args:
        max_seconds: a recording stops by itself after this long (at most the recognizer's limit).

    Attributes:
        status: the widget's last sentence ("Listening...", "Got 2.4 s of sound.", or why nothing was recorded).
        audio: the last recording, or None.

    Raises:
        LaresError: anywidget missing (the sentence names the extra).

    Example (in a notebook)::

        mic = Microphone()
        mic.on_recording(lambda audio: print(ear.hear(audio).text))
        mic
    """

    _esm = _ESM
    status = traitlets.Unicode("").tag(sync=True)
    rate = traitlets.Int(RATE).tag(sync=True)
    max_seconds = traitlets.Float(MAX_SECONDS).tag(sync=True)

    def __init__(self, max_seconds: float = MAX_SECONDS, **kwargs) -> None:
        if (missing := recording_missing()) is not None:
            raise LaresError(missing)
        super().__init__(max_seconds=max(0.5, min(float(max_seconds), MAX_SECONDS)), **kwargs)
        self.audio: Audio | None = None
        self._listeners: list[Callable[[Audio], object]] = []
        self.on_msg(self._received)

    def __repr__(self) -> str:  # the same text on every run, for a saved notebook
        return f"Microphone(max_seconds={self.max_seconds:g})"

    def on_recording(self, listener: Callable[[Audio], object]) -> None:
        """Call ``listener(audio)`` with every recording that arrives.

        Args:
            listener: a function of one :class:`lares_kit.voice.audio.Audio`.
        """
        self._listeners.append(listener)

    def receive(self, data: bytes) -> Audio | None:
        """Take a recording as the browser sends it (WAV bytes): read it, keep it, hand it to the listeners.

        Args:
            data: the WAV file.

        Returns:
            The audio, or None when it could not be read (``status`` says why in one sentence).
        """
        try:
            audio = read_wav(bytes(data), source="the recording")
        except LaresError as error:
            self.status = str(error)
            return None
        self.audio = audio
        self.status = f"Got {audio.seconds:.1f} s of sound."
        for listener in self._listeners:
            listener(audio)
        return audio

    def _received(self, _widget, content, buffers) -> None:
        if not isinstance(content, dict) or content.get("kind") != "recording" or len(buffers) != 1:
            self.status = "The page sent something that is no recording; press Record to try again."
            return
        self.receive(buffers[0])
