"""Offline information sources of a home: the TV guide and the weather.

Taught in ``notebooks/12_personalization.ipynb``. SAGE's agent could search a
ten-channel TV schedule and ask for the weather; these two tools read the
same kind of data from the world file (``tv_guide:`` and ``weather:``, kept
in ``Home.extra``), so they work with no network and give the same answer
every time. Matching is by words: "hockey", "Canadiens", "kids".
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..errors import ToolError
from ..home.graph import Home

__all__ = ["channels", "search_guide", "tv_guide", "weather", "GUIDE_TOOLS"]


def channels(home: Home) -> list[dict[str, Any]]:
    """The home's TV guide: one mapping per channel (channel, name, now, genre, teams).

    Args:
        home: The home whose world file has a ``tv_guide:`` list; a home without one has no channels.
    """
    return [c for c in home.extra.get("tv_guide", []) if isinstance(c, dict)]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def search_guide(home: Home, query: str) -> list[dict[str, Any]]:
    """Channels whose name, programme, genre or teams share a word with the query, best first.

    Args:
        home: The home whose TV guide is searched.
        query: Free words such as ``"Canadiens hockey"``; a plural matches its singular, and short or
            filler words ("the", "show", "tonight", ...) are ignored.

    Examples:
        >>> from lares_kit import load_world
        >>> [c["channel"] for c in search_guide(load_world("sage-home"), "Canadiens hockey")]
        [3]
        >>> [c["channel"] for c in search_guide(load_world("sage-home"), "something for the kids")]
        [2, 9]
    """
    words = ({_stem(w) for w in re.findall(r"[a-z0-9]+", query.lower()) if len(w) > 2}
             - {"the", "for", "on", "something", "show", "channel", "tonight", "watch"})
    scored = []
    for c in channels(home):
        text = " ".join([str(c.get("name", "")), str(c.get("now", "")), str(c.get("genre", "")),
                         *map(str, c.get("teams", []))])
        bag = {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())}
        score = len(words & bag)
        if score:
            scored.append((score, c))
    scored.sort(key=lambda sc: -sc[0])
    return [c for _, c in scored]


def _line(c: dict[str, Any]) -> str:
    teams = f"; teams: {', '.join(c['teams'])}" if c.get("teams") else ""
    return f"channel {c['channel']} ({c['name']}): {c['now']} [{c['genre']}{teams}]"


def tv_guide(home: Home, query: str = "") -> str:
    """Search what is on TV now, by words such as a team, a sport, a genre or "kids"; empty lists every channel.

    Args:
        home: The home whose TV guide is read; supplied by the toolkit, never shown to the model.
        query: Words to look for, e.g. "Canadiens", "hockey", "kids", "documentaries"; "" for all channels.

    Examples:
        >>> from lares_kit import load_world
        >>> print(tv_guide(load_world("sage-home"), "Raptors"))  # doctest: +NORMALIZE_WHITESPACE
        On now matching 'Raptors': channel 4 (Hoops TV): Basketball: Toronto Raptors vs Boston Celtics
        [sports; teams: Toronto Raptors, Boston Celtics].
    """
    if not channels(home):
        raise ToolError("This home has no TV guide.")
    found = search_guide(home, query) if query.strip() else channels(home)
    if not found:
        return f"Nothing on now matches {query!r}. Channels: " + "; ".join(_line(c) for c in channels(home)) + "."
    head = f"On now matching {query!r}: " if query.strip() else "On now: "
    return head + "; ".join(_line(c) for c in found) + "."


def weather(home: Home, day: str = "today") -> str:
    """The weather forecast for today or tomorrow.

    Args:
        home: The home whose forecast is read; supplied by the toolkit, never shown to the model.
        day: "today" or "tomorrow".

    Examples:
        >>> from lares_kit import load_world
        >>> weather(load_world("sage-home"))
        'Weather today: rain showers in the evening, high 12 °C, low 6 °C.'
    """
    forecast = home.extra.get("weather", {})
    key = day.strip().lower() or "today"
    if key not in forecast:
        raise ToolError(f"No forecast for {day!r}; ask for: {', '.join(forecast) or 'nothing, there is no forecast'}.")
    f = forecast[key]
    unit = f.get("unit", "")
    return f"Weather {key}: {f['summary']}, high {f['high']} {unit}, low {f['low']} {unit}.".replace("  ", " ")


GUIDE_TOOLS: list[Callable[..., str]] = [tv_guide, weather]
