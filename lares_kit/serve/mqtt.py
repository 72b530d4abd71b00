"""The served home on an MQTT broker: Home Assistant discovery, states, commands, and bound outside devices.

Taught in ``notebooks/18_a_real_home.ipynb``; ``lares serve-home WORLD --mqtt HOST:PORT`` starts it
(:mod:`.app`). :class:`MqttBridge` is the third door of :class:`~lares_kit.serve.service.HomeService`,
beside MCP and the HTTP simulator API, with the ``paho-mqtt`` client:

* **Discovery.** Every *exposed* device becomes a Home Assistant entity through MQTT discovery: a
  retained JSON config on ``homeassistant/<component>/<node_id>/<object_id>/config`` (the node id is
  ``lares_`` and the home's id, ``lares_lares_home``; the object id is the device's id,
  ``kitchen_light``). The component comes from :func:`lares_kit.ha.domains.domain_of`: light (the JSON
  schema, with ``brightness`` when the device dims), switch, fan, cover, lock, valve, climate,
  alarm_control_panel, vacuum, and one sensor or binary_sensor per reading of a sensor. Home Assistant's
  MQTT discovery has no media player, to-do list, weather or calendar entity: those devices are skipped,
  and :meth:`MqttBridge.describe` names them.
* **States.** Each device's state is published, retained, at start and on every change
  (:meth:`HomeService.listen`): under ``lares/<home id>/<device id>/`` -- ``state`` (``ON``/``OFF``,
  ``LOCKED``, ``open``... or the JSON of a JSON-schema light), ``position``, ``mode``, ``target``... as the
  entity needs, and ``attributes``, the whole lares state as JSON. ``lares/<home id>/availability`` says
  ``online``, and ``offline`` when the bridge stops or its connection dies (the broker's last will).
* **Commands.** What Home Assistant sends on a command topic (``.../set``: ``ON``, ``LOCK``, ``OPEN``,
  ``{"state": "ON", "brightness": 128}``, ``21.5``...) goes through
  :meth:`HomeService.command` with source ``mqtt``: the Lares tools and the home's safety policy judge it
  like any call. A refused or unreadable command changes nothing; its sentence goes to
  ``lares/<home id>/<device id>/error`` and to the log.
* **Birth.** When Home Assistant (re)starts it says ``online`` on ``homeassistant/status``: every config
  and state is published again. Births are coalesced: one republication at a time, and every birth heard
  while one waits or runs asks for at most one more after it -- a flood of births costs two, and the
  commands behind them keep flowing. Births are subscribed at QoS 0: a lost one costs nothing while
  another gets through, and a flood of them cannot fill the broker's queue of QoS 1 messages for the
  bridge, where the commands wait.
* **Bound devices.** A world device with ``mqtt: {command_topic, state_topic, format: zigbee2mqtt}``
  (``worlds/README.md``) is bound to an outside device (:meth:`HomeService.bind`): a tool's change to it
  is sent to ``command_topic`` in zigbee2mqtt's JSON, and the home takes the state the device answers on
  ``state_topic`` -- or the tool fails with "The light in the Kitchen did not answer within 2 s.". What
  the device reports on its own (someone pressed its switch) comes into the home too. A report that does
  not fit the world device (:func:`.mqtt_zigbee2mqtt.from_zigbee2mqtt`: ``{"locked": "maybe"}``, a
  brightness of 900, an attribute the device lacks) is logged in one sentence and dropped, whole -- at
  subscribing (a retained one) or live -- and is never taken as the answer a tool waits for.
* **Login and TLS.** :class:`MqttSettings` (:mod:`.mqtt_connection`): a username and a password (from a
  file or ``LARES_MQTT_PASSWORD``, never the command line), TLS with a CA and a client certificate. A
  refused login or a failed TLS check is an :class:`MqttError` in one sentence.

Messages arrive on paho's network thread, which only sorts them: the commands and the bound devices'
reports run one at a time on the bridge's own thread, since a command to a bound device waits for that
device's answer, which the network thread brings. Timed waits are polled with short sleeps (a timed
``Event.wait`` never ends under faketime, ``tests/conftest.py``).

This module is the bridge; the entities and their configs are :mod:`.mqtt_discovery`'s, Home Assistant's
payloads :mod:`.mqtt_payloads`', the bound devices :mod:`.mqtt_zigbee2mqtt`'s, and the broker's address, login and
TLS :mod:`.mqtt_connection`'s.
"""

from __future__ import annotations

import json
import logging
import queue
import ssl
import threading
import time
import uuid
from typing import Any, Callable

from paho.mqtt.client import CallbackAPIVersion, Client

from ..errors import brief
from ..ha.domains import object_id
from ..home.graph import Device
from .mqtt_connection import PASSWORD_HELP, MqttError, MqttSettings, _ssl_reason, add_mqtt_arguments, parse_address
from .mqtt_discovery import DISCOVERY_PREFIX, OFFLINE, ONLINE, _Discovery, discovery_configs
from .mqtt_payloads import POLL, BadCommand, _words
from .mqtt_zigbee2mqtt import BadReport, Zigbee2MqttLink, from_zigbee2mqtt, to_zigbee2mqtt
from .service import HomeService

__all__ = ["MqttBridge", "MqttError", "MqttSettings", "Zigbee2MqttLink", "add_mqtt_arguments", "discovery_configs",
           "from_zigbee2mqtt", "parse_address", "to_zigbee2mqtt"]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3.0  # seconds to reach the broker and hear its CONNACK
CLOSE_WITHIN = 0.8  # seconds close() waits for the broker to take the cleared configs and "offline"
REPUBLISH_WITHIN = 5.0  # seconds a republication may wait for the broker to take it before the next job runs
NAME_MISMATCH = (62, 63, 64)  # OpenSSL's verify codes: the certificate is for another host name, e-mail or IP
BAD_LOGIN = ("Bad user name or password", "Not authorized")  # CONNACK reasons that mean: the login was refused


# ---------------------------------------------------------------- the bridge
class MqttBridge:
    """The served home on an MQTT broker (see the module's docstring). Make one with :meth:`connect`.

    Examples:
        >>> from lares_kit import load_world
        >>> MqttBridge.connect(HomeService(load_world("lares-home")), "localhost")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt_connection.MqttError: The MQTT broker's address 'localhost' is not HOST:PORT (like
        127.0.0.1:1883).
    """

    def __init__(self, service: HomeService, host: str, port: int, *, base: str | None = None,
                 prefix: str = DISCOVERY_PREFIX, source: str = "mqtt", settings: MqttSettings | None = None) -> None:
        home = service.home
        self.service, self.host, self.port, self.source = service, host, port, source
        self.settings = settings or MqttSettings()
        self.node_id = f"lares_{object_id(home.id)}"
        self.base = base or f"lares/{home.id}"
        self.prefix = prefix
        self.discovery = _Discovery(home, base=self.base, node_id=self.node_id, prefix=prefix)
        self.availability = self.discovery.availability
        self.links = {d.id: Zigbee2MqttLink(self, d) for d in home.devices.values() if d.mqtt}
        self._by_state_topic = {link.state_topic: link for link in self.links.values()}
        self.closed = False
        self.published = 0  # times every config and state went out (start, reconnections, Home Assistant's birth)
        self._sent: list[Any] = []  # paho's receipts of the last full publication
        self._connack: Any = None
        self._cut = False  # the broker closed the connection before it answered CONNECT
        self._online = False  # connected now (paho reconnects by itself after a lost connection)
        self._publishing = threading.Lock()  # one full publication at a time, none after close() cleared the configs
        self.births = 0  # Home Assistant's "online" messages heard
        self._births = threading.Lock()
        self._republish_queued = False  # a republication waits in the jobs: births until it starts ask for no other
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work, name="lares-mqtt", daemon=True)
        self._stop_listening: Callable[[], None] | None = None
        self.client = Client(callback_api_version=CallbackAPIVersion.VERSION2,
                             client_id=f"lares_kit-{object_id(home.id)}-{uuid.uuid4().hex[:8]}")
        self.client.will_set(self.availability, OFFLINE, qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self.client.reconnect_delay_set(min_delay=1, max_delay=10)
        self.settings.apply(self.client)  # the login and TLS, if any (MqttError for an unusable file)

    @classmethod
    def connect(cls, service: HomeService, address: str, *, timeout: float = CONNECT_TIMEOUT,
                base: str | None = None, prefix: str = DISCOVERY_PREFIX, source: str = "mqtt",
                settings: MqttSettings | None = None) -> MqttBridge:
        """Connect to the broker at ``address``, publish the home, bind its outside devices; return the bridge.

        Args:
            service: The served home.
            address: The broker's ``HOST:PORT``.
            timeout: Seconds to reach the broker and hear it accept the connection.
            base: The root of the home's topics; default ``lares/<home id>``.
            prefix: Home Assistant's discovery prefix.
            source: Who commands from the broker speak for, for the home's safety policy.
            settings: The login and TLS (:class:`MqttSettings`); default neither.

        Raises:
            MqttError: a malformed address, a broker that cannot be reached, a refused login or a failed TLS
                check, in one sentence.
        """
        host, port = parse_address(address)
        bridge = cls(service, host, port, base=base, prefix=prefix, source=source, settings=settings)
        bridge._start(timeout)
        return bridge

    def _start(self, timeout: float) -> None:
        where = f"{self.host}:{self.port}"
        self.client.connect_timeout = timeout
        try:
            self.client.connect(self.host, self.port, keepalive=30)  # TLS: the handshake happens here
        except ssl.SSLCertVerificationError as exc:
            hint = ("connect by the name its certificate gives, or turn the host name check off "
                    "(--mqtt-no-hostname-check)" if exc.verify_code in NAME_MISMATCH else
                    "give the CA that signed it (--mqtt-ca)")
            raise MqttError(f"The MQTT broker at {where} failed the TLS check ({_ssl_reason(exc)}): {hint}.") from None
        except (ssl.SSLError, ConnectionResetError) as exc:
            if not self.settings.tls:  # not ours: a plain connection cut at once
                raise MqttError(f"Cannot reach the MQTT broker at {where} ({_ssl_reason(exc)}).") from None
            raise MqttError(f"The TLS handshake with the MQTT broker at {where} failed ({_ssl_reason(exc)}): does it "
                            "speak TLS on that port (usually 8883)?") from None
        except OSError as exc:
            reason = exc.strerror or str(exc) or type(exc).__name__
            raise MqttError(f"Cannot reach the MQTT broker at {where} ({reason}): is a broker such as mosquitto "
                            "running there?") from None
        self._worker.start()
        self.client.loop_start()
        if not _wait(lambda: self._connack is not None or self._cut, timeout):
            self._shutdown(clear=False)
            raise MqttError(f"The MQTT broker at {where} did not accept the connection within {timeout:g} s: is it "
                            "an MQTT broker?")
        if self._connack is None:  # cut without an answer: what a broker does with a client it will not talk to
            self._shutdown(clear=False)
            hint = ("does it want TLS (--mqtt-tls)?" if not self.settings.tls else
                    "does it want a client certificate (--mqtt-cert)?" if not self.settings.cert_file else
                    "does it trust the client certificate?")
            raise MqttError(f"The MQTT broker at {where} closed the connection without answering: {hint}")
        if self._connack.is_failure:
            self._shutdown(clear=False)
            raise MqttError(self._refusal(where))
        if not _wait(lambda: self.published > 0 and all(info.is_published() for info in self._sent), timeout):
            self._shutdown(clear=False)
            raise MqttError(f"The MQTT broker at {where} did not take the home's topics within {timeout:g} s.")
        self._stop_listening = self.service.listen(self._on_event)
        for device_id, link in self.links.items():
            self.service.bind(device_id, link)

    def _refusal(self, where: str) -> str:
        # The broker's CONNACK said no: the sentence, with what to check when it is about the login.
        reason = str(self._connack)
        if reason not in BAD_LOGIN:
            return f"The MQTT broker at {where} refused the connection: {reason}."
        if self.settings.username:
            return (f"The MQTT broker at {where} refused the login as {brief(self.settings.username)} ({reason}): "
                    f"check the username and the password ({PASSWORD_HELP}).")
        return (f"The MQTT broker at {where} refused the connection ({reason}): it wants a username and a password "
                f"(--mqtt-username, and {PASSWORD_HELP}).")

    def describe(self) -> str:
        """One line: the broker, the node id, how many devices Home Assistant sees, what is skipped or bound."""
        found = self.discovery
        how = self.settings.describe()
        text = (f"{self.host}:{self.port}{f' ({how})' if how else ''}, Home Assistant node {self.node_id}: "
                f"{len(found.devices)} devices published under {self.base}/")
        if found.skipped:
            text += "; skipped (" + "; ".join(f"{d} -- {why}" for d, why in found.skipped.items()) + ")"
        if self.links:
            text += "; bound to outside devices: " + ", ".join(f"{d} -> {link.command_topic}"
                                                               for d, link in self.links.items())
        return text

    @property
    def config_topics(self) -> list[str]:
        """The discovery config topics the bridge publishes, one per entity."""
        return [self.discovery.config_topic(e) for e in self.discovery.entities]

    # ------------------------------------------------------------ publishing
    def publish_all(self) -> None:
        """Publish every discovery config, the availability and every state (retained)."""
        with self._publishing:
            if self.closed:
                return
            sent = [self._publish(self.discovery.config_topic(entity), json.dumps(entity.config, ensure_ascii=False))
                    for entity in self.discovery.entities]
            sent.append(self._publish(self.availability, ONLINE))
            for device_id in self.discovery.devices:
                sent += self._publish_state(device_id, dict(self.service.home.devices[device_id].state))
            robot = self.service.home.robot
            sent.append(self._publish(f"{self.base}/robot", json.dumps({"id": robot.id, "room": robot.room})))
            self._sent = sent  # connect() returns once the broker has acknowledged all of them
            self.published += 1

    def _publish(self, topic: str, payload: str, *, retain: bool = True) -> Any:
        return self.client.publish(topic, payload, qos=1, retain=retain)

    def _publish_state(self, device_id: str, state: dict[str, Any]) -> list[Any]:
        sent = [self._publish(f"{self.base}/{device_id}/attributes",
                              json.dumps(state, ensure_ascii=False, default=str))]
        for entity in self.discovery.by_device.get(device_id, []):
            for topic, payload_of in entity.outputs.items():
                payload = payload_of(state)
                if payload is not None:
                    sent.append(self._publish(topic, payload))
        return sent

    def _on_event(self, event: dict[str, Any]) -> None:
        # A change in the home (any door, any thread): its new state on its topics.
        if self.closed:
            return
        if event.get("type") == "device" and event.get("id") in self.discovery.devices:
            self._publish_state(event["id"], event.get("state", {}))
        elif event.get("type") == "robot":
            self._publish(f"{self.base}/robot", json.dumps({"id": event.get("id"), "room": event.get("room")}))

    # ------------------------------------------------------------ receiving (paho's network thread)
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        self._connack = reason_code
        if reason_code.is_failure:
            return
        if self.published and not self._online:
            log.warning("Connected again to the MQTT broker at %s:%s.", self.host, self.port)
        self._online = True
        topics = [(f"{self.prefix}/status", 0)] + [(t, 1) for t in self.discovery.commands]  # births: QoS 0 (above)
        topics += [(t, 1) for t in self._by_state_topic]
        client.subscribe(topics)
        self._republish()  # at start, and again after a lost connection comes back

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if self._connack is None:
            self._cut = True
        if not self.closed and self._online:
            log.warning("Lost the MQTT broker at %s:%s (%s); trying again.", self.host, self.port, reason_code)
        self._online = False

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            topic, payload = message.topic, message.payload
            if topic == f"{self.prefix}/status":
                if payload.decode("utf-8", "replace").strip().lower() == ONLINE:
                    with self._births:
                        self.births += 1
                    self._republish()
            elif topic in self._by_state_topic:
                link = self._by_state_topic[topic]
                if not link.heard(payload, retained=bool(message.retain)):
                    self._jobs.put(lambda: self._report(link, payload))
            elif topic in self.discovery.commands:
                self._jobs.put(lambda: self._command(topic, payload))
        except Exception:  # pragma: no cover - never let a message end paho's loop
            log.exception("could not handle the MQTT message on %s", getattr(message, "topic", "?"))

    def _republish(self) -> None:
        # Every config and state again, coalesced: while one republication waits in the jobs, asking adds none.
        with self._births:
            if self._republish_queued:
                return
            self._republish_queued = True
        self._jobs.put(self._publish_again)

    def _publish_again(self) -> None:
        with self._births:
            self._republish_queued = False  # from here on a birth asks for one more, after this one
        self.publish_all()
        # In flight until the broker has taken it all: a flood of births cannot pile publications up in paho's
        # memory faster than the broker acknowledges them (the wait ends early when the bridge stops).
        sent = self._sent
        _wait(lambda: self.closed or all(info.is_published() for info in sent), REPUBLISH_WITHIN)

    # ------------------------------------------------------------ the bridge's thread
    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # pragma: no cover - a bug must not stop the bridge
                log.exception("the MQTT bridge failed on a message")

    def _command(self, topic: str, payload: bytes) -> None:
        # A command from Home Assistant (or anyone) on a command topic: through the tools and the safety policy.
        device, parse = self.discovery.commands[topic]
        text = payload.decode("utf-8", "replace")
        words = _words(device, self.service.home)
        try:
            update = parse(text)
        except BadCommand as exc:
            self._refused(device, f"The command {brief(text)} for {words} on {topic} is not understood: {exc}.")
            return
        if update:
            result = self.service.command(device.id, update, source=self.source)
            if not result.ok:
                self._refused(device, result.text)
        self._publish_state(device.id, dict(self.service.home.devices[device.id].state))  # the truth, changed or not

    def _refused(self, device: Device, sentence: str) -> None:
        log.info("%s", sentence)  # lares serve-home shows it; a notebook reads the error topic instead
        self._publish(f"{self.base}/{device.id}/error", sentence, retain=False)

    def _report(self, link: Zigbee2MqttLink, payload: bytes) -> None:
        # An outside device said its state without being asked (someone pressed its switch): into the home, if
        # it fits the world device; a retained one comes at subscribing.
        try:
            update = link.read(payload)
        except BadReport as exc:
            log.warning("%s", exc)
            return
        if update:
            self.service.apply_state(link.device.id, update)

    # ------------------------------------------------------------ stopping
    def close(self) -> None:
        """Clear the retained configs, say ``offline``, disconnect: Home Assistant forgets the home. Within ~1 s."""
        self._shutdown(clear=True)

    def _shutdown(self, *, clear: bool) -> None:
        with self._publishing:
            if self.closed:
                return
            self.closed = True
        if self._stop_listening is not None:
            self._stop_listening()
        for device_id in self.links:  # the simulation holds these devices again
            self.service.unbind(device_id)
        if clear and self.client.is_connected():  # else the broker says "offline" itself (the will)
            sent = [self._publish(topic, "") for topic in self.config_topics]
            sent.append(self._publish(self.availability, OFFLINE))
            _wait(lambda: all(info.is_published() for info in sent), CLOSE_WITHIN)
        self.client.disconnect()
        self.client.loop_stop()
        self._jobs.put(None)
        if self._worker.is_alive():
            self._worker.join()

    def __enter__(self) -> MqttBridge:  # noqa: PYI034 -- Python 3.10 has no typing.Self
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _wait(done: Callable[[], bool], seconds: float) -> bool:
    # Polled with short sleeps: a timed Event.wait never ends under faketime (tests/conftest.py).
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True
