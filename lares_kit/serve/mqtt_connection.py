"""How the MQTT bridge reaches its broker: the address, an optional login and TLS, and their command-line options.

Part of the MQTT door of ``lares serve-home`` (:mod:`.mqtt`; taught in
``notebooks/18_a_real_home.ipynb``). A broker on loopback for a lesson needs
none of this; a real home's broker usually asks for a username and a password,
and one reached over a network should be reached over TLS (port 8883 by
custom). :class:`MqttSettings` says how to log in and whether to use TLS;
:func:`add_mqtt_arguments` adds the options that fill it to a command line and
:meth:`MqttSettings.from_args` reads them back. The password is never an
option's value, which every user of the machine can read in the process list:
it comes from a file (``--mqtt-password-file``) or from the environment
variable ``LARES_MQTT_PASSWORD``. Whatever cannot be used -- a malformed
address, a missing file, a refused login, a failed TLS check -- is an
:class:`MqttError` with one sentence.

This module knows no MQTT client: :class:`~.mqtt.MqttBridge` hands the
settings to paho's.
"""

from __future__ import annotations

import argparse
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import LaresError, brief

__all__ = ["MqttError", "MqttSettings", "PASSWORD_VARIABLE", "USERNAME_VARIABLE", "add_mqtt_arguments",
           "parse_address"]

PASSWORD_VARIABLE = "LARES_MQTT_PASSWORD"  # the broker's password, when no --mqtt-password-file is given
USERNAME_VARIABLE = "LARES_MQTT_USERNAME"  # the username, when no --mqtt-username is given
PASSWORD_HELP = f"--mqtt-password-file FILE or {PASSWORD_VARIABLE}"


class MqttError(LaresError):
    """The MQTT broker cannot be used: a malformed address, nobody listening, or a refused connection."""


def parse_address(address: str) -> tuple[str, int]:
    """A broker's ``HOST:PORT`` as ``(host, port)``; an IPv6 host is written in brackets.

    Args:
        address: What ``--mqtt`` was given, e.g. ``"127.0.0.1:1883"`` or ``"[::1]:1883"``.

    Raises:
        MqttError: not ``HOST:PORT``, or a port that is not a whole number from 1 to 65535.

    Examples:
        >>> parse_address("127.0.0.1:1883"), parse_address("[::1]:8883")
        (('127.0.0.1', 1883), ('::1', 8883))
        >>> parse_address("nohost")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt_connection.MqttError: The MQTT broker's address 'nohost' is not HOST:PORT
        (like 127.0.0.1:1883).
    """
    text = str(address).strip()
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text or (":" in host and not text.startswith("[")):
        raise MqttError(f"The MQTT broker's address {brief(address)} is not HOST:PORT (like 127.0.0.1:1883).")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise MqttError(f"The MQTT broker's address {brief(address)} has a bad port: after the colon comes a whole "
                        "number from 1 to 65535 (like 127.0.0.1:1883).")
    return host, int(port_text)


@dataclass(frozen=True)
class MqttSettings:
    """How to log in to the broker and whether to speak TLS to it; the default is neither (a broker on loopback).

    Examples:
        >>> MqttSettings(username="lares", password="s3cret")  # doctest: +NORMALIZE_WHITESPACE
        MqttSettings(username='lares', tls=False, ca_file=None, cert_file=None, key_file=None,
                     check_hostname=True)
        >>> "s3cret" in repr(MqttSettings(username="lares", password="s3cret"))  # a log may print settings
        False
        >>> MqttSettings(password="s3cret")
        Traceback (most recent call last):
        ...
        lares_kit.serve.mqtt_connection.MqttError: An MQTT password needs a username too (--mqtt-username).
    """

    username: str | None = None  # None: connect without logging in
    password: str | None = field(default=None, repr=False)  # kept out of repr: a log or a notebook may print it
    tls: bool = False  # speak TLS to the broker (the files below need it)
    ca_file: str | None = None  # the CA that signed the broker's certificate; None: the system's CAs
    cert_file: str | None = None  # a client certificate, for a broker that asks for one
    key_file: str | None = None  # its private key, when the certificate file does not hold it
    check_hostname: bool = True  # the broker's certificate must name the host connected to

    def __post_init__(self) -> None:
        if self.password is not None and not self.username:
            raise MqttError("An MQTT password needs a username too (--mqtt-username).")
        if not self.tls and (self.ca_file or self.cert_file or self.key_file):
            raise MqttError("A CA, certificate or key file for MQTT is used only with TLS (--mqtt-tls).")
        if self.key_file and not self.cert_file:
            raise MqttError("An MQTT client key (--mqtt-key) needs its certificate too (--mqtt-cert).")

    @classmethod
    def from_args(cls, args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> MqttSettings:
        """The settings a command line asked for (the options of :func:`add_mqtt_arguments`).

        A CA or client certificate turns TLS on by itself. The password is the
        first line of ``--mqtt-password-file``, else ``LARES_MQTT_PASSWORD``;
        the username is ``--mqtt-username``, else ``LARES_MQTT_USERNAME``.

        Args:
            args: The parsed command line; options it lacks count as not given.
            environ: Where the variables are read; default ``os.environ``.

        Raises:
            MqttError: a password file that cannot be read or is empty, or options that do not go together.

        Examples:
            >>> parser = argparse.ArgumentParser()
            >>> add_mqtt_arguments(parser)
            >>> args = parser.parse_args(["--mqtt-username", "lares", "--mqtt-ca", "ca.pem"])
            >>> settings = MqttSettings.from_args(args, environ={"LARES_MQTT_PASSWORD": "s3cret"})
            >>> settings.username, settings.password, settings.tls, settings.ca_file
            ('lares', 's3cret', True, 'ca.pem')
            >>> MqttSettings.from_args(parser.parse_args([]), environ={}) == MqttSettings()
            True
        """
        env = os.environ if environ is None else environ

        def option(name: str) -> Any:  # an app may not have added every option
            return getattr(args, name, None)

        password_file = option("mqtt_password_file")
        password = _read_password(password_file) if password_file else env.get(PASSWORD_VARIABLE) or None
        ca, cert, key = option("mqtt_ca"), option("mqtt_cert"), option("mqtt_key")
        return cls(username=option("mqtt_username") or env.get(USERNAME_VARIABLE) or None, password=password,
                   tls=bool(option("mqtt_tls") or ca or cert or key), ca_file=ca, cert_file=cert, key_file=key,
                   check_hostname=not option("mqtt_no_hostname_check"))

    def describe(self) -> str:
        """A few words for the start-up line: ``"TLS, as lares"``; empty for a plain anonymous connection.

        Examples:
            >>> MqttSettings(username="lares", password="x", tls=True).describe()
            'TLS, as lares'
        """
        words = ["TLS" + ("" if self.check_hostname else " without the host name check")] if self.tls else []
        if self.username:
            words.append(f"as {self.username}")
        return ", ".join(words)

    def apply(self, client: Any) -> None:
        """Give the login and the TLS context to a paho client, before it connects.

        Args:
            client: A ``paho.mqtt.client.Client``.

        Raises:
            MqttError: a CA, certificate or key file that cannot be read or used.
        """
        if self.username:
            client.username_pw_set(self.username, self.password)
        if self.tls:
            client.tls_set_context(self.tls_context())

    def tls_context(self) -> ssl.SSLContext:
        """The TLS context: the broker's certificate checked against ``ca_file`` (or the system's CAs).

        Raises:
            MqttError: a file that cannot be read, or that holds no certificate or key.
        """
        for what, path in (("CA", self.ca_file), ("certificate", self.cert_file), ("key", self.key_file)):
            if path and not Path(path).is_file():
                raise MqttError(f"The MQTT {what} file {_file(path)} cannot be read: there is no such file.")
        try:
            context = ssl.create_default_context(cafile=self.ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise MqttError(f"The MQTT CA file {_file(self.ca_file)} holds no certificate a TLS check can use "
                            f"({_ssl_reason(exc)}).") from None
        if self.cert_file:
            try:
                context.load_cert_chain(self.cert_file, self.key_file)
            except (ssl.SSLError, OSError) as exc:
                raise MqttError(f"The MQTT client certificate {_file(self.cert_file)} and its key cannot be used "
                                f"({_ssl_reason(exc)}).") from None
        context.check_hostname = self.check_hostname
        return context


def add_mqtt_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of a broker's login and TLS (``--mqtt-username``, ``--mqtt-tls``...) to a command line.

    Read them back with :meth:`MqttSettings.from_args`. The password has no option of its own on purpose:
    a command line is visible to every user of the machine.

    Args:
        parser: The command's parser (``lares serve-home``'s).

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_mqtt_arguments(parser)
        >>> sorted(vars(parser.parse_args([])))  # doctest: +NORMALIZE_WHITESPACE
        ['mqtt_ca', 'mqtt_cert', 'mqtt_key', 'mqtt_no_hostname_check', 'mqtt_password_file', 'mqtt_tls',
         'mqtt_username']
    """
    group = parser.add_argument_group("MQTT broker login and TLS (with --mqtt)")
    group.add_argument("--mqtt-username", default=None, metavar="NAME",
                       help=f"log in to the broker as NAME (default: ${USERNAME_VARIABLE}, else no login)")
    group.add_argument("--mqtt-password-file", default=None, metavar="FILE",
                       help=f"the password is this file's first line (default: ${PASSWORD_VARIABLE}); never "
                            "given on the command line, which other users can see")
    group.add_argument("--mqtt-password", nargs="?", action=_NoPasswordOption, default=argparse.SUPPRESS,
                       help=argparse.SUPPRESS)
    group.add_argument("--mqtt-tls", action="store_true",
                       help="speak TLS to the broker (usually port 8883), checked against the system's CAs")
    group.add_argument("--mqtt-ca", default=None, metavar="FILE",
                       help="the CA certificate (PEM) that signed the broker's certificate; implies --mqtt-tls")
    group.add_argument("--mqtt-cert", default=None, metavar="FILE",
                       help="a client certificate (PEM) for a broker that asks for one; implies --mqtt-tls")
    group.add_argument("--mqtt-key", default=None, metavar="FILE",
                       help="the client certificate's private key, when --mqtt-cert does not hold it")
    group.add_argument("--mqtt-no-hostname-check", action="store_true",
                       help="accept a broker certificate made out to another name (still signed by the CA)")


class _NoPasswordOption(argparse.Action):
    # Said on purpose: without it argparse would take --mqtt-password as short for --mqtt-password-file, and read
    # the password as a file's name.
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(f"there is no --mqtt-password, since other users can read a command line: put the password in "
                     f"a file for --mqtt-password-file, or in ${PASSWORD_VARIABLE}")


def _file(path: Any) -> str:
    # A file's name in a sentence: whole, unless it is absurdly long.
    return repr(str(path)) if len(str(path)) <= 300 else brief(str(path))


def _read_password(path: str) -> str:
    # The first line, without its line end: `echo s3cret > file` and an editor's file both work.
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise MqttError(f"The MQTT password file {_file(path)} cannot be read ({reason}).") from None
    password = text.splitlines()[0] if text.strip() else ""
    if not password:
        raise MqttError(f"The MQTT password file {_file(path)} is empty: its first line is the password.")
    return password


def _ssl_reason(exc: BaseException) -> str:
    # An ssl error's own words, without OpenSSL's "[SSL: X] ... (_ssl.c:1006)" wrapping.
    if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_message:
        return str(exc.verify_message).rstrip(".")
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None)
    return str(reason).replace("_", " ").lower() if reason else (str(exc) or type(exc).__name__)
