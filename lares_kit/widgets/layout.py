"""Where things go on a map: rooms, box sizes, the map's size, and which labels fit in which box.

Used by :mod:`lares_kit.widgets.drawing`. Nothing here draws: these are the
decisions a drawing follows, as plain data, so a test can check them.

* :func:`room_layout` -- a stable position per room (a ``layout`` key in the
  world file wins; else columns by distance from the central room);
* :func:`box_size` -- the widest room boxes that never overlap;
* :func:`map_area` -- the natural size of a map's drawing area, in inches;
* :func:`plan_labels` -- for boxes of a given size in points: each room
  name's font size and lines, and how the things in a room are labelled:
  ``full`` ("Bruno (dog) hidden"), ``short`` ("Bruno") or ``marks`` (coloured
  dots, for boxes too small for words) -- the longest that fits every room.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import networkx as nx

from ..home.graph import Home
from .text_fitting import ELLIPSIS, fit_size, split_name, text_width

__all__ = ["NAME_PT", "LABEL_PT", "MIN_PT", "MIN_LABEL_PT", "LABEL_MODES", "Label", "LabelPlan", "room_layout",
           "box_size", "map_area", "map_limits", "room_labels", "plan_labels"]

NAME_PT = 10.0  # a room's name, bold, at most this size
LABEL_PT = 8.0  # a thing's label, at most this size
MIN_PT = 6.0  # a room name smaller than this is not readable at 80-90 dpi: it is cut short instead
MIN_LABEL_PT = 7.0  # a label smaller than this is hard to read: use the short label, or marks
LABEL_MODES = ("full", "short", "marks")  # longest first
PAD = 3.0  # points between a box's edge and what is written in it
LINE = 1.2  # a line of text is this many times its font size high
LABEL_LINE = 1.75  # a label in its rounded box (text, 0.25 em padding above and below), and a gap


@dataclass
class Label:
    """One thing shown in a room: the robot, something seen, or something hidden (god view)."""

    full: str  # "Bruno (dog) hidden"
    short: str  # "Bruno"
    kind: str  # "robot" | "seen" | "hidden"


@dataclass
class LabelPlan:
    """How a map's words fit its boxes (sizes in points)."""

    name_size: float
    names: dict[str, list[str]]  # room id -> its name as one or two lines
    mode: str  # one of LABEL_MODES
    label_size: float  # font size of labels (full/short) or the diameter of marks
    box: tuple[float, float] = (0.0, 0.0)  # a box's width and height
    labels: dict[str, list[Label]] = field(default_factory=dict)
    free: dict[str, float] = field(default_factory=dict)  # room id -> height left under its name
    name_shift: float = 0.0  # how far left of the box's centre names sit (marks take the right end)


def room_layout(home: Home) -> dict[str, tuple[float, float]]:
    """Where each room sits in the picture: ``{room id: (x, y)}``, the same every call.

    Args:
        home: The home whose rooms to place.

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


def box_size(pos: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """The widest room boxes (in layout units) that never overlap: boxes overlap only if close in x AND in y.

    Args:
        pos: Room id -> its ``(x, y)`` centre in layout units, as :func:`room_layout` returns it.

    Examples:
        >>> box_size({"a": (0.0, 0.0), "b": (1.0, 0.0), "c": (1.0, 1.0)})
        (0.8, 0.8)
    """
    dxs = [abs(a[0] - b[0]) for a, b in combinations(pos.values(), 2) if abs(a[0] - b[0]) > 1e-9]
    width = 0.8 * min(dxs) if dxs else 1.0
    dys = [abs(a[1] - b[1]) for a, b in combinations(pos.values(), 2) if abs(a[0] - b[0]) < width]
    height = 0.8 * min(dys) if dys else 0.8
    return width, height


def map_limits(pos: dict[str, tuple[float, float]]) -> tuple[tuple[float, float], tuple[float, float]]:
    """The map's x and y limits in layout units: every box, and a tenth of a box to spare around them.

    Args:
        pos: Room id -> its ``(x, y)`` centre in layout units, as :func:`room_layout` returns it.

    Examples:
        >>> map_limits({"a": (0.0, 0.0), "b": (1.0, 0.0)})
        ((-0.48, 1.48), (-0.48, 0.48))
    """
    width, height = box_size(pos)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    return ((round(min(xs) - 0.6 * width, 6), round(max(xs) + 0.6 * width, 6)),
            (round(min(ys) - 0.6 * height, 6), round(max(ys) + 0.6 * height, 6)))


def map_area(home: Home) -> tuple[float, float]:
    """The natural size of a map's drawing area in inches, ``(width, height)``: about 2.3 by 1.5 per room slot.

    Args:
        home: The home to be drawn.

    Examples:
        >>> from lares_kit import load_world
        >>> map_area(load_world("lares-home"))
        (7.3, 4.8)
    """
    pos = room_layout(home)
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    columns, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    return round(min(2.3 * columns + 0.4, 13.5), 2), round(min(1.5 * rows + 0.3, 9.5), 2)


def room_labels(home: Home, state: dict[str, Any], seen: dict[str, Any], god_view: bool) -> dict[str, list[Label]]:
    """What each room shows: the robot, what the robot saw there, and (god view) what is hidden there.

    Args:
        home: The home whose rooms and items to read.
        state: A truth snapshot shaped like ``home.truth()``: where the robot and the items are.
        seen: What the robot has seen: item id -> ``{"room": ...}``.
        god_view: Also label the hidden things where they really are.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> [(l.full, l.kind) for l in room_labels(home, home.truth(), {}, True)["bedroom"]]
        [('Bruno (dog) hidden', 'hidden')]
    """
    labels: dict[str, list[Label]] = {room: [] for room in home.graph.nodes}
    if state.get("robot") in labels:
        labels[state["robot"]].append(Label("robot", "robot", "robot"))
    for item_id, item in state.get("items", {}).items():
        where = seen.get(item_id, {}).get("room")
        if where in labels:
            labels[where].append(Label(f"{item['name']} ({item['type']})", item["name"], "seen"))
        # god view: where it really is, unless the robot saw it there (a sighting of a thing that moved is stale)
        if god_view and item["room"] in labels and item["room"] != where:
            labels[item["room"]].append(Label(f"{item['name']} ({item['type']}) hidden", item["name"], "hidden"))
    return labels


def _name_lines(name: str, size: float, width: float, two_lines: bool) -> list[str]:
    # One line if it fits, else two (when allowed), else one line cut short with an ellipsis.
    if text_width(name, size, bold=True) <= width:
        return [name]
    two = split_name(name)
    if two_lines and len(two) == 2 and all(text_width(line, size, bold=True) <= width for line in two):
        return two
    cut = name
    while len(cut) > 1 and text_width(cut + ELLIPSIS, size, bold=True) > width:
        cut = cut[:-1]
    return [cut.rstrip() + ELLIPSIS]


def plan_labels(home: Home, labels: dict[str, list[Label]], box: tuple[float, float],
                mode: str = "auto") -> LabelPlan:
    """Font sizes and label mode for boxes ``box = (width, height)`` in points.

    Args:
        home: The home whose room names are written.
        labels: Room id -> what it shows, as :func:`room_labels` returns it.
        box: A room box's ``(width, height)`` in points.
        mode: One of :data:`LABEL_MODES` (used as it is), or ``"auto"``: the longest whose labels fit every box at
            :data:`MIN_LABEL_PT` or more.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> labels = room_labels(home, home.truth(), {}, god_view=True)
        >>> plan_labels(home, labels, (120, 90)).mode, plan_labels(home, labels, (40, 20)).mode
        ('full', 'marks')
    """
    width, height = box
    inner_w, inner_h = max(width - 2 * PAD, 1.0), max(height - 2 * PAD, 1.0)
    names = {room: home.room_name(room) for room in home.graph.nodes}
    # Labels first: if they only fit under smaller names, names give up to two points. A mode asked for
    # by name is kept even if it fits only small.
    caps = (NAME_PT, NAME_PT - 1, NAME_PT - 2)
    modes = [] if mode == "marks" else list(LABEL_MODES[:2]) if mode == "auto" else [mode]
    for name_cap in caps if modes else ():
        plan = _plan(names, labels, inner_w, inner_h, box, name_cap)
        for m in modes:
            size = _label_size(m, labels, plan.free, inner_w)
            if size >= MIN_LABEL_PT or (mode != "auto" and name_cap == caps[-1]):
                plan.mode, plan.label_size = m, size
                return plan
    # Marks: dots in a row at the right end of each box, on the name's line; the names take the rest.
    dot = max(3.0, min(7.0, inner_h * 0.7))
    most = max((len(shown) for shown in labels.values()), default=0)
    reserve = most * 1.4 * dot if most else 0.0
    plan = _plan(names, labels, max(inner_w - reserve, 1.0), inner_h, box)
    plan.mode, plan.label_size, plan.name_shift = "marks", dot, -reserve / 2
    return plan


def _plan(names: dict[str, str], labels: dict[str, list[Label]], inner_w: float, inner_h: float,
          box: tuple[float, float], name_cap: float = NAME_PT) -> LabelPlan:
    # One size for every name: the largest at which each name fits on one line, or on two when the box is
    # tall enough for two.
    best = [max(min(fit_size([n], inner_w, name_cap, bold=True), inner_h / LINE),
                min(fit_size(split_name(n), inner_w, name_cap, bold=True), inner_h / (2 * LINE)))
            for n in names.values()]
    name_size = max(MIN_PT, min(best, default=name_cap))
    two = 2 * LINE * name_size <= inner_h
    lines = {room: _name_lines(n, name_size, inner_w, two) for room, n in names.items()}
    free = {room: inner_h - len(lines[room]) * LINE * name_size - 2 for room in names}  # under the name
    return LabelPlan(name_size, lines, "full", LABEL_PT, box, labels, free=free)


def _label_size(mode: str, labels: dict[str, list[Label]], free: dict[str, float], width: float) -> float:
    # The largest label size (at most LABEL_PT) at which every room's labels fit across and down.
    size = LABEL_PT
    for room, shown in labels.items():
        if not shown:
            continue
        texts = [label.full if mode == "full" else label.short for label in shown]
        across = (width - 2) / (text_width(max(texts, key=lambda t: text_width(t, 10)), 1) + 0.5)  # + box padding
        down = free[room] / (len(shown) * LABEL_LINE)
        size = min(size, across, down)
    return size
