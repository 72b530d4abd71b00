"""What the offline model wants to achieve: a :class:`Goal`, made of :class:`Change` s.

Part of the offline model (:mod:`lares_kit.models.offline`). The first tier
(:mod:`~lares_kit.models.offline.ha.recognizer`, Home Assistant's recognizer) and the rules
(:mod:`.understanding` and the modules beside it) both turn an instruction
into a Goal; :mod:`.planning` pursues it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .reading import Beliefs, Dev
from .vocabulary import describe

__all__ = ["WHICH_ONE", "Change", "Goal", "which_one"]

WHICH_ONE = "Which one do you mean: "  # how the question for several devices that fit begins


@dataclass
class Change:
    """One device setting the goal asks for."""

    device: str
    attribute: str
    value: Any


@dataclass
class Goal:
    kind: str  # control | find | ask_then | question | refuse | clarify | unknown
    changes: list[Change] = field(default_factory=list)
    target: list[str] = field(default_factory=list)  # words naming a hidden thing
    target_text: str = ""  # as the user said it: "my dog"
    then: str = "report"  # after finding: "on" | "off" | "report"
    question: str = ""  # ask_then / clarify: what to ask
    condition: str = ""  # ask_then: "daytime" or "generic"
    if_yes: list[Change] = field(default_factory=list)
    if_no: list[Change] = field(default_factory=list)
    message: str = ""  # question / refuse / unknown: the reply
    reply: str = ""  # control: the final message once every change is made (the home's language); "" -> composed


def which_one(b: Beliefs, devices: list[Dev]) -> str:
    """The question for several devices that fit: "Which one do you mean: the floor lamp in the Living room, ...?".

    Args:
        b: what the model read from the request (how a device is named).
        devices: the devices that fit, in the order to list them.
    """
    names = [describe(b, d.id) for d in devices]
    listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
    return f"{WHICH_ONE}{listed}?"
