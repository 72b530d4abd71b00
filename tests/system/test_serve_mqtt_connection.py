"""How the MQTT door reaches its broker (lares_kit.serve.mqtt_connection): a login and TLS, against a real Mosquitto.

The test's broker takes no anonymous client (a password file made with mosquitto_passwd) and listens three ways
on loopback: plain, TLS with a certificate from a CA the test makes, and TLS that wants a client certificate.
"""

import argparse
import datetime
import getpass
import os
import subprocess
from pathlib import Path

import pytest
from mosquitto import MOSQUITTO_PASSWD, needs_mosquitto, running_mosquitto

from lares_kit import load_world
from lares_kit.cli.commands import build_parser, main
from lares_kit.serve.mqtt import MqttBridge, MqttError, MqttSettings, add_mqtt_arguments
from lares_kit.serve.service import HomeService

PASSWORD = "correct horse battery staple"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_mqtt_arguments(parser)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- settings
def test_settings_read_the_password_from_a_file_or_the_environment_never_an_option(tmp_path, capsys):
    secret = tmp_path / "password"
    secret.write_text(f"{PASSWORD}\nsecond line ignored\n")
    settings = MqttSettings.from_args(parse("--mqtt-username", "lares", "--mqtt-password-file", str(secret)),
                                      environ={"LARES_MQTT_PASSWORD": "not this one"})
    assert (settings.username, settings.password, settings.tls) == ("lares", PASSWORD, False)
    assert PASSWORD not in repr(settings) and settings.describe() == "as lares"
    from_env = MqttSettings.from_args(parse(), environ={"LARES_MQTT_USERNAME": "hass", "LARES_MQTT_PASSWORD": "pw"})
    assert (from_env.username, from_env.password) == ("hass", "pw")
    assert MqttSettings.from_args(parse(), environ={}) == MqttSettings()
    with pytest.raises(SystemExit):  # no option takes the password itself: other users can read a command line
        parse("--mqtt-password", PASSWORD)  # (nor is it taken as short for --mqtt-password-file)
    assert "there is no --mqtt-password" in capsys.readouterr().err


def test_tls_settings_follow_the_options(tmp_path):
    settings = MqttSettings.from_args(parse("--mqtt-ca", "ca.pem", "--mqtt-no-hostname-check"), environ={})
    assert (settings.tls, settings.ca_file, settings.check_hostname) == (True, "ca.pem", False)  # a CA means TLS
    assert settings.describe() == "TLS without the host name check"
    client = MqttSettings.from_args(parse("--mqtt-cert", "me.pem", "--mqtt-key", "me.key"), environ={})
    assert (client.tls, client.cert_file, client.key_file, client.check_hostname) == (True, "me.pem", "me.key", True)
    assert MqttSettings.from_args(parse("--mqtt-tls"), environ={}).tls_context().check_hostname  # the system's CAs


@pytest.mark.parametrize(("build", "sentence"), [
    (lambda tmp: MqttSettings(password="x"), "An MQTT password needs a username too (--mqtt-username)."),
    (lambda tmp: MqttSettings(ca_file="ca.pem"), "A CA, certificate or key file for MQTT is used only with TLS "
                                                  "(--mqtt-tls)."),
    (lambda tmp: MqttSettings(tls=True, key_file="k.pem"), "An MQTT client key (--mqtt-key) needs its certificate "
                                                            "too (--mqtt-cert)."),
    (lambda tmp: MqttSettings.from_args(parse("--mqtt-password-file", str(tmp / "nowhere")), environ={}),
     "The MQTT password file '{tmp}/nowhere' cannot be read (No such file or directory)."),
    (lambda tmp: MqttSettings.from_args(parse("--mqtt-password-file", str(tmp / "empty")), environ={}),
     "The MQTT password file '{tmp}/empty' is empty: its first line is the password."),
    (lambda tmp: MqttSettings(tls=True, ca_file=str(tmp / "nowhere.pem")).tls_context(),
     "The MQTT CA file '{tmp}/nowhere.pem' cannot be read: there is no such file."),
    (lambda tmp: MqttSettings(tls=True, ca_file=str(tmp / "empty")).tls_context(),
     "The MQTT CA file '{tmp}/empty' holds no certificate a TLS check can use"),
])
def test_settings_that_cannot_be_used_are_one_sentence(tmp_path, build, sentence):
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(MqttError) as caught:
        build(tmp_path)
    assert str(caught.value).startswith(sentence.format(tmp=tmp_path)), str(caught.value)
    assert "\n" not in str(caught.value)


# ---------------------------------------------------------------- a broker that wants a login, and TLS
def _certificates(folder: Path) -> dict[str, Path]:
    """A CA, the broker's certificate from it for 'localhost' only, and a client certificate; PEM files."""
    pytest.importorskip("cryptography", reason="making the test's certificates needs `cryptography`")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)  # only the certificates' validity reads the clock

    def issue(name: str, key, issuer_name, issuer_key, *, ca: bool = False, names=(), usage=None):
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name or subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=365 * 20))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:
            builder = builder.add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False),
                                            critical=True)
            builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                                            critical=False)
        else:
            builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                issuer_key.public_key()), critical=False)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
        if usage:
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    files = {}

    def write(stem: str, cert, key) -> None:
        files[f"{stem}.pem"] = folder / f"{stem}.pem"
        files[f"{stem}.pem"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        files[f"{stem}.key"] = folder / f"{stem}.key"
        files[f"{stem}.key"].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                           serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = issue("lares test CA", ca_key, None, ca_key, ca=True)
    write("ca", ca, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    write("server", issue("localhost", server_key, ca.subject, ca_key, names=[x509.DNSName("localhost")],
                          usage=ExtendedKeyUsageOID.SERVER_AUTH), server_key)
    client_key = ec.generate_private_key(ec.SECP256R1())
    write("client", issue("lares", client_key, ca.subject, ca_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH), client_key)
    other_key = ec.generate_private_key(ec.SECP256R1())
    write("other-ca", issue("another CA", other_key, None, other_key, ca=True), other_key)
    return files


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A Mosquitto that wants a login: ports plain, tls, tls_client (wants a client certificate); and the files."""
    needs_mosquitto()
    if not os.access(MOSQUITTO_PASSWD, os.X_OK):
        pytest.skip("needs mosquitto_passwd (Debian's mosquitto package) to make the broker's password file")
    folder = tmp_path_factory.mktemp("secured-mosquitto")
    files = _certificates(folder)
    passwords = folder / "passwords"
    subprocess.run([MOSQUITTO_PASSWD, "-c", "-b", str(passwords), "lares", PASSWORD], check=True,
                   capture_output=True)
    passwords.chmod(0o600)
    tls = f"cafile {files['ca.pem']}\ncertfile {files['server.pem']}\nkeyfile {files['server.key']}\n"
    # The broker runs as whoever runs the test (as root it would switch to the mosquitto user, who cannot read
    # the test's folder).
    config = (f"user {getpass.getuser()}\nallow_anonymous false\npassword_file {passwords}\n"
              "listener {port0} 127.0.0.1\n"
              "listener {port1} 127.0.0.1\n" + tls +
              "listener {port2} 127.0.0.1\n" + tls + "require_certificate true\n")
    with running_mosquitto(folder, config, listeners=3) as (plain, tls_port, tls_client):
        yield {"plain": plain, "tls": tls_port, "tls_client": tls_client, **{k: str(v) for k, v in files.items()},
               "folder": folder}


def connect(port: int, host: str = "127.0.0.1", **settings) -> str:
    """Connect a bridge with these settings and close it: "connected", or the MqttError's sentence."""
    try:
        with MqttBridge.connect(HomeService(load_world("lares-home")), f"{host}:{port}",
                                settings=MqttSettings(**settings)) as bridge:
            assert bridge.published == 1
            return "connected: " + bridge.describe().split(", Home Assistant")[0]
    except MqttError as exc:
        return str(exc)


def test_the_right_password_connects_and_a_wrong_one_is_one_sentence(secured):
    port = secured["plain"]
    assert connect(port, username="lares", password=PASSWORD) == f"connected: 127.0.0.1:{port} (as lares)"
    assert connect(port, username="lares", password="wrong") == (
        f"The MQTT broker at 127.0.0.1:{port} refused the login as 'lares' (Not authorized): check the username and "
        "the password (--mqtt-password-file FILE or LARES_MQTT_PASSWORD).")
    assert connect(port) == (
        f"The MQTT broker at 127.0.0.1:{port} refused the connection (Not authorized): it wants a username and a "
        "password (--mqtt-username, and --mqtt-password-file FILE or LARES_MQTT_PASSWORD).")


def test_tls_with_the_broker_ca_connects_and_a_failed_check_is_one_sentence(secured):
    port, login = secured["tls"], {"username": "lares", "password": PASSWORD}
    assert connect(port, "localhost", tls=True, ca_file=secured["ca.pem"], **login) == (
        f"connected: localhost:{port} (TLS, as lares)")
    untrusted = connect(port, "localhost", tls=True, ca_file=secured["other-ca.pem"], **login)
    assert untrusted.startswith(f"The MQTT broker at localhost:{port} failed the TLS check (")  # OpenSSL's words
    assert untrusted.endswith("): give the CA that signed it (--mqtt-ca).")
    assert connect(port, "127.0.0.1", tls=True, ca_file=secured["ca.pem"], **login) == (  # made out to localhost
        f"The MQTT broker at 127.0.0.1:{port} failed the TLS check (IP address mismatch, certificate is not valid "
        "for '127.0.0.1'): connect by the name its certificate gives, or turn the host name check off "
        "(--mqtt-no-hostname-check).")
    assert connect(port, "127.0.0.1", tls=True, ca_file=secured["ca.pem"], check_hostname=False, **login) == (
        f"connected: 127.0.0.1:{port} (TLS without the host name check, as lares)")
    assert connect(secured["plain"], "localhost", tls=True, ca_file=secured["ca.pem"], **login).startswith(
        f"The TLS handshake with the MQTT broker at localhost:{secured['plain']} failed (")
    assert connect(port, "localhost", **login) == (  # a plain client at a TLS port
        f"The MQTT broker at localhost:{port} closed the connection without answering: does it want TLS "
        "(--mqtt-tls)?")
    assert connect(port, "localhost", tls=True, ca_file=secured["ca.pem"], username="lares", password="wrong") \
        .startswith(f"The MQTT broker at localhost:{port} refused the login as 'lares'")  # a login over TLS too


def test_a_broker_that_wants_a_client_certificate_takes_ours(secured):
    port, login = secured["tls_client"], {"username": "lares", "password": PASSWORD, "tls": True,
                                          "ca_file": secured["ca.pem"]}
    assert connect(port, "localhost", cert_file=secured["client.pem"], key_file=secured["client.key"], **login) == (
        f"connected: localhost:{port} (TLS, as lares)")
    assert connect(port, "localhost", **login) == (
        f"The MQTT broker at localhost:{port} closed the connection without answering: does it want a client "
        "certificate (--mqtt-cert)?")


def test_serve_home_with_a_refused_login_exits_2_with_a_sentence(secured, tmp_path, capsys):
    serve_home = build_parser()._subparsers._group_actions[0].choices["serve-home"]
    if "--mqtt-username" not in serve_home._option_string_actions:
        pytest.skip("lares serve-home has no --mqtt-username yet: "
                    "cli/commands.py adds add_mqtt_arguments to serve-home")
    secret = tmp_path / "password"
    secret.write_text("wrong\n")
    port = secured["plain"]
    assert main(["serve-home", "lares-home", "--mqtt", f"127.0.0.1:{port}", "--mqtt-username", "lares",
                 "--mqtt-password-file", str(secret)]) == 2
    assert capsys.readouterr().err == (
        f"lares: The MQTT broker at 127.0.0.1:{port} refused the login as 'lares' (Not authorized): check the "
        "username and the password (--mqtt-password-file FILE or LARES_MQTT_PASSWORD).\n")
