"""A picture of the whole Lares app, for readers without a kernel.

Used by :class:`~lares_kit.widgets.app.AgentApp`: a widget cannot be drawn
from a saved notebook (its state is not saved), so the app sends this
picture beside itself, and GitHub, nbviewer or a notebook opened without a
kernel show it: the map on the left as the app shows it, and on the right
what the page says -- the instruction, the tool calls remaining, the status,
a pending question and the transcript, newest first, as the app lists it.
A line at the top says it is a picture and that the live app appears there
when the notebook runs.

Plain matplotlib; it reads the app's home, episode and fields, and changes
nothing.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from .drawing import add_legend, draw_home, legend_handles, legend_height
from .layout import LINE, map_area
from .text_fitting import wrap

__all__ = ["PICTURE_NOTE", "app_picture"]

PICTURE_NOTE = "A picture of the app: run the notebook in Jupyter or Voila to use it."
PANEL_IN = 5.8  # the right-hand panel's width, inches
MAP_IN = 6.4  # the map is drawn at most this wide
TEXT_PT = 8.5
MAX_TRANSCRIPT_LINES = 26


def app_picture(app: Any) -> Figure:
    """The whole app as one picture: the map, and the page's text beside it.

    Args:
        app: An :class:`~lares_kit.widgets.app.AgentApp`, as it is on the page now.

    Examples:
        >>> from lares_kit.widgets.app import AgentApp
        >>> fig = app_picture(AgentApp())
        >>> any("tool calls remaining" in t.get_text() for t in fig.texts)
        True
    """
    area_w, area_h = map_area(app.home)
    scale = min(1.0, MAP_IN / area_w)
    map_w, map_h = area_w * scale, area_h * scale
    handles = legend_handles(god_view=app.map.god_view.value, path=len(_path(app)) > 1)
    legend_h = legend_height(map_w, handles)
    lines = _panel_lines(app, PANEL_IN * 72 - 16)
    note_h = 0.32
    text_h = sum(size * LINE + gap for _, size, _, gap in lines) / 72 + 0.2
    fig_h = note_h + max(map_h + legend_h, text_h)
    fig_w = map_w + PANEL_IN + 0.3
    fig = Figure(figsize=(fig_w, fig_h), dpi=80)
    fig.patch.set_facecolor("white")
    fig.text(0.1 / fig_w, 1 - 0.1 / fig_h, PICTURE_NOTE, ha="left", va="top", fontsize=9, style="italic",
             color="#555555")
    ax = fig.add_axes((0.05 / fig_w, (fig_h - note_h - map_h) / fig_h, map_w / fig_w, map_h / fig_h))
    draw_home(app.home, path=_path(app), god_view=app.map.god_view.value, ax=ax, legend=False)
    add_legend(fig, handles, bottom_in=fig_h - note_h - map_h - legend_h, left_in=0.05, width_in=map_w)
    # The right-hand panel: a light frame, then the page's text from the top down.
    left = map_w + 0.2
    fig.add_artist(FancyBboxPatch((left / fig_w, 0.05 / fig_h), (PANEL_IN - 0.05) / fig_w,
                                  (fig_h - note_h - 0.1) / fig_h, boxstyle="round,pad=0,rounding_size=0.01",
                                  transform=fig.transFigure, facecolor="#f7f7f9", edgecolor="#cccccc", lw=0.8))
    y = (fig_h - note_h - 0.1) * 72  # points from the bottom of the figure
    for text, size, style, gap in lines:
        y -= gap
        fig.text((left + 0.1) / fig_w, y / 72 / fig_h, text, ha="left", va="top", fontsize=size,
                 fontweight="bold" if style == "bold" else "normal", color="#b00020" if style == "error" else "#222222",
                 family="monospace" if style == "code" else None)
        y -= size * LINE
    return fig


def _path(app: Any) -> list[str]:
    if app.episode is None:
        return []
    path = [app.episode.initial_state.get("robot")]
    path += [s.after["robot"] for s in app.episode.tool_calls if s.after and s.after.get("robot")]
    return [room for i, room in enumerate(path) if room and (i == 0 or room != path[i - 1])]


def _panel_lines(app: Any, width: float) -> list[tuple[str, float, str, float]]:
    # (text, size, style, gap above) for each line of the right-hand panel, top first.
    out: list[tuple[str, float, str, float]] = []

    def add(text: str, style: str = "", gap: float = 2.0, size: float = TEXT_PT, max_lines: int = 4) -> None:
        for i, line in enumerate(wrap(text, width, size, max_lines, bold=style == "bold")):
            out.append((line, size, style, gap if i == 0 else 0.0))

    add("Instruction", "bold", gap=6, size=10)
    add(app.instruction.value or "(empty: type one, or pick an example)", "code")
    add("Examples: " + " | ".join(b.description for b in app.examples), gap=4, max_lines=3)
    remaining = app.max_steps - (len(app.episode.tool_calls) if app.episode is not None else 0)
    add(f"[Run]  [Reset home]   {max(remaining, 0)} tool calls remaining", gap=6)
    if app.episode is not None:
        add(f"{app.episode.status}: {app.episode.final_message}", "bold", gap=6)
    if app.pending_question:
        add(f"Lares asks: {app.pending_question}", "bold", gap=6)
    add("Transcript (newest first)", "bold", gap=8, size=10)
    steps = list(reversed(app.episode.steps)) if app.episode is not None else []
    if not steps:
        add("(nothing yet: press Run)")
    used = 0
    for i, step in enumerate(steps):
        entry = wrap(step.render_line(), width, TEXT_PT, 3)
        if used + len(entry) > MAX_TRANSCRIPT_LINES:
            add(f"... and {len(steps) - i} earlier entries", gap=3)
            break
        for j, line in enumerate(entry):
            out.append((line, TEXT_PT, "error" if getattr(step, "ok", True) is False else "", 3.0 if j == 0 else 0.0))
        used += len(entry)
    return out
