"""Compare two folders of ``lares bench --runs`` records, episode by episode, transcripts included.

A refactor should not change what an agent does; a model or prompt change
shows exactly where it does. Run the benchmark twice into two folders (two
commits, or two settings) and compare::

    lares bench --agent intent-action --runs before/intent-action     # on the old tree
    lares bench --agent intent-action --runs after/intent-action      # on the new one
    .venv/bin/python scripts/compare_runs.py before after

Episodes are matched by who ran what (task, agent, model, seed, knowledge,
tool set, trial) in which configuration (knowledge format, prompt style,
react's executor model, the design's options: ``lares bench --executor-model``,
``--option``...; a record without them ran with the defaults), so two
configurations of one run are never taken for each other, and a run kept as
a journal (``episodes.jsonl``) compares with an older run kept as one file
per episode.

Every record is compared field by field, the episode's steps and calls
included, except the fields that time a run (``seconds``, ``started_at``)
and the code fingerprint. It prints the counts, up to ``--show`` differing
records with the fields that differ, and exits 1 when any record differs or
is missing on one side (0 when all are identical).

Python's string hashing changes with every process: to compare two trees,
give both runs the same ``PYTHONHASHSEED`` if a difference looks random.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

TIMING = frozenset({"seconds", "started_at", "fingerprint"})


def without_timing(value: Any) -> Any:
    """A record with the fields that time a run left out, at any depth.

    Args:
        value: A decoded JSON value.

    Examples:
        >>> without_timing({"task": "t", "seconds": 0.2, "episode": {"steps": [], "started_at": "x"}})
        {'task': 't', 'episode': {'steps': []}}
    """
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def differing_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The keys (``episode.<key>`` inside the episode) whose values differ between two records.

    Args:
        old: A record without its timing fields.
        new: The record to compare it with.

    Examples:
        >>> differing_fields({"success": True, "episode": {"final_message": "a"}},
        ...                  {"success": True, "episode": {"final_message": "b"}})
        ['episode.final_message']
    """
    keys = sorted(set(old) | set(new))
    fields = [k for k in keys if k != "episode" and old.get(k) != new.get(k)]
    first, second = old.get("episode") or {}, new.get("episode") or {}
    fields += [f"episode.{k}" for k in sorted(set(first) | set(second)) if first.get(k) != second.get(k)]
    return fields


def episodes(runs: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Every episode record under a runs folder (journal lines, or an older run's files) by its identity.

    Args:
        runs: A folder written by ``lares bench --runs``.
    """
    from lares_kit.bench.journal import identity_key, load_records

    return {identity_key(r): r for r in load_records(runs)}


def shown(key: tuple[Any, ...]) -> str:
    """An episode's identity as the report names it: its parts joined by ``/``, the unset ones left out.

    Args:
        key: What :func:`lares_kit.bench.journal.identity_key` returns.

    Examples:
        >>> shown(("lh-kitchen-on", "react", "offline", 0, "latest", "lares", 0, None, None, "offline-multi", None))
        'lh-kitchen-on/react/offline/0/latest/lares/0/offline-multi'
    """
    return "/".join(str(part) for part in key if part is not None)


def compare(before: Path, after: Path, show: int = 5, ignore: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    """Compare every record under two folders, episode by episode; (problems, report lines).

    Args:
        before: The folder of the first run's records (``--runs`` of ``lares bench``).
        after: The folder of the second run's records.
        show: How many differing records to name in the report.
        ignore: Record fields left out of the comparison (e.g. fields a newer version added).
    """
    old, new = episodes(before), episodes(after)
    missing, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    lines = [f"records: {len(old)} before, {len(new)} after; {len(missing)} missing after, {len(added)} new"]
    differing = []
    for key in sorted(set(old) & set(new)):
        first, second = without_timing(old[key]), without_timing(new[key])
        for field in ignore:
            first.pop(field, None)
            second.pop(field, None)
        if first != second:
            differing.append(f"  {shown(key)}: {', '.join(differing_fields(first, second))}")
    lines += differing[:show] + ([f"  ... and {len(differing) - show} more"] if len(differing) > show else [])
    lines.append(f"differing records: {len(differing)}")
    return len(differing) + len(missing) + len(added), lines


def main(argv: list[str] | None = None) -> int:
    """The command line; 0 when every record is identical, 1 otherwise, 2 for a folder that is not there.

    Args:
        argv: The arguments (default: the process's).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="folder of the first run's records")
    parser.add_argument("after", type=Path, help="folder of the second run's records")
    parser.add_argument("--show", type=int, default=5, help="how many differing records to name (default 5)")
    parser.add_argument("--ignore", action="append", default=[], metavar="FIELD",
                        help="leave this record field out of the comparison (repeatable)")
    args = parser.parse_args(argv)
    for folder in (args.before, args.after):
        if not folder.is_dir():
            print(f"compare_runs: {folder} is not a folder; give two folders written by lares bench --runs",
                  file=sys.stderr)
            return 2
    problems, lines = compare(args.before, args.after, args.show, tuple(args.ignore))
    print("\n".join(lines))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
