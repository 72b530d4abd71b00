"""Reference solutions for ``exercises/15_refusal.ipynb`` (``lares_kit.learn.exercises.field.ex15``)."""

from lares_kit.tools.toolbox import ToolError
from lares_kit.tools.toolbox import set_device as plain_set_device

__all__ = ["policy", "set_device", "verdicts"]

# %% q1
policy = {
    "confirm": [
        {"what": "unlocking the back door", "devices": ["back-door-lock"], "attribute": "locked", "is": False},
    ],
}

# %% q2
verdicts = {"a": "confirm", "b": "refuse", "c": "refuse", "d": "allow", "e": "allow", "f": "refuse"}


# %% q3
def set_device(home, device_id: str, attribute: str, value: bool | float | str) -> str:
    """Change one setting of a device: a thermostat's target, a lock's locked, the oven's temperature.

    Args:
        home: The home whose device changes; the Toolbox passes it, and the model never sees it.
        device_id: ID of the device, e.g. "oven".
        attribute: The setting to change, e.g. "temperature", "target", "on".
        value: The new value: true/false, a number, or one of the named choices.
    """
    if device_id == "oven" and attribute == "temperature":
        try:
            too_hot = float(value) > 220
        except (TypeError, ValueError):
            too_hot = False  # not a number: plain_set_device explains what it expects
        if too_hot:
            raise ToolError(f"The oven may not be set above 220 °C in this home (asked: {value}). Do not try "
                            "again; tell the user the oven goes up to 220 °C.")
    return plain_set_device(home, device_id, attribute, value)
