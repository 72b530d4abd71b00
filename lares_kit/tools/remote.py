"""Tools that live in another process: a list of tool functions whose home is elsewhere.

Taught in ``notebooks/18_a_real_home.ipynb``. A :class:`RemoteTools` is what
``run_agent(tools=...)`` takes as it takes any list of tool functions, and
says the one thing a remote home needs that a local one does not: the run's
local copy of the home catches up with the real one (:meth:`RemoteTools.sync`)
before the prompt is written. :class:`lares_kit.serve.client.McpTools` is one:
the tools of an MCP server.
"""

from __future__ import annotations

import abc
from typing import Any

from ..home.graph import Home

__all__ = ["RemoteTools"]


class RemoteTools(list, metaclass=abc.ABCMeta):
    """Tool functions served by another process; :meth:`sync` brings a local Home up to date with it.

    An abstract base: a subclass says how its home catches up, and one that does not cannot be made (as an
    ``abc.ABC`` would refuse it; a ``list`` subclass needs the check in ``__new__``).

    Examples:
        >>> class Far(RemoteTools):
        ...     def sync(self, home):
        ...         home.extra["synced"] = True
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> Far().sync(home); home.extra["synced"]
        True
        >>> RemoteTools()
        Traceback (most recent call last):
        ...
        TypeError: RemoteTools must say how the local home catches up: define sync(home)
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> RemoteTools:
        if cls.__abstractmethods__:
            raise TypeError(f"{cls.__name__} must say how the local home catches up: define sync(home)")
        return super().__new__(cls, *args, **kwargs)

    @abc.abstractmethod
    def sync(self, home: Home) -> None:
        """Bring ``home`` up to date with the remote home (its devices' states, where things are).

        Args:
            home: The run's local copy of the home.
        """
