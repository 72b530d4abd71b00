"""Tools that live in another process: a list of tool functions whose home is elsewhere.

Taught in ``notebooks/18_a_real_home.ipynb``. A :class:`RemoteTools` is what
``run_agent(tools=...)`` takes as it takes any list of tool functions, and
says the one thing a remote home needs that a local one does not: the run's
local copy of the home catches up with the real one (:meth:`RemoteTools.sync`)
before the prompt is written. :class:`lares_kit.serve.client.McpTools` is one:
the tools of an MCP server.
"""

from __future__ import annotations

from ..home.graph import Home

__all__ = ["RemoteTools"]


class RemoteTools(list):
    """Tool functions served by another process; :meth:`sync` brings a local Home up to date with it.

    Examples:
        >>> class Far(RemoteTools):
        ...     def sync(self, home):
        ...         home.extra["synced"] = True
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> Far().sync(home); home.extra["synced"]
        True
        >>> RemoteTools().sync(home)
        Traceback (most recent call last):
        ...
        NotImplementedError: RemoteTools.sync: a remote home's tools say how the local home catches up
    """

    def sync(self, home: Home) -> None:
        """Bring ``home`` up to date with the remote home (its devices' states, where things are).

        Args:
            home: The run's local copy of the home.
        """
        raise NotImplementedError(f"{type(self).__name__}.sync: a remote home's tools say how the local home "
                                  "catches up")
