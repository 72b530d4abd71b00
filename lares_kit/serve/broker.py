"""A Mosquitto broker of one's own, on loopback and a free port: for a lesson or a test, started and stopped here.

Taught in ``notebooks/18_a_real_home.ipynb``. ``lares serve-home --mqtt``
needs a broker; a learner's machine may have none running, and a shared
one (a class's JupyterHub) must not be. :class:`LocalBroker` starts the
``mosquitto`` program from the operating system's packages (Debian's
``mosquitto``; ``make`` installs it where it can) with a config file in a
temporary folder -- loopback only, anonymous clients, nothing kept on disk
-- waits until it accepts connections, and stops it on :meth:`LocalBroker.close`.
Where ``mosquitto`` is not installed, :meth:`LocalBroker.start` raises
:class:`NoBroker`, whose message says how to get it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..errors import LaresError

__all__ = ["LocalBroker", "NoBroker", "mosquitto_path"]

PLACES = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/opt/homebrew/sbin/mosquitto")


class NoBroker(LaresError):
    """No ``mosquitto`` program here, or it would not start; the message says what to do."""


def mosquitto_path() -> str | None:
    """Where the ``mosquitto`` program is, or None (it is often in an ``sbin`` folder outside the PATH)."""
    return shutil.which("mosquitto") or next((p for p in PLACES if Path(p).exists()), None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalBroker:
    """A running Mosquitto on ``127.0.0.1``: ``with LocalBroker.start() as broker: broker.address``."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, folder: tempfile.TemporaryDirectory[str]) -> None:
        self.process, self.port, self._folder = process, port, folder

    @property
    def address(self) -> str:
        """``HOST:PORT``, as ``lares serve-home --mqtt`` takes it."""
        return f"127.0.0.1:{self.port}"

    @classmethod
    def start(cls, *, wait: float = 10.0) -> LocalBroker:
        """Start a broker on a free loopback port and wait until it accepts connections.

        Args:
            wait: Seconds to wait for it to accept connections.
        """
        program = mosquitto_path()
        if program is None:
            raise NoBroker("No MQTT broker here: the mosquitto program is not installed (on Debian or Ubuntu: "
                           "apt-get install mosquitto; on macOS: brew install mosquitto), so the MQTT cells are "
                           "skipped.")
        folder = tempfile.TemporaryDirectory(prefix="lares-mosquitto-")
        port = _free_port()
        config = Path(folder.name) / "mosquitto.conf"
        config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n", encoding="utf-8")
        process = subprocess.Popen([program, "-c", str(config)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        broker = cls(process, port, folder)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process.poll() is not None:
                message = (process.stderr.read() if process.stderr else b"").decode(errors="replace").strip()
                broker.close()
                raise NoBroker(f"mosquitto would not start: {message or 'it exited at once'}.")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return broker
            except OSError:
                time.sleep(0.05)
        broker.close()
        raise NoBroker(f"mosquitto did not accept connections on port {port} within {wait:g} s.")

    def close(self) -> None:
        """Stop the broker and remove its folder."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self._folder.cleanup()

    def __enter__(self) -> LocalBroker:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
