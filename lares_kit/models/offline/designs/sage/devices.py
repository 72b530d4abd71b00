"""The offline model as SAGE's device agent: find the device, read its docs, compute, command.

Part of :mod:`lares_kit.models.offline.designs.sage.rules`. From the request words it works
out *what* should change (:func:`wants`: on/off, a level, a colour, a
channel, a course...), then learns *how* from the documents the tools return:
the command and argument names, the ranges, the colours on the hue wheel,
what each dishwasher course is for, the current value for "a third of the
current value". It never knows a device's API in advance -- which is the
point of SAGE's API-reading tools -- but it understands only the phrasings
below; a real LLM understands many more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .....safety.confirmation import CONFIRM_MARK, question_in
from .....sentences.markers import is_refusal
from ...request_kinds.confirming import CONFIRM_FIRST, HOUSE_RULES_SAY, cannot_under_rules
from .reading import Doc, Talk, read_doc, stem_words

__all__ = ["CONFIRM_FIRST", "Want", "wants", "device_phrase", "device_step"]

Step = tuple[str, dict[str, Any]]  # (tool name, arguments), or ("halt", {"message_to_user": ...})

_KINDS = r"lights?|lamps?|strips?|tvs?|television|telly|fridge|refrigerator|freezer|dishwasher|speaker|music|" \
         r"thermostat|heating|lock|door|alarm|oven|stove|hob"
_FRACTIONS = {"half": 1 / 2, "a half": 1 / 2, "a third": 1 / 3, "one third": 1 / 3, "a quarter": 1 / 4,
              "two thirds": 2 / 3, "double": 2.0, "twice": 2.0}


@dataclass
class Want:
    """One change: the capability, and the value -- absolute, or relative to the current one."""

    capability: str
    value: Any = None  # an absolute value, a colour name, a course's words
    factor: float | None = None  # new = current * factor
    delta: float | None = None  # new = current + delta


def _number(text: str, after: str) -> float | None:
    found = re.search(after + r"\s*(-?\d+(?:\.\d+)?)", text)
    return float(found.group(1)) if found else None


def wants(request: str) -> list[Want]:
    """What the request asks to change, in order (switching on first).

    Args:
        request: the device agent's request, as the coordinator worded it.

    Examples:
        >>> request = "dim the lights by the fireplace to a third of their current value"
        >>> [(w.capability, w.factor) for w in wants(request)]
        [('switchLevel', 0.3333333333333333)]
        >>> [(w.capability, w.value) for w in wants("turn on the TV by the plant and put channel 9 on")]
        [('switch', True), ('tvChannel', 9.0)]
    """
    text = " " + request.lower().replace("next to", "beside") + " "
    out: list[Want] = []
    if re.search(r"\b(turn|switch)\s+(?:\w+\s+){0,5}?on\b", text):  # "put X on" is about what is shown
        out.append(Want("switch", True))
    if re.search(r"\b(turn|switch|shut)\s+(?:\w+\s+){0,5}?off\b|\bturn off\b", text):
        out.append(Want("switch", False))
    if re.search(r"\bunlock\b", text):
        out.append(Want("lock", False))
    elif re.search(r"\block\b", text):
        out.append(Want("lock", True))
    if re.search(r"\b(disarm|arm)\b", text):  # an alarm: no capability document, only set_device's "armed"
        out.append(Want("armed", "disarm" not in text))
    fraction = next((f for words, f in _FRACTIONS.items() if re.search(rf"\b{words}\b", text)), None)
    percent = _number(text, r"\bto") if re.search(r"\bto\s+\d+\s*(%|percent)", text) else None
    if re.search(r"\b(dim|brighten|brightness|level|bright|dark|dimmer|brighter)\b", text) or percent is not None:
        if fraction is not None:
            out.append(Want("switchLevel", factor=fraction))
        elif percent is not None:
            out.append(Want("switchLevel", percent))
        elif re.search(r"\b(too bright|dim|dimmer|darker)\b", text):
            out.append(Want("switchLevel", delta=-30))
        elif re.search(r"\b(too dark|brighter|brighten)\b", text):
            out.append(Want("switchLevel", delta=30))
    colour = re.search(r"\b(warm white|cool white|neutral white|daylight|red|orange|yellow|green|cyan|blue|purple|"
                       r"pink)\b", text)
    if colour and colour.group(1) in ("warm white", "cool white", "neutral white", "daylight"):
        out.append(Want("colorTemperature", colour.group(1).replace(" white", "")))
    elif colour:
        out.append(Want("colorControl", colour.group(1)))
    channel = _number(text, r"\bchannel")
    if channel is not None:
        out.append(Want("tvChannel", channel))
    if re.search(r"\b(volume|louder|quieter|too loud|can't hear|cannot hear|mute)\b", text):
        volume = _number(text, r"\bvolume\s+(?:to|at)")
        delta = -10 if re.search(r"\b(quieter|too loud|down)\b", text) else 10
        out.append(Want("audioVolume", 0 if "mute" in text else volume, delta=None if volume is not None or
                        "mute" in text else delta))
    source = re.search(r"\b(hdmi ?\d|usb)\b", text)
    if source:
        out.append(Want("mediaInputSource", source.group(1).replace(" ", "")))
    if re.search(r"\b(thermostat|heating|temperature|degrees|warmer|colder|cold|hot|chilly)\b", text) and \
            not re.search(r"\b(fridge|freezer)\b", text):
        target = _number(text, r"\bto")
        delta = (2 if re.search(r"\b(warmer|cold|chilly|up)\b", text)
                 else -2 if re.search(r"\b(colder|hot|down)\b", text) else None)
        if target is not None or delta is not None:
            out.append(Want("thermostatHeatingSetpoint", target, delta=None if target is not None else delta))
    if re.search(r"\b(fridge|freezer)\b", text) and _number(text, r"\bto") is not None:
        out.append(Want("refrigerationSetpoint", _number(text, r"\bto")))
    if re.search(r"\bdish", text):
        if re.search(r"\b(course|mode|programme|program|cycle|greasy|glasses|quick|gentle|dirty|rinse|fragile)\b",
                     text):
            out.append(Want("dishwasherMode", request))
        if re.search(r"\b(start|run|go)\b", text):
            out.append(Want("dishwasherOperatingState", "run"))
        elif re.search(r"\bpause\b", text):
            out.append(Want("dishwasherOperatingState", "pause"))
        elif re.search(r"\bstop\b", text):
            out.append(Want("dishwasherOperatingState", "stop"))
    if out and out[0].capability != "switch" and any(w.capability == "switch" and w.value for w in out):
        out.sort(key=lambda w: w.capability != "switch")  # on before the rest
    return out


def device_phrase(request: str) -> str:
    """The words that describe the device: "the lights by the fireplace", or the whole request if none.

    Args:
        request: the device agent's request; a trailing "(the person means: ...)" note is ignored.

    Examples:
        >>> device_phrase("dim the lights by the fireplace to a third of their current value")
        'the lights by the fireplace'
        >>> device_phrase("set the TV by the plant to channel 3 (the person means: the one by the plant)")
        'the TV by the plant'
    """
    text = re.sub(r"\s*\(the person (?:means|confirmed):.*\)$", "", request).replace("next to", "beside")
    found = re.search(rf"((?:\b(?:the|my|all|both|all the)\s+)*(?:[\w-]+\s+)??\b(?:{_KINDS})\b.*?)"
                      r"(?=\s+(?:to|and|when|so|with|for|at|then)\b|[,.!?]|$)", text, re.IGNORECASE)
    if found is None:
        return text
    phrase = re.sub(r"\s+(?:on|off|up|down|red|orange|yellow|green|cyan|blue|purple|pink)$", "", found.group(1).strip())
    return re.sub(r"^(?:turn|switch|set|put|dim|make|change|lock|unlock|start)\s+(?:on\s+|off\s+)?", "", phrase,
                  flags=re.IGNORECASE)


def _targets(result: str) -> list[str]:
    # "Best match: id (...)" / "All devices that fit '...': a (...); b (...)."
    if result.startswith("Best match: "):
        return [result.split()[2]]
    body = result.split("': ", 1)[-1]
    return re.findall(r"(?:^|; )([a-z0-9-]+) \(", body)


def _hue(doc: Doc, colour: str) -> float | None:
    # "0 red, 8 orange, 16 yellow": the hue wheel as the document draws it
    meaning = doc.attributes.get("hue", {}).get("meaning", "")
    wheel = {name: float(n) for n, name in re.findall(r"(\d+) ([a-z]+)", meaning)}
    return wheel.get(colour)


def _kelvin(doc: Doc, shade: str) -> float | None:
    meaning = doc.attributes.get("color_temperature", {}).get("meaning", "")
    found = re.search(rf"(\d+) {shade}", meaning)
    return float(found.group(1)) if found else None


_COMMON = frozenset("the and a an to on in at of for it is my set start run dishe dish mode course no with by "
                    "done".split())


def _best_use(doc: Doc, attribute: str, words: str) -> str | None:
    # the choice whose stated use shares most words with the request ("greasy" -> intensive)
    asked = stem_words(words) - _COMMON
    uses = doc.attributes[attribute]["uses"]
    named = [value for value in uses if value in asked]
    if len(named) == 1:  # the request names the value itself ("the quick course")
        return named[0]
    scored = [(len(asked & (stem_words(use) - _COMMON)), value) for value, use in uses.items()]
    best = max(scored, default=(0, None))
    return best[1] if best[0] else None


def _clamp(doc: Doc, attribute: str, value: float) -> float:
    bounds = doc.bounds(attribute)
    value = round(value)
    return min(max(value, bounds[0]), bounds[1]) if bounds else value


def _arguments(doc: Doc, want: Want, current: float | None) -> tuple[str, dict[str, Any]] | str:
    """(command, arguments) for a want, from the document; or a sentence saying why not."""
    cmds = doc.commands
    if want.capability in ("switch", "lock"):
        name = {("switch", True): "on", ("switch", False): "off", ("lock", True): "lock",
                ("lock", False): "unlock"}[(want.capability, bool(want.value))]
        return (name, {}) if name in cmds else f"{doc.capability} has no command {name}"
    if want.capability == "colorControl":
        hue = _hue(doc, str(want.value))
        if hue is None:
            return f"the document does not say which hue {want.value} is"
        return "setColor", {"hue": hue, "saturation": 100}
    if want.capability == "colorTemperature":
        kelvin = _kelvin(doc, str(want.value))
        return ("setColorTemperature", {"color_temperature": kelvin}) if kelvin else f"no shade {want.value}"
    name, args = next(iter(cmds.items()), (None, []))
    if name is None or len(args) != 1:
        return f"{doc.capability} has no single-argument command"
    attribute = args[0]
    if doc.choices(attribute):
        value = want.value if want.value in doc.choices(attribute) else _best_use(doc, attribute, str(want.value))
        return (name, {attribute: value}) if value else f"no {attribute} fits {want.value!r}"
    if want.factor is not None or want.delta is not None:
        if current is None:
            return f"the current {attribute} is unknown"
        value = current * want.factor if want.factor is not None else current + (want.delta or 0)
        return name, {attribute: _clamp(doc, attribute, value)}
    return name, {attribute: _clamp(doc, attribute, float(want.value))}


def _attribute_of(doc: Doc) -> str | None:
    args = next(iter(doc.commands.values()), [])
    return args[0] if len(args) == 1 else None


# capability of a want -> the set_device attributes that mean it, for a device without documents
_SETTINGS = {"switch": ("on",), "lock": ("locked",), "armed": ("armed",), "switchLevel": ("level", "brightness"),
             "thermostatHeatingSetpoint": ("target", "temperature"), "refrigerationSetpoint": ("target", "temperature"),
             "audioVolume": ("volume",), "tvChannel": ("channel",)}


def _confirm_first(result: str | None, fallback: str) -> Step | None:
    """A call the safety policy held back for confirmation: halt with the gate's own question (else None).

    Only the coordinator talks to the person; it asks that question word for word
    (:func:`lares_kit.safety.confirmation.question_in`: the gate lets the change through only on a yes to it).
    """
    if not (result or "").removeprefix("Error: ").startswith(CONFIRM_MARK):
        return None
    return "halt", {"message_to_user": CONFIRM_FIRST + (question_in(result) or fallback)}


def _house_rule(t: Talk, device: str, attributes: tuple[str | None, ...], value: Any) -> str:
    """Why the house rules forbid this instruction a change of one of ``attributes`` to ``value`` ("" if they do not).

    The device agent knows devices by id; an untrusted instruction's rules name them so
    (:mod:`lares_kit.sentences.markers`).
    """
    rules = t.house_rules
    return next((why for a in attributes if a and rules and (why := rules.forbids(device, device, a, value))), "")


def _by_setting(t: Talk, device: str, want: Want) -> Step:
    """read_device, then set_device, for a device that documents no capabilities; a sentence when done.

    A change the safety policy holds back ends the device agent with the question to ask
    (:data:`CONFIRM_FIRST`): only the coordinator talks to the person.
    """
    read = [c for c in t.results("read_device") if c.args.get("device_id") == device and c.ok]
    if not read:
        return "read_device", {"device_id": device}
    state, _, settable = (read[-1].result or "").partition(" Settings: ")
    names = re.findall(r"(?:^|; )(\w+) \(", settable)
    attribute = next((a for a in _SETTINGS.get(want.capability, ()) if a in names), None)
    if attribute is None:
        return f"{device} has no setting for {want.capability} (its settings: {', '.join(names) or 'none'})."
    value = want.value
    if want.factor is not None or want.delta is not None:
        current = re.search(rf"\b{attribute} (-?[\d.]+)", state)
        if current is None:
            return f"the current {attribute} of {device} is unknown."
        number = float(current.group(1))
        value = round(number * want.factor if want.factor is not None else number + (want.delta or 0))
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    call = {"device_id": device, "attribute": attribute, "value": value}
    tried = [c for c in t.results("set_device") if c.args == call]
    if not tried:
        barred = _house_rule(t, device, (attribute,), value)
        return cannot_under_rules(device, barred) + "." if barred else ("set_device", call)
    held = _confirm_first(tried[-1].result, f"Shall I set {attribute} of {device} to {value}?")
    return held if held is not None else (tried[-1].result or "").removeprefix("Error: ")


def device_step(t: Talk) -> Step:
    """The device agent's next call for the request in ``t``.

    Args:
        t: what the request says: the task, who is talking, the offered tools and the calls so far (see
            :func:`.sage_reading.read_talk`).
    """
    task = t.task
    found = t.last("find_device")
    if found is None:
        clarified = re.search(r"\(the person means: (.*)\)$", task)
        kind = re.search(rf"\b({_KINDS})\b", task, re.IGNORECASE)
        phrase = device_phrase(task)
        if clarified:  # the person's answer says which one: search with their words and the kind asked for
            phrase = clarified.group(1) + (f" {kind.group(1)}" if kind and kind.group(1).lower() not in
                                           clarified.group(1).lower() else "")
        return "find_device", {"description": phrase}
    result = found.result or ""
    todo = wants(task)
    if result.startswith("No device matches") and todo:
        # No words for the device ("I'm cold"): the one device whose capabilities can do what is asked.
        listed = t.last("list_devices")
        if listed is None:
            return "list_devices", {}
        able = re.findall(rf"^- ([a-z0-9-]+): .*\b{todo[0].capability} \(", listed.result or "", re.MULTILINE)
        if len(able) == 1:
            result = f"Best match: {able[0]} ("
        elif able:
            return "halt", {"message_to_user": f"Which one do you mean: {' or '.join(able)}?"}
    if result.startswith("Ambiguous"):
        options = re.findall(r"(?:: |; )([a-z0-9-]+) \(([^:]+): ([^)]*)\)", result)
        said = " or ".join(f"the {where} ({what.strip()})" for _, where, what in options)
        return "halt", {"message_to_user": f"Which one do you mean: {said}?"}
    targets = _targets(result)
    if not targets:
        return "halt", {"message_to_user": f"I could not find the device you mean: {result}"}
    if not todo:
        return "halt", {"message_to_user": f"I found {', '.join(targets)} but could not tell what to change "
                                           f"from {task!r}; I am a rule-based stand-in for an LLM."}
    done = []
    for want in todo:
        for device in targets:
            docs = [read_doc(c.result or "") for c in t.results("get_capability_docs")
                    if c.args.get("device_id") == device and c.args.get("capability") == want.capability]
            doc = next((d for d in docs if d is not None), None)
            if doc is None and want.factor is None and want.delta is None:
                # the same capability read for another device has the same commands: no need to read it again
                same = [read_doc(c.result or "") for c in t.results("get_capability_docs")
                        if c.args.get("capability") == want.capability and c.args.get("device_id") in targets]
                doc = next((d for d in same if d is not None and want.capability in ("switch", "lock")), None)
            if doc is None:
                failed = [c for c in t.results("get_capability_docs") if c.args.get("device_id") == device
                          and c.args.get("capability") == want.capability]
                if failed and "none documented" in (failed[-1].result or "") and "set_device" in t.tools:
                    step = _by_setting(t, device, want)  # no docs: the home's own read_device / set_device
                    if isinstance(step, str):
                        done.append(step)
                        continue
                    return step
                if failed:
                    done.append(f"{device} cannot do that ({(failed[-1].result or '').removeprefix('Error: ')})")
                    continue
                return "get_capability_docs", {"device_id": device, "capability": want.capability}
            attribute = _attribute_of(doc)
            current = None
            if want.factor is not None or want.delta is not None:
                read = [c for c in t.results("get_attribute")
                        if c.args == {"device_id": device, "attribute": attribute}]
                if not read:
                    return "get_attribute", {"device_id": device, "attribute": attribute}
                number = re.search(r" is (-?[\d.]+)", read[-1].result or "")
                current = float(number.group(1)) if number else None
            plan = _arguments(doc, want, current)
            if isinstance(plan, str):
                done.append(f"I could not change {device}: {plan}")
                continue
            command, args = plan
            call = {"device_id": device, "capability": want.capability, "command": command, "arguments": args}
            tried = [c for c in t.results("execute_command") if c.args == call]
            value = bool(want.value) if want.capability in ("switch", "lock") else next(iter(args.values()), None)
            barred = _house_rule(t, device, _SETTINGS.get(want.capability, (attribute,)), value)
            if barred and not tried:
                done.append(cannot_under_rules(device, barred) + ".")
                continue
            if not tried:
                return "execute_command", call
            held = _confirm_first(tried[-1].result, f"Shall I run {command} on {device}?")
            if held is not None:
                return held
            if not tried[-1].ok and "switch it on first" in (tried[-1].result or ""):
                on = {"device_id": device, "capability": "switch", "command": "on", "arguments": {}}
                if not any(c.args == on for c in t.results("execute_command")):
                    return "execute_command", on
                if len(tried) < 2:
                    return "execute_command", call
            done.append((tried[-1].result or "").removeprefix("Error: "))
    switched = [c.result for c in t.results("execute_command") if c.ok and c.args.get("capability") == "switch"
                and (c.result or "") not in done]
    refused = any(is_refusal(d) or HOUSE_RULES_SAY in d for d in done)
    return "halt", {"message_to_user": ("" if refused else "Done. ") + " ".join(dict.fromkeys([*switched, *done]))}
