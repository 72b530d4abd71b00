"""The knowledge vocabulary: *when* the home's knowledge is taken, *how* it is written, one renderer per format.

Taught in ``notebooks/05_world_knowledge.ipynb`` (modes) and
``notebooks/16_scaling_up.ipynb`` (formats). The knowledge is :meth:`lares_kit.home.Home.knowledge`, a plain
dict; two questions decide what an agent's prompt holds of it:

* the knowledge **mode** -- *when* it is taken: :data:`KNOWLEDGE_MODES`,
  ``latest`` (read again every turn, as Lares does), ``initial`` (as it was
  at the start; changes since are only in the history) or ``none``. It is
  ``run_agent(knowledge=...)``, ``lares run --knowledge`` and
  ``Episode.knowledge``;
* the knowledge **format** -- *how* it is written into the prompt:
  :data:`KNOWLEDGE_FORMATS`, ``full`` (Lares's pretty JSON), ``compact``
  (the same JSON on one line), ``overview`` (no device states) or
  ``retrieval`` (only the rooms that matter). It is
  ``run_agent(knowledge_format=...)``, ``lares run --knowledge-format`` and
  ``Episode.knowledge_format``. Beside them, :data:`TEXT` is short lines for
  people (notebooks print it); no agent is sent it.

Each format has exactly one renderer. Those that need only the knowledge
dict are here (:data:`RENDERERS`); ``retrieval``, which picks rooms with the
home's graph and the instruction, is rendered by
:func:`lares_kit.knowledge.knowledge_text`. :meth:`Home.render_knowledge
<lares_kit.home.Home.render_knowledge>` and every agent's prompt call these
same functions, so "full" reads the same wherever it is written.

This module imports nothing of lares_kit, so the home and the prompt side
can both use it.
"""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["KNOWLEDGE_MODES", "KNOWLEDGE_FORMATS", "TEXT", "RENDERERS", "knowledge_header", "format_note",
           "check_mode", "check_format", "render", "render_full", "render_compact", "render_overview",
           "render_text"]

KNOWLEDGE_MODES = ("latest", "initial", "none")  # when: the first is the default
KNOWLEDGE_FORMATS = ("full", "compact", "overview", "retrieval")  # how, in a prompt: the first is the default
TEXT = "text"  # short lines for people, never sent to a model
# The name "full" had before one vocabulary: Home.render_knowledge("json") still works.
_OLD_NAMES = {"json": "full"}


def check_mode(mode: str) -> str:
    """``mode`` if it is a knowledge mode, else a ValueError naming the modes.

    Args:
        mode: The mode to check; one of "latest", "initial", "none".

    Examples:
        >>> check_mode("initial")
        'initial'
        >>> check_mode("yesterday")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge mode 'yesterday'; modes: latest, initial, none
    """
    if mode not in KNOWLEDGE_MODES:
        raise ValueError(f"unknown knowledge mode {mode!r}; modes: {', '.join(KNOWLEDGE_MODES)}")
    return mode


def check_format(fmt: str) -> str:
    """``fmt`` if it is a knowledge format for prompts, else a ValueError naming the formats.

    Args:
        fmt: The format to check; one of "full", "compact", "overview", "retrieval".

    Examples:
        >>> check_format("telepathy")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge format 'telepathy'; formats: full, compact, overview, retrieval
    """
    if fmt not in KNOWLEDGE_FORMATS:
        raise ValueError(f"unknown knowledge format {fmt!r}; formats: {', '.join(KNOWLEDGE_FORMATS)}")
    return fmt


def knowledge_header(mode: str) -> str:
    """The first line of the world-knowledge message for a knowledge mode.

    Args:
        mode: "latest" or "initial"; "none" has no message, so it raises ValueError like an unknown mode.

    Examples:
        >>> knowledge_header("latest")
        'WORLD KNOWLEDGE (latest)'
        >>> knowledge_header("initial").startswith("WORLD KNOWLEDGE (initial: ")
        True
    """
    if mode == "latest":
        return "WORLD KNOWLEDGE (latest)"
    if mode == "initial":
        return "WORLD KNOWLEDGE (initial: the state at the start of the task; changes since are only in the history)"
    raise ValueError(f"knowledge mode {mode!r} has no header; modes: {', '.join(KNOWLEDGE_MODES)}")


def format_note(fmt: str, shown: int | None = None, total: int | None = None) -> str:
    """The line under the header that says what a format leaves out ('' for full and compact).

    Args:
        fmt: A knowledge format of :data:`KNOWLEDGE_FORMATS`.
        shown: How many rooms the ``retrieval`` format shows; unused by the others.
        total: How many rooms the home has, for ``retrieval``; unused by the others.

    Examples:
        >>> format_note("overview")
        'Overview: the layout and devices without their states; call get_live_context for current states.'
        >>> format_note("full")
        ''
    """
    if fmt == "overview":
        return "Overview: the layout and devices without their states; call get_live_context for current states."
    if fmt == "retrieval":
        return (f"Retrieved: {shown} of {total} rooms -- those the instruction names, around the robot and on "
                "the way between them; exits lead only to rooms shown.")
    return ""


# ------------------------------------------------------------- renderers
def render_full(knowledge: dict[str, Any]) -> str:
    """``full``: the knowledge as pretty JSON, exactly what Lares sends.

    Args:
        knowledge: A :meth:`Home.knowledge` dict, or a part of one (any JSON-able dict renders).

    Examples:
        >>> print(render_full({"home": "h", "rooms": []}))
        {
          "home": "h",
          "rooms": []
        }
    """
    return json.dumps(knowledge, indent=2)


def render_compact(knowledge: dict[str, Any]) -> str:
    """``compact``: the same JSON on one line, without indentation.

    Args:
        knowledge: A :meth:`Home.knowledge` dict, or a part of one (any JSON-able dict renders).

    Examples:
        >>> render_compact({"home": "h", "rooms": []})
        '{"home":"h","rooms":[]}'
    """
    return json.dumps(knowledge, separators=(",", ":"))


def render_overview(knowledge: dict[str, Any]) -> str:
    """``overview``: the layout and the devices without their states, as compact JSON.

    Args:
        knowledge: A :meth:`Home.knowledge` dict; each room's ``devices`` lose their ``state``.

    Examples:
        >>> render_overview({"rooms": [{"id": "hall", "devices": [{"id": "hall-light", "state": {"on": True}}]}]})
        '{"rooms":[{"id":"hall","devices":[{"id":"hall-light"}]}]}'
    """
    rooms = [{**r, "devices": [{key: v for key, v in d.items() if key != "state"} for d in r["devices"]]}
             for r in knowledge["rooms"]]
    return render_compact({**knowledge, "rooms": rooms})


def render_text(knowledge: dict[str, Any]) -> str:
    """``text``: short lines for people -- the home, the robot, a line per room, what was seen.

    Args:
        knowledge: A :meth:`Home.knowledge` dict: ``home``, ``name``, ``time``, ``robot``, ``rooms``, ``seen``.

    Examples:
        >>> print(render_text({"home": "h", "name": "A flat", "time": 0, "robot": {"room": "hall"}, "seen": {},
        ...                    "rooms": [{"id": "hall", "name": "Hall", "exits": [], "devices": []}]}))
        Home: A flat (h), time 0
        Robot: in Hall (hall)
        - Hall (hall): exits ; devices: none
    """
    robot_room = knowledge["robot"]["room"]
    names = {r["id"]: r["name"] for r in knowledge["rooms"]}
    lines = [f"Home: {knowledge['name']} ({knowledge['home']}), time {knowledge['time']}",
             f"Robot: in {names.get(robot_room, robot_room)} ({robot_room})"]
    for r in knowledge["rooms"]:
        devs = ", ".join(f"{d['id']} ({d['type']}, {_state_words(d['state'])})" for d in r["devices"])
        lines.append(f"- {r['name']} ({r['id']}): exits {', '.join(r['exits'])}; devices: {devs or 'none'}")
    for item_id, s in knowledge["seen"].items():
        lines.append(f"Seen: {s['name']} ({item_id}, {s['type']}) in {s['room']} at time {s['time']}")
    return "\n".join(lines)


def _state_words(state: dict[str, Any]) -> str:
    # {"on": False} -> "off"; other keys as key=value
    parts = []
    for key, value in state.items():
        if key == "on" and isinstance(value, bool):
            parts.append("on" if value else "off")
        else:
            parts.append(f"{key}={value}")
    return ", ".join(parts) or "no state"


# The formats a knowledge dict alone can be rendered in; "retrieval" also needs the home and the instruction.
RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "full": render_full, "compact": render_compact, "overview": render_overview, TEXT: render_text}


def render(knowledge: dict[str, Any], fmt: str) -> str:
    """The knowledge dict in a format of :data:`RENDERERS` (``"json"``, the old name of ``full``, works too).

    Args:
        knowledge: A :meth:`Home.knowledge` dict; ``full`` and ``compact`` render any part of one too.
        fmt: "full", "compact", "overview" or "text"; "retrieval" needs the home, so it raises ValueError.

    Examples:
        >>> render({"home": "h"}, "compact")
        '{"home":"h"}'
        >>> render({"home": "h"}, "retrieval")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: the 'retrieval' format picks rooms for an instruction:
        use lares_kit.knowledge.knowledge_text(home, 'retrieval', instruction)
        >>> render({"home": "h"}, "xml")
        Traceback (most recent call last):
        ...
        ValueError: unknown knowledge format 'xml'; a knowledge dict renders as: full, compact, overview, text
    """
    fmt = _OLD_NAMES.get(fmt, fmt)
    if fmt == "retrieval":
        raise ValueError("the 'retrieval' format picks rooms for an instruction: use "
                         "lares_kit.knowledge.knowledge_text(home, 'retrieval', instruction)")
    if fmt not in RENDERERS:
        raise ValueError(f"unknown knowledge format {fmt!r}; a knowledge dict renders as: {', '.join(RENDERERS)}")
    return RENDERERS[fmt](knowledge)
