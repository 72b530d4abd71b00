"""The offline model's rules for an overview without states: ask for live context first.

Part of the offline model (see :mod:`lares_kit.models.offline` for the
prompt contract). Under the ``overview`` knowledge format
(:mod:`lares_kit.knowledge.modes`, Home Assistant's approach) the knowledge lists
rooms and devices but no states, and the tool ``get_live_context(room,
floor, type)`` reports them. A device whose state the model does not know
has an empty ``state`` in its :class:`~.reading.Beliefs`; these rules:

* **fetch**: when ``get_live_context`` is offered, before anything else, ask
  for the live context of each room the instruction names whose devices'
  states are unknown -- or, when it names none, of the robot's room (a
  search starts there). At most :data:`MAX_FETCHES` per task, each room once;
* **merge** (with the other facts of the history, in :mod:`~lares_kit.models.offline.reading`:
  :func:`~.reading.merge_live_context`, :func:`~.reading.note_lit`): a
  ``get_live_context`` result (``... : {"<device id>": {state}, ...}``)
  fills in states that are still unknown, in history order, so a later "is
  now on" still wins; a move's "It is lit/dark there." settles the lights of
  a room whose states are unknown.

With any other format every state is known and none of this changes a reply.
"""

from __future__ import annotations

import re
from typing import Any

from ..reading import Beliefs, Dev, norm
from ..vocabulary import rooms_in, untyped, words_of

__all__ = ["LIVE_TOOL", "MAX_FETCHES", "live_context_step"]

LIVE_TOOL = "getlivecontext"  # get_live_context, normalised
MAX_FETCHES = 4


def live_context_step(b: Beliefs, can: set[str]) -> tuple[str, dict[str, Any], str] | None:
    """``("live", {"room": id}, why)`` when a room's states must be fetched first; else None.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        can: the offered tools' names, normalised (``setdevice``, ``askuser``): a step uses only these. Without
            ``getlivecontext`` there is nothing to fetch.

    Examples:
        >>> from lares_kit.models.offline.reading import Beliefs, Dev, Room
        >>> b = Beliefs("turn on the light in the kitchen", "latest", {"kitchen": Room("kitchen", "Kitchen")},
        ...             {"k": Dev("k", "Light", "light", "kitchen")}, "kitchen", {}, [])
        >>> live_context_step(b, {"getlivecontext", "setlight"})[:2]
        ('live', {'room': 'kitchen', 'area': 'Kitchen'})
        >>> live_context_step(b, {"setlight"}) is None
        True
    """
    if LIVE_TOOL not in can:
        return None
    fetched = [c for c in b.calls if norm(c.name) == LIVE_TOOL]
    if len(fetched) >= MAX_FETCHES:
        return None
    asked = {str(c.arg("room")) for c in fetched}
    said = words_of(b.instruction)
    rooms, _ = rooms_in(said, b)
    asks = b.instruction.rstrip().endswith("?") or re.match(r"(is|are|what|which|how|does|do|any)\b", said)
    if not rooms and asks:  # a question that names no room: the rooms of the devices it names ("is the towel rail on?")
        rooms = list(dict.fromkeys(d.room for d in b.devices.values() if d.room in b.rooms and any(
            re.search(rf"\b{re.escape(n)}\b", said) for n in _called(d))))
        kinds = [d for d in b.devices.values() if d.room in b.rooms and words_of(d.type)
                 and re.search(rf"\b{re.escape(words_of(d.type))}s?\b", said)]
        rooms = rooms or list(dict.fromkeys(d.room for d in kinds))  # no device named: its kind ("the weather")
    if not rooms and b.robot in b.rooms:
        rooms = [b.robot]
    for room in rooms:
        devices = [d for d in b.devices.values() if d.room == room]
        if room not in asked and any(not d.state for d in devices):
            name = b.rooms[room].name if room in b.rooms else room
            return ("live", {"room": room, "area": name},
                    f"The knowledge lists the devices in the {name} without their states, so I ask for them first.")
    return None


def _called(d: Dev) -> list[str]:
    # What a question may call a device: its name and aliases, and the name without its type ("the front door").
    said = [d.name, *d.aliases]
    said += [short for short in (untyped(n, d.type) for n in said) if short]
    return [words_of(n) for n in said if words_of(n)]
