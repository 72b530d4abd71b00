"""How sure a success rate is: the Wilson interval, and pass^k over repeated trials.

Taught in ``notebooks/08_evaluation.ipynb`` (the intervals) and ``notebooks/08b_comparing_agents.ipynb``
(pass^k over repeated trials). A benchmark of 40 tasks that
an agent solves 30 times says "75%", but a second run with another seed
could say 65% or 85%: :func:`wilson_interval` gives the range that holds
the true rate 95 times out of 100 (Wilson's score interval, which stays
inside 0..1 and behaves at 0% and 100%, unlike the textbook ``p +- 1.96 *
sqrt(p(1-p)/n)``).

An agent that solves a task once in four tries has a 25% success rate on
it, and is useless for that task: nobody wants a light switch that works
one time in four. tau-bench's ``pass^k`` measures reliability: run each task
``n`` times; for a task with ``c`` successes, ``pass^k = C(c, k) / C(n, k)``
-- the chance that ``k`` trials drawn from the ``n`` all succeed -- averaged
over the tasks (:func:`pass_hat_k`). pass^1 is the success rate; pass^k
falls with k unless every task is solved every time or never.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["Z95", "pass_hat_k", "pass_hat_curve", "wilson_interval"]

Z95 = 1.959963984540054  # the normal quantile for a two-sided 95% interval


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a success rate: ``(low, high)``, both in 0..1.

    Args:
        successes: How many of the episodes succeeded.
        n: How many episodes there were; 0 gives ``(0.0, 1.0)``, nothing is known.
        z: The normal quantile; the default gives a 95% interval.

    Examples:
        >>> [round(x, 3) for x in wilson_interval(30, 40)]
        [0.598, 0.858]
        >>> wilson_interval(0, 10)[0], round(wilson_interval(10, 10)[1], 6)
        (0.0, 1.0)
    """
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), not {successes}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_hat_k(trials: Iterable[tuple[int, int]], k: int) -> float | None:
    """tau-bench's pass^k: the mean over tasks of ``C(c, k) / C(n, k)``.

    Args:
        trials: One ``(n, c)`` pair per task: trials run, trials that succeeded.
        k: How many trials must all succeed; a task with fewer than ``k`` trials is left out.

    Returns:
        The mean over the tasks with at least ``k`` trials, or None when there is none.

    Examples:
        >>> # task A solved 4 times in 4, B 2 in 4, C never: pass^2 = (1 + 1/6 + 0) / 3
        >>> round(pass_hat_k([(4, 4), (4, 2), (4, 0)], 2), 4)
        0.3889
        >>> pass_hat_k([(4, 4)], 5) is None
        True
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    values = [math.comb(c, k) / math.comb(n, k) for n, c in trials if n >= k]
    return sum(values) / len(values) if values else None


def pass_hat_curve(trials: list[tuple[int, int]]) -> list[float]:
    """pass^1 .. pass^k for the largest k every task reached (the fewest trials of any task).

    Args:
        trials: One ``(n, c)`` pair per task, as for :func:`pass_hat_k`.

    Examples:
        >>> [round(v, 3) for v in pass_hat_curve([(4, 4), (4, 2), (4, 0)])]
        [0.5, 0.389, 0.333, 0.333]
    """
    top = min((n for n, _ in trials), default=0)
    return [pass_hat_k(trials, k) for k in range(1, top + 1)]  # type: ignore[misc]
