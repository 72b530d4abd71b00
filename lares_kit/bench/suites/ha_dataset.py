"""Home Assistant's evaluation datasets as lares_kit suites: each home a world, each sentence a task.

Taught in ``notebooks/17_home_assistant.ipynb``; the format and the commands are in
``docs/ha_datasets.md``. The ``home-assistant-datasets`` project's "assist" format: a **home** is
a folder with a ``_fixtures.yaml`` (its areas, devices and entities; :mod:`lares_kit.bench.suites.ha_fixtures`
makes it a world) and task files ``*.yaml``, each with a ``category`` and ``tests``::

    category: lights
    tests:
      - sentences: [turn on the desk lamp, desk lamp on please]
        setup: {light.desk_lamp: {state: "off"}}
        expect_changes: {light.desk_lamp: {state: "on"}}
        ignore_changes: {light.desk_lamp: [brightness]}
        expect_response: [on]          # or a string

A **dataset** is a folder of homes (up to :data:`FOLDER_DEPTH` folders down) beside a
``dataset_card.yaml`` (whose ``name`` names the suite; ids and file names made from it are cut to
:data:`ID_AT_MOST` characters). Every sentence is one :class:`~lares_kit.bench.suites.tasks.Task` that
carries its home (``Task.world_data``: no file under ``worlds/`` is written or needed). Its set-up
is HA's ``setup`` in lares_kit's terms; its checks are Home Assistant's
(:mod:`lares_kit.bench.judging.ha_diff`): the whole-home state diff, in which any change not asked for fails
the task and is named as collateral damage in the record, and the words of ``expect_response``. The
simulated user gives no answers: HA's harness has one turn.

:func:`load_ha_dataset` reads a home or a dataset; :func:`import_ha` writes it as world files and a
suite file that ``lares bench --suite`` runs; :func:`ha_oracle_steps` is the oracle's count for such
a task (the fewest Lares tool calls, by the usual search, where lares_kit's tools can make the change).
"""

from __future__ import annotations

import copy
import hashlib
import os
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from ...errors import LaresError, brief, clip
from ...files.reading import path_kind, read_data_file
from ...home.devices import attributes_of
from ...home.graph import Home
from ...home.worlds import WorldError, parse_world
from ..judging.ha_diff import HA_KEYS, entity_change, entity_ids, ha_update, parse_ha_expect
from ..judging.oracle import OracleError, oracle_steps
from ..scene import set_stage
from .ha_fixtures import HADatasetError, fixtures_world, ha_attributes, slug, unique_id
from .tasks import ID_PATTERN, Expect, Setup, Task, UserScript, load_suite
from .validate import Validator

__all__ = ["BUNDLED", "CARD", "FIXTURES", "HADataset", "HADatasetError", "ha_dataset_path", "ha_oracle_steps",
           "import_ha", "load_ha_dataset"]

FIXTURES = "_fixtures.yaml"
CARD = "dataset_card.yaml"
TEST_KEYS = {"sentences", "setup", "context_device", *HA_KEYS}
ID_AT_MOST = 90  # characters of a task or world id; a longer one is cut and a short hash of it added
FOLDER_DEPTH = 16  # folders below DIR searched for homes; the public datasets put theirs one or two down
FOLDERS_AT_MOST = 20_000  # folders searched at most


# The datasets that ship inside lares_kit (lares_kit/data/ha/), found by name wherever the package is installed.
BUNDLED = ("lares-mini",)


def ha_dataset_path(path_or_name: str | os.PathLike) -> Path:
    """The folder a dataset argument names: the path itself, else a dataset shipped with lares_kit by its name.

    A folder of that name in the working folder wins, so a learner's own copy of ``lares-mini`` is read there.

    Args:
        path_or_name: A home or dataset folder, or the name of a bundled dataset (:data:`BUNDLED`).

    Examples:
        >>> ha_dataset_path("lares-mini").parts[-3:]
        ('data', 'ha', 'lares-mini')
        >>> str(ha_dataset_path("datasets/assist-mini"))
        'datasets/assist-mini'
    """
    path = Path(path_or_name)
    if str(path_or_name) in BUNDLED and path_kind(path) == "missing":
        return Path(str(resources.files("lares_kit").joinpath("data", "ha", str(path_or_name))))
    return path


class HADataset(NamedTuple):
    """A home or a dataset, read: its worlds by id and its tasks, in file order."""

    worlds: dict[str, Home]
    tasks: list[Task]


def _check_root(root: Path) -> None:
    kind = path_kind(root)
    if kind != "folder":
        what = {"missing": "folder not found", "file": "this is a file"}.get(kind, "not a folder")
        raise HADatasetError(str(root), "", f"{what}; name a home (a folder with {FIXTURES}) or a dataset (a folder "
                             "of homes)")


def _homes(root: Path) -> tuple[str, list[Path]]:
    # (the suite's name, the home folders): DIR itself, or every folder with a _fixtures.yaml under it
    _check_root(root)
    if path_kind(root / FIXTURES) != "missing":  # a pipe or a folder of that name too: the reader says what it is
        return root.resolve().name, [root]
    homes = sorted(_home_folders(root))
    if not homes:
        raise HADatasetError(str(root), "", f"no {FIXTURES} here or in the folders below; name a home (a folder "
                             f"with {FIXTURES} and task files) or a dataset (a folder of homes beside a {CARD})")
    name = root.resolve().name
    if path_kind(root / CARD) != "missing":
        card = read_data_file(root / CARD, HADatasetError)
        if isinstance(card, dict) and isinstance(card.get("name"), str) and card["name"].strip():
            name = card["name"]
    return name, homes


def _home_folders(root: Path) -> list[Path]:
    # Every folder under root holding a _fixtures.yaml, found with a stack, not recursion (a folder tree 1,100
    # deep must be a sentence, not a RecursionError); hidden folders (.git...) and links to folders are not
    # entered, and the search stops at FOLDER_DEPTH levels and FOLDERS_AT_MOST folders (DIR named / by mistake).
    found, stack, seen = [], [(root, 0)], 0
    while stack:
        folder, depth = stack.pop()
        seen += 1
        if seen > FOLDERS_AT_MOST:
            raise HADatasetError(str(root), "", f"more than {FOLDERS_AT_MOST:,} folders under it; name the dataset's "
                                 "own folder (the one beside its dataset_card.yaml) or a home")
        try:
            with os.scandir(folder) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError as exc:
            raise HADatasetError(str(folder), "", f"cannot be read ({exc.strerror or type(exc).__name__})") from None
        for entry, is_folder in listed:
            if entry == FIXTURES:
                found.append(folder)
            elif is_folder and not entry.startswith("."):  # not into .git and such
                if depth + 1 > FOLDER_DEPTH:
                    raise HADatasetError(str(root), "", f"its folders are nested more than {FOLDER_DEPTH} deep, "
                                         "and homes sit a few folders down at most; name the dataset's own folder "
                                         "or a home")
                stack.append((folder / entry, depth + 1))
    return found


def _short_id(text: str) -> str:
    # slug(text), cut to ID_AT_MOST characters with a short hash of the whole text: ids become file names
    # (a world file, the suite file), and a 5,000-character dataset name must still make a name the system takes
    base = slug(text)
    if len(base) <= ID_AT_MOST:
        return base
    return base[:ID_AT_MOST - 7].rstrip("-") + "-" + hashlib.sha256(text.encode()).hexdigest()[:6]


def load_ha_dataset(path: str | os.PathLike) -> HADataset:
    """Read a Home Assistant "assist" home or dataset: a world per home, a task per sentence.

    Args:
        path: A home (a folder with ``_fixtures.yaml`` and task files) or a dataset (a folder of homes,
            e.g. a clone's ``datasets/assist-mini``), or ``lares-mini``, the small dataset lares_kit ships.

    Examples:
        >>> worlds, tasks = load_ha_dataset("lares-mini")
        >>> len(worlds) >= 2, tasks[0].world in worlds, tasks[0].suite
        (True, True, 'lares-mini')
        >>> load_ha_dataset("no/such/folder")
        Traceback (most recent call last):
        ...
        lares_kit.bench.suites.ha_fixtures.HADatasetError: no/such/folder: folder not found; name a home ...
    """
    _, worlds, _, tasks = _read(ha_dataset_path(path))
    return HADataset(worlds, tasks)


def _read(root: Path) -> tuple[str, dict[str, Home], dict[str, dict[str, Any]], list[Task]]:
    # (the suite's name, the worlds, their world files' data, the tasks)
    name, homes = _homes(root)
    worlds: dict[str, Home] = {}
    datas: dict[str, dict[str, Any]] = {}
    tasks: list[Task] = []
    ids: set[str] = set()
    for folder in homes:
        rel = folder.relative_to(root).as_posix() if folder != root else ""
        world_id = _short_id(f"{name}-{rel}" if rel else name)
        while world_id in worlds:
            world_id += "-x"
        source = str(folder / FIXTURES)
        data = fixtures_world(read_data_file(folder / FIXTURES, HADatasetError), source, world_id, rel or name)
        try:
            home = parse_world(copy.deepcopy(data), source)  # the tasks keep `data`, which the home never touches
        except WorldError as exc:  # a language HA knows and lares_kit does not, say
            raise HADatasetError(source, exc.key_path, f"cannot become a lares_kit world: {exc.message}") from None
        worlds[world_id], datas[world_id] = home, data
        for file in sorted(folder.glob("*.yaml")):
            if not file.name.startswith("_") and file.name != CARD:
                tasks += _task_file(file, home, data, _short_id(name), ids)
    return name, worlds, datas, tasks


def _category(v: Validator, top: dict[str, Any]) -> str:
    raw = top.get("category")
    if isinstance(raw, list) and raw:  # HA lets a file name several; the first is the one reported
        raw = raw[0]
    v.expect(isinstance(raw, str) and bool(ID_PATTERN.match(slug(raw))), "category",
             f"expected the tests' category, a word such as light or media-player, got {brief(raw)}")
    return slug(raw)


def _task_id(world: str, stem: str, sentence: str, ids: set[str]) -> str:
    base = slug(f"{world}-{stem}-{sentence}")
    if len(base) > ID_AT_MOST:  # the hash of the sentence alone, as before: task ids stay what they were
        base = base[:ID_AT_MOST - 7].rstrip("-") + "-" + hashlib.sha256(sentence.encode()).hexdigest()[:6]
    return unique_id(base, ids)


def _task_file(path: Path, home: Home, world: dict[str, Any], suite: str, ids: set[str]) -> list[Task]:
    v = Validator(str(path), HADatasetError, home)
    top = v.mapping(read_data_file(path, HADatasetError), "")
    for name in top:
        v.expect(name in ("category", "tests"), v.key("", name), f"unknown key {brief(name)}; a task file has "
                 "category and tests")
    category = _category(v, top)
    by_entity = {eid: home.devices[dev_id] for dev_id, eid in entity_ids(home).items()}
    tasks = []
    for n, raw in enumerate(v.list(top.get("tests"), "tests")):
        key = f"tests[{n}]"
        entry = v.mapping(raw, key)
        for name in entry:
            v.expect(name in TEST_KEYS, v.key(key, name), f"unknown key {brief(name)}; a test has "
                     + ", ".join(sorted(TEST_KEYS)))
        sentences = v.list(entry.get("sentences"), f"{key}.sentences")
        v.expect(bool(sentences), f"{key}.sentences", "expected at least one sentence")
        for m, sentence in enumerate(sentences):
            v.expect(isinstance(sentence, str) and sentence.strip() != "", f"{key}.sentences[{m}]",
                     f"expected a sentence, got {brief(sentence)}")
        states = {}
        for eid, change in v.mapping(entry.get("setup") or {}, f"{key}.setup").items():
            at = v.key(f"{key}.setup", eid)
            v.expect(eid in by_entity, at, f"no entity {brief(eid)} in this home's {FIXTURES}")
            dev, domain = by_entity[eid], eid.split(".", 1)[0]
            update = ha_update(dev.type, domain, dev.state, _ha_names(domain, entity_change(v, change, at, domain)))
            states[dev.id] = {k: value for k, value in update.items() if dev.state.get(k) != value}
        expect = Expect(finished=False, unchanged=False, ha=parse_ha_expect(v, entry, key, set(by_entity)))
        for eid, change in expect.ha.changes.items():
            _ha_names(eid.split(".", 1)[0], change)
        setup = {dev: s for dev, s in states.items() if s}
        room = None
        if "context_device" in entry:  # the voice satellite that heard the sentence: the person is in its room
            satellites = world.get("ha_devices") or {}
            device = entry["context_device"]
            v.expect(isinstance(device, str) and device in satellites, f"{key}.context_device",
                     f"expected the id of a device with an area in this home's {FIXTURES}, got {brief(device)}")
            room = satellites[device]
        for sentence in sentences:
            tasks.append(Task(_task_id(home.id, path.stem, sentence, ids), suite, home.id, category, sentence.strip(),
                              Setup(states={d: dict(s) for d, s in setup.items()}, room=room),
                              UserScript(otherwise=None), expect,
                              notes=f"{path.parent.name}/{path.name}, tests[{n}]", source=str(path), world_data=world))
    return tasks


def _ha_names(domain: str, change: dict[str, Any]) -> dict[str, Any]:
    # a change's attributes under the names HA reports (synthetic-home's native_value... read too); in place
    if "attributes" in change:
        state, change["attributes"] = ha_attributes(domain, change.get("state"), change["attributes"], default=False)
        if state is not None:
            change["state"] = state
    return change


def ha_oracle_steps(task: Task, world: Home, seed: int = 0) -> int:
    """The oracle's count for a Home Assistant task: the fewest Lares tool calls that make its changes, and the reply.

    The expected changes become the usual ``states`` (with ``unchanged``) and the breadth-first
    oracle (:func:`lares_kit.bench.judging.oracle.oracle_steps`) counts the calls. A change Lares's tools
    cannot make (a to-do item, an attribute lares_kit does not model) is counted as one call per
    entity, plus the reply.

    Args:
        task: A task with ``expect.ha``.
        world: Its home as loaded; it is copied, never changed.
        seed: The set-up's seed (only a set-up that shuffles items uses it).

    Examples:
        >>> data = load_ha_dataset("lares-mini")
        >>> task = next(t for t in data.tasks if t.instruction == "turn on the kitchen light")
        >>> ha_oracle_steps(task, data.worlds[task.world])
        2
    """
    scene = set_stage(task, world, seed)
    by_entity = {eid: dev_id for dev_id, eid in entity_ids(scene.home).items()}
    estimate = len(task.expect.ha.changes) + 1
    states = {}
    for eid, change in task.expect.ha.changes.items():
        dev = scene.home.devices.get(by_entity.get(eid, ""))
        if dev is None:
            return estimate
        start = scene.start[dev.id]
        wanted = {k: v for k, v in ha_update(dev.type, eid.split(".")[0], start, change).items() if start.get(k) != v}
        specs = attributes_of(dev.type, dev.capabilities)
        if any(k not in specs or specs[k].read_only for k in wanted):
            return estimate
        if wanted:
            states[dev.id] = wanted
    ignored = [by_entity[e] for e in task.expect.ha.ignore if e in by_entity]
    try:
        return oracle_steps(replace(task, expect=Expect(states=states, allow_changes=ignored, finished=False)), world,
                            seed)
    except OracleError:
        return estimate


def _suite_entry(task: Task, world_file: str) -> dict[str, Any]:
    ha = task.expect.ha
    expect: dict[str, Any] = {"finished": False, "unchanged": False, "ha": {"expect_changes": ha.changes}}
    if ha.ignore:
        expect["ha"]["ignore_changes"] = ha.ignore
    if ha.response:
        expect["ha"]["expect_response"] = ha.response
    entry: dict[str, Any] = {"id": task.id, "world": world_file, "category": task.category,
                             "instruction": task.instruction}
    if task.setup.states or task.setup.room:
        entry["setup"] = {**({"states": task.setup.states} if task.setup.states else {}),
                          **({"room": task.setup.room} if task.setup.room else {})}
    return {**entry, "user": {"otherwise": None}, "expect": expect, "notes": task.notes}


def import_ha(path: str | os.PathLike, out_dir: str | os.PathLike) -> list[Path]:
    """Write a Home Assistant home or dataset as lares_kit world files and one suite file; return their paths.

    The worlds go to ``out_dir/<world>.yaml`` and the suite to ``out_dir/tasks/<dataset>.yaml``, whose
    tasks name their worlds by a path relative to it: ``lares bench --suite out_dir/tasks/<dataset>.yaml``
    runs it, and ``LARES_WORLDS=out_dir`` makes the ids known to ``lares run --world``. Every file is
    written into a hidden folder in ``out_dir`` first and the suite read back from there, so what is
    written is known to load, and a failure leaves no file behind; then they are moved into place.

    Args:
        path: A home or a dataset, as :func:`load_ha_dataset` reads it.
        out_dir: The folder to write into (made if missing; files of the same names are replaced).

    Examples:
        >>> import tempfile
        >>> written = import_ha("lares-mini", tempfile.mkdtemp())
        >>> [p.parent.name for p in written][-1], written[-1].name
        ('tasks', 'lares-mini.yaml')
        >>> import_ha("lares-mini", "pyproject.toml")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: cannot import into pyproject.toml: it is a file, not a folder; name a folder \
with --out DIR (it is made if missing)
    """
    from ...files.yamldata import dump_yaml

    out, root = Path(out_dir), ha_dataset_path(path)
    _check_root(root)
    _check_out(out, out / "tasks")  # before reading the dataset: a wrong --out is known at once
    name, _, datas, tasks = _read(root)
    if not tasks:
        raise HADatasetError(str(path), "", "no task file here holds a test with sentences; nothing to import")
    suite_id = _short_id(name)
    files = {f"{world_id}.yaml": dump_yaml(data, width=110) for world_id, data in datas.items()}
    suite = {"suite": suite_id, "description": f"Home Assistant's {clip(name, 200)}, imported by lares_kit "
             f"({len(tasks)} sentences; judged by Home Assistant's state diff and response words)",
             "tasks": [_suite_entry(t, f"../{t.world}.yaml") for t in tasks]}
    files[f"tasks/{suite_id}.yaml"] = dump_yaml(suite, width=110)
    _check_out(out, *(out / rel for rel in files))
    return _write_all(out, files)


def _check_out(out: Path, *targets: Path) -> None:
    # --out must be (or become) a folder, and each file to write there must be writable
    from ...files.atomic import unwritable

    problem = unwritable(out, folder=True)
    if problem is not None:
        raise LaresError(f"cannot import into {clip(str(out), 300)}: {problem}; name a folder with --out DIR (it is "
                         "made if missing)")
    for target in targets:
        problem = unwritable(target, folder=target.name == "tasks")
        if problem is not None:
            raise LaresError(f"cannot write {clip(str(target), 300)}: {problem}; move it away or name another "
                             "folder with --out DIR")


def _write_all(out: Path, files: dict[str, str]) -> list[Path]:
    # Write every file into a hidden folder inside out, read the suite back from there, then move them in:
    # nothing half-imported is left in out if anything fails, and out itself is removed if this made it.
    import shutil
    import tempfile

    from ...files.atomic import write_atomic

    made = [p for p in (out, *out.parents) if path_kind(p) == "missing"]
    staging = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".lares-import-", dir=out))
        for rel, text in files.items():
            write_atomic(staging / rel, text)
        load_suite(staging / rel)  # the suite, written last: what was written loads, or the TaskError says why
        (out / "tasks").mkdir(exist_ok=True)
        for rel in files:
            os.replace(staging / rel, out / rel)
    except OSError as exc:
        raise LaresError(f"cannot write into {clip(str(out), 300)} ({exc.strerror or type(exc).__name__}); name a "
                         "folder that can be written with --out DIR") from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # what this made, if nothing is in it (after a failure)
            try:
                folder.rmdir()
            except OSError:
                break
    return [out / rel for rel in files]
