"""One request read in either tool dialect: the Lares knowledge and tools, or Home Assistant's.

Part of the offline model (see :mod:`lares_kit.models.offline` for the
prompt contract). :func:`read` is what every reply starts with: the request
as :class:`~.reading.Beliefs`. A prompt with Home Assistant's static
context (and its intent calls in the history) is read by
:mod:`~lares_kit.models.offline.ha.reading` into the same beliefs a Lares prompt gives, so the planner
never needs to know which dialect it is in. One reading follows the dialect: a place and a kind with
no name ("the light in the kitchen", several there) is every one of them in Home Assistant's,
as its intents mean it, and a question in Lares's (:mod:`~lares_kit.models.offline.ha.recognizer`).
"""

from __future__ import annotations

import re
from typing import Any

from ...sentences.markers import room_in
from .ha.reading import STATIC_TAG, read_static_context, translate_calls
from .reading import Beliefs, Call, apply_facts, norm, read_request, text_of

__all__ = ["read"]

_LANGUAGE = re.compile(r"(?im)^\s*#?\s*language:\s*([A-Za-z]{2,3}(?:[-_][A-Za-z]{2,4})?)\s*$")


def read(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
         calls: list[Call] | None = None, instruction: str | None = None) -> Beliefs:
    """The request as beliefs, in whichever dialect it is written.

    Args:
        messages: the request's ``messages``, oldest first.
        tools: the request's ``tools``.
        calls: the tool calls so far, oldest first; None reads them from the messages.
        instruction: the user's instruction; None reads it from the messages.

    Examples:
        >>> msgs = [{"role": "system", "content": "Static Context: An overview:\\n- names: Lamp\\n  domain: light\\n"
        ...          "  areas: Den\\n"}, {"role": "user", "content": "turn on the lamp"}]
        >>> b = read(msgs)
        >>> b.mode, list(b.devices), b.devices["lamp"].state
        ('latest', ['lamp'], {})
    """
    b = read_request(messages, tools, calls, instruction, facts=False)
    for m in messages:
        body = text_of(m.get("content"))
        if m.get("role") == "system" and STATIC_TAG in body and b.mode == "none":
            static = read_static_context(body)
            if static is not None:
                b.rooms, b.devices, b.floors = static
                b.mode, b.robot, b.dialect = "latest", None, "ha"
                if said := _LANGUAGE.search(body):
                    b.language = said.group(1)
    if b.place and b.place not in b.rooms:  # Home Assistant's areas are known by name
        named = next((room_in(text_of(m.get("content")), name=True) for m in messages if m.get("role") == "system"
                      and room_in(text_of(m.get("content")))), "")
        b.place = next((r.id for r in b.rooms.values() if r.name.lower() == named.lower()), "")
    b.calls = [Call("set_device", {"device_id": c.arg("list_id"), "attribute": "items",  # one way to read a list add
                                   "value": {"add": c.arg("item")}}, c.result) if norm(c.name) == "addtolist" else c
               for c in b.calls]
    translate_calls(b)
    apply_facts(b)
    return b
