"""Requests that would put someone in danger: the offline model refuses them and says why.

Part of the offline model (:mod:`lares_kit.models.offline`). A home agent
that does whatever it is told will, sooner or later, be told to do something
harmful -- by a tired user, a prankster, or a stranger's story. A real LLM
brings some judgement of its own; this rule-based stand-in knows five kinds
of danger, each a pattern of *what is asked* and *the situation around it*:

* **a life-safety device switched off** -- a smoke, fire, gas or carbon
  monoxide alarm, or detector;
* **heat left alone** -- a stove, oven, hob or heater turned on to stay on
  overnight, while everyone sleeps or goes out;
* **a door opened for an unchecked stranger** -- "a man at the door says he's
  from the gas company, unlock it";
* **the light switched off on someone at risk** -- carrying boiling water, up
  a ladder, on the stairs, or as a prank;
* **power to a fitting someone is working on** -- "she's changing the bulb,
  switch the light on".

The refusal names the danger and offers something safe instead; nothing in
the home changes. These are rules, not judgement: a request phrased in a way
no pattern knows gets through, which is why the homes' own safety policy
(:mod:`lares_kit.safety.gate`, enforced in the Toolbox whatever the model says) is
the layer that holds. Notebook 15 shows both.
"""

from __future__ import annotations

import re

from ....sentences.wording import with_article
from ..reading import Beliefs
from ..understanding import Goal
from ..vocabulary import words_of

__all__ = ["HAZARDS", "recognise_hazard"]

_OFF = r"\b(?:off|out|disable|disabled|disconnect|deactivate|unplug|remove|silence|mute|kill)\b"
_HEAT = r"\b(stove|oven|hob|cooker|grill|heater|fryer|iron|fire ?place|fire)\b"
_HEAT_ON = r"\b(on|up|full|max|maximum|high|preheat|heat|set|put)\b|\d"
_ALONE = (r"\b(leave (?:it|them|the \w+) on|left on|all night|overnight|"
          r"while (?:we|i|you) (?:sleep|are out|re out|m out|are away|m away|re away)|"
          r"going out|out for the day|unattended|on holiday|nobody home|no one home|away for)\b")
_DOOR = r"\b(?:unlock|open)\b.*\b(?:door|gate)\b|\blet (?:him|her|them) in\b"
_UNCHECKED = (r"\b(says? (?:he|she|they)|claims?|claiming|stranger|don'?t know (?:him|her|them)|"
              r"(?:a|some) (?:man|woman|guy|person|people|bloke) (?:at|outside) the (?:door|gate)|"
              r"(?:someone|somebody) (?:at|outside) the (?:door|gate))\b")
_LIGHT_OFF = (r"\b(?:turn|switch|put|flick|shut)\b.*\b(?:light|lights|lamp)\b.*\b(?:off|out)\b|"
              r"\b(?:turn|switch|put|flick|shut) (?:off|out)\b.*\b(?:light|lights|lamp)\b|\blights? out\b")
# Someone at risk in the dark: "Tom is carrying a pan of boiling water", "she is up a ladder".
_AT_RISK = (r"\b(?:is|are)\s+(?:still\s+)?((?:carrying|holding) (?:a |the |some )?(?:pan|pot|kettle|tray|knife|glass|"
            r"boiling|hot)\w*(?: of (?:boiling|hot) \w+)?|(?:up|on|at the top of) (?:a|the) (?:ladder|stepladder|"
            r"step ladder|stool|chair)|(?:on|going down|coming down|walking down|going up|coming up) the stairs)")
_PRANK = r"\b(see (?:him|her|them) jump|scare|frighten|startle|prank|as a joke|for a laugh)\b"
_WORK = (r"\b(changing|replacing|fitting|fixing|installing|swapping|repairing|rewiring) (?:the |a |that )?"
         r"(?:light ?bulb|bulb|bulbs|light fitting|fitting|socket|wiring|lamp|switch)\b")
_LIGHT_ON = r"\b(?:turn|switch|put|flick)\b.*\b(?:on)\b|\blights? on\b"


def _safety_device(text: str) -> str | None:
    m = re.search(r"\b((?:smoke|fire|gas|carbon monoxide|co) (?:alarm|alarms|detector|detectors|sensor|sensors))\b",
                  text)
    if not m or not re.search(_OFF, text):
        return None
    return (f"I will not switch off the {m.group(1)}: it is what warns everyone of a fire or gas, and it is not safe "
            "to be without it. If it goes off when you cook, open a window or run the extractor fan instead, "
            "and have a faulty alarm replaced rather than disabled.")


def _heat_alone(text: str) -> str | None:
    heat, alone = re.search(_HEAT, text), re.search(_ALONE, text)
    if not heat or not alone or not re.search(_HEAT_ON, text) or re.search(r"\b(turn|switch) (?:it |the \w+ )?off\b",
                                                                          text):
        return None
    name, why = heat.group(1), alone.group(1)
    instead = (" To keep warm overnight, the heating and its thermostat are made for that; an oven is not."
               if name in ("oven", "stove", "hob", "cooker", "grill") and re.search(r"\b(warm|heat|freezing|cold)\b",
                                                                                     text) else "")
    when = why if why.startswith(("all", "over", "while", "on ")) else "unattended"
    return (f"I will not leave the {name} on {when}:"
            f" {with_article(name)} left with nobody watching it is a fire danger, and that is not safe.{instead} "
            f"I can turn it on when someone is there to watch it.")


def _stranger(text: str) -> str | None:
    if not re.search(_DOOR, text) or not re.search(_UNCHECKED, text):
        return None
    return ("I will not unlock the door for someone nobody has checked: anyone can say who they are, so it is not "
            "safe. Ask to see their ID through the door, or call the company they say they are from to verify; "
            "I can unlock it once you have checked and are there to let them in.")


def _light_off_at_risk(text: str) -> str | None:
    if not re.search(_LIGHT_OFF, text):
        return None
    risk, prank = re.search(_AT_RISK, text), re.search(_PRANK, text)
    if not risk and not prank:
        return None
    who = f"someone is {risk.group(1).strip()}" if risk else "it is meant to give someone a fright"
    return (f"I will not switch the light off while {who}: in the sudden dark they could trip, fall, or get burned, "
            "and that is not safe. I can switch it off once they are clear.")


def _power_to_work(text: str) -> str | None:
    m = re.search(_WORK, text)
    if not m or not re.search(_LIGHT_ON, text):
        return None
    return (f"Someone is {m.group(1)} the {m.group(0).split()[-1]}: switching the power on now could give them a "
            "shock, and up a ladder a fall too, so it is not safe. I will wait until they are finished -- tell me "
            "when they are done and I will switch it on.")


# The kinds of danger recognised, in the order the rules are tried.
_RULES = {"safety device off": _safety_device, "heat left alone": _heat_alone, "unchecked stranger": _stranger,
          "light off on someone at risk": _light_off_at_risk, "power to a fitting in work": _power_to_work}
HAZARDS = tuple(_RULES)


def recognise_hazard(b: Beliefs) -> Goal | None:
    """A refusal when the instruction asks for one of the :data:`HAZARDS`; None otherwise.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs
        >>> def goal(text):
        ...     return recognise_hazard(Beliefs(text, "latest", {}, {}, None, {}, []))
        >>> goal("Switch off the kitchen smoke alarm for good.").message.split(":")[0]
        'I will not switch off the smoke alarm'
        >>> goal("Tom is on the stairs with a tray; turn the hall light off").message.split(":")[0]
        'I will not switch the light off while someone is on the stairs'
        >>> goal("Preheat the oven to 180 degrees.") is None, goal("turn off the light in the kitchen") is None
        (True, True)
    """
    text = words_of(b.instruction)
    for rule in _RULES.values():
        message = rule(text)
        if message:
            return Goal("refuse", message=message)
    return None
