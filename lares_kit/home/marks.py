"""Which devices changed since a mark: what each of an agent's calls did, noted as it happens.

An agent loop records what each call changed (``ToolCall.after``): it marks
the home before the call and asks afterwards. Comparing every device's state
before and after costs milliseconds in a 5,000-device building; noting the
changes as :meth:`lares_kit.home.graph.Home.update_device` makes them costs
nothing.

Marks nest. A call that runs a whole sub-agent (SAGE's device agent) marks
once, and the sub-agent marks before each of its own calls; inside
:meth:`Marks.nested` those marks are the inner one's, and the caller's mark
still notes every change, so the caller's step says what the whole sub-agent
changed instead of nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Marks"]


class Marks:
    """The open marks of one home, outermost first: each ``{device id: its state before its first change}``.

    Examples:
        >>> marks = Marks()
        >>> marks.renew()
        >>> with marks.nested():
        ...     marks.renew()
        ...     marks.note("kitchen-light", {"on": False})
        ...     marks.renew()  # the sub-agent's next call
        ...     marks.since()
        {}
        >>> marks.since()
        {'kitchen-light': {'on': False}}
    """

    def __init__(self) -> None:
        self.open: list[dict[str, dict[str, Any]]] = []  # []: not noting

    def renew(self) -> None:
        """Start noting afresh in the innermost mark (opens one if none is open)."""
        self.open[-1:] = [{}]

    def note(self, device_id: str, before: dict[str, Any]) -> None:
        """A device is about to change from ``before``: every open mark keeps its first state since the mark.

        Args:
            device_id: The device about to change.
            before: Its state now (the home replaces the dict on a change, so no copy is needed).
        """
        for marked in self.open:  # one, or two with a sub-agent inside its caller's call
            if device_id not in marked:
                marked[device_id] = before

    def since(self) -> dict[str, dict[str, Any]]:
        """``{device id: state before its first change}`` since the innermost mark (``{}`` if none is open)."""
        return dict(self.open[-1]) if self.open else {}

    @contextmanager
    def nested(self) -> Iterator[None]:
        """Inside, :meth:`renew` and :meth:`since` use a new, inner mark; the ones outside keep noting."""
        self.open.append({})
        try:
            yield
        finally:
            self.open.pop()
