"""Voila on a free loopback port, started and stopped by a browser test (test_browser.py, test_record_button.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def voila(notebook: Path, log_path: Path, env: dict[str, str] | None = None):
    """Serve ``notebook`` with Voila; yield its URL once the port listens; stop it after.

    Args:
        notebook: the notebook to serve (its folder is the working directory).
        log_path: where Voila's output goes (shown when it does not start).
        env: extra environment variables for the server and its kernels.
    """
    port = _free_port()
    cmd = [sys.executable, "-m", "voila", str(notebook), f"--port={port}", "--no-browser", "--Voila.ip=127.0.0.1",
           "--show_tracebacks=True"]
    with open(log_path, "w") as log:
        server = subprocess.Popen(cmd, cwd=notebook.parent, env={**os.environ, "LARES_PROGRESS": "0",
                                                                 "TQDM_DISABLE": "1", **(env or {})},
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:  # listening is enough: a GET of the page would start a kernel just to probe
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Voila did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
