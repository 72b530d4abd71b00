"""A Mosquitto of a test's own, and an outside MQTT client, for the tests of the MQTT door (lares_kit.serve.mqtt).

Each test starts its broker on a free loopback port with its own config (anonymous, or with a password file and
TLS listeners), and stops it. Every wait polls with a timeout (a timed Event.wait never ends under faketime,
tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
from installs import stop  # tests/installs.py
from paho.mqtt.client import CallbackAPIVersion, Client

MOSQUITTO = "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = "/usr/bin/mosquitto_passwd"  # ships in the same Debian package


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(done, seconds: float = 5.0, what: str = "it") -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds:g} s")
        time.sleep(0.01)


def needs_mosquitto() -> None:
    if not os.access(MOSQUITTO, os.X_OK):
        pytest.skip("needs Debian's mosquitto (`make test` installs it as root; else `apt-get install mosquitto`): "
                    "the MQTT door is tested against a real broker")


@contextlib.contextmanager
def running_mosquitto(folder: Path, config: str = "allow_anonymous true\n", listeners: int = 1) -> Iterator[list[int]]:
    """Mosquitto with ``config`` (global settings, then ``listener PORT 127.0.0.1`` lines for the caller to
    complete with ``{port0}``... placeholders, or none) on free loopback ports; yields the ports."""
    needs_mosquitto()
    ports = [free_port() for _ in range(listeners)]
    conf = folder / "mosquitto.conf"
    text = config.format(**{f"port{i}": port for i, port in enumerate(ports)})
    if "listener" not in text:
        text = f"listener {ports[0]} 127.0.0.1\n" + text
    conf.write_text(f"persistence false\n{text}")
    log = open(folder / "mosquitto.log", "wb")
    process = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)

    def accepting(port: int) -> bool:
        assert process.poll() is None, f"mosquitto exited:\n{(folder / 'mosquitto.log').read_text()}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    try:
        for port in ports:
            wait_until(lambda: accepting(port), 5, "mosquitto accepting connections")
        yield ports
    finally:
        stop(process, timeout=5)
        log.close()


class Outside:
    """An independent MQTT client: what Home Assistant, a person with mosquitto_sub, or a device sees."""

    def __init__(self, port: int, *topics: str) -> None:
        self.messages: list[tuple[str, str, bool]] = []  # (topic, payload, retained)
        self._lock = threading.Lock()
        self._subscribed = 0
        self.on_message = None  # optional hook(topic, payload), run on paho's thread
        self.client = Client(callback_api_version=CallbackAPIVersion.VERSION2, client_id=f"test-{uuid.uuid4().hex}")
        self.client.on_message = self._heard
        self.client.on_subscribe = lambda *args: setattr(self, "_subscribed", self._subscribed + 1)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        for topic in topics:
            self.subscribe(topic)

    def _heard(self, client, userdata, message) -> None:
        payload = message.payload.decode("utf-8")
        with self._lock:
            self.messages.append((message.topic, payload, bool(message.retain)))
        if self.on_message is not None:
            self.on_message(message.topic, payload)

    def subscribe(self, topic: str) -> None:
        before = self._subscribed
        self.client.subscribe(topic, qos=1)
        wait_until(lambda: self._subscribed > before, 5, f"subscribing to {topic}")

    def publish(self, topic: str, payload: str, retain: bool = False) -> None:
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        wait_until(info.is_published, 5, f"publishing on {topic}")

    def heard(self, topic: str | None = None, *, retained: bool | None = None) -> list[str]:
        with self._lock:
            return [p for t, p, r in self.messages if (topic is None or t == topic)
                    and (retained is None or r == retained)]

    def last(self, topic: str, seconds: float = 5.0, *, where=lambda payload: True) -> str:
        """The latest payload on ``topic`` that ``where`` accepts, waiting for one."""
        wait_until(lambda: any(where(p) for p in self.heard(topic)), seconds, f"a message on {topic}")
        return [p for p in self.heard(topic) if where(p)][-1]

    def retained_now(self, pattern: str) -> dict[str, str]:
        """What a new subscriber to ``pattern`` gets at once: the retained messages (empty ones are none).

        A marker published after subscribing comes after every retained message the broker sends.
        """
        marker = f"test-marker/{uuid.uuid4().hex}"
        with self._lock:
            self.messages.clear()
        self.subscribe(pattern)
        self.subscribe(marker)
        self.publish(marker, "end")
        self.last(marker)
        return {t: p for t, p, r in list(self.messages) if r and p}

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
