"""Which device does the person mean? "The TV by the plant", "the light by the dresser".

Taught in ``notebooks/11_device_apis_and_disambiguation.ipynb``. SAGE matched
the words against one photo per device with a vision model (CLIP). Here the
"photo" is text: each device's name, type, aliases, room, the things the
world file says are ``near`` it, and its description. :func:`rank_devices`
scores every device by word overlap, weighted by where the word was found;
:func:`find_device` is the agent's tool. When two devices fit equally well
the answer says so and names them, so the agent asks the person -- guessing
between two TVs is how a home assistant loses trust.

It is word matching, not understanding: "the telly near the greenery" finds
nothing unless an alias or description says so. A vision or language model
would do better; the scores are here to be read in a notebook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import choices
from ..home.graph import Device, Home
from .documents import device_extras

__all__ = ["Match", "rank_devices", "find_device", "KIND_WORDS"]

# Words that name a kind of device -> the device types they fit. A kind word in
# the description rules out devices of other kinds (a "light by the plant" is
# never the TV by the plant).
KIND_WORDS = {
    "light": ("light",), "lights": ("light",), "lamp": ("light",), "strip": ("light",), "strips": ("light",),
    "tv": ("tv",), "television": ("tv",), "telly": ("tv",), "screen": ("tv",),
    "fridge": ("fridge",), "refrigerator": ("fridge",), "freezer": ("fridge",),
    "dishwasher": ("dishwasher",), "speaker": ("speaker",), "music": ("speaker",),
    "thermostat": ("thermostat",), "heating": ("thermostat",), "lock": ("lock",), "door": ("lock", "fridge"),
}
_STOP = frozenset("a an the by on in at of to near next beside behind over under above with and or my our "
                  "this that one please is it its from".split())
# where a word was found -> how much it counts
WEIGHTS = {"kind": 3.0, "near": 2.0, "room": 1.5, "alias": 1.5, "description": 0.5}


def _match_words(text: str) -> list[str]:
    # lowercase words, plural s dropped ("lights" ~ "light"), stopwords out
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in _STOP:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


@dataclass
class Match:
    """One device's score for a description, and the words that earned it."""

    device_id: str
    score: float
    matched: list[str]


def _fields(home: Home, dev: Device) -> dict[str, set[str]]:
    extras = device_extras(home, dev.id)
    room = home.graph.nodes[dev.room]
    kinds = {w for w, types in KIND_WORDS.items() if dev.type in types}
    return {
        "kind": {_match_words(k)[0] for k in kinds if _match_words(k)} | set(_match_words(dev.name)),
        "near": set(_match_words(" ".join(extras.get("near", [])))),
        "room": set(_match_words(" ".join([room.get("name", ""), dev.room, *room.get("aliases", [])]))),
        "alias": set(_match_words(" ".join(dev.aliases))),
        "description": set(_match_words(dev.description)),
    }


def rank_devices(home: Home, description: str) -> list[Match]:
    """Devices that fit a description, best first (ties in file order); devices of another kind are left out.

    Args:
        home: The home whose devices are scored.
        description: A person's words for a device, e.g. ``"the TV by the plant"``; a kind word in it
            (light, TV, fridge, ...) rules out devices of other kinds.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("sage-home")
        >>> [(m.device_id, m.score) for m in rank_devices(home, "the TV by the plant")]
        [('tv-plant', 5.0), ('tv-credenza', 3.0)]
        >>> rank_devices(home, "the light by the dresser")[0].device_id
        'nightstand-strip'
    """
    words = _match_words(description)
    # the first kind word is the head noun: "the light behind the TV" is a light
    head = next((w for w in re.findall(r"[a-z]+", description.lower()) if w in KIND_WORDS), None)
    kinds = set(KIND_WORDS.get(head, ())) if head else set()
    matches = []
    for dev in home.devices.values():
        if (kinds and dev.type not in kinds) or not dev.exposed:  # a device hidden from the agent is never a match
            continue
        fields = _fields(home, dev)
        score, matched = 0.0, []
        for word in dict.fromkeys(words):
            # a word counts once, where it weighs most
            best = max((WEIGHTS[f] for f, bag in fields.items() if word in bag), default=0.0)
            if best:
                score += best
                matched.append(word)
        if score:
            matches.append(Match(dev.id, score, matched))
    return sorted(matches, key=lambda m: -m.score)


def _label(home: Home, device_id: str) -> str:
    dev = home.devices[device_id]
    return f"{device_id} ({dev.name} in the {home.room_name(dev.room)}: {dev.description.rstrip('.')})"


def find_device(home: Home, description: str) -> str:
    """Find the device a person means from how they describe it, e.g. "the TV by the plant" or
    "all the lights in the living room". Says so when several fit equally well: then ask the user which one.

    Args:
        home: The home whose devices are searched; supplied by the toolkit, never shown to the model.
        description: The person's words for the device, e.g. "the light over the dining table".

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("sage-home")
        >>> find_device(home, "the lights by the fireplace")[:40]
        'Best match: fireplace-strip (Light strip'
        >>> find_device(home, "the TV").split(":")[0]
        'Ambiguous'
    """
    ranked = rank_devices(home, description)
    if not ranked:
        shown = [d.id for d in home.devices.values() if d.exposed]
        return (f"No device matches {description!r}. {choices('Devices', description, shown)} "
                "list_devices says where each one is.")
    wants_all = bool(re.search(r"\b(all|every|both)\b", description.lower()))
    top = [m for m in ranked if m.score == ranked[0].score]
    if wants_all:
        # every device of the kind asked for that also fits the place words (if any were given)
        fitting = top if len(top) > 1 or len(ranked) == 1 else [m for m in ranked if m.score >= ranked[0].score / 2]
        return f"All devices that fit {description!r}: " + "; ".join(_label(home, m.device_id) for m in fitting) + "."
    if len(top) > 1:
        return (f"Ambiguous: {len(top)} devices fit {description!r} equally well: "
                + "; ".join(_label(home, m.device_id) for m in top) + ". Ask the user which one they mean.")
    best = ranked[0]
    return f"Best match: {_label(home, best.device_id)}. Matched words: {', '.join(best.matched)}."
