"""Knowledge in the prompt: how much of the home goes in, and in what form.

Taught in ``notebooks/16_scaling_up.ipynb``. Lares re-sends the whole world
as pretty-printed JSON on every call; in a 1,000-room building that is
hundreds of thousands of tokens. The knowledge **formats**
(:data:`KNOWLEDGE_FORMATS`) are the alternatives an agent can
switch between (``run_agent(..., knowledge_format=...)``):

* ``full`` -- the whole :meth:`~lares_kit.home.graph.Home.knowledge` as pretty
  JSON, exactly what Lares sends (the default);
* ``compact`` -- the same JSON on one line, without indentation;
* ``overview`` -- Home Assistant's approach: the layout and the devices
  *without their states* (a static overview), plus the tool
  :func:`get_live_context` that reports current states filtered by room,
  floor or device type;
* ``retrieval`` -- only the rooms the instruction mentions (word overlap
  with room and device names, aliases and types), the rooms around the
  robot, and the rooms on the way between them. It needs no downloaded
  model: words and the graph are enough in a home whose rooms have names.

The knowledge **mode** (:data:`KNOWLEDGE_MODES`: ``latest``, ``initial``,
``none``) says *when* the knowledge is taken. The vocabulary and the
renderers of the formats that need only a knowledge dict live in
:mod:`lares_kit.knowledge.formats`; this module adds retrieval, and
:func:`knowledge_prompt` writes the whole knowledge message of a prompt --
the one path every agent's knowledge goes through.

Every format keeps the knowledge message's contract (``WORLD KNOWLEDGE
(latest)`` or ``(initial: ...)``, then the JSON of ``Home.knowledge()`` or a
part of it), so the offline model reads all of them. Enums of ids in the
tool schemas grow with the home too; :func:`use_id_enums` turns them off for
big homes in every format but ``full``. A knowledge text bigger than any
model's prompt (:data:`PROMPT_TOKENS_AT_MOST`) is refused with
:class:`PromptTooBig` before anything is sent (:func:`check_prompt_size`).

This module renders knowledge and offers one tool; it does not run agents.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ..errors import LaresError, ToolError
from ..home.graph import Home
from ..tools.schema import RoomId
from ..tools.toolbox import check_room
from .formats import (
    KNOWLEDGE_FORMATS,
    KNOWLEDGE_MODES,
    check_format,
    format_note,
    knowledge_header,
    render,
    render_outline,
    slice_knowledge,
)
from .retrieval import NEIGHBOURS, relevant_rooms, retrieved_part
from .tokens import count_tokens

__all__ = ["KNOWLEDGE_MODES", "KNOWLEDGE_FORMATS", "AUTO_TOKENS", "AUTO_IDS", "ENUM_LIMIT", "resolve_format",
           "LIVE_LIMIT", "PROMPT_TOKENS_AT_MOST",
           "PromptTooBig", "check_prompt_size", "knowledge_header", "format_note", "knowledge_text",
           "knowledge_prompt", "render_retrieval", "relevant_rooms", "use_id_enums", "get_live_context"]

# No model's prompt holds more (the largest hold about a million tokens, most 128,000). A 5,000-device
# building is about 330,000 tokens as "full", which notebook 16 still sends to the offline model to show the cost.
PROMPT_TOKENS_AT_MOST = 1_000_000
AUTO_TOKENS = 1_500  # the format "auto": the whole home while its outline takes at most this many tokens
AUTO_IDS = 300  # ... and a home with more rooms and devices than this is retrieved without counting
ENUM_LIMIT = 60  # more room and device ids than this, and the schemas carry no id enums
LIVE_LIMIT = 120  # get_live_context answers at most this many devices; more asks for a narrower filter


def use_id_enums(home: Home, fmt: str, limit: int = ENUM_LIMIT) -> bool:
    """Whether tool schemas should list the home's ids as enums under a knowledge format.

    An enum of 5,000 device ids costs about 25,000 tokens on every call;
    beyond :data:`ENUM_LIMIT` ids only ``full`` (the Lares baseline) keeps them.

    Args:
        home: The home whose room and device ids would fill the enums.
        fmt: A knowledge format of :data:`KNOWLEDGE_FORMATS`; an unknown one raises LaresError.
        limit: The most room and device ids a home may have for enums (the ``lean`` prompt style: 20).

    Examples:
        >>> from lares_kit import load_world
        >>> use_id_enums(load_world("lares-home"), "retrieval")
        True
        >>> from lares_kit.home.generator import generate_home
        >>> use_id_enums(generate_home(rooms=100, devices=400), "retrieval")
        False
    """
    check_format(fmt)
    return fmt == "full" or home.graph.number_of_nodes() + len(home.devices) <= limit


def resolve_format(home: Home, fmt: str) -> str:
    """The format ``auto`` means for ``home``; any other format as it is (checked).

    ``auto``: the whole home as an ``outline`` while that takes at most
    :data:`AUTO_TOKENS` tokens, else ``retrieval`` (only the rooms that
    matter). A home with more than :data:`AUTO_IDS` rooms and devices is not
    rendered to find out: its outline is far bigger than that.

    Args:
        home: The home the prompt will describe.
        fmt: A format of :data:`KNOWLEDGE_FORMATS`.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.home.generator import generate_home
        >>> resolve_format(load_world("lares-home"), "auto"), resolve_format(generate_home(devices=5000), "auto")
        ('outline', 'retrieval')
        >>> resolve_format(load_world("lares-home"), "full")
        'full'
    """
    if check_format(fmt) != "auto":
        return fmt
    if home.graph.number_of_nodes() + len(home.devices) > AUTO_IDS:
        return "retrieval"
    return "outline" if count_tokens(render_outline(home.knowledge())) <= AUTO_TOKENS else "retrieval"


# --------------------------------------------------------------- rendering
def render_retrieval(home: Home, instruction: str, knowledge: dict[str, Any] | None = None,
                     visited: Iterable[str] = (), needs: Iterable[str] | None = None) -> tuple[str, str]:
    """``retrieval``: ``(note, compact JSON of the rooms that matter)`` -- the one renderer of this format.

    The rooms are :func:`relevant_rooms`; the others are left out, and so are
    the exits to them.

    Args:
        home: The home to render.
        instruction: The user's request; its words choose the rooms.
        knowledge: A :meth:`Home.knowledge` dict to render instead of the home as it is now; None for now.
        visited: Room ids the robot has been in during this task; they stay shown.
        needs: Only this part of each room (:func:`~lares_kit.knowledge.formats.slice_knowledge`); None: all of it.

    Examples:
        >>> from lares_kit.home.generator import generate_home
        >>> building = generate_home(rooms=200, devices=1000, seed=1)
        >>> note, text = render_retrieval(building, "Set the thermostat in Office 112 to 22 degrees.")
        >>> note.split(" --")[0], len(text) < 5000
        ('Retrieved: 5 of 200 rooms', True)
    """
    if knowledge is None and home.graph.number_of_nodes() > NEIGHBOURS:
        # Only the rooms retrieved are built at all: the whole knowledge of a building is the slow part.
        visited = list(visited)
        rooms, _ = relevant_rooms(home, instruction, home.robot.room, [s["room"] for s in home.seen.values()],
                                  visited)
        knowledge = home.knowledge(rooms=rooms)
    k = knowledge if knowledge is not None else home.knowledge()
    part, shown = retrieved_part(home, k, instruction, visited)
    if needs is not None:
        part = slice_knowledge(part, needs)
    return format_note("retrieval", shown, home.graph.number_of_nodes()), render_outline(part)


def knowledge_text(home: Home, fmt: str = "full", instruction: str = "",
                   knowledge: dict[str, Any] | None = None, visited: Iterable[str] = (),
                   needs: Iterable[str] | None = None) -> tuple[str, str]:
    """``(note, json text)`` of the knowledge in a format of :data:`KNOWLEDGE_FORMATS`.

    ``knowledge`` is a :meth:`Home.knowledge` dict to render (the episode's
    initial knowledge); None renders the home as it is now. ``note`` is
    :func:`format_note`, to go under the message's header line.
    ``visited``: rooms the robot has been in during the task, which
    retrieval keeps showing (a search must remember where it looked).

    Args:
        home: The home to render.
        fmt: A format of :data:`KNOWLEDGE_FORMATS`: "full", "compact", "overview" or "retrieval".
        instruction: The user's request; only ``retrieval`` reads it, to choose the rooms.
        knowledge: A :meth:`Home.knowledge` dict to render; None renders the home as it is now.
        visited: Room ids the robot has been in during the task; only ``retrieval`` reads it.
        needs: Only this part of the knowledge (:func:`~lares_kit.knowledge.formats.slice_knowledge`): what a
            call's arguments can name; None: all of it.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> knowledge_text(home, "full")[1] == home.render_knowledge("full")
        True
        >>> knowledge_text(home, "compact")[1][:41]
        '{"home":"lares-home","name":"The Lares ho'
        >>> note, text = knowledge_text(home, "overview")
        >>> '"state"' in text, "get_live_context" in note
        (False, True)
        >>> note, text = knowledge_text(home, "retrieval", "turn on the light in the kitchen")
        >>> from lares_kit.knowledge.formats import parse_outline
        >>> note.split(" --")[0], [r["id"] for r in parse_outline(text)["rooms"]]
        ('Retrieved: 5 of 5 rooms', ['lounge', 'hallway', 'kitchen', 'bedroom', 'office'])
    """
    fmt = resolve_format(home, fmt)
    if fmt == "retrieval":
        return render_retrieval(home, instruction, knowledge, visited, needs)
    k = knowledge if knowledge is not None else home.knowledge()
    return format_note(fmt), render(k if needs is None else slice_knowledge(k, needs), fmt)


def knowledge_prompt(home: Home | None, mode: str = "latest", fmt: str = "full", instruction: str = "", *,
                     initial: dict[str, Any] | None = None, visited: Iterable[str] = (),
                     home_id: str | None = None, needs: Iterable[str] | None = None, changed: str = "") -> str | None:
    """The world-knowledge message of a prompt: its header, the format's note, the knowledge. None in mode ``none``.

    Mode ``latest`` renders ``home`` as it is now (as Lares does, every
    turn); ``initial`` renders ``initial``, the :meth:`Home.knowledge` taken
    at the start. ``home_id`` names the home if the text is too big for any
    prompt (:func:`check_prompt_size`). :meth:`lares_kit.episode.Episode.messages`
    calls this for every agent.

    Args:
        home: The home as it is now, rendered in mode ``latest``; None when only ``initial`` is rendered
            (not with ``retrieval``, which reads the home's graph).
        mode: When the knowledge is taken: "latest", "initial" or "none" (:data:`KNOWLEDGE_MODES`).
        fmt: The knowledge format: "full", "compact", "overview" or "retrieval".
        instruction: The user's request; the ``retrieval`` format chooses rooms by its words.
        initial: The :meth:`Home.knowledge` dict taken at the start, rendered in mode ``initial``.
        visited: Room ids the robot has been in during the task; ``retrieval`` keeps showing them.
        home_id: The home's id for the too-big error; None uses ``home.id``.
        needs: Only the part of the knowledge a call's arguments can name (``rooms``, ``lights``, ``devices``);
            None: all of it.
        changed: A line saying what changed in the home while the agent worked, not by it
            (:func:`lares_kit.home.during.changed_note`), put under the header; "": none (the message as always).

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> for line in knowledge_prompt(home, "latest", "overview").splitlines():
        ...     print(line[:50])
        WORLD KNOWLEDGE (latest)
        Overview: the layout and devices without their sta
        {"home":"lares-home","name":"The Lares home","time
        >>> knowledge_prompt(home, "none") is None
        True
    """
    if mode == "none":
        return None
    note, text = knowledge_text(home, fmt, instruction,  # type: ignore[arg-type]
                                None if mode == "latest" else initial, visited, needs)
    check_prompt_size(text, fmt, home_id if home_id is not None else getattr(home, "id", ""))
    header = knowledge_header(mode) + (f"\n{changed}" if changed else "") + (f"\n{note}" if note else "")
    return f"{header}\n{text}"


class PromptTooBig(LaresError):
    """The home's knowledge is bigger than any model's prompt; nothing was sent."""


def check_prompt_size(text: str, fmt: str, home_id: str) -> str:
    """``text`` if it fits in a prompt, else :class:`PromptTooBig` saying what to use instead.

    Tokens are estimated as characters / 4 (JSON runs about 3.8), so the
    check costs nothing on every turn.

    Args:
        text: The rendered knowledge, as it would go into the prompt.
        fmt: The knowledge format it was rendered in; the error suggests the fix for that format.
        home_id: The home's id, named in the error (cut to 60 characters).

    Examples:
        >>> check_prompt_size("{}", "full", "lares-home")
        '{}'
        >>> check_prompt_size("x" * 22_400_000, "full", "huge-home")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.knowledge.modes.PromptTooBig: The knowledge of home 'huge-home' is about 5,600,000 tokens
        in the 'full' format, more than the 1,000,000 a model's prompt can hold, so nothing was sent.
        Use the 'retrieval' format (lares run --knowledge-format retrieval;
        run_agent(..., knowledge_format="retrieval")): it sends only the rooms the instruction is about.
    """
    tokens = len(text) // 4
    if tokens <= PROMPT_TOKENS_AT_MOST:
        return text
    name = home_id if len(home_id) <= 60 else home_id[:60] + "..."
    fix = ("Name fewer rooms in the instruction, or split the home into smaller world files."
           if fmt == "retrieval" else "Use the 'retrieval' format (lares run --knowledge-format retrieval; "
           'run_agent(..., knowledge_format="retrieval")): it sends only the rooms the instruction is about.')
    raise PromptTooBig(f"The knowledge of home {name!r} is about {tokens:,} tokens in the {fmt!r} format, more "
                       f"than the {PROMPT_TOKENS_AT_MOST:,} a model's prompt can hold, so nothing was sent. {fix}")


# -------------------------------------------------------------------- tool
def get_live_context(home: Home, room: RoomId | None = None, floor: int | None = None,
                     type: str | None = None) -> str:
    """Report the current state of devices, filtered by room, floor or device type.
    Use it before acting when the knowledge lists devices without their states.

    Args:
        home: The home whose devices are reported; supplied by the toolkit, never shown to the model.
        room: Only devices in this room (a room ID), e.g. "office-312".
        floor: Only devices on this floor, e.g. 3 (0 is the ground floor).
        type: Only devices of this type, e.g. "light", "thermostat", "window".
    """
    rooms = [check_room(home, room)] if room else list(home.graph.nodes)
    if floor is not None:
        rooms = [r for r in rooms if home.graph.nodes[r].get("floor") == floor]
        if not rooms:
            floors = sorted({a["floor"] for _, a in home.graph.nodes(data=True) if "floor" in a})
            raise ToolError(f"No rooms on floor {floor}." + (f" Floors: {', '.join(map(str, floors))}." if floors
                                                                else " This home has no floors."))
    devices = [d for r in rooms for d in home.devices_in(r, type) if d.exposed]
    if len(devices) > LIVE_LIMIT:
        raise ToolError(f"{len(devices)} devices match; ask for at most {LIVE_LIMIT} by giving a room, a floor "
                        "or a type.")
    where = f" in the {home.room_name(room)}" if room else ""
    where += f" on floor {floor}" if floor is not None else ""
    kind = f" {type}" if type else ""
    states = {d.id: d.state for d in devices}
    return (f"Current state of {len(devices)}{kind} device(s){where}, robot in {home.robot.room}: "
            + json.dumps(states, separators=(",", ":")))
