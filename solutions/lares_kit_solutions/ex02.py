"""Reference solutions for ``exercises/02_tool_error_sentence.ipynb`` (``lares_kit.learn.exercises.loop.ex02``).

The three problems read the same function; the notebook writes it once
(``q1``'s cell), so ``q2`` and ``q3`` are notes on what it already does.
"""

__all__ = ["lock_door"]

# %% q1
import difflib

from lares_kit.tools.schema import DeviceId
from lares_kit.tools.toolbox import ToolError


def lock_door(home, lock_id: DeviceId, locked: bool) -> str:
    """Lock or unlock a door lock. Safe to repeat: it says so if the lock is already that way.

    Args:
        home: The home whose lock changes; the Toolbox passes it, and the model never sees it.
        lock_id: ID of the lock, e.g. "front-door-lock".
        locked: true to lock the door, false to unlock it.
    """
    locks = [d.id for d in home.devices.values() if d.type == "lock"]
    device = home.devices.get(lock_id)
    if device is None or device.type != "lock":
        what = f"{lock_id!r} is a {device.type}, not a lock." if device else f"There is no lock {lock_id!r}."
        close = difflib.get_close_matches(lock_id, locks, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ToolError(f"{what}{hint} Locks: {', '.join(locks)}.")
    word = "locked" if locked else "unlocked"
    if device.state.get("locked") == locked:
        return f"The {device.name.lower()} ({lock_id}) is already {word}; nothing changed."
    home.update_device(lock_id, {"locked": locked})
    return f"The {device.name.lower()} ({lock_id}) is now {word}."

# %% q2
# The lock_door of question 1 already changes the lock and says so:
# "... (front-door-lock) is now locked." or "... is already locked; nothing changed."
lock_door = lock_door

# %% q3
# The lock_door of question 1 already raises ToolError naming the wrong id, the nearest lock and every lock.
lock_door = lock_door
