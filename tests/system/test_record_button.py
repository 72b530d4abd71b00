"""The record button in a real browser: Chromium's microphone, the widget's JavaScript, the kernel's recognizer.

Chromium's fake capture device plays a WAV file as the microphone (``--use-file-for-fake-audio-capture``), and
``--use-fake-ui-for-media-stream`` allows it as a person would. The page is a small notebook served by Voila (a
free loopback port, started and stopped here): a :class:`lares_kit.voice.record.Microphone`, and the transcript of
each recording, heard with the home's grammar. What a person does: press Record, say a command, and read back what
was heard. The recording stops by itself at the widget's limit, which is shorter than the file, so the test does
not depend on how fast the machine presses Stop.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from voila_server import voila

CHROMIUM = os.environ.get("LARES_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TIMEOUT_MS = 60_000
COMMAND = "turn on the light in the kitchen"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}: `make test` installs it"),
    pytest.mark.skipif(importlib.util.find_spec("anywidget") is None or shutil.which("espeak-ng") is None,
                       reason="needs the [voice] extra and espeak-ng (make installs both)"),
]

PAGE = """
import ipywidgets as widgets
from lares_kit import load_world
from lares_kit.voice.hear import Recognizer
from lares_kit.voice.record import Microphone

ear = Recognizer(load_world("lares-home"))
mic = Microphone(max_seconds=3.5)
heard = widgets.HTML("<p class='heard' data-done='no'>nothing yet</p>")

def show(audio):
    h = ear.hear(audio)
    heard.value = f"<p class='heard' data-done='yes'>{h.text or 'no command: ' + (h.partial or h.unsure)}</p>"

mic.on_recording(show)
widgets.VBox([mic, heard])
"""


def test_a_command_said_into_the_microphone_is_heard_in_the_kernel(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    from lares_kit.voice.audio import RATE, read_wav, wav_bytes
    from lares_kit.voice.speech import speak

    # The microphone's sound: half a second of quiet, the command, then quiet past the widget's 3.5 s limit.
    said = read_wav(speak(COMMAND)).samples
    quiet = bytes(RATE)  # 0.5 s of 16-bit silence
    wav = tmp_path / "microphone.wav"
    wav.write_bytes(wav_bytes(quiet + said + quiet * 8))
    notebook = tmp_path / "record.ipynb"
    notebook.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": "record", "metadata": {}, "outputs": [],
                   "source": PAGE}],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5}))
    with voila(notebook, tmp_path / "voila.log", {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}) as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-gpu", "--no-first-run", "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream", f"--use-file-for-fake-audio-capture={wav}"])
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            expect.set_options(timeout=TIMEOUT_MS)
            page.goto(url, timeout=TIMEOUT_MS)
            button = page.locator("button.lares-record")
            expect(button).to_have_text("\u25cf Record")
            button.click()
            expect(page.locator(".lares-record-status")).to_contain_text("Listening")
            expect(page.locator(".heard[data-done='yes']")).to_be_visible()  # stopped at its limit, then heard
            page.screenshot(path=str(tmp_path / "record_button.png"), full_page=True)
            expect(page.locator(".heard")).to_have_text(COMMAND)
            expect(page.locator(".lares-record-status")).to_contain_text("Got 3.5 s of sound")
            expect(button).to_have_text("\u25cf Record")  # ready for the next command
            browser.close()
