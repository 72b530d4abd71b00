"""Reference solutions for ``exercises/17_ha_templates_tools.ipynb`` (``lares_kit.learn.exercises.field.ex17``)."""

from lares_kit.ha.domains import DOMAINS

__all__ = ["templates", "calls", "entity_for"]

# %% q1
templates = [
    "(pop|flick) [the] {area} light on",
    "(pop|flick) [the] light on in [the] {area}",
]

# %% q2
calls = {
    "lock up the back door": ("HassTurnOn", {"name": "Back door lock"}),
    "set the bedside lamp to 30 percent": ("HassLightSet", {"name": "Bedside lamp", "brightness": 30}),
    "set the living room blinds half open": ("HassSetPosition", {"name": "Blinds", "area": "Living room",
                                                                 "position": 50}),
    "switch the kitchen lights off": ("HassTurnOff", {"area": "Kitchen", "domain": "light"}),
    "put the heating on 21 degrees": ("HassClimateSetTemperature", {"name": "Thermostat", "temperature": 21}),
}


# %% q3
def entity_for(home, device_id):
    """The device's Home Assistant entity id: its domain, a dot, its name as an ASCII slug.

    Args:
        home: The home the device is in.
        device_id: The device's lares_kit id, e.g. "hall-light".
    """
    import re
    import unicodedata

    device = home.devices[device_id]
    name = device.name
    if sum(d.name.lower() == name.lower() for d in home.devices.values()) > 1:
        name = f"{home.room_name(device.room)} {name}"
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return f"{DOMAINS[device.type]}.{re.sub(r'[^a-z0-9]+', '_', text).strip('_')}"
