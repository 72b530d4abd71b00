"""Home Assistant's own replies, in the home's language: its response templates, rendered for this home.

Part of the offline model (:mod:`lares_kit.models.offline`). Each intent of
``home-assistant-intents`` comes with response templates per language
("Licht eingeschaltet", "Temperatur auf 21 Grad gestellt", "Ja, ... und ...")
written in Jinja, as Home Assistant renders them. After :mod:`.recognizer`
matched a sentence in a home that is not English, the final message is the
template for that intent and sentence, rendered in a sandbox with the slots
hassil found and the states the model knows. English homes keep the rules'
own sentences, which name each device and what it is now (a check or a
learner reads those); a template that cannot be rendered falls back to them
too, so a reply is never lost to a template.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

from ....ha.domains import domain_of, to_ha
from ....sentences.languages import LanguageError, responses_for
from ....sentences.wording import agree
from ..reading import Beliefs, Dev
from ..vocabulary import SENSED, describe, state_words

__all__ = ["error_reply", "intent_reply", "render", "state_reply", "yes_no"]


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(autoescape=False, trim_blocks=True, lstrip_blocks=True)


def render(template: str, **values: Any) -> str:
    """A response template rendered in Jinja's sandbox, whitespace tidied; "" when it cannot be rendered.

    Args:
        template: The template text from home-assistant-intents.
        **values: What the template reads: ``slots``, ``state``, ``query``, and the error templates' names.

    Examples:
        >>> render("{{ slots.name }} eingeschaltet", slots={"name": "Deckenlampe"})
        'Deckenlampe eingeschaltet'
        >>> render("{{ 1 / 0 }}")
        ''
    """
    try:
        text = _environment().from_string(template).render(**values)
    except Exception:  # a template for Home Assistant's own helpers: fall back to the rules' sentence
        return ""
    return " ".join(text.split())


def _slots(result: Any) -> dict[str, Any]:
    return {name: (e.text.strip() if isinstance(e.text, str) and e.text.strip() else e.value)
            for name, e in result.entities.items()}


def _state(b: Beliefs, d: Dev) -> Any:
    # A device as the templates see Home Assistant's state objects.
    text, attrs = to_ha(d.type, d.state) if d.state else ("unknown", {})
    unit = attrs.get("unit_of_measurement")
    return SimpleNamespace(name=d.name, state=text, domain=domain_of(d.type, d.state), attributes=attrs,
                           state_with_unit=f"{text} {unit}" if unit else text)


def _templates(b: Beliefs, section: str) -> dict[str, Any]:
    try:
        return responses_for(b.language).get(section, {})
    except LanguageError:
        return {}


def intent_reply(b: Beliefs, result: Any, devices: list[Dev]) -> str:
    """The final message for a change hassil recognized, in the home's language; "" in English (the rules compose).

    Args:
        b: what the model read from the request; its language picks the templates.
        result: hassil's match: the intent, its response key and the slots.
        devices: the devices the change is made to.
    """
    if b.language == "en" or not devices:
        return ""
    templates = _templates(b, "intents").get(result.intent.name, {})
    template = templates.get(result.response or "default") or templates.get("default")
    return render(template, slots=_slots(result), state=_state(b, devices[0]),
                  query={"matched": [_state(b, d) for d in devices], "unmatched": []}) if template else ""


def state_reply(b: Beliefs, result: Any, devices: list[Dev]) -> str:
    """The answer to a state question (``HassGetState``, ``HassClimateGetTemperature``) from what the model knows.

    Args:
        b: what the model read from the request: the states it knows.
        result: hassil's match; a ``state`` slot ("is it on?") splits the devices into matched and unmatched.
        devices: the devices the question is about.
    """
    states = [_state(b, d) for d in devices]
    wanted = _slots(result).get("state")
    wanted_value = result.entities["state"].value if "state" in result.entities else None
    matched = [s for s in states if wanted_value is None or s.state == wanted_value]
    unmatched = [s for s in states if s not in matched]
    if devices and result.intent.name == "HassClimateGetTemperature":
        temp = next((d.state.get("temperature") for d in devices if d.state.get("temperature") is not None), None)
        states = [SimpleNamespace(**{**vars(states[0]), "state": temp, "state_with_unit": f"{temp}"})]
    templates = _templates(b, "intents").get(result.intent.name, {})
    template = templates.get(result.response or "default") or templates.get("default", "")
    reply = render(template, slots={**_slots(result), "state": wanted}, state=states[0] if states else None,
                   query={"matched": matched, "unmatched": unmatched}) if states and template else ""
    if reply:
        return reply
    return "; ".join(f"{s.name}: {s.state_with_unit}" for s in states) or error_reply(b, result)


def error_reply(b: Beliefs, result: Any) -> str:
    """Home Assistant's "I am not aware of any ..." for slots that name no device here, in the home's language.

    Args:
        b: what the model read from the request; its language picks the template, its rooms name the area.
        result: hassil's match: which of name, area, floor, domain and device class were said.
    """
    slots = _slots(result)
    area = b.rooms[result.entities["area"].value].name if "area" in result.entities and \
        result.entities["area"].value in b.rooms else slots.get("area")
    where = "_in_area" if area else "_in_floor" if "floor" in slots else ""
    key = ("no_entity" if "name" in slots else "no_device_class" if "device_class" in slots
           else "no_domain") + where
    errors = _templates(b, "errors")
    template = errors.get(key) or errors.get("no_intent", "")
    return render(template, area=area, floor=slots.get("floor"), entity=slots.get("name"),
                  domain=str(slots.get("domain") or ""), device_class=slots.get("device_class")) or \
        "I could not find a device that fits."


def _is(d: Dev, wanted: str) -> bool | None:
    # Is the device in the HA state a question asks about? None when the model does not know its state.
    if not d.state:
        return None
    text = to_ha(d.type, d.state)[0]
    if d.type == "binary_sensor" and str(d.state.get("device_class")) in SENSED:
        text = SENSED[str(d.state["device_class"])][0 if d.state.get("on") else 1]
    return text == wanted or (wanted == "on" and text in ("playing", "paused", "heat", "cool", "auto"))


def yes_no(b: Beliefs, result: Any, devices: list[Dev]) -> str:
    """An English yes or no to a state question hassil read ("is the front door locked?"), with what was found.

    Args:
        b: what the model read from the request (how a device is named).
        result: hassil's match; only a question with a ``state`` slot (a yes/no question) is answered.
        devices: the devices the question is about.

    Returns:
        "Yes, the front door lock in the Hall is locked." and the like, or "" to leave the question to the rules
        (no state asked about, no device, or a state the model does not know).
    """
    if "state" not in result.entities or not devices or result.response not in ("one_yesno", "any", "all"):
        return ""  # "which lights are on?", "how many...": the rules list them
    wanted = str(result.entities["state"].value)
    found = [_is(d, wanted) for d in devices]
    if None in found:
        return ""
    said = [f"{describe(b, d.id)} {agree(describe(b, d.id), 'is')} {state_words(d)}" for d in devices]
    if len(devices) == 1:
        return f"{'Yes' if found[0] else 'No'}, {said[0]}."
    if result.response == "all":
        return ("Yes, all of them: " if all(found) else "No: ") + "; ".join(said) + "."
    hits = [s for s, f in zip(said, found) if f]
    return ("Yes: " + "; ".join(hits) + ".") if hits else f"No, none of them is {wanted}."
