"""World files: loading, validation errors that name the file and key path, check_home."""

import subprocess
import sys
import textwrap

import pytest

from lares_kit import WorldError, check_home, load_world
from lares_kit.worlds import world_paths

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
    ("unknown room in an exit", GOOD.replace("exits: [b]}", "exits: [b, c]}"), "rooms[0].exits[1]", "unknown room 'c'; rooms are: a, b"),
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
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli", "run", "hello", "--world", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "rooms[0].exits[1]: unknown room 'c'" in out.stderr


def test_cli_lists_worlds():
    out = subprocess.run([sys.executable, "-m", "lares_kit.cli", "worlds"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "lares-home" in out.stdout and "garden-flat" in out.stdout


def test_import_stays_light():
    code = textwrap.dedent("""
        import sys, lares_kit
        heavy = [m for m in ("openai", "matplotlib", "ipywidgets", "httpx2", "tiktoken") if m in sys.modules]
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
