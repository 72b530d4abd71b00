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
ATTEMPTS = 5  # ports tried before giving up


class NoBroker(LaresError):
    """No ``mosquitto`` program here, or it would not start; the message says what to do."""


def mosquitto_path() -> str | None:
    """Where the ``mosquitto`` program is, or None (it is often in an ``sbin`` folder outside the PATH)."""
    return shutil.which("mosquitto") or next((p for p in PLACES if Path(p).exists()), None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


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

        The port is free when chosen, but another program -- another user's broker, on a shared machine -- may
        take it before ``mosquitto`` binds it. So the broker counts as started only once its own log says it
        is running (a connection alone could reach someone else's broker); if the port was taken, another is
        tried.

        Args:
            wait: Seconds to wait for it to accept connections.
        """
        program = mosquitto_path()
        if program is None:
            raise NoBroker("No MQTT broker here: the mosquitto program is not installed (on Debian or Ubuntu: "
                           "apt-get install mosquitto; on macOS: brew install mosquitto), so the MQTT cells are "
                           "skipped.")
        folder = tempfile.TemporaryDirectory(prefix="lares-mosquitto-")
        deadline = time.monotonic() + wait
        try:
            for _ in range(ATTEMPTS):
                broker = cls._launch(program, folder, deadline)
                if broker is not None:
                    return broker
        except BaseException:
            folder.cleanup()
            raise
        folder.cleanup()
        raise NoBroker(f"mosquitto found no free port in {ATTEMPTS} tries: other programs took each one first.")

    @classmethod
    def _launch(cls, program: str, folder: tempfile.TemporaryDirectory[str], deadline: float) -> LocalBroker | None:
        # One try on one port: the broker, or None when another program holds the port.
        port = _free_port()
        config, log = Path(folder.name) / "mosquitto.conf", Path(folder.name) / f"mosquitto-{port}.log"
        config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n",
                          encoding="utf-8")
        with log.open("wb") as stderr:  # stderr is unbuffered: each line is in the file at once
            process = subprocess.Popen([program, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=stderr)
        broker = cls(process, port, folder)
        while time.monotonic() < deadline:
            said = log.read_text(encoding="utf-8", errors="replace")
            if process.poll() is not None:
                broker.stop()
                if "Address already in use" in said:
                    return None
                lines = [line.split(": ", 1)[-1] for line in said.splitlines() if "Error" in line]
                raise NoBroker(f"mosquitto would not start: {'; '.join(lines) or 'it exited at once'}.")
            # mosquitto 2 says "mosquitto version 2.0.11 running" once it listens; version 1 says nothing then
            if (" running" in said or "version 1." in said) and _accepts(port):
                return broker
            time.sleep(0.05)
        broker.stop()
        raise NoBroker(f"mosquitto did not accept connections on port {port} in time.")

    def stop(self) -> None:
        """Stop the broker's process (:meth:`close` also removes its folder)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def close(self) -> None:
        """Stop the broker and remove its folder."""
        self.stop()
        self._folder.cleanup()

    def __enter__(self) -> LocalBroker:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
