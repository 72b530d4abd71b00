"""HomeMap: the home's picture as a live widget, with words and a god-view toggle.

Taught in ``notebooks/01_the_home_as_a_graph.ipynb`` and
``notebooks/06_robot_search.ipynb``. A :class:`HomeMap` shows one *view* of
a home -- the home as it is now, or a snapshot from an Episode -- as three
parts stacked: the picture (:func:`~lares_kit.widgets.drawing.render_png`),
a "god view" checkbox that reveals the hidden things, and the same view in
words (:func:`room_states_html`), which screen readers and browser tests read.

In JupyterLab and Voila it is an ipywidget; saved in a notebook it also
carries a plain PNG, so GitHub shows the picture too.
"""

from __future__ import annotations

import base64
import html
from typing import Any

from ..home.graph import Home
from .drawing import describe_home, render_png, room_lit

__all__ = ["HomeMap", "room_states_html"]


def room_states_html(home: Home, *, state: dict[str, Any] | None = None, seen: dict[str, Any] | None = None,
                     god_view: bool = False) -> str:
    """The view in words as HTML: one list item per room, marked lit or dark.

    Each item carries ``data-room`` and ``data-lit`` so a test (or a script
    in the page) can read the map without looking at pixels.

    Args:
        home: The home to describe.
        state: A truth snapshot shaped like ``home.truth()`` (devices, robot, items); None: the home now.
        seen: What the robot has seen: item id -> ``{"room": ...}``; None: the home's own sightings.
        god_view: Also say where the hidden things are.

    Examples:
        >>> from lares_kit import load_world
        >>> text = room_states_html(load_world("lares-home"))
        >>> '<li class="lares-room" data-room="hallway" data-lit="true">' in text
        True
    """
    state = state if state is not None else home.truth()
    lit = room_lit(home, state)
    rooms = "".join(
        f'<li class="lares-room" data-room="{html.escape(room)}" data-lit="{str(on).lower()}">'
        f"{html.escape(home.room_name(room))}: {'lit' if on else 'dark'}</li>" for room, on in lit.items())
    words = describe_home(home, state=state, seen=seen, god_view=god_view).splitlines()[1:]
    notes = "".join(f"<div>{html.escape(line)}</div>" for line in words)
    return (f'<div class="lares-map-state" role="status" aria-live="polite">'
            f'<ul class="lares-rooms" style="list-style:none;padding:0;margin:0;columns:2">{rooms}</ul>'
            f"{notes}</div>")


class HomeMap:
    """A live map of a home.

    ``refresh()`` with no arguments redraws the home as it is now; with a
    ``state`` / ``seen`` / ``path`` it draws that snapshot instead (a replay
    does this). The god-view checkbox redraws the current view.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> m = HomeMap(home)
        >>> m.png[:4]
        b'\\x89PNG'
        >>> home.update_device("bedroom-light", {"on": True})
        >>> m.refresh()
        >>> 'data-room="bedroom" data-lit="true"' in m.words.value
        True
    """

    def __init__(self, home: Home, *, god_view: bool = False, title: str | None = None) -> None:
        import ipywidgets as widgets

        self.home = home
        self.title = title
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height="auto"))
        self.god_view = widgets.Checkbox(value=god_view, description="god view: show the hidden things",
                                         indent=False)
        self.words = widgets.HTML()
        self.widget = widgets.VBox([self.image, self.god_view, self.words])
        self.png = b""
        # The view being shown: None values mean "the home as it is now".
        self._view: dict[str, Any] = {}
        self.god_view.observe(lambda change: self.refresh(**self._view), names="value")
        self.refresh()

    def refresh(self, *, state: dict[str, Any] | None = None, seen: dict[str, Any] | None = None,
                path: list[str] | None = None, title: str | None = None) -> None:
        """Redraw: the home now, or the given snapshot."""
        self._view = {"state": state, "seen": seen, "path": path, "title": title}
        god = self.god_view.value
        self.png = render_png(self.home, state=state, seen=seen, path=path, god_view=god,
                              title=title if title is not None else self.title)
        self.image.value = self.png
        self.words.value = room_states_html(self.home, state=state, seen=seen, god_view=god)

    def describe(self) -> str:
        """The current view in words (see :func:`~lares_kit.widgets.drawing.describe_home`)."""
        view = {k: v for k, v in self._view.items() if k in ("state", "seen")}
        return describe_home(self.home, god_view=self.god_view.value, **view)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The live widget for Jupyter and Voila, plus the picture for static viewers.
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["image/png"] = base64.b64encode(self.png).decode("ascii")
        bundle["text/plain"] = self.describe()
        return bundle
