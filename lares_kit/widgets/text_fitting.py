"""Text that fits: measure a label, choose a font size for a box, wrap a caption at word boundaries.

Used by :mod:`lares_kit.widgets.drawing` (room names and labels inside their
room boxes), :mod:`lares_kit.widgets.replay` (step captions over a strip of
maps) and :mod:`lares_kit.widgets.snapshot` (the app's transcript). Sizes are
in typographic points (1/72 inch), which is what matplotlib font sizes are,
so a size chosen here holds whatever the figure's dpi.

Widths are measured with matplotlib's own font renderer (the font the
picture will use), once per text at 100 pt, and scaled: an outline's width
is proportional to its font size. Drawn small, hinting snaps glyphs to whole
pixels and makes a line up to 13% wider than its outline (measured at 5-10
pt and 72-144 dpi), so every width is given with :data:`HINTING` to spare.
Nothing here draws.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["ELLIPSIS", "HINTING", "text_width", "fit_size", "wrap", "split_name"]

ELLIPSIS = "\u2026"
_MEASURED_AT = 100.0  # points: big enough that hinting does not distort the measure
HINTING = 1.14  # a small line drawn at 72-144 dpi is up to 13% wider than its outline


@lru_cache(maxsize=None)
def _renderer():
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(1, 1, 72)  # 72 dpi: one pixel is one point


@lru_cache(maxsize=4096)
def _width_measured(text: str, bold: bool) -> float:
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=_MEASURED_AT, weight="bold" if bold else "normal")
    width, _, _ = _renderer().get_text_width_height_descent(text, prop, ismath=False)
    return float(width) * HINTING


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of one line of ``text`` at ``size`` points, in points.

    Args:
        text: One line of text.
        size: The font size in points.
        bold: Measure the bold face (room names are bold).

    Examples:
        >>> text_width("Bedroom", 10, bold=True) > text_width("Bedroom", 10)
        True
        >>> round(text_width("Bedroom", 20) / text_width("Bedroom", 10), 6)  # widths scale with the size
        2.0
    """
    return _width_measured(text, bold) * size / _MEASURED_AT


def fit_size(lines: list[str], width: float, largest: float, bold: bool = False) -> float:
    """The largest font size, at most ``largest``, at which every line is at most ``width`` points wide.

    Args:
        lines: The lines of text that must all fit.
        width: The room for each line, in points.
        largest: The largest font size wanted, in points.
        bold: Measure the bold face (room names are bold).

    Examples:
        >>> fit_size(["Bedroom"], 200, largest=10)
        10
        >>> size = fit_size(["Ground floor corridor"], 60, largest=10, bold=True)
        >>> size < 10 and text_width("Ground floor corridor", size, bold=True) <= 60
        True
    """
    widest = max((_width_measured(line, bold) for line in lines), default=0.0)
    if widest <= 0:
        return largest
    return min(largest, 0.999 * width * _MEASURED_AT / widest)  # a hair under: a measure compared again still fits


def split_name(name: str) -> list[str]:
    """A name as two lines, broken at the space nearest its middle (one line if it has no space).

    Args:
        name: A room's name, e.g. "Ground floor corridor".

    Examples:
        >>> split_name("Ground floor corridor")
        ['Ground floor', 'corridor']
        >>> split_name("Bedroom")
        ['Bedroom']
    """
    spaces = [i for i, ch in enumerate(name) if ch == " "]
    if not spaces:
        return [name]
    cut = min(spaces, key=lambda i: abs(i - len(name) / 2))
    return [name[:cut], name[cut + 1:]]


def wrap(text: str, width: float, size: float, max_lines: int = 3, bold: bool = False) -> list[str]:
    """``text`` broken into lines of at most ``width`` points, at spaces; at most ``max_lines``.

    A text too long for ``max_lines`` ends with a whole word and an ellipsis,
    never in the middle of a word (unless one word alone is wider than a line).

    Args:
        text: The text to break, e.g. a replay frame's caption.
        width: The width of a line, in points.
        size: The font size in points.
        max_lines: The most lines to return; the rest of the text becomes an ellipsis.
        bold: Measure the bold face.

    Examples:
        >>> wrap("step 2: move_robot(destination_room_id=\\"lounge\\") -> The robot moved", 300, 9)
        ['step 2: move_robot(destination_room_id="lounge") ->', 'The robot moved']
        >>> lines = wrap("one two three four five six seven eight nine ten", 60, 10, max_lines=2)
        >>> (len(lines), lines[-1].endswith("\u2026"),
        ...  " ".join(lines).replace("\u2026", "") in "one two three four five six")
        (2, True, True)
    """
    def fits(line: str) -> bool:
        return text_width(line, size, bold) <= width

    lines: list[str] = []
    line = ""
    for word in _pieces(text.split(), fits):
        if line and not fits(f"{line} {word}"):
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    if len(lines) > max_lines:  # too long: end the last line kept with a whole word and an ellipsis
        lines = lines[:max_lines]
        last = lines[-1]
        while last and not fits(last + ELLIPSIS):
            last = last.rsplit(" ", 1)[0] if " " in last else last[:-1]
        lines[-1] = last + ELLIPSIS
    return lines


def _pieces(words: list[str], fits) -> list[str]:
    # The words, with any word wider than a whole line cut into pieces that fit.
    out = []
    for word in words:
        while not fits(word) and len(word) > 1:
            cut = len(word) - 1
            while cut > 1 and not fits(word[:cut]):
                cut -= 1
            out.append(word[:cut])
            word = word[cut:]
        out.append(word)
    return out
