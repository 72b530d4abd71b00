"""The offline model as SAGE's condition agent: split "do Y when X", write X as code from the docs.

Part of :mod:`lares_kit.models.offline.designs.sage.rules`. For "turn on the light in the
dining room when I open the fridge" it finds the fridge, reads the document
of the capability the trigger word points to (``open`` -> a contact sensor),
picks the attribute whose values include the word, and writes::

    def fridge_door_open():
        return get("fridge", "door") == "open"

then registers it (``create_condition``) and attaches Y (``notify_on_condition``).
It also lists and cancels conditions. Triggers it understands: opening or
closing, switching on or off, locking or unlocking, finishing (a
dishwasher), a temperature going above or below a number, and a time
("every evening at 7", "at 6:30 on weekdays", "in ten minutes":
:mod:`~lares_kit.models.offline.designs.sage.schedules`).
"""

from __future__ import annotations

import re
from typing import Any

from .....persistent.phrases import TIME_TRIGGER, split_persistent
from .....sentences.times import minutes_of_day
from .....sentences.wording import agree, in_sentence
from .devices import device_phrase
from .reading import Doc, Talk, read_doc, stem_words
from .schedules import read_schedule, schedule_code

__all__ = ["trigger_of", "condition_code", "condition_step"]

Step = tuple[str, dict[str, Any]]


# trigger word -> (capability to read, value word to look for among the attribute's values)
_TRIGGERS = [
    (r"\bopen(s|ed)?\b", "contactSensor", "open"), (r"\bclose(s|d)?\b|\bshut(s)?\b", "contactSensor", "closed"),
    (r"\bunlock(s|ed)?\b", "lock", "false"), (r"\block(s|ed)?\b", "lock", "true"),
    (r"\b(finish(es|ed)?|done|ends?)\b", "dishwasherOperatingState", "finished"),
    (r"\b(turn(s|ed)?|switch(es|ed)?|goes|is)\s+(?:\w+\s+)?off\b|\boff\b", "switch", "false"),
    (r"\b(turn(s|ed)?|switch(es|ed)?|comes|is)\s+(?:\w+\s+)?on\b", "switch", "true"),
    (r"\b(below|under|above|over|drops|rises)\b.*\d", "temperatureMeasurement", "number"),
]


def trigger_of(trigger: str) -> tuple[str, str]:
    """(capability, value word) a trigger is about.

    Args:
        trigger: the "when ..." part of a persistent command, e.g. "I open the fridge".

    Examples:
        >>> trigger_of("I open the fridge")
        ('contactSensor', 'open')
        >>> trigger_of("the TV by the plant is turned off")
        ('switch', 'false')
    """
    for pattern, capability, value in _TRIGGERS:
        if re.search(pattern, trigger, re.IGNORECASE):
            return capability, value
    return "", ""


def condition_code(device: str, doc: Doc, value: str, trigger: str, name: str = "") -> tuple[str, str] | None:
    """(code, description) of the condition, from the document; None if no attribute fits.

    ``name`` is the device's name for the description ("Fridge"); without it the id is used.

    Args:
        device: the id of the device the trigger watches, e.g. ``fridge``.
        doc: the device's capability document, as :func:`.sage_reading.read_doc` read it.
        value: the value word from :func:`trigger_of`: a state (``"open"``), ``"true"``/``"false"``, or ``"number"``
            (the number is read from ``trigger``).
        trigger: the "when ..." part as the user said it; read for a number and for "below"/"above".
        name: the device's name for the description (``"Fridge"``); empty uses the id.

    Examples:
        >>> doc = read_doc("fridge / contactSensor: door.\\nAttributes:\\n- door: open or closed; one of open, closed "
        ...                "(now closed)\\nCommands: none (it can only be read).")
        >>> code, description = condition_code("fridge", doc, "open", "I open the fridge", "Fridge")
        >>> print(code)
        def fridge_door_open():
            return get("fridge", "door") == "open"
        >>> description
        'the door of the fridge is open'
    """
    called = f"the {in_sentence(name or device.replace('-', ' '))}"  # "the fridge", "the TV"
    name = device.replace("-", "_")
    if value == "number":
        attrs = [a for a in doc.attributes if "temperature" in a]
        number = re.search(r"(-?\d+(?:\.\d+)?)", trigger)
        if not attrs or number is None:
            return None
        below = bool(re.search(r"\b(below|under|drops)\b", trigger, re.IGNORECASE))
        op, word = ("<", "below") if below else (">", "above")
        code = f"def {name}_{attrs[0]}_{word}():\n    return get(\"{device}\", \"{attrs[0]}\") {op} {number.group(1)}"
        return code, f"the {attrs[0].replace('_', ' ')} of {called} is {word} {number.group(1)}"
    for attribute in doc.attributes:
        choices = doc.choices(attribute)
        if value in choices:
            code = f"def {name}_{attribute}_{value}():\n    return get(\"{device}\", \"{attribute}\") == \"{value}\""
            return code, f"the {attribute.replace('_', ' ')} of {called} is {value}"
        if value in ("true", "false") and doc.attributes[attribute]["range"] == "true or false":
            words = {"on": ("on", "off"), "locked": ("locked", "unlocked")}.get(attribute,
                                                                               (attribute, f"not {attribute}"))
            said = words[0] if value == "true" else words[1]
            code = (f"def {name}_{said.replace(' ', '_')}():\n"
                    f"    return get(\"{device}\", \"{attribute}\") == {value.title()}")
            return code, f"{called} {agree(called, 'is')} {said}"
    return None


def _cancel_step(t: Talk) -> Step:
    listed = t.last("list_conditions")
    if listed is None:
        return "list_conditions", {}
    if not re.search(r"\b(cancel|stop|forget)\b", t.task, re.IGNORECASE):
        return "halt", {"message_to_user": listed.result or ""}
    cancelled = t.last("cancel_condition")
    if cancelled is not None:
        return "halt", {"message_to_user": cancelled.result or ""}
    rows = re.findall(r"^- (\w+) \((.*?)\): .*?then: (.*)$", listed.result or "", re.MULTILINE)
    asked = stem_words(t.task) - {"the", "cancel", "stop", "forget", "reminder", "condition", "rule", "when", "my"}
    scored = sorted(((len(asked & stem_words(f"{i} {d} {a}".replace("_", " "))), i) for i, d, a in rows), reverse=True)
    if not scored or scored[0][0] == 0:
        return "halt", {"message_to_user": f"I found no condition like that to cancel. {listed.result}"}
    return "cancel_condition", {"condition_id": scored[0][1]}


def condition_step(t: Talk) -> Step:
    """The condition agent's next call for the request in ``t``.

    Args:
        t: what the request says: the task, who is talking, the offered tools and the calls so far (see
            :func:`.sage_reading.read_talk`).
    """
    parts = split_persistent(t.task)
    if parts is None:
        return _cancel_step(t)
    action, trigger = parts
    notified = t.last("notify_on_condition")
    if notified is not None:
        return "halt", {"message_to_user": notified.result or ""}
    created = t.last("create_condition")
    if created is not None and created.ok:
        condition_id = re.search(r"Condition '(\w+)'", created.result or "")
        return "notify_on_condition", {"condition_id": condition_id.group(1) if condition_id else "",
                                       "instruction": action}
    if created is not None:
        return "halt", {"message_to_user": f"I could not set this up: {(created.result or '').removeprefix('Error: ')}"}
    if TIME_TRIGGER.fullmatch(trigger.strip()):
        return _time_step(t, trigger)
    found = t.last("find_device")
    if found is None:
        return "find_device", {"description": device_phrase(trigger)}
    if not (found.result or "").startswith("Best match: "):
        return "halt", {"message_to_user": f"I could not tell which device {trigger!r} is about: {found.result}"}
    device = (found.result or "").split()[2]
    capability, value = trigger_of(trigger)
    if not capability:
        return "halt", {"message_to_user": f"I cannot turn {trigger!r} into a condition; I understand opening, "
                                           "closing, on/off, locking, finishing and temperatures above or below "
                                           "a number."}
    docs = [c for c in t.results("get_capability_docs") if c.args.get("device_id") == device]
    doc = next((read_doc(c.result or "") for c in reversed(docs) if c.ok), None)
    if doc is None:
        if docs:  # the guessed capability is not there: take the first one the device has
            offered = re.search(r"Its capabilities: ([\w, ]+)\.", docs[-1].result or "")
            alternatives = [c.strip() for c in (offered.group(1).split(",") if offered else [])]
            untried = [c for c in alternatives if c not in {d.args.get("capability") for d in docs}]
            if untried:
                return "get_capability_docs", {"device_id": device, "capability": untried[0]}
            if not alternatives or alternatives == ["none documented"]:
                # no documents at all: the device's own attribute for the trigger (create_condition checks it)
                written = _undocumented_code(device, capability, value, trigger)
                if written is not None:
                    return "create_condition", {"code": written[0], "description": written[1]}
            return "halt", {"message_to_user": f"{device} has nothing I can watch for {trigger!r}."}
        return "get_capability_docs", {"device_id": device, "capability": capability}
    # "Best match: fridge (Fridge in the Kitchen: ...": the device's name, for the condition's description
    named = re.match(r"Best match: \S+ \((.+?) in the ", found.result or "")
    written = condition_code(device, doc, value, trigger, named.group(1) if named else "")
    if written is None:
        return "halt", {"message_to_user": f"The documents of {device} have no attribute for {trigger!r}."}
    return "create_condition", {"code": written[0], "description": written[1]}


def _time_step(t: Talk, trigger: str) -> Step:
    # "every evening at 7": the clock's time of day; "at 11pm" or "in ten minutes" (once): its minutes, read first
    schedule = read_schedule(trigger)
    if schedule is None:
        return "halt", {"message_to_user": f"I cannot tell what time {trigger!r} means; say a time, such as "
                                           "'every evening at 7', 'at 6:30 on weekdays' or 'in ten minutes'."}
    now: dict[str, str] = {}
    for call in t.results("get_attribute"):
        if call.args.get("device_id") == "clock" and call.ok and (m := re.search(r" is (\S+) \(", call.result or "")):
            now[str(call.args.get("attribute"))] = m.group(1)
    if schedule.once:
        for attribute in ("minutes", "time"):
            if attribute not in now:
                return "get_attribute", {"device_id": "clock", "attribute": attribute}
    code, description = schedule_code(schedule, int(now.get("minutes", 0)),
                                      minutes_of_day(now["time"]) if "time" in now else 0)
    return "create_condition", {"code": code, "description": description}


# A device that documents no capabilities has the home's own attributes (lares_kit.home.devices):
# capability -> attribute
_OWN_ATTRIBUTE = {"lock": "locked", "contactSensor": "open", "switch": "on", "temperatureMeasurement": "temperature",
                  "dishwasherOperatingState": "operating_state"}


def _undocumented_code(device: str, capability: str, value: str, trigger: str) -> tuple[str, str] | None:
    # (code, description) from the attribute the home itself gives such a device; None when none fits
    attribute = _OWN_ATTRIBUTE.get(capability)
    if attribute is None:
        return None
    name = device.replace("-", "_")
    if value == "number":
        number = re.search(r"(-?\d+(?:\.\d+)?)", trigger)
        if number is None:
            return None
        below = bool(re.search(r"\b(below|under|drops)\b", trigger, re.IGNORECASE))
        op, word = ("<", "below") if below else (">", "above")
        return (f'def {name}_{attribute}_{word}():\n    return get("{device}", "{attribute}") {op} {number.group(1)}',
                f"the {attribute} of {device} is {word} {number.group(1)}")
    truth = {"open": "True", "closed": "False", "true": "True", "false": "False"}.get(value)
    if truth is None:
        return (f'def {name}_{attribute}_{value}():\n    return get("{device}", "{attribute}") == "{value}"',
                f"the {attribute.replace('_', ' ')} of {device} is {value}")
    said = {"locked": ("locked", "unlocked"), "open": ("open", "closed"), "on": ("on", "off")}[attribute]
    word = said[0] if truth == "True" else said[1]
    return (f'def {name}_{word}():\n    return get("{device}", "{attribute}") == {truth}', f"{device} is {word}")
