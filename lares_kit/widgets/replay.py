"""SearchReplay: step through a finished Episode on the map.

Taught in ``notebooks/06_robot_search.ipynb``. An Episode records the truth
right after every tool call (``ToolCall.after``), so a replay redraws the
home at any step without running anything again -- and works on an episode
loaded from JSON, long after the run.

* :func:`replay_frames` turns an Episode into frames: the state, what the
  robot had seen, its path so far, and a caption (plain data, testable) --
  one after each tool call, and one for each thing that happened in the home
  meanwhile (a ``during:`` event, :class:`~lares_kit.episode_steps.Meanwhile`: the dog
  moved, someone switched a light), so a learner sees the sighting go stale;
* :func:`draw_frames` draws some frames side by side (a static strip for a
  notebook or a report);
* :class:`SearchReplay` is the widget: play button, slider, caption, map.
"""

from __future__ import annotations

import base64
import copy
import html
import io
import math
from dataclasses import dataclass, field
from typing import Any

from matplotlib.figure import Figure

from ..episode import Episode
from ..episode_steps import Error, Final, Intent, Meanwhile, Question, ToolCall
from ..home.graph import Home
from .drawing import add_legend, draw_home, legend_handles, legend_height
from .layout import LABEL_MODES, LINE, box_size, map_area, map_limits, plan_labels, room_labels, room_layout
from .text_fitting import wrap

__all__ = ["Frame", "replay_frames", "draw_frames", "strip_shape", "SearchReplay"]


@dataclass
class Frame:
    """The home as it was at frame ``step``: 0 the start, then after each tool call or event."""

    step: int
    state: dict[str, Any]  # shaped like Home.truth(): devices, robot, items
    seen: dict[str, Any]  # item id -> {"room", "time"}: the robot's sightings so far
    path: list[str]  # rooms the robot has been in, in order, starting where it began
    caption: str  # what happened in this step, in words
    thought: str = ""  # the intent step's reasoning before this call, if any
    ok: bool = True
    notes: list[str] = field(default_factory=list)  # errors recorded before this call
    event: bool = False  # not the agent's doing: something that happened in the home meanwhile


def replay_frames(episode: Episode) -> list[Frame]:
    """One frame for the start, one after each tool call of ``episode``, one for each event that happened meanwhile.

    Args:
        episode: An Episode whose tool calls (and events) kept the state after them (``ToolCall.after``).

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.episode_steps import ToolCall
        >>> home = load_world("lares-home")
        >>> ep = Episode.start("find my dog", home, agent="intent-action", model="offline")
        >>> ep.steps.append(ToolCall("move_robot", {"destination_room_id": "bedroom"}, "The robot moved ...",
        ...                          after={"robot": "bedroom", "devices": {}, "items": {}, "seen": {}}))
        >>> [(f.step, f.state["robot"], f.path) for f in replay_frames(ep)]
        [(0, 'hallway', ['hallway']), (1, 'bedroom', ['hallway', 'bedroom'])]
    """
    state = copy.deepcopy(episode.initial_state)
    seen: dict[str, Any] = {}
    path = [state["robot"]]
    frames = [Frame(0, copy.deepcopy(state), {}, list(path), f"start: {episode.instruction!r}")]
    thought, notes = "", []
    for step in episode.steps:
        if isinstance(step, Intent):
            thought = step.reasoning
            continue
        if isinstance(step, Error):
            notes.append(step.message)
            continue
        after = step.after or {}
        for dev_id, dev_state in after.get("devices", {}).items():  # only the devices that changed
            state["devices"][dev_id] = copy.deepcopy(dev_state)
        for item_id, room in after.get("items", {}).items():
            state["items"][item_id]["room"] = room
        if after.get("robot") and after["robot"] != state["robot"]:
            state["robot"] = after["robot"]
            path.append(state["robot"])
        seen = copy.deepcopy(after.get("seen", seen))
        if isinstance(step, Meanwhile):  # the world's doing: its own frame, and the agent's thought waits
            frames.append(Frame(len(frames), copy.deepcopy(state), seen, list(path), f"meanwhile: {step.text}",
                                event=True))
            continue
        frames.append(Frame(len(frames), copy.deepcopy(state), seen, list(path), _caption(step), thought,
                            step.ok, notes))
        thought, notes = "", []
    return frames


def _caption(step: ToolCall) -> str:
    if isinstance(step, Question):
        answer = step.answer if step.answer is not None else "(no answer)"
        return f"asks {step.question!r} -> {answer}"
    if isinstance(step, Final):
        return f"halts: {step.message}"
    return f"{step.call_text} -> {step.result}"


STRIP_WIDTH_IN = 12.5  # a strip is at most this wide: 1,000 pixels at 80 dpi, shown unscaled in a notebook
MIN_SCALE = 0.5  # maps in a strip are never drawn smaller than this share of their natural size: wrap instead
CAPTION_PT = 9.0
CAPTION_LINES = 3


def strip_shape(home: Home, count: int, columns: int = 3) -> tuple[int, float]:
    """``(maps per row, scale)`` for a strip of ``count`` maps: as many per row as stay readable.

    Args:
        home: The home the maps show (a wide home fits fewer maps a row).
        count: How many maps the strip holds.
        columns: The most maps in a row.

    Examples:
        >>> from lares_kit import load_world
        >>> strip_shape(load_world("lares-home"), 3)
        (3, 0.57)
        >>> strip_shape(load_world("smart-building"), 3)[0]  # a wide home: two maps a row
        2
    """
    area_w, _ = map_area(home)
    per_row = max(1, min(columns, count))
    while per_row > 1 and STRIP_WIDTH_IN / (per_row * area_w) < MIN_SCALE:
        per_row -= 1
    return per_row, round(min(1.0, STRIP_WIDTH_IN / (per_row * area_w)), 2)


def draw_frames(home: Home, frames: list[Frame], *, god_view: bool = False, columns: int = 3) -> Figure:
    """Draw ``frames`` side by side, each under its step's caption, with one legend for all.

    Each map is drawn as large as the strip allows (:func:`strip_shape`; a
    wide home wraps to fewer maps a row, and so does a home whose crowded
    rooms would otherwise show dots instead of names), captions are wrapped
    at word boundaries, and every word stays inside its room (the most
    compact label style any frame needs is used in all of them, so the
    frames look alike).

    Args:
        home: The home the frames are of.
        frames: The frames to draw, e.g. some of :func:`replay_frames`.
        god_view: Also show the hidden things, dashed, where they really are.
        columns: The most maps in a row (fewer when they would be too small to read).

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> start = replay_frames(Episode.start("hi", home, agent="a", model="m"))[0]
        >>> fig = draw_frames(home, [start, start])
        >>> len(fig.axes), len(fig.legends)
        (2, 1)
    """
    area_w, area_h = map_area(home)
    shown = [room_labels(home, f.state, f.seen, god_view) for f in frames]
    per_row, scale = strip_shape(home, len(frames), columns)
    mode = _mode(home, shown, area_w * scale, area_h * scale)
    # Words beat width: if the things in some room only fit as dots, try fewer, bigger maps a row.
    for fewer in range(per_row - 1, 0, -1) if mode == "marks" else ():
        bigger = min(1.0, STRIP_WIDTH_IN / (fewer * area_w))
        if _mode(home, shown, area_w * bigger, area_h * bigger) != "marks":
            per_row, scale, mode = fewer, bigger, _mode(home, shown, area_w * bigger, area_h * bigger)
            break
    rows = math.ceil(len(frames) / per_row)
    panel_w, panel_h = area_w * scale, area_h * scale
    caption_h = (CAPTION_LINES * CAPTION_PT * LINE + 10) / 72
    fig_w = per_row * panel_w + 2 * _GUTTER_IN * per_row
    handles = legend_handles(god_view, any(len(f.path) > 1 for f in frames))
    legend_h = legend_height(fig_w, handles)
    fig_h = rows * (panel_h + caption_h) + legend_h
    fig = Figure(figsize=(fig_w, fig_h), dpi=80)
    # One style for every frame: the most compact labels any frame needs, at the smallest sizes any needs.
    box = _box_points(home, panel_w, panel_h)
    plans = [plan_labels(home, labels, box, mode) for labels in shown]
    sizes = (min(p.name_size for p in plans), min(p.label_size for p in plans))
    for i, frame in enumerate(frames):
        row, col = divmod(i, per_row)
        left = col * (panel_w + 2 * _GUTTER_IN) + _GUTTER_IN
        bottom = legend_h + (rows - 1 - row) * (panel_h + caption_h)
        ax = fig.add_axes((left / fig_w, bottom / fig_h, panel_w / fig_w, panel_h / fig_h))
        draw_home(home, state=frame.state, seen=frame.seen, path=frame.path, god_view=god_view, ax=ax,
                  legend=False, labels=mode, sizes=sizes)
        caption = wrap(f"step {frame.step}: {frame.caption}", panel_w * 72 - 4, CAPTION_PT, CAPTION_LINES)
        ax.text(0.0, 1.0 + 4 / (panel_h * 72), "\n".join(caption), transform=ax.transAxes, ha="left",
                va="bottom", fontsize=CAPTION_PT, linespacing=LINE, gid=f"caption:{frame.step}")
    add_legend(fig, handles)
    return fig


_GUTTER_IN = 0.06  # blank paper either side of each map in a strip


def _mode(home: Home, shown: list, panel_w: float, panel_h: float) -> str:
    # The most compact label mode any frame needs on maps panel_w x panel_h inches.
    box = _box_points(home, panel_w, panel_h)
    return max((plan_labels(home, labels, box).mode for labels in shown), key=LABEL_MODES.index)


def _box_points(home: Home, panel_w: float, panel_h: float) -> tuple[float, float]:
    # A room box's size in points on a map drawn panel_w x panel_h inches (the limits draw_home sets).
    pos = room_layout(home)
    width, height = box_size(pos)
    (x0, x1), (y0, y1) = map_limits(pos)
    return width * panel_w * 72 / (x1 - x0), height * panel_h * 72 / (y1 - y0)


class SearchReplay:
    """Play an Episode back on the map: a play button and a slider over its frames.

    ``home`` gives the layout and names; by default the episode's world is
    loaded. The states come from the Episode alone.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> replay = SearchReplay(Episode.start("find my dog", home, agent="a", model="m"), home)
        >>> replay.slider.max, replay.map.describe().splitlines()[1]
        (0, 'Robot: Hallway.')
    """

    def __init__(self, episode: Episode, home: Home | None = None, *, god_view: bool = False,
                 interval_ms: int = 900) -> None:
        import ipywidgets as widgets

        from .homemap import HomeMap

        if home is None:
            from ..home.worlds import load_world

            home = load_world(episode.world)
        self.episode = episode
        self.frames = replay_frames(episode)
        self.map = HomeMap(home, god_view=god_view)
        last = len(self.frames) - 1
        self.play = widgets.Play(value=0, min=0, max=last, interval=interval_ms, description="play")
        self.slider = widgets.IntSlider(value=0, min=0, max=last, description="step", continuous_update=True)
        widgets.jslink((self.play, "value"), (self.slider, "value"))  # the browser moves the slider
        self.caption = widgets.HTML()
        self.slider.observe(lambda change: self.show(change["new"]), names="value")
        self.widget = widgets.VBox([widgets.HBox([self.play, self.slider]), self.caption, self.map.widget])
        self.show(0)

    def show(self, index: int) -> Frame:
        """Draw frame ``index`` (also what moving the slider does); return it."""
        frame = self.frames[index]
        self.map.refresh(state=frame.state, seen=frame.seen, path=frame.path)
        thought = f"<div><i>thinks:</i> {html.escape(frame.thought)}</div>" if frame.thought else ""
        notes = "".join(f"<div><i>error:</i> {html.escape(n)}</div>" for n in frame.notes)
        mark = " (in the home, not by the agent)" if frame.event else "" if frame.ok else " (failed)"
        said = (f"<i>{html.escape(frame.caption)}</i>" if frame.event  # an event is no call: not set as code
                else f"<code>{html.escape(frame.caption)}</code>")
        self.caption.value = (f"<div><b>step {frame.step} of {len(self.frames) - 1}</b>{mark}</div>{notes}{thought}"
                              f"<div>{said}</div>")
        return frame

    def figure(self, steps: list[int] | None = None, *, god_view: bool | None = None) -> Figure:
        """A static strip of frames (default: start, middle, end), for notebooks and reports."""
        last = len(self.frames) - 1
        steps = steps if steps is not None else sorted({0, last // 2, last})
        god = self.map.god_view.value if god_view is None else god_view
        return draw_frames(self.map.home, [self.frames[i] for i in steps], god_view=god)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The live widget, plus the start/middle/end strip for static viewers (GitHub).
        bundle = self.widget._repr_mimebundle_(**kwargs)
        buffer = io.BytesIO()
        self.figure().savefig(buffer, format="png")
        bundle["image/png"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        bundle["text/plain"] = f"<SearchReplay: {self.episode.instruction!r}, {len(self.frames) - 1} steps>"
        return bundle
