"""Reference solutions for ``exercises/05_initial_knowledge.ipynb`` (``lares_kit.learn.exercises.loop.ex05``)."""

import json
import re

from lares_kit.episode import knowledge_header

__all__ = ["knowledge_message", "lights_switched", "light_states"]

# %% q1
def knowledge_message(mode, home, initial):
    """The world-knowledge system message for a knowledge mode, or None for "none".

    Args:
        mode: "latest", "initial" or "none".
        home: The home now (what ``latest`` shows).
        initial: The knowledge at the start, ``home.knowledge()`` before the first step (what ``initial`` shows).
    """
    if mode == "none":
        return None
    knowledge = home.render_knowledge("json") if mode == "latest" else json.dumps(initial, indent=2)
    return {"role": "system", "content": f"{knowledge_header(mode)}\n{knowledge}"}

# %% q2
def lights_switched(messages):
    """{light id: on} for every light a tool result says was switched, the last change winning.

    Args:
        messages: The chat messages so far; only the tool results are read.
    """
    changes = {}
    for message in messages:
        if message.get("role") == "tool" and not message["content"].startswith("Error: "):
            for light, state in re.findall(r"\(([\w-]+)\) (?:is|are) now (on|off)\.", message["content"]):
                changes[light] = state == "on"
    return changes

# %% q3
def light_states(initial, messages):
    """{light id: on} for every light: the start, updated by the history.

    Args:
        initial: The knowledge at the start (``home.knowledge()``): rooms with their devices and states.
        messages: The chat messages since then; the tool results say which lights were switched.
    """
    states = {d["id"]: d["state"]["on"] for room in initial["rooms"] for d in room["devices"] if d["type"] == "light"}
    states.update(lights_switched(messages))
    return states
