"""What a data file may hold, and how a place in it is named: the limits both file readers share.

:mod:`lares_kit.files.reading` reads files and JSON, :mod:`lares_kit.files.yamldata`
reads YAML; both check the same limits (why they are where they are is in
:mod:`lares_kit.files.reading`), name a place in the data the same way
(:func:`key_path`) and warn about a key written twice the same way
(:func:`warn_duplicates`). This module is a leaf below both, so neither
reader needs the other's module to know them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ..errors import LaresWarning, brief, clip

__all__ = ["INT_RANGE", "MAX_BYTES", "MAX_DEPTH", "MAX_TEXT", "MAX_VALUES", "DuplicateKeyWarning", "Error", "key_path",
           "warn_duplicates"]

MAX_BYTES = 8 * 2**20  # a 25,000-device generated building is 5 MB of JSON
MAX_VALUES = 500_000  # keys and values, aliases repeated: a 25,000-device building, ~30 MB of objects at worst
MAX_TEXT = 16 * 2**20  # characters of text, aliases repeated (a repeated long string costs its length)
MAX_DEPTH = 50  # nesting levels; real files use fewer than 10
INT_RANGE = (-2**63, 2**63 - 1)  # whole numbers beyond a 64-bit integer are refused: no home setting needs one

Error = Callable[[str, str, str], Exception]  # (file, key path, message) -> the exception to raise


class DuplicateKeyWarning(LaresWarning):
    """A mapping in a file has the same key twice; the later value is used."""


def key_path(path: str, key: Any) -> str:
    """``"devices[0].state"`` and ``"on"`` -> ``"devices[0].state.on"``; a key that is a paragraph is cut.

    Args:
        path: The key path so far ("" at the top level).
        key: The key inside it: text, or any value a YAML key can be.

    Examples:
        >>> key_path("devices[0].state", "on"), key_path("", "rooms")
        ('devices[0].state.on', 'rooms')
    """
    name = key if isinstance(key, str) and len(key) <= 40 else brief(key)
    return f"{path}.{name}" if path else str(name)


def warn_duplicates(source: str, found: list[tuple[str, Any]]) -> None:
    """A :class:`DuplicateKeyWarning` for each (key path, key) in ``found``: the first five, then how many more.

    Called two levels below the function a person called (``read_data_file`` -> a reader -> here), so each
    warning points at that person's line.

    Args:
        source: The file, as the warning names it.
        found: (key path, key) for each key written twice, in file order.

    Examples:
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_duplicates("home.yaml", [("rooms[1].id", "id")])
        >>> str(caught[0].message)
        "home.yaml: rooms[1].id: the key 'id' is written twice; the later value is used"
    """
    for path, key in found[:5]:
        warnings.warn(f"{clip(source, 300)}: {path or '(top level)'}: the key {brief(key)} is written twice; "
                      "the later value is used", DuplicateKeyWarning, stacklevel=4)
    if len(found) > 5:
        warnings.warn(f"{clip(source, 300)}: {len(found) - 5} more keys are written twice", DuplicateKeyWarning,
                      stacklevel=4)
