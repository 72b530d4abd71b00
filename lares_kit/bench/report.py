"""Reading a benchmark run: a summary by category, a table, a figure.

Taught in ``notebooks/08_evaluation.ipynb``. :func:`summarize` turns episode
records (:mod:`lares_kit.bench.runner`) into plain numbers per agent, model
and category; :func:`format_table` prints them; :func:`plot` draws success
by category per agent and tokens per solved task (matplotlib is imported
only here, and drawn off screen).

What the columns mean:

* ``success`` -- the share of episodes that passed every check;
* ``steps/oracle`` -- over *solved* episodes, tool calls made divided by the
  oracle's minimum (1.00 is perfect; a search costs more than an agent that
  already knew where the cat is);
* ``llm calls``, ``prompt tok``, ``compl tok``, ``seconds`` -- means per episode;
* ``tok/solved`` (overall rows) -- all tokens spent, solved or not, divided by
  the episodes solved: the price of one success;
* ``collateral`` (only for Home Assistant's tasks, :mod:`lares_kit.bench.ha_dataset`) --
  episodes that changed a device nobody asked about.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import mean
from typing import Any

from .tasks import CATEGORIES

__all__ = ["format_table", "plot", "summarize"]


def _row(records: list[dict[str, Any]]) -> dict[str, Any]:
    solved = [r for r in records if r["success"]]
    ratios = [r["steps"] / r["oracle_steps"] for r in solved if r["oracle_steps"]]
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in records)
    return {
        "episodes": len(records),
        "solved": len(solved),
        "success_rate": round(len(solved) / len(records), 4) if records else 0.0,
        "steps_per_oracle": round(mean(ratios), 3) if ratios else None,
        "llm_calls": round(mean(r["llm_calls"] for r in records), 2),
        "prompt_tokens": round(mean(r["prompt_tokens"] for r in records), 1),
        "completion_tokens": round(mean(r["completion_tokens"] for r in records), 1),
        "seconds": round(mean(r["seconds"] for r in records), 3),
        "tokens_per_solved": round(tokens / len(solved), 1) if solved else None,
        "errors": sum(1 for r in records if r.get("error")),
        # only where Home Assistant's state diff judged: the other suites' summaries stay as they were
        **({"collateral": sum(1 for r in records if r.get("collateral"))} if any("collateral" in r for r in records)
           else {}),
    }


def _category_order(category: str) -> tuple[int, str]:
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (agent, model, category) rows and per (agent, model) totals.

    Args:
        records: Episode records with the result keys (``agent``, ``model``, ``category``, ``success``, ``steps``,
            ``oracle_steps``, tokens...), as a run returns them.

    Examples:
        >>> recs = [{"agent": "a", "model": "m", "category": "direct", "success": s, "steps": 2,
        ...          "oracle_steps": 2, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
        ...          "seconds": 0.1, "error": None} for s in (True, False)]
        >>> s = summarize(recs)
        >>> s["by_category"][0]["success_rate"], s["overall"][0]["tokens_per_solved"]
        (0.5, 220.0)
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    totals: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[(r["agent"], r["model"], r["category"])].append(r)
        totals[(r["agent"], r["model"])].append(r)
    by_category = [{"agent": a, "model": m, "category": c, **_row(groups[(a, m, c)])}
                   for a, m, c in sorted(groups, key=lambda k: (k[0], k[1], _category_order(k[2])))]
    overall = [{"agent": a, "model": m, **_row(totals[(a, m)])} for a, m in sorted(totals)]
    return {"episodes": len(records), "by_category": by_category, "overall": overall}


def _fmt(value: Any, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "pct":
        return f"{100 * value:.0f}%"
    if kind == "ratio":
        return f"{value:.2f}"
    if kind == "int":
        return f"{value:,.0f}"
    return f"{value:.1f}" if kind == "one" else f"{value:.2f}"


COLUMNS = [("category", "category", 19, "text"), ("episodes", "n", 4, "int"), ("success_rate", "success", 8, "pct"),
           ("steps_per_oracle", "steps/oracle", 13, "ratio"), ("llm_calls", "llm calls", 10, "one"),
           ("prompt_tokens", "prompt tok", 11, "int"), ("completion_tokens", "compl tok", 10, "int"),
           ("seconds", "seconds", 8, "two")]


def _cells(row: dict[str, Any]) -> str:
    return "".join(str(row[key]).ljust(w) if kind == "text" else _fmt(row[key], kind).rjust(w + 1)
                   for key, _, w, kind in COLUMNS)


def format_table(summary: dict[str, Any]) -> str:
    """The summary as a fixed-width table: one block per agent and model, a total row each.

    Args:
        summary: What :func:`summarize` returns.

    Examples:
        >>> recs = [{"agent": "a", "model": "m", "category": "direct", "success": True, "steps": 2,
        ...          "oracle_steps": 2, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
        ...          "seconds": 0.1, "error": None}]
        >>> print(format_table(summarize(recs)))  # doctest: +NORMALIZE_WHITESPACE
        agent a, model m
          category          n  success  steps/oracle  llm calls  prompt tok  compl tok  seconds
          direct            1     100%          1.00        2.0         100         10     0.10
          all               1     100%          1.00        2.0         100         10     0.10
          110 tokens per solved task
    """
    lines: list[str] = []
    header = "  " + "".join(title.ljust(w) if kind == "text" else title.rjust(w + 1)
                            for _, title, w, kind in COLUMNS)
    for total in summary["overall"]:
        a, m = total["agent"], total["model"]
        if lines:
            lines.append("")
        lines += [f"agent {a}, model {m}", header.rstrip()]
        rows = [r for r in summary["by_category"] if r["agent"] == a and r["model"] == m]
        lines += ["  " + _cells(row) for row in rows]
        note = (f"   {total['tokens_per_solved']:,.0f} tokens per solved task"
                if total["tokens_per_solved"] is not None else "   nothing solved")
        if "collateral" in total:
            note += f"; {total['collateral']} with collateral damage"
        lines.append("  " + _cells({**total, "category": "all"}) + note)
    return "\n".join(lines)


def plot(summary: dict[str, Any], path: str | None = None) -> Any:
    """Two panels: success by category per agent, and tokens per solved task.

    Saves to ``path`` when given; returns the matplotlib Figure.

    Args:
        summary: What :func:`summarize` returns.
        path: An image file to save the figure to (``.png``, ``.svg``...); None: not saved.

    Examples:
        >>> recs = [{"agent": "a", "model": "m", "category": "direct", "success": True, "steps": 2,
        ...          "oracle_steps": 2, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
        ...          "seconds": 0.1, "error": None}]
        >>> fig = plot(summarize(recs))
        >>> [ax.get_title() for ax in fig.axes]
        ['Success by category', 'Tokens per solved task']
    """
    # The object-oriented Figure needs no pyplot and no display: it saves with
    # the Agg canvas, and Jupyter shows it when it is a cell's last value.
    from matplotlib.figure import Figure

    runs = [(t["agent"], t["model"]) for t in summary["overall"]]
    categories = sorted({r["category"] for r in summary["by_category"]}, key=_category_order)
    fig = Figure(figsize=(13, 4.2))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / max(1, len(runs))
    for n, (agent, model) in enumerate(runs):
        rates = {r["category"]: r["success_rate"] for r in summary["by_category"]
                 if r["agent"] == agent and r["model"] == model}
        xs = [i + (n - (len(runs) - 1) / 2) * width for i in range(len(categories))]
        label = agent if len({m for _, m in runs}) == 1 else f"{agent} / {model}"
        left.bar(xs, [100 * rates.get(c, 0) for c in categories], width, label=label)
    left.set_xticks(range(len(categories)), categories, rotation=20, ha="right")
    left.set_ylabel("episodes solved (%)")
    left.set_ylim(0, 105)
    left.set_title("Success by category")
    left.legend(fontsize="small")
    labels = [a if len({m for _, m in runs}) == 1 else f"{a}\n{m}" for a, m in runs]
    values = [t["tokens_per_solved"] or 0 for t in summary["overall"]]
    right.bar(range(len(runs)), values, color=[f"C{n}" for n in range(len(runs))])
    right.set_xticks(range(len(runs)), labels, rotation=20, ha="right")
    right.set_ylabel("prompt + completion tokens")
    right.set_title("Tokens per solved task")
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=120)
    return fig
