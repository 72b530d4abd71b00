"""Fuzzing: hypothesis throws random calls at the dispatcher and random files at the loaders.

Two promises are checked on whatever hypothesis makes up: no exception
escapes (the dispatcher returns an Observation; the world loader returns a
Home or raises :class:`~lares_kit.home.worlds.WorldError`, the suite loader a
:class:`~lares_kit.bench.suites.tasks.TaskError`, the file reader plain data or a
:class:`~lares_kit.errors.DataFileError`), and every error is a sentence a
model or a learner can read -- not a traceback, not a bare repr. The homes
have a safety policy, so the gate is fuzzed too. About 30 s in all.
"""

from __future__ import annotations

import copy
import json
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lares_kit import Toolbox, load_world
from lares_kit.home.clock import Clock
from lares_kit.home.worlds import WorldError, parse_world
from lares_kit.home.worlds import load_world as load_world_file
from lares_kit.tools.toolbox import Observation
from lares_kit.tools.users import ScriptedUser

HOMES = {name: load_world(name) for name in ("townhouse", "shared-house", "lares-home")}
TOOL_NAMES = sorted({fn.__name__ for home in HOMES.values() for fn in Toolbox(home).tools})
IDS = sorted({i for home in HOMES.values() for i in [*home.devices, *home.graph.nodes]})
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                    st.text(max_size=30), st.sampled_from(IDS + ["locked", "on", "target", "level", "temperature"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                           max_leaves=12)
argument_names = st.sampled_from(["light_id", "device_id", "attribute", "value", "on", "destination_room_id",
                                  "question", "message_to_user", "query", "key"]) | st.text(max_size=12)
arguments = st.one_of(
    st.none(),
    st.dictionaries(argument_names, json_values, max_size=4),
    st.dictionaries(argument_names, json_values, max_size=4).map(json.dumps),
    st.text(max_size=60),  # mostly not JSON at all
    st.dictionaries(argument_names, json_values, max_size=4).map(lambda d: json.dumps(d)[:-1]),  # cut short
    json_values.map(json.dumps),  # JSON, but maybe not an object
)


def is_sentence(text: str) -> bool:
    """An observation a model can read: words, ending like a sentence; no traceback, no object repr."""
    return is_readable(text) and text.rstrip()[-1] in ".?!)'\""


def is_readable(text: str) -> bool:
    """Words a person can act on (the loader's "file: key: what was expected" has no full stop)."""
    return (isinstance(text, str) and len(text.strip()) >= 10 and "Traceback" not in text
            and " object at 0x" not in text and bool(re.search(r"[A-Za-z]{3,} [a-z]+", text)))


@FUZZ
@given(home=st.sampled_from(sorted(HOMES)), name=st.sampled_from(TOOL_NAMES) | st.text(max_size=20),
       args=arguments, source=st.sampled_from(["owner", "guest", "letterbox", ""]),
       night=st.sampled_from([None, "night", "03:00", "noon"]))
def test_dispatch_never_raises_and_errors_are_sentences(home, name, args, source, night):
    house = copy.deepcopy(HOMES[home])
    house.clock = Clock.simulated() if night is None else Clock.fixed(night)
    box = Toolbox(house, user=ScriptedUser(fallback="Yes."), source=source or "owner")
    obs = box.dispatch(name, args)
    assert isinstance(obs, Observation)
    assert isinstance(obs.content, str)
    if not obs.ok:
        assert obs.content.startswith("Error: ") and is_sentence(obs.text), obs.text


@FUZZ
@given(calls=st.lists(st.tuples(st.sampled_from(TOOL_NAMES), arguments), min_size=2, max_size=6))
def test_a_run_of_random_calls_keeps_the_home_valid(calls):
    house = copy.deepcopy(HOMES["townhouse"])
    box = Toolbox(house, user=ScriptedUser(fallback="No."))
    for name, args in calls:
        box.dispatch(name, args)
    assert house.robot.room in house.graph
    assert house.devices["front-door-lock"].state["locked"] is True  # nobody said yes


VALID = {"id": "tiny", "name": "Tiny", "rooms": [{"id": "a", "exits": ["b"]}, {"id": "b", "exits": ["a"]}],
         "devices": [{"id": "a-light", "type": "light", "room": "a", "state": {"on": False}}],
         "robot": {"id": "robot", "room": "a"}, "items": [{"id": "cat", "type": "cat", "room": "b"}],
         "policy": {"confirm": [{"type": "lock", "attribute": "locked", "is": False}]}}


def _paths(value, prefix=()):
    # every (path) into a nested dict/list, so a mutation can pick one
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            yield from _paths(inner, (*prefix, n))


@st.composite
def mutated(draw, valid):
    """``valid`` with one to three values replaced by random JSON or (in a mapping) deleted."""
    data = copy.deepcopy(valid)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(json_values)
    return data


def _check_loader(data) -> None:
    try:
        home = parse_world(data, "fuzz.yaml")
    except WorldError as exc:
        message = str(exc)
        # "fuzz.yaml: rooms[0].exits[1]: unknown room 'c'; rooms are: a, b" -- file, key path, what was expected
        assert message.startswith("fuzz.yaml: ") and is_readable(message.split(": ", 2)[-1]), message
    else:
        assert home.robot.room in home.graph


@FUZZ
@given(data=mutated(VALID))
def test_a_mutated_world_loads_or_fails_with_a_sentence(data):
    _check_loader(data)


@FUZZ
@given(data=json_values)
def test_any_data_loads_or_fails_with_a_sentence(data):
    _check_loader(data)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200) | st.sampled_from(["rooms: [", "id: x\nrooms: {", "- a\n- : b", "id: [x"]))
def test_any_file_loads_or_fails_with_a_sentence(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "world.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_world_file(path)
    except WorldError as exc:
        assert str(exc).startswith(str(path)) and is_readable(str(exc)), str(exc)


# ------------------------------------------------------------------ the file reader (lares_kit.files.reading)
# Bits of YAML that break readers: tags, anchors and aliases, merges, dates, long numbers, brackets, quotes.
YAML_BITS = ["a", "b", "id", "on", "yes", "~", ": ", "\n", "  ", "- ", "[", "]", "{", "}", ", ", "&x ", "*x", "&y ",
             "*y", "<<: ", "!!int ", "!!bool ", "!!float ", "!!timestamp ", "!!binary ", "!!set ", "!!omap ", "!foo ",
             "!!str ", "!!map ", "!!seq ", "? ", "0x", "0o9", "1:2:3", "2024-02-30", "2024-02-28", "'", '"', "---\n",
             "# c\n", "\t", ".inf", ".nan", "9" * 30, "0x" + "f" * 40, "-", "%YAML 1.1\n", "|\n", ">\n", "\\", "\x00"]


def _plain(value, depth=0) -> bool:
    # What the reader promises: dicts, lists, text, numbers, true/false, null; nested at most MAX_DEPTH
    from lares_kit.files.reading import MAX_DEPTH

    if depth > MAX_DEPTH + 1:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, (str, int, float, bool, type(None))) and _plain(v, depth + 1)
                   for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return isinstance(value, (str, int, float, bool, type(None))) and not (isinstance(value, int)
                                                                          and value.bit_length() > 64)


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(YAML_BITS), max_size=40).map("".join))
def test_any_yaml_reads_as_plain_data_or_one_sentence(text):
    import warnings

    from lares_kit.errors import DataFileError
    from lares_kit.files.reading import parse_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a key written twice is a warning, tested elsewhere
        try:
            data = parse_data(text, "fuzz.yaml")
        except DataFileError as exc:
            message = str(exc)
            assert message.startswith("fuzz.yaml: ") and is_readable(message) and "\n" not in message, message
            return
    assert _plain(data), data
    json.dumps(data)  # plain enough for a record, a fingerprint, a prompt


plain_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)


@FUZZ
@given(value=plain_values)
@example(value=1e-06)  # json.dumps writes "1e-06": YAML 1.1 read it as text (found by this test in CI)
@example(value={"x": 2e+20})
@example(value={"0E0": "1e5", "on": "yes"})  # text PyYAML's writer leaves unquoted (found by this test in CI)
def test_plain_data_reads_back_as_written_in_json_and_in_yaml(value):
    from lares_kit.files.reading import parse_data
    from lares_kit.files.yamldata import dump_yaml

    assert parse_data(json.dumps(value)) == value
    assert parse_data(dump_yaml(value)) == value


SUITE = {"world": "lares-home", "tasks": [{
    "id": "t1", "category": "search", "instruction": "Find Bruno and light his room.",
    "setup": {"shuffle": True, "robot": "hallway", "states": {"kitchen-light": {"on": True}}, "time_of_day": "night",
              "memory": {"preferences": {"colour": "red"}, "turns": [{"role": "user", "text": "hi",
                                                                       "at": "2026-11-28 09:14"}]}},
    "user": {"answers": [{"when": "room", "say": "The {bruno.room}."}], "otherwise": None},
    "expect": {"seen": ["bruno"], "lit": ["bruno"], "allow_changes": ["*-light"], "mentions": ["Bruno"],
               "must_not_ask": True, "forbidden": [{"tool": "set_light", "arguments": {"on": False}}],
               "states": {"kitchen-light": {"on": True}}},
    "max_steps": 12}]}


def test_the_suite_the_fuzzer_mutates_is_valid():
    from lares_kit.bench.suites.tasks import parse_suite

    (task,) = parse_suite(copy.deepcopy(SUITE), "fuzz.yaml")
    assert task.setup.memory["turns"][0]["at"] == "2026-11-28 09:14" and task.expect.forbidden[0].tool == "set_light"


@FUZZ
@given(data=mutated(SUITE))
def test_a_mutated_suite_loads_or_fails_with_a_sentence(data):
    from lares_kit.bench.suites.tasks import TaskError, parse_suite

    try:
        tasks = parse_suite(data, "fuzz.yaml")
    except TaskError as exc:
        message = str(exc)
        assert message.startswith("fuzz.yaml: ") and is_readable(message.split(": ", 2)[-1]), message
        assert len(message) < 1500
    else:
        for task in tasks:
            task.fingerprint()  # the saved-record key of every task that loads
