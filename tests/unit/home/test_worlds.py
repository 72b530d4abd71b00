"""World files: loading, validation errors that name the file and key path, check_home."""

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from malformed import WORLD, world_cases

from lares_kit import WorldError, check_home, load_world
from lares_kit.files.reading import DuplicateKeyWarning
from lares_kit.home.worlds import read_yaml, world_paths

GOOD = """
id: tiny
rooms:
  - {id: a, exits: [b]}
  - {id: b, exits: [a]}
devices:
  - {id: a-light, type: light, room: a, state: {on: false}}
robot: {id: robot, room: a}
items:
  - {id: rex, name: Rex, type: dog, room: b}
"""

BAD_WORLDS = [
    # (kind, yaml text, key path, words)
    ("bad YAML", "id: x\nrooms: [a, b\n", "", "not valid YAML at line"),
    ("not a mapping", "- just\n- a list\n", "", "expected a mapping, got a list"),
    ("missing id", GOOD.replace("id: tiny", "name: Tiny"), "id", "missing required key 'id'"),
    ("bad world id", GOOD.replace("id: tiny", "id: Tiny Home"), "id", "lowercase letters, digits and hyphens"),
    ("missing rooms", "id: x\nrobot: {id: robot, room: a}\n", "rooms", "missing required key 'rooms'"),
    ("rooms not a list", "id: x\nrooms: {a: 1}\n", "rooms", "expected a list, got a mapping"),
    ("unknown room in an exit", GOOD.replace("exits: [b]}", "exits: [b, c]}"), "rooms[0].exits[1]",
     "unknown room 'c'; rooms are: a, b"),
    ("exit not symmetric", GOOD.replace("{id: b, exits: [a]}", "{id: b, exits: []}"), "rooms[0].exits[0]",
     "exit 'a' -> 'b' is not symmetric: add 'a' to the exits of 'b'"),
    ("exit to itself", GOOD.replace("exits: [b]}", "exits: [b, a]}"), "rooms[0].exits[1]", "has an exit to itself"),
    ("duplicate room id", GOOD.replace("{id: b, exits: [a]}", "{id: b, exits: [a]}\n  - {id: a, exits: []}"),
     "rooms[2].id", "duplicate id 'a' (already used at rooms[0])"),
    ("device id same as a room", GOOD.replace("id: a-light", "id: b"), "devices[0].id", "duplicate id 'b'"),
    ("device in a room that does not exist", GOOD.replace("room: a, state", "room: attic, state"), "devices[0].room",
     "unknown room 'attic'"),
    ("light without on", GOOD.replace("state: {on: false}", "state: {brightness: 3}"), "devices[0].state.on",
     "a light needs state 'on: true' or 'on: false'"),
    ("device without type", GOOD.replace("type: light, ", ""), "devices[0].type", "missing required key 'type'"),
    ("missing robot", GOOD.replace("robot: {id: robot, room: a}", ""), "robot", "missing required key 'robot'"),
    ("robot in unknown room", GOOD.replace("robot: {id: robot, room: a}", "robot: {id: robot, room: z}"), "robot.room",
     "unknown room 'z'"),
    ("item in unknown room", GOOD.replace("type: dog, room: b", "type: dog, room: garden"), "items[0].room",
     "unknown room 'garden'"),
    ("disconnected rooms", GOOD.replace("rooms:\n", "rooms:\n  - {id: shed, exits: []}\n"), "rooms",
     "not all connected by exits; separate groups: a, b; shed"),
    ("aliases not a list", GOOD.replace("name: Rex,", "name: Rex, aliases: rex,"), "items[0].aliases",
     "expected a list, got a string"),
]


@pytest.mark.parametrize("kind, text, key, words", BAD_WORLDS, ids=[b[0] for b in BAD_WORLDS])
def test_bad_world_files_name_file_key_and_expectation(tmp_path, kind, text, key, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(WorldError) as caught:
        load_world(path)
    err = caught.value
    assert err.source == str(path)
    assert err.key_path == key
    assert words in str(err)
    assert str(err).startswith(f"{path}: ")


def test_good_world_loads(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(GOOD)
    home = load_world(path)
    assert home.id == "tiny" and home.items["rex"].room == "b"
    assert home.graph.nodes["a"]["name"] == "A"  # a name is derived from the id when missing


def test_yaml_on_key_is_not_a_boolean(tmp_path):
    # YAML 1.1 would read `on:` as True; world files mean the key "on".
    path = tmp_path / "tiny.yaml"
    path.write_text(GOOD)
    assert load_world(path).devices["a-light"].state == {"on": False}


def test_unknown_world_lists_known_ones():
    with pytest.raises(WorldError, match="known worlds: .*lares-home"):
        load_world("lares-hom")


@pytest.mark.parametrize("world", sorted(world_paths()))
def test_every_shipped_world_passes_check_home(world):
    assert check_home(world) == []


def test_check_home_reports_problems_in_a_hand_built_home():
    home = load_world("lares-home")
    home.devices["kitchen-light"].room = "garage"
    home.devices["office-light"].state = {}
    problems = check_home(home)
    assert "device 'kitchen-light' is in 'garage', which is not a room" in problems
    assert "light 'office-light' needs a true/false 'on' state" in problems


def test_check_home_on_a_bad_file_returns_the_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\n")
    assert check_home(path) == [f"{path}: rooms: missing required key 'rooms' (a list of rooms with exits)"]


def test_cli_prints_world_error_without_traceback_and_exits_2(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace("exits: [b]}", "exits: [b, c]}"))
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "run", "hello", "--world", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "rooms[0].exits[1]: unknown room 'c'" in out.stderr


def test_cli_lists_worlds():
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "worlds"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "lares-home" in out.stdout and "garden-flat" in out.stdout


def test_import_stays_light():
    code = textwrap.dedent("""
        import sys, lares_kit
        heavy = [m for m in ("openai", "matplotlib", "ipywidgets", "httpx2", "tiktoken", "yaml") if m in sys.modules]
        assert not heavy, heavy
        lares_kit.load_world("lares-home")
        assert "openai" not in sys.modules
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unquoted_comma_in_a_description_is_caught(tmp_path):
    path = tmp_path / "comma.yaml"
    path.write_text(GOOD.replace("{id: b, exits: [a]}", "{id: b, exits: [a], description: A desk, a lamp.}"))
    with pytest.raises(WorldError, match=r"rooms\[1\]: unknown key 'a lamp.' \(a description with a comma"):
        load_world(path)


def test_typo_in_a_device_key_is_caught(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text(GOOD.replace("room: a, state", "rom: a, room: a, state"))
    with pytest.raises(WorldError, match=r"devices\[0\]: unknown key 'rom'; allowed keys: aliases, capabilities"):
        load_world(path)


def test_top_level_key_path_has_no_leading_dot(tmp_path):
    path = tmp_path / "named.yaml"
    path.write_text(GOOD.replace("id: tiny", "id: tiny\nname: 3"))
    with pytest.raises(WorldError) as caught:
        load_world(path)
    assert caught.value.key_path == "name"


# ------------------------------------------------------------------ malformed files (tests/malformed.py)
# Every class of failure a file can have, several ways each, built here: the `lares` command must answer each
# with one sentence on stderr naming the file (exit 2), within 10 s of CPU and 200 MB, and load_world with a
# WorldError. The bound is CPU time, which a busy machine does not stretch; the wall-clock timeout only ends a hang.
CASES = world_cases()
MEMORY = 200 * 2**20
CPU_SECONDS = 10
HANG = 300  # seconds of wall clock: far beyond CPU_SECONDS on any load


def _limited(files: int = 1) -> None:  # runs in the child before it starts Python
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS * files, CPU_SECONDS * files))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_lares_worlds_check_answers_a_malformed_file_in_one_line(tmp_path, case):
    path = tmp_path / "world.yaml"
    path.write_bytes(case.data)
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "worlds", "check", str(path)],
                         capture_output=True, text=True, timeout=HANG, preexec_fn=_limited)
    assert out.returncode == 2, out.stderr[-2000:]
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lares: {path}: "), out.stderr[-2000:]
    assert len(lines[0]) < 1500  # the file's contents are quoted a little, never whole
    for words in case.words:
        assert words in lines[0], lines[0]
    assert out.stdout == ""  # not "ok"


@pytest.mark.slow
def test_load_world_raises_world_error_for_every_malformed_file(tmp_path):
    paths = []
    for n, case in enumerate(CASES):
        paths.append(tmp_path / f"case{n}.yaml")
        paths[-1].write_bytes(case.data)
    script = textwrap.dedent("""
        import json, sys
        from lares_kit import WorldError, load_world
        for path in sys.argv[1:]:
            try:
                load_world(path)
                print(json.dumps(["loaded", path]))
            except WorldError as exc:
                print(json.dumps(["WorldError", str(exc)]))
    """)
    out = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True, text=True,
                         timeout=HANG, preexec_fn=lambda: _limited(len(paths)))
    assert out.returncode == 0, out.stderr[-3000:]  # any other exception is a traceback and exit 1
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(answers) == len(CASES)
    for case, path, (kind, message) in zip(CASES, paths, answers):
        assert kind == "WorldError" and message.startswith(f"{path}: "), (case.name, message[:300])


@pytest.mark.parametrize("case", [c for c in CASES if len(c.data) < 100_000], ids=lambda c: c.name)
def test_a_small_malformed_file_names_the_key_in_process(tmp_path, case):
    path = tmp_path / "world.yaml"
    path.write_bytes(case.data)
    with pytest.raises(WorldError) as caught:
        load_world(path)
    for words in case.words:
        assert words in str(caught.value)


def test_the_corpus_is_built_on_a_world_that_loads(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(WORLD)
    assert check_home(path) == []


@pytest.mark.parametrize("text, key", [
    ("id: tiny\nid: other\n", "id"),
    (GOOD.replace("{id: b, exits: [a]}", "{id: b, exits: [a], exits: [a]}"), "rooms[1].exits"),
    (GOOD.replace("state: {on: false}", "state: {on: false, on: true}"), "devices[0].state.on"),
    ('{"id": "tiny", "rooms": [{"id": "a", "id": "b"}]}', "rooms[0].id"),
    ('{"id": "tiny", "id": "tiny"}', "id"),
])
def test_a_key_written_twice_is_a_warning_naming_where(tmp_path, text, key):
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.warns(DuplicateKeyWarning) as caught:
        try:
            load_world(path)
        except WorldError:
            pass  # some of these are not whole worlds: only the warning matters here
    assert any(str(w.message).startswith(f"{path}: {key}: the key ") for w in caught), [str(w.message) for w in caught]


def test_the_lares_command_prints_a_twice_written_key_as_one_warning_line(tmp_path):
    path = tmp_path / "twice.yaml"
    path.write_text(GOOD.replace("id: tiny", "id: tiny\nname: Tiny\nname: Tiny home"))
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "worlds", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout == f"{path}: ok\n"
    assert out.stderr == (f"lares: warning: {path}: name: the key 'name' is written twice; "
                          "the later value is used\n")


def test_the_reader_gives_what_pyyaml_gives_for_every_shipped_file():
    import yaml

    from lares_kit.files.reading import read_data_file
    from lares_kit.files.yamldata import YamlLoader

    tasks = Path(__file__).resolve().parents[3] / "worlds" / "tasks"
    shipped = [*world_paths().values(), *sorted(tasks.glob("*.yaml"))]
    for path in shipped:
        assert read_data_file(path) == yaml.load(path.read_text(encoding="utf-8"), Loader=YamlLoader), path


@pytest.mark.parametrize("text, expected", [
    ("name: 2024-02-30", {"name": "2024-02-30"}),  # YAML 1.2: dates are text (1.1 would fail on this one)
    ("at: 2026-11-28 09:14:00", {"at": "2026-11-28 09:14:00"}),
    ("on: yes", {"on": "yes"}),  # only true/false are booleans
    ("base: &b {on: false, level: 3}\nlamp: {<<: *b, level: 5}", {"base": {"on": False, "level": 3},
                                                                  "lamp": {"on": False, "level": 5}}),
    ("a: &a [1, 2]\nb: [*a, *a]", {"a": [1, 2], "b": [[1, 2], [1, 2]]}),
    ("big: 9223372036854775807", {"big": 2**63 - 1}),
])
def test_plain_yaml_reads_as_plain_data(text, expected):
    assert read_yaml(text) == expected


def test_an_alias_is_a_copy_not_the_same_object():
    # Shared objects would let a change to one device's state change another's.
    data = read_yaml("x-off: &off {on: false}\ndevices: [{state: *off}, {state: *off}]")
    first, second = (d["state"] for d in data["devices"])
    first["on"] = True
    assert second == {"on": False} and data["x-off"] == {"on": False}


def test_aliases_under_the_limits_are_fine_and_over_them_are_not():
    from lares_kit.files.reading import MAX_VALUES

    wide = "x: &x [" + ", ".join(["a"] * 1000) + "]\n"
    read_yaml(wide + "y: [" + ", ".join(["*x"] * 400) + "]")  # 400,000 values: a lot, but allowed
    with pytest.raises(WorldError, match=f"more than {MAX_VALUES:,} values once its aliases"):
        read_yaml(wide + "y: [" + ", ".join(["*x"] * 600) + "]")


@pytest.mark.parametrize("name, expected", [
    ("x" * 5000 + ".yaml", "not a file that can be read"),  # the system refuses the name: no OSError traceback
    ("worlds.yaml", "this is a folder"),
    ("no-such-world.yaml", "file not found"),
])
def test_a_path_that_is_not_a_readable_file_is_one_sentence(tmp_path, monkeypatch, name, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "worlds.yaml").mkdir()
    with pytest.raises(WorldError, match=expected) as caught:
        load_world(name)
    assert len(str(caught.value)) < 1000


def test_folders_in_lares_worlds_come_first_for_worlds_and_their_suites(tmp_path, monkeypatch):
    # One lookup (lares_kit.files.lookup) for both loaders: a folder in $LARES_WORLDS wins an id over the
    # shipped worlds/, and its tasks/ subfolder holds task suites.
    from lares_kit.bench.suites.tasks import load_suite, suite_paths

    shipped = world_paths()["lares-home"]
    (tmp_path / "tasks").mkdir()
    (tmp_path / "lares-home.yaml").write_text(shipped.read_text(encoding="utf-8").replace(
        "name: The Lares home", "name: My Lares home", 1), encoding="utf-8")
    suite = (shipped.parent / "tasks" / "lares-home.yaml").read_text(encoding="utf-8")
    (tmp_path / "tasks" / "mine.yaml").write_text(suite, encoding="utf-8")
    assert load_world("lares-home").name == "The Lares home"
    monkeypatch.setenv("LARES_WORLDS", str(tmp_path))
    assert world_paths()["lares-home"] == tmp_path / "lares-home.yaml"
    assert load_world("lares-home").name == "My Lares home"
    assert suite_paths()["mine"] == tmp_path / "tasks" / "mine.yaml"
    assert [t.id for t in load_suite("mine")] == [t.id for t in load_suite("lares-home")]
    with pytest.raises(WorldError, match=r"known worlds: .*lares-home") as caught:
        load_world("mine")  # a suite's id is not a world's
    assert "mine" not in caught.value.message.split("known worlds: ")[1].split(", ")

def test_a_pipe_named_like_a_world_file_is_refused_not_waited_on(tmp_path):
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)  # opening it to read would wait for a writer for ever
    with pytest.raises(WorldError, match="pipe.yaml: not a file that can be read"):
        load_world(path)
    from lares_kit.bench.suites.tasks import TaskError, load_suite

    with pytest.raises(TaskError, match="not a file that can be read"):  # the suite loader the same way
        load_suite(path)


# ------------------------------------------------------------------ a world too big for any prompt
def test_a_world_too_big_for_the_prompt_is_refused_before_anything_is_sent(monkeypatch):
    import lares_kit.knowledge.modes as knowledge
    from lares_kit.agents import run_agent

    sent = []

    class Recording:
        """A client that must never be called."""

        def __init__(self):
            self.chat = self
            self.completions = self

        def create(self, **request):
            sent.append(request)
            raise AssertionError("the prompt was sent")

    home = load_world("lares-home")
    tokens = len(home.render_knowledge("json")) // 4
    monkeypatch.setattr(knowledge, "PROMPT_TOKENS_AT_MOST", tokens - 1)  # this home is now "too big"
    with pytest.raises(knowledge.PromptTooBig, match=r"about [\d,]+ tokens in the 'full' format.*'retrieval'"):
        run_agent("turn on the light in the kitchen", home, client=Recording(), model="offline",
                  knowledge_format="full")
    assert sent == []
    monkeypatch.setattr(knowledge, "PROMPT_TOKENS_AT_MOST", tokens)  # exactly fits: runs
    run_agent("turn on the light in the kitchen", load_world("lares-home"), model="offline")


def test_lares_run_says_a_world_is_too_big_for_the_prompt_and_exits_2(monkeypatch, capsys):
    import lares_kit.knowledge.modes as knowledge
    from lares_kit.cli.commands import main

    monkeypatch.setattr(knowledge, "PROMPT_TOKENS_AT_MOST", 100)
    assert main(["run", "turn on the light in the kitchen", "--world", "lares-home"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "so nothing was sent" in err[0] and "--knowledge-format retrieval" in err[0]
