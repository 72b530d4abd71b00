"""Agent-facing tools over a Home, and the one dispatcher that runs them.

Taught in ``notebooks/02_agent_facing_tools.ipynb``. The Lares write-up asks
of an agent-facing API: high-level calls (``set_light`` beside the low-level
``toggle_light``), plain consistent names, and *machine input, natural-language
output*: a result says how the home changed, an error hints at the fix.

Contract with the models (:mod:`lares_kit.models.offline` relies on it):

* a failed call's observation starts with ``"Error: "``;
* a light's new state reads ``"... (<light-id>) is now on."`` / ``off``
  (``are now`` for a light with a plural name, "Spotlights");
* ``look_with_robot`` lists movable things as ``"Name, a <type> (<id>)"``
  (``an``, or no article for a plural type, or just ``"Name (<id>)"`` when
  the name already says the type, as "Keys" of type keys does) after
  ``"Also here: "``, or says ``"Nothing that moves is here."``

Names from the world file go into sentences through :mod:`lares_kit.sentences.wording` ("Spotlights" are on, an item
is "an owl", a "TV" stays in capitals). A device not exposed (``expose: false``) is not there for them.

:class:`Toolbox.dispatch` never raises on bad model output: an unknown tool,
invalid JSON, missing/extra/wrong arguments, and exceptions inside a tool all
become an error observation the model can act on (``Error: ...``; Home
Assistant's tools, :mod:`lares_kit.ha.tools`, answer in their JSON). Two
exceptions pass through, because the episode must end: ``NoAnswer``, and a
:class:`StopRun` (a tool that is itself an agent, a SAGE sub-agent, whose
model failed: the run's ``model_error``, not a mistake to fix by another call).

With a ``policy:`` in the world file, a :class:`~lares_kit.safety.gate.SafetyGate` sees every device change first:
a sensitive call without the user's confirmation is not run, and its observation says what to ask.
"""

from __future__ import annotations

import inspect
import json
import typing
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

from ..errors import StopRun, ToolError, choices, did_you_mean
from ..home.graph import Home

# the device tools are their own module; they are part of this one's toolset (re-exported here)
from ..safety.confirmation import question_in
from ..safety.gate import SafetyGate
from ..sentences.markers import DONE_HINT, answer_in, answered, is_refusal, too_dark
from ..sentences.wording import agree, in_sentence, with_article
from .device_tools import DEVICE_TOOLS, device_tools_for, read_device, set_device
from .schema import ID_TYPES, LightId, RoomId, check_arguments, id_enums, parse_arguments, short_schema, tool_schema
from .users import NoAnswer, NoUser, User

__all__ = ["ToolError", "StopRun", "Observation", "Toolbox", "toggle_light", "set_light", "move_robot",
           "look_with_robot", "set_device", "read_device", "ask_user", "halt", "LARES_TOOLS", "DEVICE_TOOLS",
           "STOP_TOOLS", "check_room", "default_tools"]

# ------------------------------------------------------------------- helpers
def _light(home: Home, light_id: str):
    dev = home.devices.get(light_id)
    dev = dev if dev is not None and dev.exposed else None  # one not exposed to the assistant is not there
    if dev is not None and dev.type == "light":
        return dev
    lights = [d.id for d in home.lights() if d.exposed]
    if dev is not None:
        raise ToolError(f"{light_id!r} is {with_article(dev.type)}, not a light. {choices('Lights', light_id, lights)}")
    if light_id in home.graph:  # a room id where a light id was expected
        in_room = [d.id for d in home.devices_in(light_id, "light") if d.exposed]
        if in_room:
            raise ToolError(f"{light_id!r} is a room, not a light; its light is {in_room[0]!r}.")
    raise ToolError(f"No light found with the ID {light_id!r}.{did_you_mean(light_id, lights)} "
                    f"{choices('Lights', light_id, lights)}")


def _light_sentence(home: Home, dev) -> str:
    room = home.room_name(dev.room)
    state = "on" if dev.state["on"] else "off"
    lit = "lit" if home.is_lit(dev.room) else "dark"
    return (f"The {in_sentence(dev.name)} in the {room} ({dev.id}) {agree(dev.name, 'is')} now {state}. "
            f"The {room} {agree(room, 'is')} {lit}.")  # "The Stairs are lit"


def check_room(home: Home, room_id: str) -> str:
    """``room_id`` when the home has that room; else a :class:`ToolError` naming the closest rooms.

    For tools that take a room: the error is the sentence the model reads.

    Args:
        home: The home whose rooms are valid.
        room_id: A room id, as the model sent it.

    Examples:
        >>> from lares_kit import load_world
        >>> check_room(load_world("lares-home"), "office")
        'office'
        >>> check_room(load_world("lares-home"), "ofice")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: There is no room with the ID 'ofice'. Did you mean 'office'?
        Rooms: lounge, hallway, kitchen, bedroom, office.
    """
    if room_id in home.graph:
        return room_id
    rooms = list(home.graph.nodes)
    raise ToolError(f"There is no room with the ID {room_id!r}.{did_you_mean(room_id, rooms)} "
                    f"{choices('Rooms', room_id, rooms)}")


# --------------------------------------------------------------------- tools
def toggle_light(home: Home, light_id: LightId) -> str:
    """Toggle a light, making its room lit or dark. You can see what is in a room only when it is lit.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        light_id: ID of the light to toggle, e.g. "kitchen-light".

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> toggle_light(home, "kitchen-light")
        'The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit.'
        >>> toggle_light(home, "kitchen")
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: 'kitchen' is a room, not a light; its light is 'kitchen-light'.
    """
    dev = _light(home, light_id)
    home.update_device(dev.id, {"on": not dev.state["on"]})
    return _light_sentence(home, dev)


def set_light(home: Home, light_id: LightId, on: bool) -> str:
    """Switch a light on or off. Safe to repeat: it says so if the light is already that way.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        light_id: ID of the light, e.g. "kitchen-light".
        on: true to switch it on, false to switch it off.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> set_light(home, "bedroom-light", True)
        'The light in the Bedroom (bedroom-light) is now on. The Bedroom is lit.'
        >>> set_light(home, "bedroom-light", True)
        'The light in the Bedroom (bedroom-light) is already on; nothing changed.'
    """
    dev = _light(home, light_id)
    if dev.state["on"] == on:
        room = home.room_name(dev.room)
        return (f"The {in_sentence(dev.name)} in the {room} ({dev.id}) {agree(dev.name, 'is')} already "
                f"{'on' if on else 'off'}; nothing changed.")
    home.update_device(dev.id, {"on": on})
    return _light_sentence(home, dev)


def move_robot(home: Home, destination_room_id: RoomId) -> str:
    """Move the robot to an adjacent room. Adjacent: connected to its current room by an exit.

    Args:
        home: The home the tool acts in; supplied by the toolkit, never shown to the model.
        destination_room_id: ID of the adjacent room to move the robot to.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> move_robot(home, "bedroom")
        'The robot moved from the Hallway to the Bedroom (bedroom). It is dark there.'
        >>> move_robot(home, "office")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: The Office is not next to the Bedroom;
        from the Bedroom (bedroom) the robot can go to: hallway.
    """
    here = home.robot.room
    there = check_room(home, destination_room_id)
    if there == here:
        return f"The robot is already in the {home.room_name(here)} ({here}); it did not move."
    if not home.graph.has_edge(here, there):
        options = ", ".join(home.graph.neighbors(here))
        raise ToolError(f"The {home.room_name(there)} is not next to the {home.room_name(here)}; "
                        f"from the {home.room_name(here)} ({here}) the robot can go to: {options}.")
    home.move_robot(there)
    lit = "lit" if home.is_lit(there) else "dark"
    return (f"The robot moved from the {home.room_name(here)} to the {home.room_name(there)} ({there}). "
            f"It is {lit} there.")


def look_with_robot(home: Home) -> str:
    """List what is in the robot's room, things that move included. Only works when the room is lit.

    Args:
        home: The home the robot is in; supplied by the toolkit, never shown to the model.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> print(look_with_robot(home))  # doctest: +NORMALIZE_WHITESPACE
        The robot looks around the Hallway (hallway). The hub of the house. Devices: light (hallway-light).
        Nothing that moves is here.
        >>> move_robot(home, "bedroom")
        'The robot moved from the Hallway to the Bedroom (bedroom). It is dark there.'
        >>> look_with_robot(home)  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.ToolError: It's too dark to see anything in the Bedroom --
        turn on the light in the Bedroom (bedroom-light) first.
        >>> set_light(home, "bedroom-light", True)
        'The light in the Bedroom (bedroom-light) is now on. The Bedroom is lit.'
        >>> print(look_with_robot(home))  # doctest: +NORMALIZE_WHITESPACE
        The robot looks around the Bedroom (bedroom). A bed and a wardrobe. Devices: light (bedroom-light).
        Also here: Bruno, a dog (bruno).
    """
    room_id = home.robot.room
    room = home.room_name(room_id)
    if not home.is_lit(room_id):
        lights = [d.id for d in home.devices_in(room_id, "light") if d.exposed]
        raise ToolError(too_dark(room, lights[0] if lights else None))
    fixed = ", ".join(f"{in_sentence(d.name)} ({d.id})" for d in home.devices_in(room_id) if d.exposed) or "no devices"
    # Sightings: record what is here; forget sightings here of things that left.
    for item_id, where in list(home.seen.items()):
        if where["room"] == room_id and home.items[item_id].room != room_id:
            del home.seen[item_id]
    movable = home.items_in(room_id)
    for item in movable:
        home.record_sighting(item.id, room_id)
    described = home.graph.nodes[room_id].get("description")
    first = f"The robot looks around the {room} ({room_id})." + (f" {described}" if described else "")
    also = ("Also here: " + "; ".join(_introduce(i.name, i.type, i.id) for i in movable) + "."
            if movable else "Nothing that moves is here.")
    return f"{first} Devices: {fixed}. {also}"


def _introduce(name: str, kind: str, item_id: str) -> str:
    """"Bruno, a dog (bruno)"; "Keys (keys)" -- the type is left out when the name already ends with it."""
    if not kind or name.lower().split()[-1:] == kind.lower().split()[-1:]:
        return f"{name} ({item_id})"
    return f"{name}, {with_article(kind)} ({item_id})"


def ask_user(user: User, question: str) -> str:
    """Ask the user a question and wait for the answer.
    Only use this as a last resort, for facts you cannot find out yourself.

    Args:
        user: Who answers (a person, or a scripted user in tests); supplied by the toolkit, never shown to the model.
        question: The question to ask the user.

    Examples:
        >>> from lares_kit.tools.users import ScriptedUser
        >>> ask_user(ScriptedUser(answers=["Bruno."]), "What is your dog called?")
        'The user answered: Bruno.'
    """
    return answered(user.ask(question))


def halt(message_to_user: str) -> str:
    """Stop and report to the user: the goal is achieved, or you cannot go any further.

    Args:
        message_to_user: What to tell the user. Never use this to ask for more information.

    Examples:
        >>> halt("The kitchen light is on.")
        'The kitchen light is on.'
    """
    return message_to_user


LARES_TOOLS: list[Callable[..., str]] = [toggle_light, set_light, move_robot, look_with_robot, ask_user, halt]


def default_tools(home: Home) -> list[Callable[..., str]]:
    """The Lares tools, plus the device tools when the home has more than on/off lights (``set_light`` only switches).

    Args:
        home: The home the tools will act in.

    Examples:
        >>> from lares_kit import load_world
        >>> [fn.__name__ for fn in default_tools(load_world("townhouse"))]
        ['toggle_light', 'set_light', 'move_robot', 'look_with_robot', 'set_device', 'read_device', 'ask_user', 'halt']
    """
    if any((d.type != "light" or set(d.state) - {"on"}) and d.exposed for d in home.devices.values()):
        return [*LARES_TOOLS[:4], *device_tools_for(home), *LARES_TOOLS[4:]]
    return list(LARES_TOOLS)
STOP_TOOLS = frozenset({"halt"})


# ---------------------------------------------------------------- dispatcher
@dataclass
class Observation:
    """The result of one tool call, as the model will read it."""

    tool: str
    arguments: dict[str, Any] | None  # None when the JSON could not be read
    text: str
    ok: bool = True
    final: bool = False  # the call was halt: the episode ends
    json_errors: bool = False  # a tool of Home Assistant's dialect (lares_kit.ha.tools): its errors are JSON
    hint: str = ""  # what to do next, for the model (lares_kit.sentences.markers.DONE_HINT after a device changed)

    @property
    def content(self) -> str:
        """The tool message content: errors start with 'Error: ' (HA's tools: ``{"success": false, "error": ...}``)."""
        if self.ok or not self.json_errors:
            return (f"{self.text} {self.hint}" if self.hint else self.text) if self.ok else f"Error: {self.text}"
        return json.dumps({"success": False, "error": self.text}, ensure_ascii=False)


@dataclass
class Toolbox:
    """The tools an agent may call in one home, their schemas, and the dispatcher.

    ``block_repeats`` stops an exact repeat of a call when nothing in the home
    changed since it was made (the ReAct paper's guard against dead loops).

    Examples:
        >>> from lares_kit import load_world
        >>> box = Toolbox(load_world("lares-home"))
        >>> box.names
        ['toggle_light', 'set_light', 'move_robot', 'look_with_robot', 'ask_user', 'halt']
        >>> done = box.dispatch("set_light", '{"light_id": "kitchen-light", "on": true}')
        >>> done.text, done.content.endswith("call halt now with a short message for the user.")  # what it read
        ('The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit.', True)
        >>> obs = box.dispatch("move_robot", '{"destination_room_id": "office"}')
        >>> print(obs.content)  # doctest: +NORMALIZE_WHITESPACE
        Error: The Office is not next to the Hallway;
        from the Hallway (hallway) the robot can go to: lounge, kitchen, bedroom.
        >>> print(box.dispatch("fly", '{}').content)  # doctest: +NORMALIZE_WHITESPACE
        Error: There is no tool called 'fly'.
        Tools: toggle_light, set_light, move_robot, look_with_robot, ask_user, halt.
    """

    home: Home
    tools: list[Callable[..., str]] | None = None  # None: default_tools(home)
    user: User = field(default_factory=NoUser)
    block_repeats: bool = True
    id_enums: bool = True  # put the home's valid ids in the schemas as enums
    # How each tool is described: "docstring" (its whole summary and Args text) or "short" (schema.short_schema)
    descriptions: str = "docstring"
    memory: Any = None  # long-term memory for `memory` tools (lares_kit.memory.agent_memory.recall); None: none
    monitor: Any = None  # the poller for persistent-command tools with a `monitor` parameter (persistent.monitor)
    source: str = "owner"  # who gave the instruction ("owner", "guest", "letterbox"...), for the safety policy
    # The safety gate (lares_kit.safety.gate.SafetyGate) consulted before every device change.
    # None: the home's own `policy:` (if its world file has one), for `source`; False: no gate.
    safety: Any = None
    # call key -> home.version if that call changed nothing (else absent)
    _calls: dict[str, int] = field(default_factory=dict, repr=False)
    # tool name -> schema; the ids in the enums (rooms, lights) never change
    _schemas: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.tools is None:
            self.tools = default_tools(self.home)
        if self.safety is None:
            self.safety = SafetyGate.for_home(self.home, self.source)  # None when the home has no policy

    @property
    def names(self) -> list[str]:
        return [fn.__name__ for fn in self.tools]

    def enums(self) -> dict[Any, list[str]]:
        return id_enums(self.home, self.names, self.id_enums)

    def schemas(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list, for all tools or only ``names``.

        Args:
            names: Tool names to describe; None for every tool of the box.
        """
        return [self.schema(fn.__name__) for fn in self.tools if names is None or fn.__name__ in names]

    def schema(self, name: str) -> dict[str, Any]:
        """The OpenAI ``tools`` entry of one tool.

        Args:
            name: A tool's name; its schema is built once and kept.
        """
        if name not in self._schemas:
            fn = next(f for f in self.tools if f.__name__ == name)
            schema = getattr(fn, "schema", None) or tool_schema(fn, self.enums())  # remote: its own
            self._schemas[name] = short_schema(schema) if self.descriptions == "short" else schema
        return self._schemas[name]

    def dispatch(self, name: str, arguments: str | dict[str, Any] | None) -> Observation:
        """Run one call from the model; bad input becomes an error observation.

        Args:
            name: The tool the model called, as it spelled it.
            arguments: Its arguments: the JSON text the model sent, a dict, or None for none.
        """
        fn = next((f for f in self.tools if f.__name__ == name), None)
        if fn is None:
            hint = did_you_mean(name, self.names)
            return Observation(str(name), None, f"There is no tool called {name!r}.{hint} "
                               f"{choices('Tools', name, self.names)}", ok=False)
        # A mistake becomes an error observation; HA's tools (json_errors) answer it in their own JSON shape.
        fail = partial(Observation, name, ok=False, json_errors=getattr(fn, "json_errors", False))
        args = parse_arguments(arguments)
        if isinstance(args, str):
            return fail(None, f"The arguments for {name} are not valid JSON ({args}). "
                        "Send a JSON object, e.g. {\"light_id\": \"kitchen-light\"}.")
        problem = check_arguments(self.schema(name), args)
        if problem:
            return fail(args, problem)
        key = name + json.dumps(args, sort_keys=True)
        if self.block_repeats and name not in STOP_TOOLS and self._calls.get(key) == self.home.version:
            return fail(args, f"You already called {name} with these arguments and nothing has changed since; "
                        "doing it again would give the same result. Try something else.")
        # The gate, in the tool layer whatever the prompt said; a tool may say how it is judged (HA's: by what it
        # would set). A device hidden from the agent is the tool's to answer ("No device found"), not the gate's.
        if self.safety and not self._hidden(fn, args):
            judge = getattr(fn, "safety_check", None)
            verdict = judge(self.safety, self.home, name, args) if judge else self.safety.check(name, args)
            if verdict.action != "allow":
                return Observation(name, args, verdict.text, ok=False)
        before, robot = self.home.version, self.home.robot.room
        self.home.tick()
        injected = {"home": self.home, "user": self.user, "memory": self.memory, "monitor": self.monitor,
                    "source": self.source}
        params = inspect.signature(fn).parameters
        try:
            text = fn(**{k: v for k, v in injected.items() if k in params}, **args)
        except ToolError as exc:
            if not is_refusal(str(exc)) and question_in(str(exc)) is None:  # a remote gate's verdict: no dead loop
                self._remember(key, before)
            return fail(args, str(exc))
        except (NoAnswer, StopRun):
            raise
        except Exception as exc:  # a bug in a tool must not kill the episode
            return fail(args, f"The tool {name} failed unexpectedly ({type(exc).__name__}: {exc}). "
                        "Try a different call.")
        self._remember(key, before)
        if self.safety and name == "ask_user":  # a yes to a question naming a device can confirm its change
            self.safety.heard(str(args.get("question", "")), getattr(self.user, "last", None) or answer_in(text))
        # A device changed: the model reads what to do next (contract.DONE_HINT); the tool's sentence stays as it is
        changed = self.home.version != before and self.home.robot.room == robot and not getattr(fn, "json_errors", 0)
        return Observation(name, args, text, ok=True, final=name in STOP_TOOLS, hint=DONE_HINT if changed else "")

    def _hidden(self, fn: Callable[..., str], args: dict[str, Any]) -> bool:
        hints = typing.get_type_hints(fn)  # True: the call names, by id, a device not exposed to the assistant
        return any(hints.get(k) in ID_TYPES and not getattr(self.home.devices.get(str(v)), "exposed", True)
                   for k, v in args.items())

    def _remember(self, key: str, version_before: int) -> None:
        # Only a call that changed nothing can be a dead loop when repeated; one that changed something is forgotten.
        self._calls.pop(key, None)
        if self.home.version == version_before:
            self._calls[key] = version_before
