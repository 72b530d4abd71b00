"""Reference solutions for ``exercises/11_device_by_docs.ipynb`` (``lares_kit.learn.exercises.building.ex11``)."""

from lares_kit.device_apis.documents import device_extras

__all__ = ["calls", "pick"]

# %% q1
calls = [("tv-plant", "switch", "on", {}),
         ("tv-plant", "tvChannel", "setTvChannel", {"channel": 9})]


# %% q2
def pick(home, description):
    """The one device whose name and whose neighbours are both named in description, or None.

    Args:
        home: The home whose devices are searched.
        description: How the person names the device, e.g. "the TV by the plant".
    """
    said = set(description.lower().split())
    fits = []
    for device_id, device in home.devices.items():
        near = set(" ".join(device_extras(home, device_id).get("near", [])).lower().split())
        if set(device.name.lower().split()) & said and near & said:
            fits.append(device_id)
    return fits[0] if len(fits) == 1 else None
