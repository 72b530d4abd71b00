"""Benchmark tasks: the suite files in ``worlds/tasks/``, loaded and validated.

Taught in ``notebooks/08_evaluation.ipynb``; the format is documented in ``worlds/tasks/README.md``. A suite
file holds a list of tasks; each task has an instruction for a world, an optional set-up, what happens while the
agent works (``during``, :mod:`lares_kit.home.during`), a simulated user and the checks its episode must pass. A bad
file raises :class:`TaskError`, whose message names the file, the key path and what was expected -- like
:class:`~lares_kit.home.worlds.WorldError` for world files. A task names its world file (a path may be relative to the
suite file), or brings its own world (``Task.world_data``, :mod:`lares_kit.bench.suites.ha_dataset`): :func:`task_home`.
This module only reads tasks: :mod:`lares_kit.bench.scene` sets up a home for one, :mod:`lares_kit.bench.judging.checks`
judges an episode.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DataFileError, brief
from ...files.lookup import FileKind, files_by_id, read_by_id_or_path
from ...home.during import parse_during
from ...home.graph import Home
from ...home.worlds import WORLD_FILES, WorldError, load_world, parse_world
from ..events import parse_events
from ..judging.ha_diff import HA_KEYS, HAExpect, entity_ids, parse_ha_expect
from .validate import Validator

__all__ = ["CATEGORIES", "Expect", "Forbidden", "Setup", "Task", "TaskError", "UserScript", "load_suite",
           "load_tasks", "parse_suite", "suite_paths", "task_home"]

# The categories of the home suites, in the order tables list them; the papers' categories follow
# in the same format.
CATEGORIES = ("direct", "multi-device", "search", "clarification", "infeasible", "unsafe", "conversation",
              "contradiction", "changing-home",
              # the smart-building paper's six: daily conversation is "conversation" above
              "intent-recognition", "reasoning", "multi-task", "memory", "rejection",
              # SAGE's; its "simple" direct commands are "direct" above
              "personalization", "intent-resolution", "device-resolution", "persistence", "command-chaining")


class TaskError(DataFileError):
    """A task file is not valid. ``str()`` names the file, the key path and what was expected."""


@dataclass
class Setup:
    """How the home differs from its world file when the episode starts."""

    shuffle: bool = False  # hide the movable items at random rooms, chosen by the seed
    placements: dict[str, str] = field(default_factory=dict)  # item id -> room id (after shuffling)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)  # device id -> state updates
    robot: str | None = None  # the robot's starting room, if not the world's
    time_of_day: str | None = None  # "04:00", "evening"...: starts the home's clock; fills {time_of_day} in answers
    user: str | None = None  # who gives the instruction, for the user's answers
    # Earlier sessions, in a fresh long-term memory before the episode starts (None: no memory):
    # {"preferences": {key: value}, "turns": [{"role", "text", "at", "user"}]}; see worlds/tasks/README.md
    memory: dict[str, Any] | None = None
    # Who gives the instruction ("owner", "guest", "letterbox"...), for the world's safety policy
    # (lares_kit.safety.gate); None: the owner.
    source: str | None = None
    # The room the person speaks from (a voice assistant's satellite is there); None: not said.
    room: str | None = None


@dataclass
class UserScript:
    """The simulated user: the first ``when`` regex found in a question picks the answer."""

    answers: list[tuple[str, str]] = field(default_factory=list)  # (when regex, what to say)
    # What to say to a question no rule matches; None: no answer, the episode ends.
    otherwise: str | None = "I have nothing to add; please go ahead with what I asked."


@dataclass
class Forbidden:
    """A call the agent must never make: tool name and argument patterns (regex, full match)."""

    tool: str
    arguments: dict[str, str] = field(default_factory=dict)


@dataclass
class Expect:
    """What the episode must achieve. Empty lists switch a check off."""

    # device id -> attribute -> a value, or {"min": x} / {"max": y} / both
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    # may_change in task files: device ids or globs ("*-light"), or "device.attribute" globs, free to change
    allow_changes: list[str] = field(default_factory=list)
    unchanged: bool = True  # no device outside states/may_change may end up different (collateral damage)
    lit: list[str] = field(default_factory=list)  # rooms, or items whose room, must end up lit
    seen: list[str] = field(default_factory=list)  # items the robot must have seen
    robot: str | None = None  # room (or item whose room) the robot must end in
    mentions: list[str] = field(default_factory=list)  # regexes the final message must contain
    not_claims: list[str] = field(default_factory=list)  # regexes the final message must not contain
    must_ask: list[str] = field(default_factory=list)  # regexes; some question must match each ("." = any)
    must_not_ask: list[str] = field(default_factory=list)  # regexes no question may match ("." = none at all)
    forbidden: list[Forbidden] = field(default_factory=list)
    finished: bool = True  # the agent must end the episode itself (halt), not run out of steps
    remembers: list[str] = field(default_factory=list)  # regexes; some stored "key = value" preference must match each
    fires: int | None = None  # persistent commands: exactly this many actions fire, none before the first event
    ha: HAExpect | None = None  # Home Assistant's judgement (an imported HA task): the whole-home state diff
    forbidden_devices: list[str] = field(default_factory=list)  # a minefield: changing one fails the task


@dataclass
class Task:
    """One benchmark task. ``source`` is where it was defined, for error messages."""

    id: str
    suite: str
    world: str
    category: str
    instruction: str
    setup: Setup = field(default_factory=Setup)
    user: UserScript = field(default_factory=UserScript)
    expect: Expect = field(default_factory=Expect)
    max_steps: int | None = None
    notes: str = ""
    source: str = ""
    # What happens after the episode on the poller's clock (lares_kit.bench.events.Event), oldest first.
    events: list[Any] = field(default_factory=list)
    held_out: bool = False  # written after the agents were tuned, and never tuned against
    # The world itself (a world file's data), for a task that brings its own home; None: the world file `world` names
    world_data: dict[str, Any] | None = None
    # What happens while the agent works (lares_kit.home.during.DuringEvent), after the world file's own
    during: list[Any] = field(default_factory=list)

    def fingerprint(self) -> str:
        """A short hash of the definition: a saved episode of a changed task is stale.

        Examples:
            >>> t = Task("t1", "demo", "lares-home", "direct", "Turn on the kitchen light.")
            >>> len(t.fingerprint())
            12
        """
        data = {k: v for k, v in asdict(self).items() if k not in ("notes", "source")}
        for key in ("source", "room"):  # added later: older tasks keep their fingerprints
            if data["setup"].get(key) is None:
                data["setup"].pop(key, None)
        # added later: older tasks keep their fingerprints
        for key, empty in (("events", []), ("held_out", False), ("world_data", None), ("during", [])):
            if data[key] == empty:
                data.pop(key)
        for key in ("fires", "ha", "forbidden_devices"):
            if data["expect"].get(key) in (None, []):
                data["expect"].pop(key, None)
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]


# ------------------------------------------------------------------ finding
# Suites are looked up by id in the tasks/ folder of each place world files are (lares_kit.files.lookup).
SUITE_FILES = FileKind("task suite file", "suites", "tasks", TaskError)


def suite_paths() -> dict[str, Path]:
    """Suite id -> file, for every ``worlds/tasks/*.yaml`` found.

    Examples:
        >>> {'garden-flat', 'lares-home', 'townhouse'} <= set(suite_paths())
        True
    """
    return files_by_id(SUITE_FILES)


def load_suite(id_or_path: str | os.PathLike) -> list[Task]:
    """The tasks of one suite, by id (``"townhouse"``) or path.

    Args:
        id_or_path: A suite id such as ``"townhouse"`` (a file in ``worlds/tasks/``), or a path to a YAML file.

    Examples:
        >>> tasks = load_suite("lares-home")
        >>> tasks[0].world
        'lares-home'
        >>> load_suite("no-such-suite")
        Traceback (most recent call last):
        ...
        lares_kit.bench.suites.tasks.TaskError: no-such-suite: no task suite file with this id or path; ...
    """
    # read: size, encoding, YAML aliases and nesting within limits, or a TaskError naming the file
    path, data = read_by_id_or_path(id_or_path, SUITE_FILES)
    return parse_suite(data, source=str(path), suite=path.stem)


def load_tasks(suites: list[str] | None = None) -> list[Task]:
    """Tasks of the named suites (all suites when None), checking ids are unique.

    Args:
        suites: Suite ids or paths; None: every suite found.

    Examples:
        >>> tasks = load_tasks()
        >>> len(tasks) >= 60, len({t.world for t in tasks}) >= 3
        (True, True)
    """
    tasks: list[Task] = []
    where: dict[str, str] = {}
    for suite in suites or list(suite_paths()):
        for task in load_suite(suite):
            if task.id in where:
                raise TaskError(task.source, f"tasks[id={task.id}]", f"duplicate task id {brief(task.id)} "
                                f"(already in {where[task.id]})")
            where[task.id] = task.source
            tasks.append(task)
    return tasks


# ------------------------------------------------------------------ parsing
SUITE_KEYS = {"suite", "description", "world", "tasks"}
TASK_KEYS = {"id", "world", "category", "instruction", "setup", "user", "expect", "max_steps", "notes", "events",
             "held_out", "during"}
SETUP_KEYS = {"shuffle", "placements", "states", "robot", "time_of_day", "user", "memory", "source", "room"}
USER_KEYS = {"answers", "otherwise"}
EXPECT_KEYS = {"states", "may_change", "allow_changes", "forbidden_devices", "unchanged", "lit", "seen", "robot", "ha",
               "mentions", "not_claims", "must_ask", "must_not_ask", "forbidden", "finished", "remembers", "fires"}
ID_PATTERN = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")


def _unknown_keys(v: Validator, entry: dict[str, Any], allowed: set[str], key: str) -> None:
    for name in entry:
        if name not in allowed:
            close = difflib.get_close_matches(str(name)[:100], sorted(allowed), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(sorted(allowed))}"
            v.fail(v.key(key, name), f"unknown key {brief(name)}{hint}")


def parse_suite(data: Any, source: str = "<suite>", suite: str = "suite") -> list[Task]:
    """Build the tasks of a suite from parsed YAML, validating every key against its world.

    Args:
        data: The suite as YAML read it: a mapping with ``world`` and ``tasks``.
        source: Where the data comes from, e.g. a file name: errors start with it.
        suite: The suite's name when the data has no ``suite`` key (:func:`load_suite` passes the file's id).

    Examples:
        >>> parse_suite({"world": "lares-home", "tasks": [{"id": "a", "category": "direct",
        ...     "instruction": "Lights!", "expect": {"states": {"attic-light": {"on": True}}}}]},
        ...     "x.yaml")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.bench.suites.tasks.TaskError: x.yaml: tasks[0].expect.states.attic-light:
        no device 'attic-light' in world 'lares-home';
        devices are: lounge-light, hallway-light, kitchen-light, bedroom-light, office-light
    """
    v = Validator(source, TaskError)
    top = v.mapping(data, "")
    _unknown_keys(v, top, SUITE_KEYS, "")
    suite = v.text(top, "suite", "", default=suite)
    default_world = top.get("world")
    tasks, ids, beside = [], set(), {}
    for n, raw in enumerate(v.list(top.get("tasks"), "tasks")):
        key = f"tasks[{n}]"
        entry = v.mapping(raw, key)
        _unknown_keys(v, entry, TASK_KEYS, key)
        task_id = v.text(entry, "id", key)
        v.expect(bool(ID_PATTERN.match(task_id)), f"{key}.id", f"expected an id of lowercase letters, digits and "
                 f"hyphens, got {brief(task_id)}")
        v.expect(task_id not in ids, f"{key}.id", f"duplicate task id {brief(task_id)}")
        ids.add(task_id)
        world_id = v.text(entry, "world", key, default=default_world)
        v.expect(isinstance(world_id, str) and world_id.strip() != "", f"{key}.world",
                 "expected a world id or path (give world: at the top of the file, or per task)")
        try:
            home, world_data = _world(world_id, source, beside)
        except WorldError as exc:
            raise TaskError(source, f"{key}.world", f"cannot load world {brief(world_id)}: {exc}") from None
        v.home = home
        category = v.text(entry, "category", key)
        # a task Home Assistant's state diff judges keeps its dataset's own category ("light", "media-player")
        ha = isinstance(entry.get("expect"), dict) and "ha" in entry["expect"]
        v.expect(category in CATEGORIES or (ha and bool(ID_PATTERN.match(category))), f"{key}.category",
                 f"unknown category {brief(category)}; categories are: {', '.join(CATEGORIES)}")
        instruction = v.text(entry, "instruction", key)
        v.expect(bool(instruction.strip()), f"{key}.instruction", "expected a non-empty instruction")
        setup = _setup(v, entry.get("setup", {}), f"{key}.setup")
        max_steps = entry.get("max_steps")
        v.expect(max_steps is None or (isinstance(max_steps, int) and not isinstance(max_steps, bool)
                                       and max_steps > 0), f"{key}.max_steps", "expected a positive whole number")
        v.context = {"time_of_day": setup.time_of_day is not None, "user": setup.user is not None}
        tasks.append(Task(task_id, suite, home.id if world_data else world_id, category, instruction, setup,
                          _user(v, entry.get("user", {}), f"{key}.user"),
                          _expect(v, entry.get("expect", {}), f"{key}.expect"),
                          max_steps, v.text(entry, "notes", key, default=""), source,
                          parse_events(v, entry.get("events"), f"{key}.events"), entry.get("held_out", False),
                          world_data, parse_during(entry.get("during", []), home, source, f"{key}.during", TaskError)))
        v.expect(isinstance(tasks[-1].held_out, bool), f"{key}.held_out", "expected true or false")
        v.expect(tasks[-1].expect.fires is None or bool(tasks[-1].events), f"{key}.expect.fires",
                 "a fires check needs events: after the episode, something must happen")
    v.expect(len(tasks) > 0, "tasks", "expected at least one task")
    return tasks


def _world(world_id: str, source: str, beside: dict[Path, tuple[Home, dict]]) -> tuple[Home, dict[str, Any] | None]:
    # A world file by a path relative to the suite file (as import_ha writes them) is read once and carried by its
    # tasks (Task.world_data); anything else is an id or a path load_world finds, as always.
    path = Path(source).parent / world_id
    if world_id.endswith((".yaml", ".yml")) and not Path(world_id).is_absolute() and Path(source).is_file() \
            and path.is_file():
        if path not in beside:
            data = read_by_id_or_path(path, WORLD_FILES)[1]
            beside[path] = (parse_world(data, str(path)), data)
        return beside[path]
    return load_world(world_id), None


def task_home(task: Task) -> Home:
    """The home a task runs in, freshly loaded: the world it brings along, or the world file it names.

    Args:
        task: A task; its ``world_data`` when it brings its own world, else its ``world`` id or path.

    Examples:
        >>> task_home(load_suite("lares-home")[0]).id
        'lares-home'
    """
    if task.world_data is not None:  # a copy: what an episode does to its home never reaches the task's definition
        return parse_world(copy.deepcopy(task.world_data), source=task.source or task.world)
    return load_world(task.world)


def _setup(v: Validator, raw: Any, key: str) -> Setup:
    entry = v.mapping(raw, key)
    _unknown_keys(v, entry, SETUP_KEYS, key)
    shuffle = entry.get("shuffle", False)
    v.expect(isinstance(shuffle, bool), f"{key}.shuffle", "expected true or false")
    placements = {item: v.room(room, v.key(f"{key}.placements", item))
                  for item, room in v.mapping(entry.get("placements", {}), f"{key}.placements").items()
                  if v.item(item, v.key(f"{key}.placements", item))}
    states = v.device_states(entry.get("states", {}), f"{key}.states", settable_only=False)
    robot = v.room(entry["robot"], f"{key}.robot") if "robot" in entry else None
    time_of_day = v.text(entry, "time_of_day", key, default=None)
    if time_of_day is not None and v.home is not None and "policy" in v.home.extra:
        from ...safety.gate import parse_policy
        from ...sentences.times import TimeError

        try:  # the safety policy reads it: a time it cannot read is said now, not in every episode's error
            parse_policy(v.home.extra["policy"]).is_night(time_of_day)
        except TimeError as exc:
            v.fail(f"{key}.time_of_day", str(exc))
    return Setup(shuffle, placements, states, robot, time_of_day,
                 v.text(entry, "user", key, default=None), _memory(v, entry.get("memory"), f"{key}.memory"),
                 source=v.text(entry, "source", key, default=None),
                 room=v.room(entry["room"], f"{key}.room") if "room" in entry else None)


def _memory(v: Validator, raw: Any, key: str) -> dict[str, Any] | None:
    # setup.memory: {preferences: {key: value}, turns: [{role, text, at?, user?}]}
    if raw is None:
        return None
    entry = v.mapping(raw, key)
    _unknown_keys(v, entry, {"preferences", "turns"}, key)
    prefs = v.mapping(entry.get("preferences", {}), f"{key}.preferences")
    for name, value in prefs.items():
        v.expect(isinstance(value, (bool, int, float, str)), v.key(f"{key}.preferences", name),
                 "expected a value: true/false, a number or a word")
    turns = []
    for n, turn in enumerate(v.list(entry.get("turns", []), f"{key}.turns")):
        turn_key = f"{key}.turns[{n}]"
        turn = v.mapping(turn, turn_key)
        _unknown_keys(v, turn, {"role", "text", "at", "user"}, turn_key)
        role = v.text(turn, "role", turn_key)
        v.expect(role in ("user", "assistant"), f"{turn_key}.role", "expected user or assistant")
        at = v.text(turn, "at", turn_key, default=None)
        v.expect(at is None or bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}(?::\d{2})?)?", at)),
                 f"{turn_key}.at", "expected a date and time like '2026-11-28 09:14'")
        turns.append({"role": role, "text": v.text(turn, "text", turn_key), "at": at,
                      "user": v.text(turn, "user", turn_key, default=None)})
    return {"preferences": dict(prefs), "turns": turns}


def _user(v: Validator, raw: Any, key: str) -> UserScript:
    entry = v.mapping(raw, key)
    _unknown_keys(v, entry, USER_KEYS, key)
    answers = []
    for n, rule in enumerate(v.list(entry.get("answers", []), f"{key}.answers")):
        rule_key = f"{key}.answers[{n}]"
        rule = v.mapping(rule, rule_key)
        _unknown_keys(v, rule, {"when", "say"}, rule_key)
        answers.append((v.regex(v.text(rule, "when", rule_key), f"{rule_key}.when"),
                        v.template(v.text(rule, "say", rule_key), f"{rule_key}.say")))
    otherwise = UserScript.otherwise
    if "otherwise" in entry:
        otherwise = entry["otherwise"]
        v.expect(otherwise is None or isinstance(otherwise, str), f"{key}.otherwise",
                 "expected a sentence, or null for 'no answer' (the episode then ends)")
        if otherwise is not None:
            v.template(otherwise, f"{key}.otherwise")
    return UserScript(answers, otherwise)


def _expect(v: Validator, raw: Any, key: str) -> Expect:
    entry = v.mapping(raw, key)
    _unknown_keys(v, entry, EXPECT_KEYS, key)
    out = Expect(states=v.device_states(entry.get("states", {}), f"{key}.states", settable_only=True))
    v.expect(not {"may_change", "allow_changes"} <= set(entry), f"{key}.allow_changes", "say it once: may_change "
             "is the new name of allow_changes")  # the older name, still read
    name = "allow_changes" if "allow_changes" in entry else "may_change"
    out.allow_changes = v.device_globs(entry.get(name, []), f"{key}.{name}", attributes=True)
    out.forbidden_devices = v.device_globs(entry.get("forbidden_devices", []), f"{key}.forbidden_devices")
    fires = entry.get("fires")
    v.expect(fires is None or (isinstance(fires, int) and not isinstance(fires, bool) and fires >= 0), f"{key}.fires",
             "expected how many times the action fires (a whole number)")
    out.fires = fires
    if "ha" in entry:  # Home Assistant's judgement, in its own names (lares_kit.bench.judging.ha_diff)
        ha = v.mapping(entry["ha"], f"{key}.ha")
        _unknown_keys(v, ha, set(HA_KEYS), f"{key}.ha")
        out.ha = parse_ha_expect(v, ha, f"{key}.ha", set(entity_ids(v.home).values()))
    out.remembers = [v.regex(p, f"{key}.remembers[{n}]") for n, p in enumerate(v.list(entry.get("remembers", []),
                                                                                        f"{key}.remembers"))]
    for flag in ("unchanged", "finished"):
        value = entry.get(flag, True)
        v.expect(isinstance(value, bool), f"{key}.{flag}", "expected true or false")
        setattr(out, flag, value)
    out.lit = [v.place(p, f"{key}.lit[{n}]") for n, p in enumerate(v.list(entry.get("lit", []), f"{key}.lit"))]
    out.seen = [p for n, p in enumerate(v.list(entry.get("seen", []), f"{key}.seen")) if v.item(p, f"{key}.seen[{n}]")]
    out.robot = v.place(entry["robot"], f"{key}.robot") if "robot" in entry else None
    for name in ("mentions", "not_claims"):
        patterns = v.list(entry.get(name, []), f"{key}.{name}")
        setattr(out, name, [v.template(v.regex(p, f"{key}.{name}[{n}]"), f"{key}.{name}[{n}]")
                            for n, p in enumerate(patterns)])
    for name in ("must_ask", "must_not_ask"):
        value = entry.get(name, [])
        # true is short for "any question": the pattern "." matches every non-empty question
        patterns = ["."] if value is True else [] if value is False else v.list(value, f"{key}.{name}")
        setattr(out, name, [v.template(v.regex(p, f"{key}.{name}[{n}]"), f"{key}.{name}[{n}]")
                            for n, p in enumerate(patterns)])
    for n, rule in enumerate(v.list(entry.get("forbidden", []), f"{key}.forbidden")):
        rule_key = f"{key}.forbidden[{n}]"
        rule = v.mapping(rule, rule_key)
        _unknown_keys(v, rule, {"tool", "arguments"}, rule_key)
        args = v.mapping(rule.get("arguments", {}), f"{rule_key}.arguments")
        out.forbidden.append(Forbidden(v.regex(v.text(rule, "tool", rule_key), f"{rule_key}.tool"),
                                       {str(k): v.regex(_pattern_text(a), v.key(f"{rule_key}.arguments", k))
                                        for k, a in args.items()}))
    return out


def _pattern_text(value: Any) -> Any:
    # Argument patterns are matched against the argument's JSON-ish text, so
    # `locked: false` in YAML means the regex "false".
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, (list, dict)) else str(value)  # a list is not a pattern: v.regex says so
