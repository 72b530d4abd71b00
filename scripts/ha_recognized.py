"""How many sentences of a Home Assistant dataset Home Assistant's own recognizer matches, home by home.

The offline model's first tier is ``hassil`` with the sentence templates of
``home-assistant-intents``. This script asks that recognizer alone -- no
lares_kit world, no rule -- about every sentence of a dataset in the "assist"
format, with each home's names as Home Assistant would give them: its areas,
their floors and its entities' names (each with its domain). It prints, per
home, how many sentences hassil matches at all, and how many it matches as
the intent the task file is named after (``light_HassTurnOn.yaml``), where a
file's name gives one. Compare the totals with what the offline model passes
(``lares bench --ha-dataset DIR``): what hassil does not match is left to the
hand-written rules, which read English only. ::

    .venv/bin/python scripts/ha_recognized.py lares-mini
    .venv/bin/python scripts/ha_recognized.py ~/home-assistant-datasets/datasets/intents

A home without ``_fixtures.yaml`` has no names to match; its sentences are
counted, as not matched, and the line says so. The counts depend on the
installed ``home-assistant-intents`` (its version is printed): Home Assistant
changes its templates from release to release.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lares_kit.sentences.languages import LanguageError, intents_for  # noqa: E402

FIXTURES = "_fixtures.yaml"
_INTENT_IN_NAME = re.compile(r"(?:^|_)(Hass[A-Za-z]+|Get[A-Z][A-Za-z]+)$")


def slot_lists(fixtures: dict[str, Any]) -> dict[str, Any]:
    """hassil's ``area``, ``floor`` and ``name`` lists from a ``_fixtures.yaml``, as Home Assistant builds them.

    Args:
        fixtures: the decoded ``_fixtures.yaml`` of one home.

    Examples:
        >>> lists = slot_lists({"areas": [{"name": "Kitchen", "id": "k", "floor": "Ground"}],
        ...                     "entities": [{"name": "Ceiling", "id": "light.ceiling", "area": "k"}]})
        >>> [v.text_in.text for v in lists["name"].values], lists["name"].values[0].context
        (['Ceiling'], {'domain': 'light'})
        >>> [v.value_out for v in lists["area"].values], [v.value_out for v in lists["floor"].values]
        (['k'], ['Ground'])
    """
    from hassil.intents import TextChunk, TextSlotList, TextSlotValue

    def slot(values: list[tuple[str, Any, dict[str, Any] | None]]) -> Any:
        return TextSlotList(name=None, values=[TextSlotValue(TextChunk(t), v, c) for t, v, c in values])

    areas, floors, names = [], [], []
    for area in fixtures.get("areas") or []:
        for said in [area.get("name"), *(area.get("aliases") or [])]:
            if said:
                areas.append((str(said), area.get("id", said), None))
        if area.get("floor"):
            floors.append((str(area["floor"]), area["floor"], None))
    for floor in fixtures.get("floors") or []:
        for said in [floor.get("name"), *(floor.get("aliases") or [])]:
            if said:
                floors.append((str(said), floor.get("id", said), None))
    for entity in fixtures.get("entities") or []:
        domain = str(entity.get("id", "")).split(".", 1)[0]
        for said in [entity.get("name"), *(entity.get("aliases") or [])]:
            if said:
                names.append((str(said), entity.get("id", said), {"domain": domain} if domain else None))
    unique = lambda values: list({v[0]: v for v in values}.values())  # noqa: E731 -- one entry a text
    return {"area": slot(unique(areas)), "floor": slot(unique(floors)), "name": slot(unique(names))}


def count_home(folder: Path) -> dict[str, Any]:
    """{sentences, recognized, as_named, named (sentences in files that name an intent), note} for one home.

    Args:
        folder: a folder of task files, with or without its ``_fixtures.yaml``.
    """
    from hassil import recognize_best

    fixtures_file = folder / FIXTURES
    fixtures = yaml.safe_load(fixtures_file.read_text(encoding="utf-8")) if fixtures_file.is_file() else None
    out = {"sentences": 0, "recognized": 0, "as_named": 0, "named": 0, "note": ""}
    intents = lists = None
    if not isinstance(fixtures, dict):
        out["note"] = f"no {FIXTURES}: not read"
    else:
        language = str(fixtures.get("language") or "en")
        try:
            intents, lists = intents_for(language), slot_lists(fixtures)
        except LanguageError as exc:
            out["note"] = str(exc)
    for file in sorted(folder.glob("*.yaml")):
        if file.name.startswith("_"):
            continue
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        wanted = m.group(1) if (m := _INTENT_IN_NAME.search(file.stem)) else None
        for test in data.get("tests") or [] if isinstance(data, dict) else []:
            for sentence in test.get("sentences") or []:
                result = None if intents is None else \
                    recognize_best(str(sentence), intents, slot_lists=lists, language=intents.language)
                out["sentences"] += 1
                out["recognized"] += result is not None
                out["named"] += wanted is not None
                out["as_named"] += result is not None and result.intent.name == wanted
    return out


def homes(root: Path) -> list[Path]:
    """Every folder at or below ``root`` that holds task files (a home), sorted; hidden folders left out.

    Args:
        root: a home or a dataset folder.
    """
    found = {p.parent for p in root.rglob("*.yaml") if not p.name.startswith("_") and p.name != "dataset_card.yaml"
             and not any(part.startswith(".") for part in p.relative_to(root).parts)}
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    """Print the table; 2 when the folder holds no home."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a home (a folder with _fixtures.yaml) or a dataset folder")
    args = parser.parse_args(argv)
    from lares_kit.bench.suites.ha_dataset import ha_dataset_path  # "lares-mini": the dataset lares_kit ships

    args.folder = ha_dataset_path(args.folder)
    folders = homes(args.folder) if args.folder.is_dir() else []
    if not folders:
        print(f"{args.folder}: no task files here or below; name a home or a dataset folder", file=sys.stderr)
        return 2
    print(f"hassil {version('hassil')}, home-assistant-intents {version('home-assistant-intents')}")
    print(f"{'home':<28}{'sentences':>10}{'recognized':>12}{'as its file names':>19}")
    total = dict.fromkeys(("sentences", "recognized", "as_named", "named"), 0)
    for folder in folders:
        counts = count_home(folder)
        for key in total:
            total[key] += counts[key]
        name = folder.relative_to(args.folder).as_posix() if folder != args.folder else folder.name
        named = f"{counts['as_named']}/{counts['named']}" if counts["named"] else "-"
        print(f"{name:<28}{counts['sentences']:>10}{counts['recognized']:>12}{named:>19}"
              + (f"  ({counts['note']})" if counts["note"] else ""))
    share = 100 * total["recognized"] / total["sentences"] if total["sentences"] else 0.0
    named = f"{total['as_named']}/{total['named']}" if total["named"] else "-"
    print(f"{'all':<28}{total['sentences']:>10}{total['recognized']:>12}{named:>19}   recognized: {share:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
