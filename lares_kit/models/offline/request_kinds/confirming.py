"""The offline model's rule for a home's safety policy: ask the gate's question, act only on a yes.

Part of the offline model (:mod:`lares_kit.models.offline`); taught in
``notebooks/15_safety_and_failure.ipynb``. When a device call comes back
``Error: Confirmation needed: ... in exactly these words: "Shall I ...?" -- ...``
(the observation of :class:`lares_kit.safety.gate.SafetyGate`), a careful model
asks the user that question, word for word -- the gate lets a change through
only on a yes to the question it gave, which names the exact change -- and
after a clear yes makes the same call again; after anything else it stops
and says it did nothing. A ``Refused by the home's safety policy``
observation needs no rule here: the planner never repeats a failed call, so
it halts and reports the refusal. An instruction from a source the home does
not trust comes with the house rules it is held to (a paragraph of the
prompt, :func:`lares_kit.sentences.markers.house_rules_in`): :func:`house_rule_against`
says which change they forbid, and the planner declines it before any call.

Like the rest of the offline model it reads only the request: the history
of calls and answers, never the policy or the home. The observation's
wording is read with :func:`lares_kit.safety.confirmation.question_in`, the
contract's one parser, and a yes with :func:`lares_kit.safety.confirmation.is_yes`.
"""

from __future__ import annotations

import json
from typing import Any

from ....safety.confirmation import CONFIRM_MARK, is_yes, question_in
from ....sentences.markers import answer_in
from ..reading import Beliefs, norm

__all__ = ["CONFIRM_FIRST", "HOUSE_RULES_SAY", "cannot_under_rules", "confirmation_step", "house_rule_against"]


# How an agent that cannot ask (SAGE's device agent) hands the gate's question on to whoever can
CONFIRM_FIRST = "The home's safety policy needs the person's confirmation first. Ask them: "


def confirmation_step(b: Beliefs, can: set[str]) -> tuple[str, dict[str, Any], str] | None:
    """``(action, arguments, why)`` when the history is waiting on a confirmation, else None.

    Actions: ``"ask"`` (the suggested question), ``"device"`` / ``"light"``
    (the blocked call again, after a yes) or ``"halt"`` (no yes).

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        can: the offered tools' names, normalised (``setdevice``, ``askuser``): a step uses only these.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Call
        >>> blocked = Call("set_device", {"device_id": "front-door-lock", "attribute": "locked", "value": False},
        ...     'Error: Confirmation needed: unlocking a door is sensitive. First ask the user with ask_user, '
        ...     'in exactly these words: "Shall I unlock the front door lock (front-door-lock)? '
        ...     'Please answer yes or no." -- only...')
        >>> b = Beliefs("unlock the front door", "latest", {}, {}, None, {}, [blocked])
        >>> confirmation_step(b, {"askuser", "setdevice", "halt"})[:2]
        ('ask', {'question': 'Shall I unlock the front door lock (front-door-lock)? Please answer yes or no.'})
        >>> b.calls.append(Call("ask_user", {"question": "Shall I unlock ...?"}, "The user answered: Yes."))
        >>> confirmation_step(b, {"askuser", "setdevice", "halt"})[:2]
        ('device', {'device_id': 'front-door-lock', 'attribute': 'locked', 'value': False})
        >>> b.calls[-1] = Call("ask_user", {"question": "Shall I unlock ...?"}, "The user answered: Yes, but later.")
        >>> confirmation_step(b, {"askuser", "setdevice", "halt"})[0]
        'halt'
    """
    done = [c for c in b.calls if c.result is not None]
    if not done:
        return None
    last = done[-1]
    if _blocked(last):
        question = question_in(last.result) or f"May I call {last.name} with {last.args}? Please answer yes or no."
        if "askuser" not in can:
            return "halt", {"message_to_user": CONFIRM_FIRST + question}, "I cannot ask, so I stop."
        return "ask", {"question": question}, "The home's safety policy needs the user's confirmation, so I ask first."
    if norm(last.name) == "askuser" and len(done) >= 2 and _blocked(done[-2]):
        blocked = done[-2]
        answer = answer_in(last.result)
        if is_yes(answer, str(last.args.get("question", ""))):
            action = "light" if norm(blocked.name) in ("setlight", "togglelight") else "device"
            return action, dict(blocked.args), "The user confirmed, so I make the same call again."
        what = json.dumps(blocked.args)
        return "halt", {"message_to_user": f"I cannot do that without a clear yes from you, so nothing was changed "
                                           f"({blocked.name} {what} was not run)."}, "No confirmation, no action."
    return None


# How the model says no to what the house rules forbid: "I cannot change <device>: the house rules say <why>"
HOUSE_RULES_SAY = "the house rules say"


def cannot_under_rules(device: str, why: str) -> str:
    """The sentence for a change the house rules forbid (see :func:`house_rule_against`).

    Args:
        device: the device, as the sentence names it ("the oven in the Kitchen", or its id).
        why: what :func:`house_rule_against` said.

    Examples:
        >>> cannot_under_rules("the oven", "at night (04:00) nothing may be changed on an order from Al")
        'I cannot change the oven: the house rules say at night (04:00) nothing may be changed on an order from Al'
    """
    return f"I cannot change {device}: {HOUSE_RULES_SAY} {why}"


def house_rule_against(b: Beliefs, device: str, attribute: str, value: Any) -> str:
    """Why the prompt's house rules forbid this change to this instruction ("" when they do not, or say nothing).

    An instruction from a source the home does not trust comes with the rules it is held to
    (:func:`lares_kit.sentences.markers.house_rules_in`): the model says no instead of trying a call the gate refuses.

    Args:
        b: what the model read from the request, its house rules included.
        device: the device's id.
        attribute: the setting to change.
        value: its new value.

    Examples:
        >>> from lares_kit.sentences.markers import HouseRule, HouseRules
        >>> from lares_kit.models.offline.reading import Dev
        >>> b = Beliefs("unlock the front door", "latest", {}, {"lock": Dev("lock", "Front door", "lock", "hall")},
        ...             None, {}, [])
        >>> house_rule_against(b, "lock", "locked", False)
        ''
        >>> b.house_rules = HouseRules("guest", "", (HouseRule("unlocking a door", "locked", "=", False,
        ...                                                    ("Front door (lock)",)),))
        >>> house_rule_against(b, "lock", "locked", False)
        "unlocking a door needs the owner's yes, which guest cannot give"
    """
    if b.house_rules is None:
        return ""
    dev = b.devices.get(device)
    return b.house_rules.forbids(device, dev.name if dev is not None else device, attribute, value)


def _blocked(call: Any) -> bool:
    return (call.result or "").removeprefix("Error: ").startswith(CONFIRM_MARK)
