"""Exercise 18, the messages a real home exchanges at its doors, and who the doors let in.

Notebook: ``exercises/18_messages_and_doors.ipynb`` (for ``notebooks/18_a_real_home``).
Nothing here needs a server or a broker. The student reads what a plain
MQTT subscriber holds for a home (q1: which lights are on, from the
retained discovery configs and state topics), writes the command Home
Assistant would publish to dim a light (q2: its topic and its JSON on the
0-255 scale) and decides what the HTTP door and the safety gate answer to
eight requests (q3). The checks build the broker's messages with the
bridge's own entities (:mod:`lares_kit.serve.mqtt_discovery`), read the
student's command with the bridge's own parser, and ask the server's own
guard (:class:`~lares_kit.models.serving.guard.AccessGuard`) and the home's
:class:`~lares_kit.safety.gate.SafetyGate` what each request gets.
"""

from __future__ import annotations

import json
from typing import Any

from ....ha.domains import object_id
from ....home.worlds import load_world
from ....models.serving.guard import LOOPBACK_NAMES, SOURCE_KEY, AccessGuard, Tokens
from ....safety.gate import SafetyGate
from ....serve.mqtt_discovery import OFFLINE, ONLINE, _Discovery
from ....serve.mqtt_payloads import BadCommand
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call

__all__ = ["PLACEHOLDER", "REQUESTS", "TOKENS", "VERDICTS", "____", "bind", "broker_messages", "q1", "q2", "q3"]


def _discovery(home: Any, base: str | None = None) -> Any:
    """The MQTT bridge's entities of a home, as ``lares serve-home --mqtt`` makes them (no broker needed).

    Args:
        home: The home (``load_world(...)``).
        base: The root of its topics; default ``lares/<home id>``.
    """
    return _Discovery(home, base=base or f"lares/{home.id}", node_id=f"lares_{object_id(home.id)}")


def broker_messages(home: Any, *, closed: bool = False) -> dict[str, str]:
    """What a plain subscriber to ``homeassistant/#`` and ``lares/#`` holds for a home: topic -> payload text.

    Every retained message the bridge publishes: the discovery configs, the availability, each device's
    state topics and attributes, the robot's room.

    Args:
        home: The home, in the state to publish.
        closed: True for a home whose bridge has closed: its configs are cleared (empty retained payloads) and it
            is ``offline``, but the last states stay retained on the broker.
    """
    found = _discovery(home)
    heard = {f"{found.prefix}/{e.component}/{found.node_id}/{e.object_id}/config":
             "" if closed else json.dumps(e.config, ensure_ascii=False) for e in found.entities}
    heard[found.availability] = OFFLINE if closed else ONLINE
    for device_id in found.devices:
        state = dict(home.devices[device_id].state)
        heard[f"{found.base}/{device_id}/attributes"] = json.dumps(state, ensure_ascii=False)
        for entity in found.by_device[device_id]:
            for topic, payload_of in entity.outputs.items():
                payload = payload_of(state)
                if payload is not None:
                    heard[topic] = payload
    heard[f"{found.base}/robot"] = json.dumps({"id": home.robot.id, "room": home.robot.room})
    return heard


# ------------------------------------------------------------------ q1
def _home(world: str, on: tuple[str, ...] = (), off: tuple[str, ...] = ()) -> Any:
    home = load_world(world)
    for device_id in on:
        home.devices[device_id].state["on"] = True
    for device_id in off:
        home.devices[device_id].state["on"] = False
    return home


def _q1_cases() -> list[tuple[str, list[tuple[Any, bool]]]]:
    # (the case in words, [(a home, closed?)] on one broker)
    lares_off = ("lounge-light", "hallway-light", "kitchen-light", "bedroom-light", "office-light")
    return [
        ("the townhouse as it starts", [(_home("townhouse"), False)]),
        ("the SAGE home with its den lamp switched on", [(_home("sage-home", on=("den-lamp",)), False)]),
        ("the Wohnung and the Lares home on one broker",
         [(_home("wohnung", on=("wohnzimmer-stehlampe",)), False),
          (_home("lares-home", on=("office-light",), off=("hallway-light",)), False)]),
        ("the Lares home, beside a townhouse whose bridge has closed",
         [(_home("townhouse"), True), (_home("lares-home", on=("kitchen-light",)), False)]),
        ("the Lares home with every light off", [(_home("lares-home", off=lares_off), False)]),
    ]


def _why(homes: list[tuple[Any, bool]], heard: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    # The lights that are on (the answer), and a reason for every other name a subscriber could pick.
    on, reasons = [], {}
    for home, closed in homes:
        found = _discovery(home)
        for entity in found.entities:
            name = entity.config["device"]["name"]
            state_topic = entity.config.get("state_topic")
            if closed:
                reasons[name] = (f"{name!r} belongs to a home whose discovery config was cleared (an empty retained "
                                 "payload): Home Assistant has forgotten it, though its last state is still retained")
            elif entity.component != "light":
                reasons.setdefault(name, f"{name!r} is a {entity.component}, not a light (its config is under "
                                         f"homeassistant/{entity.component}/)")
            elif json.loads(heard[state_topic])["state"] == "ON":
                on.append(name)
                reasons[name] = (f"{name!r} is on: its state topic {state_topic} says {heard[state_topic]} (a light "
                                 "of the JSON schema sends JSON: json.loads it)")
            else:
                reasons[name] = f"{name!r} is off: its state topic {state_topic} says {heard[state_topic]}"
    return sorted(on), reasons


def _test_lights(lights_on) -> str:
    for case, homes in _q1_cases():
        heard: dict[str, str] = {}
        for home, closed in homes:
            heard.update(broker_messages(home, closed=closed))
        want, reasons = _why(homes, heard)
        got = call(lights_on, dict(heard), case=case)
        if not isinstance(got, (list, tuple, set)) or not all(isinstance(n, str) for n in got):
            raise Incorrect(f"For {case}, return a list of device names (config['device']['name']), like "
                            f"['Hall Ceiling light']; got {got!r}.")
        if sorted(got) != want:
            extra = [n for n in sorted(got) if n not in want]
            missing = [n for n in want if n not in got]
            odd = extra[0] if extra else missing[0]
            because = reasons.get(odd, f"{odd!r} is no device's name in the discovery configs")
            raise Incorrect(f"For {case}, expected {want} but got {sorted(got)}: {because}.")
    return ("Right on all five brokers: the configs under homeassistant/light/ say which topics are lights, a JSON "
            "light says {\"state\": \"ON\"}, and a cleared config means the device is gone.")


# ------------------------------------------------------------------ q2
# (world, light, base of the topics, percent): the check sends each command through the bridge's own parser
DIMS = [("sage-home", "den-lamp", None, 50), ("wohnung", "kueche-licht", "home/flat-2", 30),
        ("townhouse", "hall-light", None, 70), ("sage-home", "tv-strip", None, 100),
        ("wohnung", "wohnzimmer-stehlampe", "home/flat-2", 0), ("townhouse", "kitchen-light", None, 0)]


def _test_command(light_command) -> str:
    for world, light, base, percent in DIMS:
        home = load_world(world)
        found = _discovery(home, base)
        entity = found.by_device[light][0]
        config = json.loads(json.dumps(entity.config))  # the student's copy, as a subscriber decodes it
        case = f"the {light} of the {world} at {percent} %"
        got = call(light_command, config, percent, case=case)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise Incorrect(f"For {case}, return two things, (topic, payload); got {got!r}.")
        topic, payload = got
        if topic != config["command_topic"]:
            raise Incorrect(f"For {case}, the light takes commands on {config['command_topic']!r} (its config's "
                            f"command_topic), but you sent to {topic!r}.")
        if isinstance(payload, bytes):
            payload = payload.decode("utf-8", "replace")
        if not isinstance(payload, str):
            raise Incorrect(f"For {case}, the payload is {type(payload).__name__}: an MQTT payload is text, so send "
                            "json.dumps(...) of the dict.")
        try:
            update = found.commands[topic][1](payload)
        except BadCommand as exc:
            raise Incorrect(f"For {case}, you sent {payload!r}, and the bridge would answer: not understood, "
                            f"{exc}.") from None
        dim = next((k for k in ("brightness", "level") if k in home.devices[light].state), None)
        if percent == 0:
            if update.get("on") is not False:
                raise Incorrect(f"For {case}, the light should go off, but your payload {payload!r} leaves it on "
                                f"({update}): at 0 % send the state OFF.")
        elif update.get("on") is not True:
            raise Incorrect(f"For {case}, the light should be on, but your payload {payload!r} gives {update}.")
        elif dim is not None and update.get(dim) is None:
            raise Incorrect(f"For {case}, your payload {payload!r} switches the light on but says no brightness: "
                            "this light dims (its config says 'brightness': true), so send one.")
        elif dim is not None and update.get(dim) != percent:
            raise Incorrect(f"For {case}, the light would go to {update.get(dim)} %, not {percent} %: your payload "
                            f"was {payload!r}, and Home Assistant's brightness goes from 0 to "
                            f"{config.get('brightness_scale')} (the config's brightness_scale).")
    return ("Every command lands: on the config's command_topic, brightness on the 0-255 scale, plain ON for a light "
            "that cannot dim, and OFF at 0 %.")


# ------------------------------------------------------------------ q3
TOKENS = {"owner": "owner-token-8c1f5a2e9d", "guest": "the-lodgers-own-token-0001"}
VERDICTS = (421, 403, 401, 415, "allow", "confirm", "refuse")  # the door's refusals, then the gate's verdicts

_UNLOCK = ("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": False})
_LOCK = ("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": True})
_HALL_OFF = ("set_light", {"light_id": "hall-light", "on": False})
_JSON = {"Content-Type": "application/json"}
_OWNER, _GUEST = (f"Bearer {TOKENS[who]}" for who in ("owner", "guest"))
_HERE = "127.0.0.1:8765"

# label -> (time of day, the path, the headers, the call in the body): POSTs to `lares serve-home shared-house
# --port 8765 --token owner-token-... --token-for guest=the-lodgers-own-token-0001`
REQUESTS: dict[str, tuple[str, str, dict[str, str], tuple[str, dict[str, Any]]]] = {
    "a": ("15:00", "/call", {"Host": _HERE, "Authorization": _OWNER, **_JSON}, _UNLOCK),
    "b": ("15:00", "/call", {"Host": _HERE, "Authorization": _GUEST, **_JSON}, _UNLOCK),
    "c": ("15:00", "/call", {"Host": _HERE, "Origin": "http://evil.example", "Content-Type": "text/plain"}, _UNLOCK),
    "d": ("15:00", "/call", {"Host": _HERE, **_JSON}, _HALL_OFF),
    "e": ("15:00", "/call", {"Host": "evil.example:8765", "Origin": "http://evil.example:8765", **_JSON}, _UNLOCK),
    "f": ("23:30", "/call", {"Host": "localhost:8765", "Authorization": _GUEST, **_JSON}, _HALL_OFF),
    "g": ("15:00", "/call", {"Host": _HERE, "Authorization": _OWNER, "Content-Type": "text/plain"}, _LOCK),
    "h": ("15:00", f"/call?token={TOKENS['owner']}", {"Host": _HERE, "Origin": f"http://{_HERE}", **_JSON}, _LOCK),
}


def _answer(label: str) -> tuple[int | str, str]:
    # What the server gives request `label`: the door's status and sentence, or the gate's verdict and reason.
    when, path, headers, (tool, args) = REQUESTS[label]
    path, _, query = path.partition("?")
    lower = {k.lower(): v for k, v in headers.items()}
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": path, "query_string": query.encode(),
                             "headers": [(k.encode(), v.encode()) for k, v in lower.items()]}
    refused = AccessGuard(None, hosts=LOOPBACK_NAMES, tokens=Tokens(TOKENS))._refusal(scope, lower)
    if refused is not None:
        return refused[0], refused[1]
    source = scope["state"][SOURCE_KEY]
    verdict = SafetyGate.for_home(load_world("shared-house"), source, when).check(tool, args)
    reason = verdict.text.split(". Do not try again")[0].split(" First ask")[0].rstrip(".") if verdict.text \
        else "no rule of the policy matches this change"
    return verdict.action, f"the token speaks for the {source}, and the gate says: {reason}."


def _test_verdicts(verdicts) -> str:
    if not isinstance(verdicts, dict):
        raise Incorrect(f"verdicts is a dict from label to answer, like {{'a': 403, 'b': 'allow', ...}}; "
                        f"got {type(verdicts).__name__}.")
    missing = [k for k in REQUESTS if k not in verdicts]
    if missing:
        raise Incorrect(f"Give an answer for every request; missing: {', '.join(missing)}.")
    for label in REQUESTS:
        said = verdicts[label]
        if isinstance(said, str) and said.strip().isdigit():
            said = int(said.strip())
        if said not in VERDICTS or isinstance(said, bool):
            raise Incorrect(f"For ({label}), answer 421, 403, 401 or 415 (the door refuses) or 'allow', 'confirm' "
                            f"or 'refuse' (the safety gate's verdict); got {verdicts[label]!r}.")
        want, why = _answer(label)
        if said != want:
            raise Incorrect(f"For ({label}), the server answers {want!r}, you said {said!r}. Why: {why} The door "
                            "checks the Host, then the Origin, then the token, then the content type; only a "
                            "request that passes all four reaches the safety gate, for its token's source.")
    return (f"All {len(REQUESTS)} answers match the server: a page or a stranger is stopped at the door before the "
            "home hears anything, and behind it the gate judges the token's source, never what the request claims.")


q1 = Problem("Which lights are on, from the broker", ("lights_on",), _test_lights, hints=[
    "Loop over heard.items(): a light's config is on a topic that starts with 'homeassistant/light/' and ends "
    "with '/config'. json.loads the config; its 'state_topic' is where the light says whether it is on.",
    "A light of the JSON schema says json like {\"state\": \"ON\", \"color_mode\": \"onoff\"}: "
    "json.loads(heard[config['state_topic']])['state'] == 'ON'. The name is config['device']['name'].",
    "A home whose bridge has closed leaves an empty config ('') behind: skip empty payloads, as the teaching "
    "notebook's configs() does with `and p`.",
])
q2 = Problem("The command that dims a light", ("light_command",), _test_command, hints=[
    "The topic is config['command_topic']; the payload is text: json.dumps({'state': 'ON', 'brightness': ...}).",
    "Home Assistant's brightness goes from 0 to config['brightness_scale'] (255): 50 % is round(50 * 255 / 100).",
    "A light whose config says 'brightness': False cannot dim: send {'state': 'ON'} alone. At 0 %, send "
    "{'state': 'OFF'} (a brightness of 0 would switch it on, at nothing).",
])
q3 = Problem("What the door and the gate answer", ("verdicts",), _test_verdicts, hints=[
    "The door first, in this order: a Host that is not 127.0.0.1, localhost or ::1 (any port) gets 421; an Origin "
    "that is not the server's own (http:// and the Host) gets 403; no known token, in the header or in ?token=, "
    "gets 401; a body that is not application/json gets 415.",
    "Then the gate, as in exercise 15, for the token's source (TOKENS): the shared house trusts only the owner. "
    "Untrusted at night: refuse. Untrusted and a confirm rule matches: refuse. Trusted and a rule matches: "
    "confirm. No rule matches (locking, a light by day): allow.",
])
EXERCISE = Exercise("18_messages_and_doors", [q1, q2, q3])
bind = EXERCISE.bind
