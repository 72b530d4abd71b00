"""Exercise 17, Home Assistant's templates, its tools and its entity ids.

Notebook: ``exercises/17_ha_templates_tools.ipynb`` (for ``notebooks/17_home_assistant``).
The checks run the student's sentence templates through ``hassil`` itself
(with the rooms of ``lares-home`` as the ``{area}`` slot list), the
student's tool calls through the real HA tools of :mod:`lares_kit.ha.tools`
on a fresh ``townhouse`` judged by the whole-home diff, and compare the
student's entity ids with :func:`~lares_kit.ha.context.entity_ids`.
"""

from __future__ import annotations

from typing import Any

from ...checking import PLACEHOLDER, Exercise, Incorrect, NotAttempted, Problem, ____, call

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER", "SAID", "NOT_SAID", "INSTRUCTIONS", "matches",
           "townhouse", "try_call"]

# ------------------------------------------------------------------ q1: templates
# Sentences the student's templates must match as HassTurnOn, with the room hassil should read -- and sentences
# they must not match. The checks try more of both than the question shows.
SAID = {"pop the office light on": "office", "flick the bedroom light on": "bedroom",
        "pop the light on in the hallway": "hallway"}
NOT_SAID = ["pop the office light off", "pop the garage light on"]
_MORE_SAID = {"flick the light on in the lounge": "lounge", "Pop the Kitchen light on!": "kitchen",
              "flick the office light on": "office"}
_MORE_NOT_SAID = ["flick the kitchen fan on", "flick the light off in the bedroom"]


def _areas() -> Any:
    from hassil.intents import TextSlotList

    from ....home.worlds import load_world

    home = load_world("lares-home")
    rooms = home.graph.nodes(data=True)
    return TextSlotList.from_tuples([(data.get("name", room).lower(), room) for room, data in rooms])


def matches(templates: list[str], sentence: str) -> dict[str, Any] | None:
    """What hassil reads from ``sentence`` with ``templates`` as HassTurnOn's sentences, or None for no match.

    The ``{area}`` slot lists the rooms of ``lares-home`` (Lounge, Hallway, Kitchen, Bedroom, Office), its value
    being the room's id; the templates' data sets the ``domain`` slot to ``light``, as Home Assistant's do.

    Args:
        templates: hassil sentence templates, e.g. ``["turn on [the] {area} light"]`` (one string is one template).
        sentence: What the person said.

    Examples:
        >>> matches(["switch on [the] {area} light"], "switch on the kitchen light")
        {'area': 'kitchen', 'domain': 'light'}
        >>> matches(["switch on [the] {area} light"], "switch on the garage light") is None
        True
    """
    from hassil import Intents, recognize

    intents = Intents.from_dict({"language": "en", "intents": {"HassTurnOn": {"data": [
        {"sentences": [templates] if isinstance(templates, str) else list(templates), "slots": {"domain": "light"}}]}}})
    result = recognize(sentence, intents, slot_lists={"area": _areas()})
    return None if result is None else {name: entity.value for name, entity in result.entities.items()}


def _test_templates(templates) -> str:
    if isinstance(templates, str):
        templates = [templates]
    if not isinstance(templates, (list, tuple)) or not templates or not all(isinstance(t, str) for t in templates):
        raise Incorrect(f"templates is a list of template strings, such as ['turn on [the] {{area}} light']; got "
                        f"{templates!r}.")
    try:
        matches(templates, "pop the office light on")
    except Exception as exc:  # hassil refuses the template itself
        raise Incorrect(f"hassil cannot read your templates: {type(exc).__name__}: {exc}. Slots are {{area}}, "
                        "alternatives (a|b), optional words [the].") from None
    for sentence, room in {**SAID, **_MORE_SAID}.items():
        got = matches(templates, sentence)
        if got is None:
            raise Incorrect(f"hassil matched nothing for {sentence!r}; it should read HassTurnOn with area "
                            f"{room!r}. Does one of your templates say it in that word order?")
        if got.get("area") != room:
            raise Incorrect(f"For {sentence!r}, hassil read the slots {got}: expected area {room!r}. Name the room "
                            "with the {area} slot, not with its words: then every room of the home fits.")
    for sentence in NOT_SAID + _MORE_NOT_SAID:
        got = matches(templates, sentence)
        if got is not None:
            raise Incorrect(f"hassil matched {sentence!r} as HassTurnOn with {got}, but it should match nothing: "
                            "a template matches only what it spells out, so leave out what HassTurnOn must not hear.")
    tried = len(SAID) + len(_MORE_SAID) + len(NOT_SAID) + len(_MORE_NOT_SAID)
    return (f"Right on all {tried} sentences, with {len(templates)} template(s). Home Assistant's own English "
            "templates are written the same way, by its community, one wording at a time.")


# -------------------------------------------------------------------- q2: tool calls
# Each instruction, and every setting it should change in the set-up townhouse -- nothing else may change.
INSTRUCTIONS = {
    "lock up the back door": {"back-door-lock": {"locked": True}},
    "set the bedside lamp to 30 percent": {"bedside-lamp": {"on": True, "brightness": 30}},
    "set the living room blinds half open": {"living-room-blinds": {"position": 50}},
    "switch the kitchen lights off": {"kitchen-light": {"on": False}},
    "put the heating on 21 degrees": {"hall-thermostat": {"target": 21}},
}


def townhouse() -> Any:
    """A fresh ``townhouse`` with the exercise's set-up: the back door is unlocked and the kettle is on."""
    from ....home.worlds import load_world

    home = load_world("townhouse")
    home.update_device("back-door-lock", {"locked": False})
    home.update_device("kettle", {"on": True})
    return home


def try_call(tool: str, arguments: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every setting one HA tool call changes in a fresh set-up :func:`townhouse`: ``{device id: {attribute: value}}``.

    Args:
        tool: A tool's name, e.g. ``"HassTurnOn"``.
        arguments: Its arguments by name (the home is supplied), e.g. ``{"name": "Kettle"}``.

    Raises:
        ToolError: the tool refused the call; the sentence says why, as the model would read it.
        ValueError: there is no HA tool of that name.
        TypeError: an argument the tool does not have.

    Examples:
        >>> try_call("HassTurnOff", {"name": "Kettle"})
        {'kettle': {'on': False}}
    """
    from ....ha.tools import HA_TOOLS

    tools = {fn.__name__: fn for fn in HA_TOOLS}
    if tool not in tools:
        raise ValueError(f"There is no HA tool called {tool!r}; the tools are {', '.join(tools)}.")
    home = townhouse()
    before = {d: dict(device.state) for d, device in home.devices.items()}
    tools[tool](home, **arguments)
    return {d: {a: v for a, v in device.state.items() if before[d].get(a) != v}
            for d, device in home.devices.items() if device.state != before[d]}


def _test_calls(calls) -> str:
    from ....errors import ToolError

    if not isinstance(calls, dict):
        raise Incorrect(f"calls is a dict: each instruction -> (tool name, arguments); got {type(calls).__name__}.")
    missing = [i for i in INSTRUCTIONS if i not in calls]
    if missing:
        raise Incorrect(f"calls has no entry for {missing[0]!r}; give one (tool name, arguments) per instruction.")
    for instruction, want in INSTRUCTIONS.items():
        given = calls[instruction]
        if given is PLACEHOLDER:
            raise NotAttempted(f"The call for {instruction!r} is still ____.")
        if not (isinstance(given, (list, tuple)) and len(given) == 2 and isinstance(given[0], str)
                and isinstance(given[1], dict)):
            raise Incorrect(f"For {instruction!r}: a call is (tool name, arguments dict), such as ('HassTurnOn', "
                            f"{{'name': 'Kettle'}}); got {given!r}.")
        tool, arguments = given
        try:
            got = try_call(tool, arguments)
        except (ToolError, ValueError, TypeError) as exc:
            raise Incorrect(f"For {instruction!r}, {tool}({arguments}) was refused: {exc}") from None
        if got == want:
            continue
        extra = {d: c for d, c in got.items() if d not in want}
        if extra:
            raise Incorrect(f"For {instruction!r}, {tool}({arguments}) also changed {extra}: collateral damage, "
                            "which fails the task. An area without a domain means its lights, switches and fans; "
                            "a name or a domain narrows it.")
        raise Incorrect(f"For {instruction!r}: expected the changes {want}, but {tool}({arguments}) changed "
                        f"{got or 'nothing'}. HA_API_PROMPT says which tool locks, opens and closes.")
    return (f"Right: all {len(INSTRUCTIONS)} calls change what they should and nothing else. Home Assistant's "
            "harness judges an LLM's calls the same way, by the state of the whole home afterwards.")


# ------------------------------------------------------------------ q3: entity ids
_WORLDS = ("lares-home", "townhouse", "wohnung")


def _test_entity(entity_for) -> str:
    from ....ha.context import entity_ids, key
    from ....home.worlds import load_world

    checked = 0
    for world in _WORLDS:
        home = load_world(world)
        want_ids = dict(entity_ids(home))
        for device_id, want in want_ids.items():
            device = home.devices[device_id]
            case = f"{world}'s {device_id!r}"
            got = call(entity_for, home, device_id, case=case)
            checked += 1
            if got == want:
                continue
            room = home.room_name(device.room)
            said = (f"For {case} (a {device.type} called {device.name!r} in the {room}): expected {want!r} but got "
                    f"{got!r}.")
            if not isinstance(got, str) or "." not in got:
                raise Incorrect(f"{said} An entity id is '<domain>.<object id>'.")
            domain, object_id = got.split(".", 1)
            if domain != want.split(".")[0]:
                raise Incorrect(f"{said} The part before the dot is Home Assistant's domain: DOMAINS[{device.type!r}] "
                                f"is {want.split('.')[0]!r}.")
            same = sum(key(d.name) == key(device.name) for d in home.devices.values())
            if same > 1:
                why = (f" {same} devices of {world} are called {device.name!r}: the room's name goes in front, so "
                       "each id is unique.")
            elif not device.name.isascii():
                why = " Entity ids are plain ASCII: an accented letter loses its accent ('ü' becomes 'u')."
            else:
                why = (" The object id is the name in lower case, every run of other characters one '_'; the room "
                       "goes in front only when another device has the same name.")
            raise Incorrect(said + why)
    return (f"Right on all {checked} devices of {', '.join(_WORLDS)}. An imported Home Assistant dataset works the "
            "other way: the entity id is given, and its domain decides the device's type.")


q1 = Problem("A template for a loose wording", ("templates",), _test_templates, hints=[
    "hassil's syntax: (pop|flick) is one word or the other, [the] may be left out, {area} is the slot that "
    "matches any room. Try matches(templates, sentence) on each sentence of SAID and NOT_SAID.",
    "Two word orders need two templates (or one alternative of two): "
    "['(pop|flick) [the] {area} light on', '(pop|flick) [the] light on in [the] {area}'].",
])
q2 = Problem("Home Assistant's tool calls", ("calls",), _test_calls, hints=[
    "Read HA_API_PROMPT: HassTurnOn locks a lock and opens a cover, HassTurnOff unlocks and closes. Try a call "
    "with try_call(tool, arguments) and read what it changed.",
    "Two devices are called 'Blinds': give the area too. An area alone means its lights, switches and fans -- "
    "the kettle and the smoke alarm too -- so add domain 'light'. HassLightSet takes brightness in percent.",
])
q3 = Problem("A device's entity id", ("entity_for",), _test_entity, hints=[
    "domain = DOMAINS[device.type]; the object id is the name lower-cased, accents dropped "
    "(unicodedata.normalize('NFKD', name).encode('ascii', 'ignore').decode()), every run of other characters "
    "replaced by '_' (re.sub(r'[^a-z0-9]+', '_', text).strip('_')).",
    "Count the devices of the home with the same name (lower-cased); if there are several, slugify "
    "f'{home.room_name(device.room)} {device.name}' instead of the name alone.",
])
EXERCISE = Exercise("17_ha_templates_tools", [q1, q2, q3])
bind = EXERCISE.bind
