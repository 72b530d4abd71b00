"""Generated worlds (lares_kit.home.generator), their tasks (lares_kit.bench.suites.generated),
the fast world loading they need."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import networkx as nx
import pytest

import lares_kit.home.generator
from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.bench.judging.checks import Outcome, run_checks
from lares_kit.bench.judging.oracle import oracle_plan
from lares_kit.bench.scene import copy_home, set_stage
from lares_kit.bench.suites.generated import generate_tasks
from lares_kit.cli.commands import main
from lares_kit.home.devices import DEVICE_TYPES
from lares_kit.home.generator import generate_home, generate_world
from lares_kit.home.graph import Home
from lares_kit.home.worlds import check_home, parse_world, read_yaml

SIZES = [(3, 10), (4, 10), (12, 40), (20, 100), (200, 1000), (1000, 5000)]


@pytest.mark.parametrize("rooms,devices", SIZES)
def test_generated_worlds_pass_check_home_with_the_sizes_asked(rooms, devices):
    home = generate_home(rooms, devices, seed=5)
    assert check_home(home) == []
    assert home.graph.number_of_nodes() == rooms and len(home.devices) == devices
    assert nx.is_connected(home.graph)
    assert all(d.type in DEVICE_TYPES for d in home.devices.values())
    assert home.items and home.robot.room in home.graph


def test_the_same_seed_gives_the_same_world_and_another_seed_another():
    assert generate_world(200, 1000, seed=1) == generate_world(200, 1000, seed=1)
    assert generate_world(200, 1000, seed=1) != generate_world(200, 1000, seed=2)


def test_a_big_building_has_floors_and_realistic_rooms():
    home = generate_home(1000, 5000, seed=1)
    floors = {a["floor"] for _, a in home.graph.nodes(data=True)}
    assert floors == set(range(10))
    names = " ".join(a["name"] for _, a in home.graph.nodes(data=True))
    for word in ("Lobby", "Stairs", "Corridor", "Office", "Meeting room", "Kitchen", "Toilets", "Print room"):
        assert word in names
    # stairs join every floor to the next
    assert all(home.graph.has_edge(f"stairs-{f}", f"stairs-{f + 1}") for f in range(9))
    assert not nx.is_tree(home.graph)  # some offices share a door


def test_a_5000_device_world_parses_and_loads_from_its_file(tmp_path):
    # How fast: benchmarks/bench_scale.py (a timing here would fail on a busy machine, not a slow loader).
    data = generate_world(1000, 5000, seed=1)
    assert len(parse_world(data, "big").devices) == 5000
    path = tmp_path / "big.yaml"
    assert main(["worlds", "generate", "--rooms", "1000", "--devices", "5000", "--seed", "1", "--out", str(path)]) == 0
    home = load_world(path)
    assert len(home.devices) == 5000 and home.graph.number_of_nodes() == 1000


def test_json_world_text_reads_like_its_yaml():
    assert read_yaml('{"rooms": [{"id": "a", "state": {"on": false}}]}') == \
        read_yaml("rooms: [{id: a, state: {on: false}}]")


def test_world_errors_still_name_the_key_path_after_the_speed_ups():
    data = generate_world(20, 100, seed=1)
    data["devices"][7]["room"] = "attic"
    with pytest.raises(Exception, match=r"devices\[7\]\.room: unknown room 'attic'; rooms are: stairs-0, lobby"):
        parse_world(data, "gen.yaml")
    data = generate_world(20, 100, seed=1)
    data["rooms"][3]["exits"].append("lobby")
    with pytest.raises(Exception, match="is not symmetric"):
        parse_world(data, "gen.yaml")


def test_copying_a_home_gives_what_the_generic_deepcopy_gives():
    home = generate_home(20, 100, seed=3)
    home.record_sighting(next(iter(home.items)), "lobby")
    fast = copy_home(home)
    fast_fn = Home.__deepcopy__
    try:
        del Home.__deepcopy__
        slow = copy_home(home)
    finally:
        Home.__deepcopy__ = fast_fn
    assert fast.devices == slow.devices and fast.items == slow.items and fast.seen == slow.seen
    assert fast.truth() == slow.truth() and fast.knowledge() == slow.knowledge()
    fast.update_device("lobby-light", {"on": not home.devices["lobby-light"].state["on"]})
    assert fast.devices["lobby-light"].state != home.devices["lobby-light"].state
    assert fast.devices_in("lobby")[0] is fast.devices["lobby-light"]
    assert copy.deepcopy(fast).reset().device_states() == home.reset().device_states()


@pytest.mark.parametrize("devices", [10, 100, 1000])
def test_generated_tasks_are_solved_by_the_oracle_and_by_the_offline_agent(devices):
    home = generate_home(devices=devices, seed=1)
    tasks = generate_tasks(home, n=5, seed=1)
    assert {t.category for t in tasks} == {"direct", "multi-device", "search"}
    for task in tasks:
        assert oracle_plan(task, home)[-1][0] == "halt"
        scene = set_stage(task, home)
        episode = run_agent(task.instruction, scene.home, agent="function-calling", user=scene.user,
                            knowledge_format="retrieval", context=scene.run_context)
        checks = run_checks(task.expect, Outcome.from_run(episode.to_run_json(), scene))
        assert all(c.passed for c in checks), (task.instruction, [c.reason for c in checks if not c.passed])


def test_cli_generate_prints_a_world_file(capsys):
    assert main(["worlds", "generate", "--rooms", "4", "--devices", "10", "--seed", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert check_home(parse_world(data)) == [] and len(data["devices"]) == 10
    assert main(["worlds", "generate"]) == 2


def test_the_world_generator_does_not_import_the_benchmark():
    # lares_kit.home.generator builds worlds; tasks for them are the benchmark's (lares_kit.bench.suites.generated).
    # Read from the source, imports inside functions included: a lazy import is still an import.
    tree = ast.parse(Path(lares_kit.home.generator.__file__).read_text(encoding="utf-8"))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert imported and not [name for name in imported if "bench" in name.split(".")]
