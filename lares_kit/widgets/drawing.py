"""The home as a picture: rooms as boxes, exits as doors, lit or dark.

Taught in ``notebooks/01_the_home_as_a_graph.ipynb`` and
``notebooks/06_robot_search.ipynb``. Plain matplotlib, no pyplot and no
widgets: :func:`draw_home` returns a :class:`~matplotlib.figure.Figure`,
:func:`render_png` its PNG bytes, and :func:`describe_home` the same picture
in words (for tests, screen readers and the app's legend). The interactive
wrappers live in :mod:`lares_kit.widgets.homemap`.

What a picture shows is a *view*: the true state of the home (``state``,
shaped like :meth:`Home.truth`), what the robot has seen (``seen``, shaped
like ``Home.knowledge()["seen"]``), optionally the robot's path, and -- only
with ``god_view=True`` -- the hidden things the agent has not seen.

The layout is stable per world: a ``layout`` key in the world file
(``{room id: [x, y]}``) wins; otherwise rooms are laid out in columns by
distance from the best-connected central room (:func:`room_layout`).
"""

from __future__ import annotations

import io
from itertools import combinations
from typing import Any

import networkx as nx
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ..home import Home

__all__ = ["LIT", "DARK", "room_layout", "room_lit", "draw_home", "render_png", "describe_home"]

LIT = "#ffd84d"  # a lit room: warm yellow, as in the Lares UI
DARK = "#1d2b53"  # a dark room: night blue
_ROBOT = "#c0c7d0"
_SEEN = "#f28c28"
_PATH = "#e4572e"


def room_layout(home: Home) -> dict[str, tuple[float, float]]:
    """Where each room sits in the picture: ``{room id: (x, y)}``, the same every call.

    Examples:
        >>> from lares_kit import load_world
        >>> pos = room_layout(load_world("lares-home"))
        >>> pos["hallway"][0] < pos["kitchen"][0]  # the hub is on the left
        True
        >>> pos == room_layout(load_world("lares-home"))
        True
    """
    given = home.extra.get("layout")
    if isinstance(given, dict) and set(given) >= set(home.graph.nodes):
        return {room: (float(given[room][0]), float(given[room][1])) for room in home.graph.nodes}
    graph = home.graph
    order = list(graph.nodes)  # file order breaks every tie, so the layout is stable
    centre = min(nx.center(graph), key=lambda r: (-graph.degree(r), order.index(r)))
    depth = nx.single_source_shortest_path_length(graph, centre)
    columns: dict[int, list[str]] = {}
    for room in order:
        columns.setdefault(depth[room], []).append(room)
    pos: dict[str, tuple[float, float]] = {}
    for x in sorted(columns):
        # Each room goes near the rooms it opens onto in the previous column
        # (their mean height), which keeps doors short and rarely crossing.
        def pull(room: str) -> float:
            ys = [pos[n][1] for n in graph.neighbors(room) if n in pos]
            return sum(ys) / len(ys) if ys else 0.0

        rooms = sorted(columns[x], key=lambda r: -pull(r))  # stable: file order breaks ties
        middle = sum(pull(r) for r in rooms) / len(rooms)
        for i, room in enumerate(rooms):
            pos[room] = (float(x), middle + (len(rooms) - 1) / 2 - i)
    return pos


def room_lit(home: Home, state: dict[str, Any] | None = None) -> dict[str, bool]:
    """``{room id: lit?}`` for a truth ``state`` (default: the home now). A room is lit when a light in it is on.

    Examples:
        >>> from lares_kit import load_world
        >>> room_lit(load_world("lares-home"))["hallway"]
        True
    """
    devices = (state or home.truth())["devices"]
    return {room: any(devices.get(d.id, {}).get("on") for d in home.devices_in(room, "light"))
            for room in home.graph.nodes}


def _box_size(pos: dict[str, tuple[float, float]]) -> tuple[float, float]:
    # Widest boxes that never overlap: boxes overlap only if close in x AND in y.
    dxs = [abs(a[0] - b[0]) for a, b in combinations(pos.values(), 2) if abs(a[0] - b[0]) > 1e-9]
    width = 0.8 * min(dxs) if dxs else 1.0
    dys = [abs(a[1] - b[1]) for a, b in combinations(pos.values(), 2) if abs(a[0] - b[0]) < width]
    height = 0.8 * min(dys) if dys else 0.8
    return width, height


def _view(home: Home, state, seen):
    state = state if state is not None else home.truth()
    seen = seen if seen is not None else home.knowledge()["seen"]
    return state, seen


def draw_home(home: Home, *, state: dict[str, Any] | None = None, seen: dict[str, Any] | None = None,
              path: list[str] | None = None, god_view: bool = False, title: str | None = None,
              ax=None) -> Figure:
    """Draw the home: lit rooms yellow, dark rooms blue, the robot, what it has seen.

    ``state``: a truth snapshot (default ``home.truth()``); ``seen``: item id ->
    ``{"room": ...}`` (default: the home's sightings); ``path``: rooms the robot
    went through, drawn as arrows; ``god_view``: also show hidden things,
    dashed. Draws on ``ax`` if given, else on a new Figure; returns the Figure.

    Examples:
        >>> from lares_kit import load_world
        >>> fig = draw_home(load_world("lares-home"), god_view=True)
        >>> sorted(t.get_text() for t in fig.axes[0].texts if "hidden" in t.get_text())
        ['Bruno (dog) hidden', 'Sally (person) hidden']
    """
    state, seen = _view(home, state, seen)
    pos = room_layout(home)
    width, height = _box_size(pos)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    if ax is None:
        cols, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
        fig = Figure(figsize=(min(2.3 * cols + 1, 14), min(1.5 * rows + 1.2, 10)), dpi=90)
        ax = fig.add_subplot()
    fig = ax.figure
    ax.set_xlim(min(xs) - width, max(xs) + width)
    ax.set_ylim(min(ys) - height * 0.9, max(ys) + height * 0.9)
    ax.set_aspect("auto")
    ax.axis("off")
    small = len(pos) > 16  # big generated worlds: names only
    lit = room_lit(home, state)

    for a, b in home.graph.edges:  # exits: doors between the boxes
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color="#8a8f98", lw=3, zorder=1,
                solid_capstyle="round")
    for room, (x, y) in pos.items():
        fill, ink = (LIT, "#222222") if lit[room] else (DARK, "#f2f2f2")
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, zorder=2,
                                    boxstyle="round,pad=0,rounding_size=0.04", facecolor=fill,
                                    edgecolor="#444444", lw=1.2))
        ax.text(x, y + height / 2 - 0.06 * height, home.room_name(room), ha="center", va="top",
                fontsize=8 if small else 10, fontweight="bold", color=ink, zorder=4)
        if small:
            continue
        lines = []  # (text, face colour, dashed?)
        if state.get("robot") == room:
            lines.append(("robot", _ROBOT, False))
        for item_id, item in state.get("items", {}).items():
            seen_here = seen.get(item_id, {}).get("room") == room
            if seen_here:
                lines.append((f"{item['name']} ({item['type']})", _SEEN, False))
            elif god_view and item["room"] == room:
                lines.append((f"{item['name']} ({item['type']}) hidden", "white", True))
        for i, (text, face, dashed) in enumerate(lines):
            ax.text(x, y + height * 0.12 - i * height * 0.24, text, ha="center", va="center", fontsize=8,
                    zorder=5, color="#222222", alpha=0.85 if dashed else 1.0,
                    bbox={"boxstyle": "round,pad=0.25", "facecolor": face, "edgecolor": "#333333",
                          "linestyle": "--" if dashed else "-", "lw": 0.8})

    for step, (a, b) in enumerate(zip(path or [], (path or [])[1:])):
        if a == b:
            continue
        ax.add_patch(FancyArrowPatch(pos[a], pos[b], arrowstyle="-|>", mutation_scale=14, lw=2.2,
                                     color=_PATH, alpha=0.9, zorder=3, shrinkA=14, shrinkB=14,
                                     connectionstyle=f"arc3,rad={0.18 + 0.06 * (step % 3)}"))

    handles = [Patch(facecolor=LIT, edgecolor="#444444", label="lit"),
               Patch(facecolor=DARK, edgecolor="#444444", label="dark"),
               Patch(facecolor=_ROBOT, edgecolor="#333333", label="robot"),
               Patch(facecolor=_SEEN, edgecolor="#333333", label="seen by the robot")]
    if god_view:
        handles.append(Patch(facecolor="white", edgecolor="#333333", linestyle="--", label="hidden (god view)"))
    if path:
        handles.append(Patch(facecolor=_PATH, label="robot's path"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles),
              fontsize=8, frameon=False, handlelength=1.2, columnspacing=1.0)
    if title:
        ax.set_title(title, fontsize=10, loc="left")
    fig.tight_layout()
    return fig


def render_png(home: Home, **view: Any) -> bytes:
    """The picture of :func:`draw_home` as PNG bytes (same keyword arguments).

    Examples:
        >>> from lares_kit import load_world
        >>> render_png(load_world("lares-home"))[:4]
        b'\\x89PNG'
    """
    buffer = io.BytesIO()
    draw_home(home, **view).savefig(buffer, format="png")
    return buffer.getvalue()


def describe_home(home: Home, *, state: dict[str, Any] | None = None, seen: dict[str, Any] | None = None,
                  god_view: bool = False) -> str:
    """The picture in words: which rooms are lit, where the robot is, what was seen.

    Examples:
        >>> from lares_kit import load_world
        >>> print(describe_home(load_world("lares-home"), god_view=True))
        Lit: Hallway. Dark: Lounge, Kitchen, Bedroom, Office.
        Robot: Hallway.
        Seen: nothing yet.
        Hidden: Bruno (dog) in Bedroom; Sally (person) in Office.
    """
    state, seen = _view(home, state, seen)
    lit = room_lit(home, state)
    names = home.room_name
    lines = [(f"Lit: {', '.join(names(r) for r in lit if lit[r]) or 'none'}. "
              f"Dark: {', '.join(names(r) for r in lit if not lit[r]) or 'none'}."),
             f"Robot: {names(state['robot'])}."]
    items = state.get("items", {})
    spotted = [f"{items[i]['name']} ({items[i]['type']}) in {names(w['room'])}" for i, w in seen.items() if i in items]
    lines.append(f"Seen: {'; '.join(spotted) or 'nothing yet'}.")
    if god_view:
        hidden = [f"{it['name']} ({it['type']}) in {names(it['room'])}" for i, it in items.items()
                  if seen.get(i, {}).get("room") != it["room"]]
        lines.append(f"Hidden: {'; '.join(hidden) or 'nothing'}.")
    return "\n".join(lines)
