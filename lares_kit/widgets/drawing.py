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
distance from the best-connected central room (:func:`room_layout`, in
:mod:`.layout` with the other placing decisions). Every word is sized to
stay inside its room box, measured in points (:mod:`.text_fitting`): no
``tight_layout`` moves the map after the sizes are chosen, so the figure is
built with room for its title and legend from the start.
"""

from __future__ import annotations

import io
import math
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ..home.graph import Home
from .layout import LABEL_LINE, LINE, PAD, box_size, map_area, map_limits, plan_labels, room_labels, room_layout
from .text_fitting import text_width, wrap

__all__ = ["LIT", "DARK", "room_layout", "room_lit", "draw_home", "render_png", "describe_home",
           "legend_handles", "legend_height", "add_legend", "LEGEND_IN"]

LIT = "#ffd84d"  # a lit room: warm yellow, as in the Lares UI
DARK = "#1d2b53"  # a dark room: night blue
_ROBOT = "#c0c7d0"
_SEEN = "#f28c28"
_PATH = "#e4572e"
_FACE = {"robot": _ROBOT, "seen": _SEEN, "hidden": "white"}
LEGEND_IN = 0.42  # inches under a map (or a strip of maps) for its legend, one row
LEGEND_PT = 8.5
_SIDE_IN = 0.1  # inches of blank paper left and right of a map


def room_lit(home: Home, state: dict[str, Any] | None = None) -> dict[str, bool]:
    """``{room id: lit?}`` for a truth ``state`` (default: the home now). A room is lit when a light in it is on.

    Args:
        home: The home whose rooms and lights to read.
        state: A truth snapshot shaped like ``home.truth()`` (devices, robot, items); None: the home now.

    Examples:
        >>> from lares_kit import load_world
        >>> room_lit(load_world("lares-home"))["hallway"]
        True
    """
    devices = (state or home.truth())["devices"]
    return {room: any(devices.get(d.id, {}).get("on") for d in home.devices_in(room, "light"))
            for room in home.graph.nodes}


def _view(home: Home, state, seen):
    state = state if state is not None else home.truth()
    seen = seen if seen is not None else home.knowledge()["seen"]
    return state, seen


def legend_handles(god_view: bool = False, path: bool = False) -> list[Patch]:
    """The legend's entries: lit, dark, robot, seen, and hidden (god view) and the path when shown.

    Args:
        god_view: Add the entry for hidden things (drawn dashed).
        path: Add the entry for the robot's path (arrows).

    Examples:
        >>> [h.get_label() for h in legend_handles(god_view=True)]
        ['lit', 'dark', 'robot', 'seen by the robot', 'hidden (god view)']
    """
    handles = [Patch(facecolor=LIT, edgecolor="#444444", label="lit"),
               Patch(facecolor=DARK, edgecolor="#444444", label="dark"),
               Patch(facecolor=_ROBOT, edgecolor="#333333", label="robot"),
               Patch(facecolor=_SEEN, edgecolor="#333333", label="seen by the robot")]
    if god_view:
        handles.append(Patch(facecolor="white", edgecolor="#333333", linestyle="--", label="hidden (god view)"))
    if path:
        handles.append(Patch(facecolor=_PATH, label="robot's path"))
    return handles


def legend_height(width_in: float, handles: list[Patch]) -> float:
    """Inches a legend of ``handles`` needs under a figure ``width_in`` inches wide: one row each ``LEGEND_IN``.

    Args:
        width_in: The width the legend may use, in inches.
        handles: Its entries, as :func:`legend_handles` returns them.

    Examples:
        >>> legend_height(12, legend_handles()) == LEGEND_IN
        True
        >>> legend_height(3, legend_handles(god_view=True, path=True)) > LEGEND_IN
        True
    """
    return LEGEND_IN * _legend_rows(width_in, handles)


def add_legend(fig: Figure, handles: list[Patch], bottom_in: float = 0.0, left_in: float = 0.0,
               width_in: float | None = None) -> None:
    """One legend, centred in a band :func:`legend_height` high: ``bottom_in`` inches up, under the
    ``width_in`` inches from ``left_in`` (default: the whole figure's width).

    It takes as many rows as it needs to fit that width, so it never runs
    under a neighbouring map; leave it that band when placing the maps.

    Args:
        fig: The matplotlib Figure to add the legend to.
        handles: Its entries, as :func:`legend_handles` returns them.
        bottom_in: How far up from the figure's bottom edge the band starts, in inches.
        left_in: Where the band starts from the figure's left edge, in inches.
        width_in: The band's width in inches; None: the whole figure's width.

    Examples:
        >>> fig, handles = Figure(figsize=(4, 3)), legend_handles(god_view=True, path=True)
        >>> add_legend(fig, handles)
        >>> len(fig.legends), legend_height(4, handles) > LEGEND_IN  # six entries need two rows in 4 inches
        (1, True)
    """
    fig_w, fig_h = fig.get_size_inches()
    width_in = fig_w if width_in is None else width_in
    rows = _legend_rows(width_in, handles)
    fig.legend(handles=handles, loc="center",
               bbox_to_anchor=((left_in + width_in / 2) / fig_w, (bottom_in + rows * LEGEND_IN / 2) / fig_h),
               ncol=math.ceil(len(handles) / rows), fontsize=LEGEND_PT, frameon=False, handlelength=1.2,
               handletextpad=0.6, columnspacing=1.2, labelspacing=0.5)


def _widest_row(entries: list[float], rows: int) -> float:
    columns = math.ceil(len(entries) / rows)
    # matplotlib fills a legend column by column: entry i sits in column i // rows
    widths = [max(entries[c * rows:(c + 1) * rows]) for c in range(columns)]
    return sum(widths)


def _legend_rows(fig_w_in: float, handles: list[Patch]) -> int:
    # The fewest rows whose widest row fits the figure. An entry is its patch (1.2 em), a gap (0.6 em),
    # its text, and the space before the next entry (1.2 em).
    entries = [(1.2 + 0.6 + 1.2) * LEGEND_PT + text_width(h.get_label(), LEGEND_PT) for h in handles]
    rows = 1
    while rows < len(handles) and _widest_row(entries, rows) > fig_w_in * 72 - 12:
        rows += 1
    return rows


def draw_home(home: Home, *, state: dict[str, Any] | None = None, seen: dict[str, Any] | None = None,
              path: list[str] | None = None, god_view: bool = False, title: str | None = None,
              ax=None, legend: bool = True, labels: str = "auto",
              sizes: tuple[float, float] | None = None) -> Figure:
    """Draw the home: lit rooms yellow, dark rooms blue, the robot, what it has seen; returns the Figure.

    Every word is sized to stay inside its room box (:mod:`.layout`).

    Args:
        home: The home to draw.
        state: A truth snapshot shaped like ``home.truth()`` (devices, robot, items); None: the home now.
        seen: What the robot has seen: item id -> ``{"room": ...}``; None: the home's own sightings.
        path: Rooms the robot went through, in order, drawn as arrows; None: no arrows.
        god_view: Also show the hidden things, dashed, where they really are.
        title: A title above the map; None: no title.
        ax: Matplotlib axes to draw on (a strip of maps passes its own); None: a new Figure.
        legend: Draw a legend under the map; a strip of maps passes False and draws one for all.
        labels: How things in a room are written: ``"full"`` ("Bruno (dog) hidden"), ``"short"`` ("Bruno"), ``"marks"``
            (coloured dots), or ``"auto"``: the longest that fits every room.
        sizes: Caps on the (room name, label) font sizes in points, so maps side by side share one style; None: as large
            as fits.

    Examples:
        >>> from lares_kit import load_world
        >>> fig = draw_home(load_world("lares-home"), god_view=True)
        >>> sorted(t.get_text() for t in fig.axes[0].texts if "hidden" in t.get_text())
        ['Bruno (dog) hidden', 'Sally (person) hidden']
    """
    state, seen = _view(home, state, seen)
    pos = room_layout(home)
    width, height = box_size(pos)
    own = ax is None  # a figure of our own has room for the legend under the map; a caller's axes may not
    moved = len(path or []) > 1  # a path of one room draws no arrow, so the legend has no entry for it
    if own:
        ax = _map_axes(home, title, legend, god_view, moved)
    fig = ax.figure
    xlim, ylim = map_limits(pos)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("auto")
    ax.axis("off")
    sx, sy = _points_per_unit(ax)
    plan = plan_labels(home, room_labels(home, state, seen, god_view), (width * sx, height * sy), labels)
    if sizes is not None:  # only ever smaller: what fitted still fits
        plan.name_size, plan.label_size = min(plan.name_size, sizes[0]), min(plan.label_size, sizes[1])
    lit = room_lit(home, state)

    for a, b in home.graph.edges:  # exits: doors between the boxes
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color="#8a8f98", lw=3, zorder=1,
                solid_capstyle="round")
    for room, (x, y) in pos.items():
        fill, ink = (LIT, "#222222") if lit[room] else (DARK, "#f2f2f2")
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, zorder=2,
                                    boxstyle="round,pad=0,rounding_size=0.04", facecolor=fill,
                                    edgecolor="#444444", lw=1.2, gid=f"room:{room}"))
        top = y + height / 2 - PAD / sy  # writing starts PAD points under the box's top edge
        ax.text(x + plan.name_shift / sx, top, "\n".join(plan.names[room]), ha="center", va="top",
                fontsize=plan.name_size, fontweight="bold", color=ink, zorder=4, linespacing=LINE, gid=f"name:{room}")
        below = top - (len(plan.names[room]) * LINE * plan.name_size + 2) / sy
        _draw_labels(ax, plan, room, x, below, width, sx, sy)

    for step, (a, b) in enumerate(zip(path or [], (path or [])[1:])):
        if a == b:
            continue
        ax.add_patch(FancyArrowPatch(pos[a], pos[b], arrowstyle="-|>", mutation_scale=14, lw=2.2,
                                     color=_PATH, alpha=0.9, zorder=3, shrinkA=14, shrinkB=14,
                                     connectionstyle=f"arc3,rad={0.18 + 0.06 * (step % 3)}"))
    if legend and own:
        add_legend(fig, legend_handles(god_view, moved))
    elif legend:
        ax.legend(handles=legend_handles(god_view, moved), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  ncol=2, fontsize=LEGEND_PT, frameon=False, handlelength=1.2)
    if title:
        box_w = ax.get_position().width * fig.get_size_inches()[0] * 72
        ax.set_title("\n".join(wrap(title, box_w, 10, max_lines=2)), fontsize=10, loc="left")
    return fig


def _map_axes(home: Home, title: str | None, legend: bool, god_view: bool, path: bool):
    # A new figure just big enough for the map, its title and its legend; the map's axes placed in it.
    area_w, area_h = map_area(home)
    fig_w = area_w + 2 * _SIDE_IN
    title_in = (len(wrap(title, area_w * 72, 10, max_lines=2)) * 10 * LINE + 8) / 72 if title else 0.1
    legend_in = legend_height(fig_w, legend_handles(god_view, path)) if legend else 0.1
    fig_h = area_h + title_in + legend_in
    fig = Figure(figsize=(fig_w, fig_h), dpi=90)
    return fig.add_axes((_SIDE_IN / fig_w, legend_in / fig_h, area_w / fig_w, area_h / fig_h))


def _points_per_unit(ax) -> tuple[float, float]:
    # Points per layout unit across and down, from where the axes sit in the figure (no layout pass after).
    box = ax.get_position()
    fig_w, fig_h = ax.figure.get_size_inches()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return box.width * fig_w * 72 / (x1 - x0), box.height * fig_h * 72 / (y1 - y0)


def _draw_labels(ax, plan, room: str, x: float, top: float, width: float, sx: float, sy: float) -> None:
    # top: just under the room's name, in layout units
    shown = plan.labels.get(room, [])
    if plan.mode == "marks":  # dots in a row at the right end of the box, level with the name
        d = plan.label_size
        right = x + width / 2 - PAD / sx
        middle = top + (len(plan.names[room]) * LINE * plan.name_size + 2) / 2 / sy
        for i, label in enumerate(reversed(shown)):
            ax.plot(right - (d / 2 + i * 1.4 * d) / sx, middle, marker="o", markersize=d,
                    markerfacecolor=_FACE[label.kind], markeredgecolor="#333333", markeredgewidth=0.8,
                    linestyle="none", zorder=5, gid=f"mark:{room}:{label.kind}")
        return
    size = plan.label_size
    step = size * LABEL_LINE  # points from one label's centre to the next
    for i, label in enumerate(shown):
        text = label.full if plan.mode == "full" else label.short
        dashed = label.kind == "hidden"
        ax.text(x, top - (step / 2 + i * step) / sy, text, ha="center", va="center", fontsize=size, zorder=5,
                color="#222222", alpha=0.85 if dashed else 1.0, gid=f"label:{room}",
                bbox={"boxstyle": "round,pad=0.25", "facecolor": _FACE[label.kind], "edgecolor": "#333333",
                      "linestyle": "--" if dashed else "-", "lw": 0.8})


def render_png(home: Home, **view: Any) -> bytes:
    """The picture of :func:`draw_home` as PNG bytes (same keyword arguments).

    Args:
        home: The home to draw.
        **view: Any of :func:`draw_home`'s keyword arguments (``state``, ``god_view``, ``path``...).

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

    Args:
        home: The home to describe.
        state: A truth snapshot shaped like ``home.truth()`` (devices, robot, items); None: the home now.
        seen: What the robot has seen: item id -> ``{"room": ...}``; None: the home's own sightings.
        god_view: Also say where the hidden things are.

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
