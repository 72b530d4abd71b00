"""Home Assistant's evaluation format: reading homes and datasets, the whole-home state diff, running them as suites.

The fixtures in lares_kit/data/ha/lares-mini are this project's own (three made-up homes, plain requests),
written in the format of the home-assistant-datasets project; nothing here reads or imitates its data.
Episodes are scripted through the real Toolbox, as in test_bench_checks, so a check's verdict is about
the check, never about a model.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from lares_kit import Toolbox, run_agent
from lares_kit.bench import run_bench
from lares_kit.bench.judging.checks import Outcome, run_checks
from lares_kit.bench.judging.ha_diff import HAExpect, missing_words
from lares_kit.bench.records import record_problem
from lares_kit.bench.runner import RESULT_KEYS, Job
from lares_kit.bench.scene import set_stage
from lares_kit.bench.suites.ha_dataset import HADatasetError, import_ha, load_ha_dataset
from lares_kit.bench.suites.tasks import Expect, load_suite, task_home
from lares_kit.ha.domains import HA_DOMAINS, from_ha, to_ha
from lares_kit.tools.toolbox import default_tools

DATASET = Path(__file__).resolve().parents[3] / "lares_kit" / "data" / "ha" / "lares-mini"
MAPLE = DATASET / "maple-house"
# The domains the issue asks for; every one appears in the fixtures.
DOMAINS = {"light", "switch", "fan", "cover", "lock", "valve", "climate", "media_player", "vacuum", "todo", "sensor",
           "binary_sensor", "weather"}


@pytest.fixture(scope="module")
def dataset():
    return load_ha_dataset(DATASET)


def by_sentence(tasks, sentence):
    return next(t for t in tasks if t.instruction == sentence)


def play(task, calls, final="Done."):
    """Scripted calls in the task's own scene; the Outcome the checks read."""
    scene = set_stage(task, task_home(task))
    box = Toolbox(scene.home, tools=default_tools(scene.home), user=scene.user)
    steps = []
    for tool, args in calls:
        obs = box.dispatch(tool, args)
        assert obs.ok, obs.content
        steps.append({"tool": tool, "arguments": args, "result": obs.content, "ok": obs.ok})
    return Outcome.from_run({"status": "done", "final_message": final, "steps": steps, "asked": []}, scene)


def verdicts(task, outcome):
    return {r.kind: r for r in run_checks(task.expect, outcome)}


def setting(device, attribute, value):
    return ("set_device", {"device_id": device, "attribute": attribute, "value": value})


# ------------------------------------------------------------------ loading
def test_one_home_loads_as_one_world_with_its_floors_and_areas():
    worlds, tasks = load_ha_dataset(MAPLE)
    (home,) = worlds.values()
    assert home.id == "maple-house" and {t.world for t in tasks} == {"maple-house"}
    rooms = dict(home.graph.nodes(data=True))
    assert rooms["bedroom-1"]["name"] == "Bedroom 1"  # ids slugified, names kept
    assert {f["name"] for f in home.floors.values()} == {"Ground Floor", "Upper Floor"}
    assert rooms["kitchen"]["floor"] != rooms["bedroom-1"]["floor"]
    # no layout in HA: the areas are chained in file order, plus a room for the entities with no area
    assert list(home.graph.neighbors("kitchen")) == ["living-room"]
    assert home.devices["weather-home-forecast"].room == "no-area"
    # an entity's area may come from its device
    assert home.devices["lock-back-door"].room == "kitchen"
    assert home.devices["lock-back-door"].entity_id == "lock.back_door"
    assert home.robot.room == "kitchen"
    assert home.devices["climate-thermostat"].capabilities["target"]["high"] == 28
    assert len(tasks) == 16 and len({t.id for t in tasks}) == 16  # one task per sentence


def test_a_dataset_loads_every_home_and_every_domain(dataset):
    worlds, tasks = dataset
    assert sorted(worlds) == ["lares-mini-birch-flat", "lares-mini-cedar-cabin", "lares-mini-maple-house"]
    assert len(tasks) == 31 and {t.suite for t in tasks} == {"lares-mini"}
    domains = {d.entity_id.split(".")[0] for w in worlds.values() for d in w.devices.values()}
    assert DOMAINS <= domains
    assert {t.category for t in tasks} == {"light", "device", "question", "media-player", "household", "cabin"}
    assert all(t.world_data is not None and t.expect.ha is not None for t in tasks)
    # HA's expectation in its own names; ignore_changes and both forms of expect_response are read
    t = by_sentence(tasks, "switch off the living room lights")
    assert t.expect.ha.changes == {"light.living_room_lights": {"state": "off"}}
    assert t.expect.ha.ignore == {"light.living_room_lights": ["brightness"]}
    assert by_sentence(tasks, "what is the temperature in the office?").expect.ha.response == ["21.5"]
    assert by_sentence(tasks, "is the garage door open?").expect.ha.response == ["open"]
    # the set-up in lares_kit's terms: only what differs from the fixture
    assert by_sentence(tasks, "what is the weather like today?").setup.states == \
        {"weather-home-forecast": {"condition": "cloudy"}}
    assert by_sentence(tasks, "turn on the kitchen light").setup.states == {}  # it is off already


def copy_home(tmp_path, name="maple-house"):
    home = tmp_path / name
    shutil.copytree(DATASET / name, home)
    return home


@pytest.mark.parametrize("file, old, new, words", [
    ("_fixtures.yaml", "id: switch.coffee_maker", "id: camera.coffee_maker",
     ["_fixtures.yaml: entities[3].id: camera.coffee_maker: lares_kit cannot model", "'camera'", "light, lock"]),
    ("_fixtures.yaml", "    area: kitchen\n    state: \"off\"", "    area: pantry\n    state: \"off\"",
     ["_fixtures.yaml: entities[0].area: unknown area 'pantry'; areas are: kitchen"]),
    ("_fixtures.yaml", "id: light.kitchen_light", "id: kitchen light", ["entities[0].id: expected an entity id"]),
    ("lights.yaml", "    expect_changes:\n      light.kitchen_light:", "    expect_change:\n      light.kitchen_light:",
     ["lights.yaml: tests[0].expect_change: unknown key 'expect_change'"]),
    ("lights.yaml", "      light.bedroom_1_lamp:\n        state: \"on\"",
     "      light.bedroom_lamp:\n        state: \"on\"",
     ["lights.yaml: tests[3].expect_changes.light.bedroom_lamp: no entity 'light.bedroom_lamp' in this home",
      "did you mean 'light.bedroom_1_lamp'?"]),
    ("lights.yaml", "  - sentences:\n      - turn on the lamp in bedroom 1", "  - sentences: []",
     ["lights.yaml: tests[3].sentences: expected at least one sentence"]),
    ("questions.yaml", "    expect_response: \"21.5\"", "    expect_response: {value: 21.5}",
     ["questions.yaml: tests[0].expect_response[0]: expected a word or number"]),
    ("devices.yaml", "category: device", "category: [7]", ["devices.yaml: category: expected the tests' category"]),
    ("devices.yaml", "        state: locked", "        state: [locked]",
     ["devices.yaml: tests[1].expect_changes.lock.back_door.state: expected a state"]),
])
def test_bad_files_are_one_sentence_naming_the_file_and_the_key(tmp_path, file, old, new, words):
    home = copy_home(tmp_path)
    text = (home / file).read_text(encoding="utf-8")
    assert old in text
    (home / file).write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(HADatasetError) as error:
        load_ha_dataset(home)
    for word in words:
        assert word in str(error.value)


def test_a_folder_with_no_home_says_what_to_point_at(tmp_path):
    with pytest.raises(HADatasetError, match="no _fixtures.yaml here or in the folders below"):
        load_ha_dataset(tmp_path)
    with pytest.raises(HADatasetError, match="folder not found"):
        load_ha_dataset(tmp_path / "missing")


# ------------------------------------------------------------------ HA's states both ways
ROUND_TRIPS = [  # (domain, HA state, HA attributes), each as HA reports it
    ("light", "on", {"brightness": 128}), ("light", "off", {}), ("switch", "on", {}), ("input_boolean", "off", {}),
    ("fan", "on", {"percentage": 66}), ("cover", "open", {"current_position": 40}), ("cover", "closed", {}),
    ("lock", "locked", {}), ("lock", "unlocked", {}), ("valve", "open", {}),
    ("valve", "closed", {"current_position": 0}),
    ("climate", "heat", {"temperature": 21, "current_temperature": 19.5}), ("climate", "off", {"temperature": 21}),
    ("media_player", "playing", {"volume_level": 0.3}), ("media_player", "paused", {"is_volume_muted": True}),
    ("media_player", "off", {}), ("vacuum", "cleaning", {}), ("vacuum", "docked", {}), ("todo", "3", {}),
    ("sensor", "21.5", {"unit_of_measurement": "°C", "device_class": "temperature"}),
    ("sensor", "1000", {"unit_of_measurement": "hPa"}), ("binary_sensor", "on", {"device_class": "motion"}),
    ("weather", "sunny", {"temperature": 18, "temperature_unit": "°C"}), ("calendar", "Dentist", {"all_day": False}),
    ("alarm_control_panel", "armed_away", {}), ("alarm_control_panel", "disarmed", {}),
]


def test_every_domain_has_a_round_trip():
    assert {d for d, _, _ in ROUND_TRIPS} == set(HA_DOMAINS)


@pytest.mark.parametrize("domain, state, attributes", ROUND_TRIPS, ids=lambda x: str(x)[:20])
def test_every_domain_round_trips_through_lares_kit(domain, state, attributes):
    kind, lares = from_ha(domain, state, attributes)
    assert to_ha(kind, lares) == (state, attributes)
    assert from_ha(domain, *to_ha(kind, lares)) == (kind, lares)


# ------------------------------------------------------------------ the check
def test_a_right_episode_passes(dataset):
    t = by_sentence(dataset.tasks, "set the living room lights to 40%")
    result = verdicts(t, play(t, [setting("light-living-room-lights", "brightness", 40)]))["ha_state"]
    assert result.passed and "nothing else changed" in result.reason and result.collateral == []


def test_a_wrong_change_fails(dataset):
    t = by_sentence(dataset.tasks, "set the living room lights to 40%")
    result = verdicts(t, play(t, [setting("light-living-room-lights", "brightness", 60)]))["ha_state"]
    assert not result.passed
    assert "light.living_room_lights brightness is 153, expected 102" in result.reason
    assert result.collateral == []


def test_a_right_change_and_one_extra_device_fails_as_collateral_damage(dataset):
    t = by_sentence(dataset.tasks, "lock the back door")
    right = [setting("lock-back-door", "locked", True)]
    assert verdicts(t, play(t, right))["ha_state"].passed
    result = verdicts(t, play(t, right + [setting("switch-coffee-maker", "on", True)]))["ha_state"]
    assert not result.passed and result.collateral == ["switch.coffee_maker"]
    assert "Collateral damage (changed without being asked): switch.coffee_maker state went from \"off\" to " \
           "\"on\"" in result.reason


def test_doing_nothing_is_right_for_a_question_and_anything_else_is_damage(dataset):
    t = by_sentence(dataset.tasks, "what is the temperature in the office?")
    checks = verdicts(t, play(t, [], "It is 21.5 degrees in the office."))
    assert checks["ha_state"].passed and checks["ha_response"].passed
    assert set(checks) == {"ha_state", "ha_response", "minefield"}
    damage = verdicts(t, play(t, [("set_light", {"light_id": "light-kitchen-light", "on": True})], "21.5"))
    assert damage["ha_state"].collateral == ["light.kitchen_light"]


def test_a_missing_response_word_fails(dataset):
    t = by_sentence(dataset.tasks, "what is the temperature in the office?")
    for wrong in ("It is 21 degrees.", "It is 21.55 degrees.", "I do not know."):
        result = verdicts(t, play(t, [], wrong))["ha_response"]
        assert not result.passed and "does not contain: 21.5" in result.reason
    assert missing_words(["Cloudy", "18"], "cloudy and 18 degrees") == []
    assert missing_words(["open"], "It is reopened.") == ["open"]  # whole words


def test_ignore_changes_is_honoured_and_may_name_the_state(dataset):
    t = by_sentence(dataset.tasks, "turn off the living room speaker")
    off = [setting("media-player-living-room-speaker", "on", False)]
    louder = [setting("media-player-living-room-speaker", "volume", 80)]
    assert verdicts(t, play(t, off + louder))["ha_state"].passed  # volume_level is ignored
    t = by_sentence(dataset.tasks, "set the speaker volume to 50%")  # ignores its state
    assert verdicts(t, play(t, [setting("media-player-living-room-speaker", "volume", 50),
                                setting("media-player-living-room-speaker", "playing", False)]))["ha_state"].passed
    strict = replace(t, expect=replace(t.expect, ha=replace(t.expect.ha, ignore={})))
    result = verdicts(strict, play(strict, [setting("media-player-living-room-speaker", "volume", 50),
                                            setting("media-player-living-room-speaker", "playing", False)]))
    assert not result["ha_state"].passed and "state is \"paused\", expected \"playing\"" in result["ha_state"].reason


def test_an_unmodelled_attribute_can_never_be_met(dataset):
    t = by_sentence(dataset.tasks, "turn on the kitchen light")
    warm = {"light.kitchen_light": {"state": "on", "attributes": {"color_temp_kelvin": 2700}}}
    t = replace(t, expect=replace(t.expect, ha=HAExpect(warm)))
    result = verdicts(t, play(t, [("set_light", {"light_id": "light-kitchen-light", "on": True})]))["ha_state"]
    assert not result.passed and "color_temp_kelvin is absent, expected 2700" in result.reason


def test_a_light_takes_the_colours_home_assistant_names():
    # HA's datasets set a colour on any light; the check compares HA's rgb_color
    t = by_sentence(load_ha_dataset(DATASET).tasks, "turn on the kitchen light")
    red = {"light.kitchen_light": {"state": "on", "attributes": {"rgb_color": [255, 0, 0]}}}
    t = replace(t, expect=replace(t.expect, ha=HAExpect(red)))
    moves = [("set_device", {"device_id": "light-kitchen-light", "attribute": "color", "value": "red"}),
             ("set_light", {"light_id": "light-kitchen-light", "on": True})]
    assert verdicts(t, play(t, moves))["ha_state"].passed
    home = task_home(t)
    ep = run_agent("set the kitchen light to red", home, agent="function-calling", tool_set="ha")
    assert home.devices["light-kitchen-light"].state["color"] == "red", ep.final_message


# ------------------------------------------------------------------ running
def test_the_offline_model_runs_the_dataset_with_function_calling(dataset, tmp_path):
    bench = run_bench(dataset.tasks, agents=["function-calling"], models=["offline"], runs=tmp_path)
    assert len(bench.records) == 31 and not [r["error"] for r in bench.records if r["error"]]
    for result in bench.results:
        assert list(result) == list(RESULT_KEYS) and isinstance(result["collateral"], list)
    assert all(r["oracle_steps"] >= 1 for r in bench.records)
    assert all({c["kind"] for c in r["checks"]} <= {"ha_state", "ha_response", "minefield"} for r in bench.records)
    rows = {r["category"]: r for r in bench.summary["by_category"]}
    assert set(rows) == {t.category for t in dataset.tasks} and all("collateral" in r for r in rows.values())
    json.dumps(bench.to_json())
    again = run_bench(dataset.tasks, agents=["function-calling"], models=["offline"], runs=tmp_path)
    assert again.resumed == 31 and again.results == bench.results  # the records read back as they were


def test_import_writes_a_suite_lares_bench_runs(dataset, tmp_path):
    written = import_ha(DATASET, tmp_path)
    assert sorted(p.name for p in written[:-1]) == [f"{w}.yaml" for w in sorted(dataset.worlds)]
    tasks = load_suite(written[-1])
    assert [t.id for t in tasks] == [t.id for t in dataset.tasks]
    assert [t.world for t in tasks] == [t.world for t in dataset.tasks]
    # the same definitions: a run of the imported suite and one of the dataset share their records
    assert [t.fingerprint() for t in tasks] == [t.fingerprint() for t in dataset.tasks]
    some = [t for t in tasks if t.category == "light"]
    bench = run_bench(some, agents=["intent-action"], models=["offline"])
    assert [r["task"] for r in bench.results] == [t.id for t in some] and not any(r["error"] for r in bench.results)


def test_existing_suites_keep_their_fingerprints_and_name_their_collateral_by_device():
    t = load_suite("lares-home")[0]
    assert t.world_data is None and t.expect.ha is None
    assert run_bench([t], agents=["intent-action"], models=["offline"]).results[0]["collateral"] == []


def test_tool_set_reaches_run_agent_only_when_it_is_not_lares(dataset, monkeypatch):
    import lares_kit.agents as agents

    seen = []
    real = agents.run_agent

    def spy(*args, **kwargs):
        seen.append(kwargs.get("tool_set", "(none)"))
        kwargs.pop("tool_set", None)  # the HA dialect may not be there yet
        return real(*args, **kwargs)

    monkeypatch.setattr(agents, "run_agent", spy)
    t = by_sentence(dataset.tasks, "turn on the kitchen light")
    lares = run_bench([t], agents=["function-calling"], models=["offline"])
    ha = run_bench([t], agents=["function-calling"], models=["offline"], tool_set="ha")
    assert seen == ["(none)", "ha"]
    assert "tool_set" not in lares.records[0] and ha.records[0]["tool_set"] == "ha"
    job = Job(t, "function-calling", "offline", tool_set="ha")
    assert job.path(Path("runs")).name.endswith("-latest-ha.json")


def test_a_record_with_bad_collateral_is_not_used(dataset):
    t = by_sentence(dataset.tasks, "lock the back door")
    record = run_bench([t], agents=["intent-action"], models=["offline"]).records[0]
    assert record_problem(record) is None
    assert "collateral" in record_problem({**record, "collateral": "switch.coffee_maker"})
    assert "entity ids" in record_problem({**record, "collateral": [3]})
    assert "another episode" in record_problem(record, {"tool_set": "ha"})


def test_oracle_counts_the_calls_that_make_the_changes(dataset):
    from lares_kit.bench.suites.ha_dataset import ha_oracle_steps

    counts = {t.instruction: ha_oracle_steps(t, dataset.worlds[t.world]) for t in dataset.tasks}
    assert counts["turn off all the lights on the ground floor"] == 3  # two lights and the reply
    assert counts["is the garage door open?"] == 1  # the reply only
    assert counts["add eggs to the shopping list"] == 2  # no Lares tool adds an item: one call counted
    assert Expect().ha is None


def test_a_dataset_under_a_hidden_folder_still_loads_but_hidden_homes_inside_do_not(tmp_path):
    root = tmp_path / ".cache" / "lares-mini"
    shutil.copytree(DATASET, root)
    shutil.copytree(DATASET / "cedar-cabin", root / ".git" / "cedar-cabin")
    worlds, tasks = load_ha_dataset(root)
    assert len(worlds) == 3 and len(tasks) == 31


def test_context_device_says_where_the_person_is_and_the_lights_there_are_meant():
    worlds, tasks = load_ha_dataset(MAPLE)
    task = next(t for t in tasks if t.instruction == "turn on the lights")
    assert task.setup.room == "kitchen" and task.expect.ha.ignore == {"light.kitchen_light": ["brightness"]}
    bench = run_bench([task], agents=["function-calling"], runs=None)
    record = bench.records[0]
    assert record["success"] and record["collateral"] == []
    assert "The person is in the Kitchen (kitchen)." in record["episode"]["goal_prompt"]


def test_a_context_device_that_is_not_in_the_home_is_a_clear_error(tmp_path):
    import shutil

    home = tmp_path / "maple-house"
    shutil.copytree(MAPLE, home)
    text = (home / "lights.yaml").read_text(encoding="utf-8").replace("context_device: kitchen_satellite",
                                                                     "context_device: attic_satellite")
    (home / "lights.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(HADatasetError, match="context_device: expected the id of a device with an area"):
        load_ha_dataset(home)
