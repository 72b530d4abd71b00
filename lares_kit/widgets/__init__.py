"""Pictures and widgets over Homes and Episodes: HomeMap, SearchReplay, AgentApp.

Imported only when asked for (``import lares_kit`` does not load matplotlib
or ipywidgets). They *read* Homes and Episodes; they never decide anything.
The AgentApp runs each instruction through the runner it is given
(``AgentApp(runner=run_agent)``): nothing in this package imports the agents.

* :mod:`.drawing` -- :func:`draw_home`, :func:`render_png`, :func:`describe_home` (matplotlib only)
* :mod:`.layout` -- where rooms go, and which labels fit in which box
* :mod:`.text_fitting` -- measuring and wrapping text in points, so words stay inside their boxes
* :mod:`.homemap` -- :class:`HomeMap`, the map as a widget with a god-view toggle
* :mod:`.replay` -- :class:`SearchReplay`, a slider over an Episode's steps, and strips of maps
* :mod:`.app` -- :class:`AgentApp`, the Lares demo UI; :mod:`.snapshot` draws it as one picture
"""

from ..lazy_exports import lazy_exports

__all__ = ["draw_home", "render_png", "describe_home", "room_layout", "room_lit", "AgentApp", "EXAMPLES", "HomeMap",
           "SearchReplay", "replay_frames"]

# Public names, each imported from its module when first asked for (lares_kit.lazy_exports)
_LAZY = {
    "describe_home": "lares_kit.widgets.drawing",
    "draw_home": "lares_kit.widgets.drawing",
    "render_png": "lares_kit.widgets.drawing",
    "room_layout": "lares_kit.widgets.drawing",
    "room_lit": "lares_kit.widgets.drawing",
    "AgentApp": "lares_kit.widgets.app",
    "EXAMPLES": "lares_kit.widgets.app",
    "HomeMap": "lares_kit.widgets.homemap",
    "SearchReplay": "lares_kit.widgets.replay",
    "replay_frames": "lares_kit.widgets.replay",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
