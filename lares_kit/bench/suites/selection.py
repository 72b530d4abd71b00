"""Choosing tasks for a run: by id or category, shell-style, and a small slice that still covers every category.

``lares bench --tasks`` and ``--limit`` use it; so does a lesson that runs a slice.
"""

from __future__ import annotations

import fnmatch

from .tasks import Task

__all__ = ["select_tasks"]


def select_tasks(tasks: list[Task], patterns: list[str] | None = None, limit: int | None = None) -> list[Task]:
    """The tasks matching any pattern (id or category, shell-style), then at most ``limit`` of them.

    The limit takes the categories in turn (the first task of each, then
    the second, ...), so a small slice still covers every kind of task; the
    result keeps the suites' order. ``limit`` None or 0: no limit.

    Args:
        tasks: The tasks to choose from, in the suites' order.
        patterns: Task ids or categories, shell-style (``"lh-kitchen*"``, ``"search"``); None: every task.
        limit: At most this many tasks, taken category by category; None or 0: no limit.

    Examples:
        >>> from lares_kit.bench import load_tasks
        >>> tasks = load_tasks(["lares-home"])
        >>> [t.id for t in select_tasks(tasks, ["lh-kitchen*"])]
        ['lh-kitchen-on', 'lh-kitchen-and-bedroom']
        >>> picked = select_tasks(tasks, limit=9)
        >>> len(picked), len({t.category for t in picked}) == len({t.category for t in tasks})
        (9, True)
    """
    if patterns:
        tasks = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, p) or fnmatch.fnmatchcase(t.category, p)
                                         for p in patterns)]
    if not limit or limit >= len(tasks):
        return list(tasks)
    by_category: dict[str, list[int]] = {}  # category -> task positions, in order
    for i, task in enumerate(tasks):
        by_category.setdefault(task.category, []).append(i)
    chosen: list[int] = []
    for rank in range(max(len(v) for v in by_category.values())):
        chosen += [v[rank] for v in by_category.values() if rank < len(v)]
    return [tasks[i] for i in sorted(chosen[:limit])]
