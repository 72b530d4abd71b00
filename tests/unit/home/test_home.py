"""The home as a graph: shape of lares-home, truth vs knowledge, seeded reset, staleness."""

import networkx as nx
import pytest

from lares_kit import Toolbox, load_world

LARES_ROOMS = {
    "lounge": ("Lounge", {"hallway", "office"}, False),
    "hallway": ("Hallway", {"lounge", "kitchen", "bedroom"}, True),
    "kitchen": ("Kitchen", {"hallway"}, False),
    "bedroom": ("Bedroom", {"hallway"}, False),
    "office": ("Office", {"lounge"}, False),
}


@pytest.fixture
def home():
    return load_world("lares-home")


def test_graph_is_networkx_with_string_room_ids(home):
    assert isinstance(home.graph, nx.Graph)
    assert set(home.graph.nodes) == set(LARES_ROOMS)
    assert all(isinstance(n, str) for n in home.graph.nodes)


@pytest.mark.parametrize("room", sorted(LARES_ROOMS))
def test_lares_home_matches_the_original(home, room):
    name, exits, lit = LARES_ROOMS[room]
    assert home.graph.nodes[room]["name"] == name
    assert set(home.graph.neighbors(room)) == exits
    lights = home.devices_in(room, "light")
    assert [d.id for d in lights] == [f"{room}-light"]
    assert lights[0].state == {"on": lit}


def test_lares_home_is_a_tree_with_hallway_hub(home):
    assert nx.is_tree(home.graph)
    assert max(home.graph.degree, key=lambda kv: kv[1])[0] == "hallway"
    assert home.route("hallway", "office") == ["hallway", "lounge", "office"]


def test_movable_items_start_where_lares_puts_them(home):
    assert home.robot.room == "hallway"
    assert home.items["bruno"].room == "bedroom" and home.items["bruno"].type == "dog"
    assert home.items["sally"].room == "office" and home.items["sally"].type == "person"


def test_knowledge_hides_items_but_shows_robot_and_states(home):
    k = home.knowledge()
    assert k["robot"] == {"id": "robot", "room": "hallway"}
    assert k["seen"] == {}
    text = home.render_knowledge("json")
    assert "bruno" not in text and "sally" not in text and "Bruno" not in text
    hall = next(r for r in k["rooms"] if r["id"] == "hallway")
    assert hall["devices"][0]["state"] == {"on": True}


def test_truth_has_everything(home):
    t = home.truth()
    assert t["items"]["bruno"]["room"] == "bedroom"
    assert t["robot"] == "hallway"
    assert t["devices"]["kitchen-light"] == {"on": False}


def test_seeded_reset_is_repeatable_and_differs_across_seeds(home):
    placements = {seed: home.reset(seed=seed).items["bruno"].room for seed in range(20)}
    again = {seed: home.reset(seed=seed).items["bruno"].room for seed in range(20)}
    assert placements == again
    assert len(set(placements.values())) > 1
    assert home.reset().items["bruno"].room == "bedroom"


def test_reset_restores_devices_and_forgets_sightings(home):
    box = Toolbox(home)
    box.dispatch("set_light", {"light_id": "bedroom-light", "on": True})
    box.dispatch("move_robot", {"destination_room_id": "bedroom"})
    box.dispatch("look_with_robot", {})
    assert "bruno" in home.seen and home.time == 3
    home.reset()
    assert home.seen == {} and home.time == 0 and home.robot.room == "hallway"
    assert home.devices["bedroom-light"].state == {"on": False}


def test_reset_with_placements_and_states(home):
    home.reset(placements={"bruno": "kitchen"}, states={"kitchen-light": {"on": True}})
    assert home.items["bruno"].room == "kitchen"
    assert home.is_lit("kitchen")


def test_sightings_are_knowledge_and_go_stale(home):
    box = Toolbox(home)
    box.dispatch("set_light", {"light_id": "bedroom-light", "on": True})
    box.dispatch("move_robot", {"destination_room_id": "bedroom"})
    box.dispatch("look_with_robot", {})
    seen = home.knowledge()["seen"]["bruno"]
    assert seen["room"] == "bedroom" and seen["time"] == 3 and seen["type"] == "dog"
    home.move_item("bruno", "kitchen")  # the dog wanders off out of sight
    assert home.knowledge()["seen"]["bruno"]["room"] == "bedroom"  # stale
    assert home.truth()["items"]["bruno"]["room"] == "kitchen"
    box.dispatch("look_with_robot", {"x": 1})  # bad call: changes nothing
    obs = box.dispatch("move_robot", {"destination_room_id": "hallway"})
    assert obs.ok
    box.dispatch("move_robot", {"destination_room_id": "bedroom"})
    box.dispatch("look_with_robot", {})  # looking again corrects the knowledge
    assert "bruno" not in home.knowledge()["seen"]


@pytest.mark.parametrize("fmt", ["full", "compact", "overview", "text", "json"])
def test_render_knowledge_formats(home, fmt):
    text = home.render_knowledge(fmt)
    assert "kitchen-light" in text and "hallway" in text


def test_render_json_is_parseable(home):
    import json

    assert json.loads(home.render_knowledge()) == home.knowledge()
    assert json.loads(home.render_knowledge("compact")) == home.knowledge()
    assert home.render_knowledge("json") == home.render_knowledge("full") == json.dumps(home.knowledge(), indent=2)


def test_render_unknown_format(home):
    with pytest.raises(ValueError, match="^unknown knowledge format 'xml'; a knowledge dict renders as: full, compact"):
        home.render_knowledge("xml")
    with pytest.raises(ValueError, match="knowledge_text"):  # retrieval needs an instruction: it says where to go
        home.render_knowledge("retrieval")


def test_the_home_imports_no_prompt_or_agent_module():
    # The home is the world: it renders its knowledge with the leaf renderers, never through lares_kit.knowledge.modes.
    import ast
    from pathlib import Path

    import lares_kit.home.graph

    tree = ast.parse(Path(lares_kit.home.graph.__file__).read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level}
    # its clock (lares_kit.home.clock) imports only times and errors; its change marks (lares_kit.home.marks) nothing
    assert modules == {"clock", "knowledge.formats", "marks"}


def test_second_home_is_not_five_rooms():
    flat = load_world("garden-flat")
    assert flat.graph.number_of_nodes() == 9
    assert not nx.is_tree(flat.graph)  # it has a loop
    assert {i.type for i in flat.items.values()} == {"cat", "person"}
    assert len(flat.devices_in("living-room", "light")) == 2
