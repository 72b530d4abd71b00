"""Reading a benchmark run: a summary by category, a table, a figure.

Taught in ``notebooks/08_evaluation.ipynb``. :func:`summarize` turns episode
records (:mod:`lares_kit.bench.runner`) into plain numbers per agent, model,
configuration (:mod:`lares_kit.bench.configs`: the knowledge mode, executor
model, options... a run compared; its rows' ``configuration``) and category;
:func:`format_table` prints them; :func:`plot` draws success by category per
agent and tokens per solved task (matplotlib is imported
only here, and drawn off screen).

What the columns mean:

* ``success`` -- the share of episodes that passed every check, and its 95%
  Wilson interval (:mod:`lares_kit.bench.stats`);
* ``pass^k`` (with ``--trials``) -- the chance that k trials of a task all
  succeed, averaged over tasks; the JSON summary holds ``pass_hat_k``;
* ``steps/oracle`` -- over *solved* episodes, tool calls made divided by the
  oracle's minimum (1.00 is perfect; a search costs more than an agent that
  already knew where the cat is);
* ``llm calls``, ``prompt tok``, ``compl tok``, ``seconds`` -- means per episode;
* ``tok/solved`` (overall rows) -- all tokens spent, solved or not, divided by
  the episodes solved: the price of one success;
* ``not_understood`` -- episodes that ended with that status: the model said it could not read words of the
  instruction (:mod:`lares_kit.sentences.understood`), instead of acting on a guess;
* ``false_claims`` -- episodes whose final message says of a device what its end state contradicts;
  ``unverifiable`` -- those whose message says something of the home the checker cannot read
  (:mod:`lares_kit.bench.judging.claims`);
* ``collateral`` -- episodes that changed a device the task did not ask
  for (:mod:`lares_kit.bench.judging.collateral`); ``unsafe_rate`` -- episodes with a
  call the safety policy refused, a change the audit found against it, a
  forbidden device touched or a call the task forbids; ``no_action_rate`` --
  of the episodes whose task asks for no change (infeasible, unsafe,
  irrelevant), those that changed nothing at any step -- a light switched on
  and off again is not nothing, though the home ends as it began -- so
  "refuse everything" and "do everything" both show;
* ``steps_per_search_oracle`` -- over solved search episodes, steps divided by
  the knowledge-free oracle's expected count (:mod:`lares_kit.bench.judging.search_oracle`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from statistics import mean
from typing import Any

from .configs import RECORD_FIELDS, configuration_label
from .stats import pass_hat_curve, wilson_interval
from .suites.tasks import CATEGORIES

__all__ = ["format_table", "plot", "summarize"]


def _pass_hat(records: list[dict[str, Any]]) -> list[float]:
    # One (trials, successes) pair per task instance (task and seed): pass^1 .. pass^k
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        pair = counts[(r.get("task", ""), r.get("seed", 0))]
        pair[0] += 1
        pair[1] += bool(r["success"])
    return [round(v, 4) for v in pass_hat_curve([(n, c) for n, c in counts.values()])]


def _unsafe(r: dict[str, Any]) -> bool:
    # a call the policy refused, a change the audit finds against the policy, a forbidden device touched or a
    # call the task forbids
    return bool(r.get("refused") or r.get("unsafe")) or any(
        c["kind"] in ("minefield", "forbidden") and not c["passed"] for c in r.get("checks", []))


def _acted(r: dict[str, Any]) -> bool:
    # a device changed at the end, or by any of the agent's own steps on the way (each step's ``after`` names what
    # that step changed; what other people did meanwhile is the world's doing)
    steps = (r.get("episode") or {}).get("steps") or []
    return bool(r.get("changed")) or any((s.get("after") or {}).get("devices") for s in steps
                                         if isinstance(s, dict) and s.get("kind") != "meanwhile")


def _row(records: list[dict[str, Any]]) -> dict[str, Any]:
    solved = [r for r in records if r["success"]]
    ratios = [r["steps"] / r["oracle_steps"] for r in solved if r["oracle_steps"]]
    searches = [r["steps"] / r["search_oracle"] for r in solved if r.get("search_oracle")]
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in records)
    idle = [r for r in records if r.get("no_change_expected")]
    low, high = wilson_interval(len(solved), len(records))
    return {
        "episodes": len(records),
        "solved": len(solved),
        "success_rate": round(len(solved) / len(records), 4) if records else 0.0,
        "success_interval": [round(low, 4), round(high, 4)],
        "pass_hat_k": _pass_hat(records),
        "steps_per_oracle": round(mean(ratios), 3) if ratios else None,
        "steps_per_search_oracle": round(mean(searches), 3) if searches else None,
        "llm_calls": round(mean(r["llm_calls"] for r in records), 2),
        "prompt_tokens": round(mean(r["prompt_tokens"] for r in records), 1),
        # of the prompt tokens, the share the server said it reused from the episode's previous request
        "cached_share": round(sum(r.get("cached_prompt_tokens", 0) for r in records)
                              / max(1, sum(r["prompt_tokens"] for r in records)), 4),
        "completion_tokens": round(mean(r["completion_tokens"] for r in records), 1),
        "seconds": round(mean(r["seconds"] for r in records), 3),
        "tokens_per_solved": round(tokens / len(solved), 1) if solved else None,
        "errors": sum(1 for r in records if r.get("error")),
        "collateral": sum(1 for r in records if r.get("collateral")),
        # episodes whose model said it did not understand words of the instruction (lares_kit.sentences.understood)
        "not_understood": sum(1 for r in records if r.get("status") == "not_understood"),
        # episodes whose final message the home's end state contradicts, and those it could not be checked against
        # (lares_kit.bench.judging.claims; a record of an older version has neither)
        "false_claims": sum(1 for r in records if r.get("false_claims")),
        "unverifiable": sum(1 for r in records if r.get("unverifiable")),
        "unsafe_rate": round(sum(map(_unsafe, records)) / len(records), 4) if records else 0.0,
        # the tasks whose right answer changes nothing: how often the agent rightly did nothing
        "no_action_episodes": len(idle),
        "no_action_rate": round(sum(1 for r in idle if not _acted(r)) / len(idle), 4) if idle else None,
    }


def _category_order(category: str) -> tuple[int, str]:
    return (CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES), category)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (agent, model, configuration, category) rows and per (agent, model, configuration) totals.

    A row's ``configuration`` is what its records say of theirs (:data:`~lares_kit.bench.configs.RECORD_FIELDS`),
    left out when they say nothing: the knowledge mode only when the run had another than ``latest``.

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
    # The knowledge mode names a block only when the run had another than the default (every record has one).
    modes = {r.get("knowledge", "latest") for r in records}
    shown = [k for k in RECORD_FIELDS if k != "knowledge" or modes - {"latest"}]
    configs: dict[str, dict[str, Any]] = {}  # the configurations, as text -> as data, in the records' order
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    totals: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        config = {k: r[k] for k in shown if k in r}
        key = json.dumps(config, sort_keys=True, default=repr)
        configs.setdefault(key, config)
        groups[(r["agent"], r["model"], key, r["category"])].append(r)
        totals[(r["agent"], r["model"], key)].append(r)
    order = {key: n for n, key in enumerate(configs)}

    def named(a: str, m: str, key: str) -> dict[str, Any]:
        return {"agent": a, "model": m, **({"configuration": configs[key]} if configs[key] else {})}

    by_category = [{**named(a, m, key), "category": c, **_row(groups[(a, m, key, c)])}
                   for a, m, key, c in sorted(groups, key=lambda k: (k[0], k[1], order[k[2]], _category_order(k[3])))]
    overall = [{**named(a, m, key), **_row(totals[(a, m, key)])}
               for a, m, key in sorted(totals, key=lambda k: (k[0], k[1], order[k[2]]))]
    trials = max((r.get("trial", 0) + 1 for r in records), default=1)
    return {"episodes": len(records), "trials": trials, "by_category": by_category, "overall": overall}


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
           ("success_interval", "95% interval", 13, "interval"), ("steps_per_oracle", "steps/oracle", 13, "ratio"),
           ("llm_calls", "llm calls", 10, "one"), ("prompt_tokens", "prompt tok", 11, "int"),
           ("cached_share", "cached", 7, "pct"),
           ("completion_tokens", "compl tok", 10, "int"), ("seconds", "seconds", 8, "two")]
PASS_COLUMNS = 8  # pass^1 .. pass^8 in the table; the JSON summary holds every k


def _cell(value: Any, kind: str) -> str:
    if kind == "interval":
        return f"{100 * value[0]:.0f}-{100 * value[1]:.0f}%"
    return _fmt(value, kind)


def _cells(row: dict[str, Any], trials: int) -> str:
    text = "".join(str(row[key]).ljust(w) if kind == "text" else _cell(row[key], kind).rjust(w + 1)
                   for key, _, w, kind in COLUMNS)
    passes = row["pass_hat_k"][:PASS_COLUMNS] if trials > 1 else []
    return text + "".join(f"{100 * p:.0f}%".rjust(8) for p in passes)


# Models whose every reply follows from the request alone: their trials cannot differ.
DETERMINISTIC = ("offline", "offline-multi")


def _notes(total: dict[str, Any], trials: int) -> list[str]:
    m = total["model"]
    lines = [f"{total['tokens_per_solved']:,.0f} tokens per solved task" if total["tokens_per_solved"] is not None
             else "nothing solved"]
    lines.append(f"{total['collateral']} episode(s) with collateral damage; unsafe actions (refused, forbidden or "
                 f"against the policy) in {100 * total['unsafe_rate']:.0f}% of episodes")
    lines.append(f"{total['not_understood']} episode(s) ended not_understood (the model said it could not read "
                 "words of the instruction)")
    lines.append(f"{total['false_claims']} episode(s) whose final message makes a claim the home contradicts; "
                 f"{total['unverifiable']} the checker could not read (lares_kit.bench.judging.claims)")
    if total["no_action_rate"] is not None:
        lines.append(f"did rightly nothing in {100 * total['no_action_rate']:.0f}% of the "
                     f"{total['no_action_episodes']} episode(s) whose task asks for no change")
    if total["steps_per_search_oracle"] is not None:
        lines.append(f"searches: {total['steps_per_search_oracle']:.2f} x the knowledge-free oracle's expected steps "
                     "(solved episodes)")
    if trials > 1 and m in DETERMINISTIC:
        lines.append(f"the {m} model is deterministic: its {trials} trials are identical by construction, so "
                     "pass^k = pass^1; the chaos model or a real model makes them differ")
    elif trials > 1:
        lines.append(f"pass^k over {trials} trials: every one of k trials of a task succeeds (tau-bench's pass^k)")
    return [f"   {line}" for line in lines]


def format_table(summary: dict[str, Any]) -> str:
    """The summary as a fixed-width table: one block per agent, model and configuration, a total row each, then notes.

    With several trials, pass^1 .. pass^k follow each row (up to pass^8).

    Args:
        summary: What :func:`summarize` returns.

    Examples:
        >>> recs = [{"task": "t", "agent": "a", "model": "m", "category": "direct", "success": True, "steps": 2,
        ...          "oracle_steps": 2, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
        ...          "seconds": 0.1, "error": None}]
        >>> print(format_table(summarize(recs)))  # doctest: +NORMALIZE_WHITESPACE
        agent a, model m
          category               n  success  95% interval  steps/oracle  llm calls  prompt tok  cached  compl tok
          seconds
          direct                 1     100%       21-100%          1.00        2.0         100      0%         10
          0.10
          all                    1     100%       21-100%          1.00        2.0         100      0%         10
          0.10
           110 tokens per solved task
           0 episode(s) with collateral damage; unsafe actions (refused, forbidden or against the policy) in 0% of
           episodes
           0 episode(s) ended not_understood (the model said it could not read words of the instruction)
           0 episode(s) whose final message makes a claim the home contradicts; 0 the checker could not read
           (lares_kit.bench.judging.claims)
    """
    trials = summary.get("trials", 1)
    lines: list[str] = []
    header = "  " + "".join(title.ljust(w) if kind == "text" else title.rjust(w + 1)
                            for _, title, w, kind in COLUMNS)
    header += "".join(f"pass^{k}".rjust(8) for k in range(1, min(trials, PASS_COLUMNS) + 1)) if trials > 1 else ""
    for total in summary["overall"]:
        if lines:
            lines.append("")
        lines += [_title(total), header.rstrip()]
        rows = [r for r in summary["by_category"] if _block(r) == _block(total)]
        lines += ["  " + _cells(row, trials) for row in rows]
        lines.append("  " + _cells({**total, "category": "all"}, trials))
        lines += _notes(total, trials)
    return "\n".join(lines)


def _block(row: dict[str, Any]) -> tuple[str, str, str]:
    # which block a summary row belongs to: its agent, model and configuration
    return row["agent"], row["model"], json.dumps(row.get("configuration", {}), sort_keys=True, default=repr)


def _title(total: dict[str, Any]) -> str:
    # "agent react, model offline, executor model offline-multi, parser naive"
    label = configuration_label(total.get("configuration", {}))
    head = f"agent {total['agent']}, model {total['model']}"
    return head + ("" if not label else f" {label}" if label.startswith("(") else f", {label}")


def plot(summary: dict[str, Any], path: str | None = None) -> Any:
    """Success by category per agent (with 95% intervals), tokens per solved task, and pass^k with several trials.

    Saves to ``path`` when given; returns the matplotlib Figure.

    Args:
        summary: What :func:`summarize` returns.
        path: An image file to save the figure to (``.png``, ``.svg``...); None: not saved.

    Examples:
        >>> recs = [{"task": "t", "agent": "a", "model": "m", "category": "direct", "success": True, "steps": 2,
        ...          "oracle_steps": 2, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
        ...          "seconds": 0.1, "error": None, "trial": n} for n in range(3)]
        >>> fig = plot(summarize(recs))
        >>> [ax.get_title() for ax in fig.axes]
        ['Success by category', 'Tokens per solved task', 'pass^k over 3 trials']
    """
    # The object-oriented Figure needs no pyplot and no display: it saves with
    # the Agg canvas, and Jupyter shows it when it is a cell's last value.
    from matplotlib.figure import Figure

    runs = [(t["agent"], t["model"]) for t in summary["overall"]]
    configs = [configuration_label(t.get("configuration", {}), own=False) for t in summary["overall"]]
    trials = summary.get("trials", 1)
    categories = sorted({r["category"] for r in summary["by_category"]}, key=_category_order)
    fig = Figure(figsize=(15 if trials > 1 else 13, 4.4))
    ratios = [3, 1, 1.3] if trials > 1 else [3, 1]
    axes = fig.subplots(1, len(ratios), gridspec_kw={"width_ratios": ratios})
    left, right = axes[0], axes[1]
    width = 0.8 / max(1, len(runs))
    one_model = len({m for _, m in runs}) == 1
    names = [(a if one_model else f"{a} / {m}") + (f", {c}" if c else "") for (a, m), c in zip(runs, configs)]
    labels = ["\n".join(p for p in (a, None if one_model else m, c) if p) for (a, m), c in zip(runs, configs)]
    for n, total in enumerate(summary["overall"]):
        rows = {r["category"]: r for r in summary["by_category"] if _block(r) == _block(total)}
        xs = [i + (n - (len(runs) - 1) / 2) * width for i in range(len(categories))]
        rates = [100 * rows[c]["success_rate"] if c in rows else 0 for c in categories]
        spans = [rows[c].get("success_interval", [rows[c]["success_rate"]] * 2) if c in rows else [0, 0]
                 for c in categories]
        errors = [[max(0.0, r - 100 * lo) for r, (lo, _) in zip(rates, spans)],
                  [max(0.0, 100 * hi - r) for r, (_, hi) in zip(rates, spans)]]
        left.bar(xs, rates, width, yerr=errors, capsize=2, error_kw={"elinewidth": 0.8, "alpha": 0.6},
                 label=names[n])
    left.set_xticks(range(len(categories)), categories, rotation=20, ha="right")
    left.set_ylabel("episodes solved (%), with 95% intervals")
    left.set_ylim(0, 124)  # the band above 100% holds the legend, clear of the bars
    left.set_yticks(range(0, 101, 20))
    left.set_title("Success by category")
    wide = max((len(n) for n in names), default=0)  # long names (a configuration each) take fewer columns
    left.legend(fontsize="small", loc="upper center", ncol=max(1, min(len(runs), 3, 100 // max(1, wide))),
                frameon=False)
    values = [t["tokens_per_solved"] or 0 for t in summary["overall"]]
    right.bar(range(len(runs)), values, color=[f"C{n}" for n in range(len(runs))])
    right.set_xticks(range(len(runs)), labels, rotation=20, ha="right")
    right.set_ylabel("prompt + completion tokens")
    right.set_title("Tokens per solved task")
    if trials > 1:
        curve = axes[2]
        for n, total in enumerate(summary["overall"]):
            ks = range(1, len(total["pass_hat_k"]) + 1)
            curve.plot(ks, [100 * p for p in total["pass_hat_k"]], marker="o", color=f"C{n}", label=labels[n])
        curve.set_xticks(range(1, trials + 1))
        curve.set_xlabel("k (trials that must all succeed)")
        curve.set_ylabel("pass^k (%)")
        curve.set_ylim(0, 105)
        curve.set_title(f"pass^k over {trials} trials")
        curve.legend(fontsize="small", loc="lower left")
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=120)
    return fig
