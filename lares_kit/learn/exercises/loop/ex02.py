"""Exercise 02, a tool with good sentences: ``lock_door`` for the townhouse.

Notebook: ``exercises/02_tool_error_sentence.ipynb`` (after
``notebooks/02_agent_facing_tools.ipynb``). The checks build a
:class:`~lares_kit.tools.toolbox.Toolbox` with the student's tool and call it through
``dispatch``, as a model would: a schema must build, a result must say how
the home changed, an error must say what is wrong *and* how to fix it.
"""

from __future__ import annotations

from ....home.worlds import load_world
from ....tools.schema import SchemaError
from ....tools.toolbox import Toolbox
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call
from ...matching import has_id, has_word

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]


def _box(lock_door):
    if callable(lock_door) and getattr(lock_door, "__name__", "") != "lock_door":
        raise Incorrect(f"The tool's name is its function's name: define it as def lock_door(...), "
                        f"not {getattr(lock_door, '__name__', '?')}.")
    call(lock_door, load_world("townhouse"), "front-door-lock", True, case="locking the front door")
    home = load_world("townhouse").reset(states={"front-door-lock": {"locked": False}})
    try:
        return Toolbox(home, tools=[lock_door]), home
    except SchemaError as exc:
        raise Incorrect(f"The toolbox cannot describe lock_door to a model: {exc}.") from None


# A description says what the tool does with one of these words ("Locks or unlocks a door"; not "blocks").
_LOCK_WORDS = ("lock", "locks", "locking", "locked", "unlock", "unlocks", "unlocking")


def _test_schema(lock_door) -> str:
    box, _ = _box(lock_door)
    try:
        fn = box.schema("lock_door")["function"]
    except SchemaError as exc:
        raise Incorrect(f"The toolbox cannot describe lock_door to a model: {exc}.") from None
    props = fn["parameters"]["properties"]
    if sorted(props) != ["lock_id", "locked"]:
        raise Incorrect(f"The model should see two parameters, lock_id and locked; it sees {sorted(props)}. "
                        "(home is supplied by the toolkit and hidden.)")
    if props["locked"].get("type") != "boolean":
        raise Incorrect(f"locked should be a bool (JSON boolean); its schema says {props['locked']}.")
    if not has_word(fn["description"], *_LOCK_WORDS):
        raise Incorrect(f"The description should say what the tool does; it reads {fn['description']!r}.")
    return f"A model reads: {fn['description']!r} with lock_id and locked (boolean)."


# Ways a result can say that nothing changed, as whole words ("already locked", "still locked"...).
_NO_CHANGE = ("already", "still", "unchanged", "nothing changed", "no change", "nothing to do", "did nothing")


def _test_result(lock_door) -> str:
    box, home = _box(lock_door)
    obs = box.dispatch("lock_door", {"lock_id": "front-door-lock", "locked": True})
    if not obs.ok:
        raise Incorrect(f"Locking the unlocked front door failed: {obs.text!r}.")
    if home.devices["front-door-lock"].state.get("locked") is not True:
        raise Incorrect(f"After lock_door(front-door-lock, true) the lock's state is "
                        f"{home.devices['front-door-lock'].state}; expected locked true.")
    if not has_id(obs.text, "front-door-lock") or not has_word(obs.text, "locked"):
        raise Incorrect(f"The result should name the lock (front-door-lock) and say it is now locked; "
                        f"it reads {obs.text!r}.")
    again = box.dispatch("lock_door", {"lock_id": "front-door-lock", "locked": True})
    if not again.ok or not has_word(again.text, *_NO_CHANGE):
        raise Incorrect(f"Locking it again should say it was already locked (so nothing changed); "
                        f"it reads {again.text!r}.")
    opened = box.dispatch("lock_door", {"lock_id": "back-door-lock", "locked": False})
    if home.devices["back-door-lock"].state.get("locked") is not False:
        raise Incorrect("lock_door(back-door-lock, false) should unlock the back door; it is still locked.")
    if not has_word(opened.text, "unlocked"):
        raise Incorrect(f"After lock_door(back-door-lock, false) the result should say the lock is now unlocked; "
                        f"it reads {opened.text!r}.")
    return f"It reads: {obs.text!r} -- and {again.text!r}"


def _test_errors(lock_door) -> str:
    box, home = _box(lock_door)
    locks = ["front-door-lock", "back-door-lock"]
    for wrong, must in [("front-dor-lock", ["front-dor-lock", "front-door-lock"]),
                        ("oven", ["oven", *locks]), ("garage-lock", ["garage-lock", *locks])]:
        obs = box.dispatch("lock_door", {"lock_id": wrong, "locked": True})
        case = f"lock_door(lock_id={wrong!r})"
        if obs.ok:
            raise Incorrect(f"For {case}, expected an error (raise ToolError), but it returned {obs.content!r}.")
        if obs.text.startswith("The tool lock_door failed unexpectedly"):
            raise Incorrect(f"For {case}, your tool crashed: {obs.text!r}. Raise ToolError with a sentence instead.")
        missing = [ident for ident in must if not has_id(obs.text, ident)]
        if missing:
            raise Incorrect(f"For {case}, the error should name {', '.join(must)} (what was wrong and the valid "
                            f"locks), so the model can fix its next call; it leaves out {', '.join(missing)}. "
                            f"It reads {obs.content!r}.")
    if any(d.state.get("locked") is not False for d in [home.devices["front-door-lock"]]):
        raise Incorrect("A failed call changed the front door lock; an error must change nothing.")
    return "Each error says what was wrong and which locks there are: a model can fix its next call."


_TOOL_HINT = "Raise ToolError('...') for a mistake; the dispatcher turns it into 'Error: ...' for the model."
q1 = Problem("A schema a model can read", ("lock_door",), _test_schema, hints=[
    "Look at set_light in lares_kit/tools/toolbox.py: a docstring summary, then Args: with one line per argument.",
    "Type the arguments: lock_id: DeviceId (from lares_kit.tools.schema) and locked: bool. home needs no hint.",
])
q2 = Problem("A result that says how the home changed", ("lock_door",), _test_result, hints=[
    "home.devices[lock_id].state is a dict like {'locked': True}; change it with home.update_device.",
    "Return a sentence with the lock's id and its new state, "
    "e.g. 'The front door lock (front-door-lock) is now locked.'",
    "Before changing anything, compare: if the state is already what was asked, say 'already locked; nothing changed'.",
])
q3 = Problem("Errors that say how to fix the call", ("lock_door",), _test_errors, hints=[
    _TOOL_HINT,
    "The valid locks are [d.id for d in home.devices.values() if d.type == 'lock']; put them in every error.",
    "For a near miss, difflib.get_close_matches(lock_id, lock_ids, n=1) finds the lock the model meant.",
])
EXERCISE = Exercise("02_tool_error_sentence", [q1, q2, q3])
bind = EXERCISE.bind
