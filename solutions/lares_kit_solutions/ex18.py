"""Reference solutions for ``exercises/18_messages_and_doors.ipynb`` (``lares_kit.learn.exercises.field.ex18``)."""

import json

__all__ = ["light_command", "lights_on", "verdicts"]


# %% q1
def lights_on(heard):
    """The names of the lights that are on, as a plain MQTT subscriber sees them.

    Args:
        heard: topic -> the last payload (text) retained on the broker.
    """
    names = []
    for topic, payload in heard.items():
        if not (topic.startswith("homeassistant/light/") and topic.endswith("/config")) or not payload:
            continue  # not a light, or a config cleared when its home left
        config = json.loads(payload)
        state = json.loads(heard[config["state_topic"]])  # a JSON-schema light: {"state": "ON", ...}
        if state["state"] == "ON":
            names.append(config["device"]["name"])
    return sorted(names)


# %% q2
def light_command(config, percent):
    """The (topic, payload) Home Assistant publishes to set a light to ``percent`` % (0: off).

    Args:
        config: The light's discovery config (a dict).
        percent: The brightness wanted, 0-100.
    """
    topic = config["command_topic"]
    if percent == 0:
        return topic, json.dumps({"state": "OFF"})
    if not config.get("brightness"):
        return topic, json.dumps({"state": "ON"})  # this light cannot dim
    return topic, json.dumps({"state": "ON", "brightness": round(percent * config["brightness_scale"] / 100)})


# %% q3
verdicts = {"a": "confirm", "b": "refuse", "c": 403, "d": 401, "e": 421, "f": "refuse", "g": 415, "h": "allow"}
