"""Exercise 11, device APIs from their docs, and a device named by what is near it.

Notebook: ``exercises/11_device_by_docs.ipynb`` (for ``notebooks/11_device_apis_and_disambiguation``).
The checks run the student's calls through the real
:func:`~lares_kit.device_apis.documents.execute_command` on a fresh ``sage-home``, and
compare the student's choice of device with the home's own data: each
device's ``name`` and its ``near`` list (:func:`~lares_kit.device_apis.documents.device_extras`).
"""

from __future__ import annotations

from typing import Any

from ...checking import PLACEHOLDER, Exercise, Incorrect, NotAttempted, Problem, ____, call

__all__ = ["q1", "q2", "bind", "____", "PLACEHOLDER", "PICK_CASES"]


def _fresh() -> Any:
    from ....home.worlds import load_world

    return load_world("sage-home")


def _test_calls(calls) -> str:
    from ....device_apis.documents import execute_command
    from ....tools.toolbox import ToolError

    if calls is PLACEHOLDER:
        raise NotAttempted("calls is still ____. Make it a list of (device_id, capability, command, arguments).")
    if not isinstance(calls, (list, tuple)) or not calls:
        raise Incorrect(f"calls is a list of (device_id, capability, command, arguments) tuples; got {calls!r}.")
    home = _fresh()
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    said = []
    for n, item in enumerate(calls, 1):
        if not isinstance(item, (list, tuple)) or len(item) != 4 or not isinstance(item[3], dict):
            raise Incorrect(f"Call {n} is {item!r}; each call is (device_id, capability, command, arguments) "
                            "with arguments a dict ({} for none).")
        try:
            said.append(execute_command(home, *item))
        except ToolError as exc:
            raise Incorrect(f"Call {n} {tuple(item)!r} was refused: {exc}") from None
    tv = home.devices["tv-plant"].state
    if not (tv["on"] is True and tv["channel"] == 9):
        raise Incorrect(f"After your calls the den TV (tv-plant) has on={tv['on']}, channel={tv['channel']}; "
                        "it should be on, showing channel 9.")
    changed = sorted(d for d, dev in home.devices.items() if d != "tv-plant" and dev.state != before[d])
    if changed:
        raise Incorrect(f"Your calls also changed {changed}; change only the den TV.")
    return f"Right, in {len(calls)} calls. The home said: " + " ".join(said)


# (description, the one device it names, or None when none or several fit)
PICK_CASES = [("the TV by the plant", "tv-plant"), ("the TV next to the credenza", "tv-credenza"),
              ("the light strip by the fireplace", "fireplace-strip"), ("the lamp by the plant", "den-lamp"),
              ("the TV", None), ("the TV by the window", None), ("the light strip in the living room", None)]


def _test_pick(pick) -> str:
    from ....device_apis.documents import device_extras

    home = _fresh()
    for description, want in PICK_CASES:
        got = call(pick, home, description, case=repr(description))
        if got != want:
            if want is None:
                hint = " Two or more devices fit, or none does: return None, and the agent asks which one."
            elif isinstance(got, str) and got in home.devices:  # say why the one picked does not fit
                near = device_extras(home, got).get("near", [])
                hint = (f" {got!r} is called {home.devices[got].name!r} and is near "
                        f"{', '.join(near) or 'nothing listed'}: match the device's name and what it is near.")
            else:
                hint = ""
            raise Incorrect(f"For {description!r}: expected {want!r}, but your function returned {got!r}.{hint}")
    return (f"Right on all {len(PICK_CASES)} descriptions. lares_kit's rank_devices scores more fields (room, aliases, "
            "the description) and says which words matched.")


q1 = Problem("Channel 9 on the den TV, from the docs", ("calls",), _test_calls, hints=[
    "Read capability_doc(home, 'tv-plant', 'tvChannel'): the channel command says the TV must be on. "
    "The switch capability has the on command.",
    "[('tv-plant', 'switch', 'on', {}), ('tv-plant', 'tvChannel', 'setTvChannel', {'channel': 9})]",
])
q2 = Problem("The device by the plant", ("pick",), _test_pick, hints=[
    "Candidates: devices whose name shares a word with the description (TV, lamp, strip...). Of those, keep the "
    "ones whose near list (device_extras(home, id)['near']) shares a word with it too.",
    "Split on spaces after lower-casing; 'living room' in a near list gives the words 'living' and 'room'. "
    "Return the id when exactly one device is left, else None.",
])
EXERCISE = Exercise("11_device_by_docs", [q1, q2])
bind = EXERCISE.bind
