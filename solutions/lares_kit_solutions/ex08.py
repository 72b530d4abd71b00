"""Reference solutions for ``exercises/08_evaluation.ipynb`` (``lares_kit.learn.exercises.loop.ex08``)."""

from lares_kit.bench.judging.checks import CheckResult
from lares_kit.episode_steps import Question

__all__ = ["asks_first", "only_allowed_changed", "by_category"]

# %% q1
import re


def asks_first(episode, pattern):
    """Pass when a question matching pattern was asked before any device changed.

    Args:
        episode: A finished Episode.
        pattern: A regular expression the question must match, in any case, e.g. "day|night".
    """
    for step in episode.tool_calls:
        if isinstance(step, Question) and re.search(pattern, step.question, re.IGNORECASE):
            return CheckResult("asks_first", True, f"The agent asked {step.question!r} before changing anything.")
        if step.after.get("devices"):
            changed = ", ".join(step.after["devices"])
            return CheckResult("asks_first", False, f"{step.call_text} changed {changed} before the agent asked "
                               f"a question matching {pattern!r}.")
    return CheckResult("asks_first", False, f"The agent asked no question matching {pattern!r} "
                       f"(asked: {episode.asked or 'nothing'}).")

# %% q2
import fnmatch


def only_allowed_changed(episode, allowed):
    """Pass when every device that ends in another state than it began matches a pattern of allowed.

    Args:
        episode: A finished Episode, with its true states at the start and the end.
        allowed: Shell-style patterns of device ids that may change, e.g. ``["*-light"]``.
    """
    before, after = episode.initial_state["devices"], episode.final_state["devices"]
    bad = [f"{device} went from {before.get(device)} to {state}" for device, state in after.items()
           if state != before.get(device) and not any(fnmatch.fnmatchcase(device, p) for p in allowed)]
    if bad:
        return CheckResult("unchanged", False, "Changed without being allowed: " + "; ".join(bad) + ".")
    return CheckResult("unchanged", True, "Nothing changed that was not allowed to.")

# %% q3
from statistics import mean


def by_category(results):
    """{category: {"success_rate": share solved, "steps_per_oracle": mean over solved episodes, or None}}.

    Args:
        results: Benchmark rows (dicts) with "category", "success", "steps" and "oracle_steps".
    """
    groups = {}
    for r in results:
        groups.setdefault(r["category"], []).append(r)
    table = {}
    for category, rows in groups.items():
        solved = [r for r in rows if r["success"]]
        table[category] = {
            "success_rate": len(solved) / len(rows),
            "steps_per_oracle": mean(r["steps"] / r["oracle_steps"] for r in solved) if solved else None,
        }
    return table
