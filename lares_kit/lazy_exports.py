"""A package's public names, each imported from its module the first time it is asked for.

Every package of lares_kit hands the lessons its names this way
(``from lares_kit.home import Clock``): the package's ``__init__.py`` holds a
table ``_LAZY`` of name -> module and imports nothing itself. So importing one
module of a package never runs the rest of it, no import cycle can hide in an
``__init__.py``, and ``import lares_kit`` stays light (openai, matplotlib and
ipywidgets load only when a name that needs them is first used). The import
walk in the tests reads the same tables as imports.

>>> from lares_kit.home import Clock
>>> Clock.__module__
'lares_kit.home.clock'
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose public names load on first use.

    Args:
        package: The package's ``__name__``.
        table: Each public name -> the module (dotted, absolute) that defines it.

    Returns:
        ``(__getattr__, __dir__)``, to assign in the package's ``__init__.py``.

    Examples:
        >>> getattr_, dir_ = lazy_exports("lares_kit.home", {"Clock": "lares_kit.home.clock"})
        >>> getattr_("Clock").__name__, "Clock" in dir_()
        ('Clock', True)
        >>> getattr_("Clocks")
        Traceback (most recent call last):
        ...
        AttributeError: module 'lares_kit.home' has no attribute 'Clocks'
    """

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(table[name]), name)
        setattr(sys.modules[package], name, value)  # asked once: later uses are a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
