"""The offline model drives real homes through the real openai SDK.

A tiny loop plays the agent (``drivers.drive``; the toolkit's agent loops
are tested in test_agents.py): it builds the messages as the prompt contract says, calls
the model, dispatches its calls with Toolbox, and feeds the results back.
The model only ever sees the request.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from drivers import drive  # tests/drivers.py

from lares_kit import load_world

RENAMES = {"lounge": ("parlour", "Parlour"), "hallway": ("vestibule", "Vestibule"), "kitchen": ("galley", "Galley"),
           "bedroom": ("snug", "Snug"), "office": ("studio", "Studio")}


@pytest.fixture(scope="module")
def renamed_world(tmp_path_factory) -> Path:
    """lares-home with every room renamed (ids and names), written to a tmp folder."""
    text = (Path(__file__).resolve().parents[4] / "worlds" / "lares-home.yaml").read_text()
    text = text.replace("id: lares-home", "id: renamed-home")
    for old, (new, name) in RENAMES.items():
        text = re.sub(rf"\b{old}\b", new, text).replace(f"name: {old.capitalize()}", f"name: {name}")
    path = tmp_path_factory.mktemp("worlds") / "renamed-home.yaml"
    path.write_text(text)
    return path


# world -> (kitchen-like room, its light, office-like room and light, the hidden pet's words)
WORLDS = {
    "lares-home": ("kitchen", "kitchen-light", "office", "office-light", "my dog"),
    "garden-flat": ("kitchen", "kitchen-light", "study", "study-light", "my cat"),
    "renamed": ("galley", "galley-light", "studio", "studio-light", "my dog"),
}


def _home(world, renamed_world):
    return load_world(renamed_world if world == "renamed" else world)


@pytest.mark.parametrize("style", ["auto", "intent"])
@pytest.mark.parametrize("mode", ["latest", "initial"])
@pytest.mark.parametrize("world", list(WORLDS))
def test_scenario_1_turn_on_a_light(world, mode, style, renamed_world):
    room, light, *_ = WORLDS[world]
    home = _home(world, renamed_world)
    home.reset(states={light: {"on": False}})
    steps, _ = drive(home, f"turn on the light in the {room}", mode=mode, style=style)
    assert home.devices[light].state["on"] is True
    assert steps[-1][0] == "halt" and len(steps) == 2


@pytest.mark.parametrize("seed", [None, 1, 2, 5, 11])
@pytest.mark.parametrize("style", ["auto", "intent"])
@pytest.mark.parametrize("world", list(WORLDS))
def test_scenario_2_light_for_the_pet(world, style, seed, renamed_world):
    *_, pet = WORLDS[world]
    home = _home(world, renamed_world)
    home.reset(seed=seed)
    kind = pet.split()[-1]
    where = next(i.room for i in home.items.values() if i.type == kind)
    steps, _ = drive(home, f"turn on the light for {pet}", mode="initial", style=style)
    assert home.is_lit(where), steps
    assert steps[-1][0] == "halt" and home.items[next(i for i in home.items if home.items[i].type == kind)].name \
        in steps[-1][1]["message_to_user"]
    # it looked in the pet's room with the robot before halting
    assert any(name == "look_with_robot" and f"({where})" in result for name, _, result in steps)


@pytest.mark.parametrize("answer,expected", [("Yes, it's sunny", False), ("no, it's night", True),
                                              ("It's the middle of the night", True), ("yes", False)])
@pytest.mark.parametrize("style", ["auto", "intent"])
@pytest.mark.parametrize("world", list(WORLDS))
def test_scenario_3_ask_whether_it_is_daytime(world, style, answer, expected, renamed_world):
    *_, room, light, _ = WORLDS[world]
    home = _home(world, renamed_world)
    home.reset(states={light: {"on": not expected}})
    steps, user = drive(home, f"set the {room} light depending on whether it's daytime", answers=[answer],
                        mode="initial", style=style)
    assert len(user.asked) == 1 and "daytime" in user.asked[0].lower()
    assert home.devices[light].state["on"] is expected
    assert steps[-1][0] == "halt"


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_the_model_cannot_know_hidden_things(seed):
    # The dog is moved by a seeded reset; the knowledge does not show it, so the model must move and look.
    home = load_world("lares-home").reset(seed=seed)
    dog = home.items["bruno"].room
    assert "bruno" not in json.dumps(home.knowledge())
    steps, _ = drive(home, "turn on the light for my dog")
    looks = [result for name, _, result in steps if name == "look_with_robot" and not result.startswith("Error")]
    assert looks and "bruno" in looks[-1] and f"({dog})" in looks[-1]
    assert all("bruno" not in result for result in looks[:-1])  # it reported only after seeing
    if dog != "hallway":
        assert any(name == "move_robot" for name, _, _ in steps)
    # every light it switched on was where the robot was (to see) -- no guessing at the dog's room
    robot = "hallway"
    for name, args, result in steps:
        if name == "move_robot" and not result.startswith("Error"):
            robot = args["destination_room_id"]
        if name == "set_light":
            assert args["light_id"] == f"{robot}-light"


def test_parallel_calls_for_independent_changes():
    home = load_world("garden-flat")
    steps, _ = drive(home, "turn off all the lights", parallel=True)
    assert all(not d.state["on"] for d in home.lights())
    assert [s[0] for s in steps] == ["set_light", "set_light", "halt"]


def test_toggle_only_and_knowledge_none():
    home = load_world("lares-home")
    from lares_kit.tools.toolbox import halt, toggle_light

    steps, _ = drive(home, "turn on the light in the kitchen", mode="none", tools=[toggle_light, halt])
    assert home.devices["kitchen-light"].state["on"] is True
    assert steps[0][0] == "toggle_light"


def test_search_without_a_map_asks_or_halts():
    home = load_world("lares-home")
    steps, user = drive(home, "find my dog", mode="none", answers=["in the bedroom"])
    assert user.asked and "map" in user.asked[0]
    assert steps[-1][0] == "halt"


@pytest.mark.parametrize("instruction,fragment", [
    ("turn on the light in the garage", "no garage"),
    ("turn on the tv", "no tv"),
    ("make me a sandwich", "no arms or hands"),  # a clear request: refused with the reason, not "not understood"
])
def test_refuses_what_the_home_cannot_do(instruction, fragment):
    home = load_world("lares-home")
    before = home.device_states()
    steps, _ = drive(home, instruction)
    assert [s[0] for s in steps] == ["halt"] and fragment in steps[0][1]["message_to_user"]
    assert home.device_states() == before


def test_answers_questions_from_knowledge_with_halt_only():
    home = load_world("garden-flat")
    steps, _ = drive(home, "which lights are on?")
    assert [s[0] for s in steps] == ["halt"]
    message = steps[0][1]["message_to_user"]
    assert "Entrance" in message and "Kitchen" in message and "Study" not in message


@pytest.mark.parametrize("instruction,device,state", [
    ("set the heating to 21", "hall-thermostat", {"target": 21}),
    ("lock the front door", "front-door-lock", {"locked": True}),
    ("turn on the lamp in the living room", "lounge-light", {"on": True}),
])
def test_devices_and_aliases(tmp_path, instruction, device, state):
    text = (Path(__file__).resolve().parents[4] / "worlds" / "lares-home.yaml").read_text()
    text = text.replace("id: lares-home", "id: device-home")
    extra = ("  - {id: hall-thermostat, name: Thermostat, type: thermostat, room: hallway, "
             "state: {target: 18, mode: heat, temperature: 17}}\n"
             "  - {id: front-door-lock, name: Front door lock, type: lock, room: hallway, state: {locked: false}}\n")
    text = text.replace("robot: {", extra + "robot: {", 1)
    (tmp_path / "device-home.yaml").write_text(text)
    home = load_world(tmp_path / "device-home.yaml")
    steps, _ = drive(home, instruction)
    assert {k: home.devices[device].state[k] for k in state} == state
    assert steps[-1][0] == "halt"


def test_out_of_range_value_is_reported_not_retried(tmp_path):
    text = (Path(__file__).resolve().parents[4] / "worlds" / "lares-home.yaml").read_text()
    text = text.replace("robot: {", "  - {id: hall-thermostat, name: Thermostat, type: thermostat, room: hallway, "
                                     "state: {target: 18}}\nrobot: {", 1)
    (tmp_path / "t.yaml").write_text(text.replace("id: lares-home", "id: t"))
    steps, _ = drive(load_world(tmp_path / "t.yaml"), "set the heating to 45")
    assert [s[0] for s in steps] == ["set_device", "halt"]
    assert "could not change" in steps[-1][1]["message_to_user"]
