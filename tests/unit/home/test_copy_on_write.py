"""Copies and start states that cost nothing for the devices an episode leaves alone (issue 23).

A home never writes into a device's state dict: ``update_device`` gives the
device a new one. So a copy (``copy_home``) shares every state until it
changes one, a scene's start state is the home's own dicts, and comparing the
start with the end skips every device whose state is still the start's own
dict. These tests pin that, on the generated 5,000-device building, and that
what an episode records about the home stays exactly right: a device changed
and changed back, a device changed twice, the home's own dicts never handed
out in a record. No timing here: ``benchmarks/bench_overhead.py`` measures.
"""

from __future__ import annotations

import copy

import pytest
from fakes import FakeClient, call

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.bench.jobs import Job, blank_record, run_job
from lares_kit.bench.judging.collateral import changes
from lares_kit.bench.scene import copy_home, set_stage
from lares_kit.bench.suites.generated import generate_tasks
from lares_kit.home.generator import generate_home
from lares_kit.tools.toolbox import set_light

THERMOSTAT, LIGHT = "office-914-thermostat", "stairs-0-light"  # in the building; the light starts on


@pytest.fixture(scope="module")
def building():
    return generate_home(devices=5000, seed=1)


@pytest.fixture(scope="module")
def thermostat_task(building):
    task = next(t for t in generate_tasks(building, n=5, seed=1) if t.id.endswith("-03-device"))
    assert task.expect.states == {THERMOSTAT: {"target": 23}}
    return task


def _script():
    # the thermostat changed twice, the stairs light switched off and back on, then the halt
    return FakeClient([call("set_device", device_id=THERMOSTAT, attribute="target", value=21),
                       call("set_device", device_id=THERMOSTAT, attribute="target", value=23),
                       call("set_light", light_id=LIGHT, on=False),
                       call("set_light", light_id=LIGHT, on=True),
                       call("halt", message_to_user="The thermostat is at 23 degrees.")])


class Untouchable(dict):
    """A state that fails the test when anything reads it."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("a device the episode did not change was read")

    __iter__ = keys = values = items = get = __len__ = __eq__ = _refuse


# ------------------------------------------------------------------ copies
def test_a_copy_shares_each_state_until_either_home_changes_it():
    home = load_world("townhouse")
    twin = copy_home(home)
    assert all(twin.devices[d] is not home.devices[d] for d in home.devices)  # devices of its own...
    assert all(twin.devices[d].state is home.devices[d].state for d in home.devices)  # ...states shared, not copied
    kept, lit = home.devices["hall-thermostat"].state, home.devices["kitchen-light"].state["on"]
    twin.update_device("hall-thermostat", {"target": 25})
    home.update_device("kitchen-light", {"on": not lit})
    assert home.devices["hall-thermostat"].state is kept and kept["target"] != 25
    assert twin.devices["hall-thermostat"].state["target"] == 25
    assert twin.devices["kitchen-light"].state["on"] is lit
    assert twin.device_states() == {**home.device_states(), "hall-thermostat": {**kept, "target": 25},
                                    "kitchen-light": {"on": lit}}


def test_a_tool_holding_a_device_reads_its_new_state_in_a_copy():
    home = load_world("lares-home")
    twin = copy_home(home)
    assert set_light(twin, "kitchen-light", True).startswith("The light in the Kitchen (kitchen-light) is now on.")
    assert home.devices["kitchen-light"].state == {"on": False}
    assert twin.devices_in("kitchen")[0] is twin.devices["kitchen-light"]


def test_a_staged_home_has_states_of_its_own(building, thermostat_task):
    scene = set_stage(thermostat_task, building)
    assert all(scene.home.devices[d].state is not building.devices[d].state for d in building.devices)
    assert scene.home.device_states() == building.device_states()


def test_a_snapshot_by_reference_keeps_the_start():
    home = load_world("lares-home")
    start = home.device_states(shared=True)
    home.update_device("kitchen-light", {"on": True})
    home.update_device("kitchen-light", {"on": False})  # back as it was: a new dict, the same settings
    home.update_device("office-light", {"on": True})
    home.update_device("office-light", {"on": False})
    home.update_device("office-light", {"on": True})  # changed three times
    assert start["kitchen-light"] == {"on": False} and start["office-light"] == {"on": False}
    assert changes(start, home) == [("office-light", "on", False, True)]


def test_reset_puts_back_states_changed_in_place_too():
    home = load_world("lares-home")
    home.devices["kitchen-light"].state["on"] = True  # not through update_device: reset still sees it
    assert home.reset().devices["kitchen-light"].state == {"on": False}


# ------------------------------------------------------------ comparisons
def test_changes_never_reads_a_device_whose_state_is_the_start_itself():
    home = load_world("lares-home")
    home.devices["bedroom-light"].state = Untouchable(on=False)
    start = home.device_states(shared=True)
    home.update_device("kitchen-light", {"on": True})
    assert changes(start, home) == [("kitchen-light", "on", False, True)]


def test_changes_still_compares_a_start_that_was_copied():
    home = load_world("lares-home")
    start = home.device_states()  # copies: every device is compared, and only real changes count
    home.update_device("kitchen-light", {"on": True})
    home.update_device("hallway-light", {"on": True})  # already on
    assert changes(start, home) == [("kitchen-light", "on", False, True)]


# ---------------------------------------------------------------- episodes
def test_a_5000_device_episode_copies_only_what_it_changes(building, thermostat_task, monkeypatch):
    world_before = building.device_states()
    deep = {"copies": 0}
    real_deepcopy = copy.deepcopy

    def counted(value, memo=None):
        deep["copies"] += 1
        return real_deepcopy(value, memo)

    monkeypatch.setattr(copy, "deepcopy", counted)
    scene = set_stage(thermostat_task, building)
    start = dict(scene.start)
    episode = run_agent(thermostat_task.instruction, scene.home, agent="function-calling", model="fake",
                        client=_script(), user=scene.user, knowledge_format="retrieval", context=scene.run_context)
    monkeypatch.setattr(copy, "deepcopy", real_deepcopy)
    assert episode.status == "done"
    assert deep["copies"] < 500, f"{deep['copies']} deep copies for 5,000 devices: something copies every device"
    # only the two devices the calls changed have new state dicts; the other 4,998 are the start's very dicts
    renewed = {d for d, dev in scene.home.devices.items() if dev.state is not start[d]}
    assert renewed == {THERMOSTAT, LIGHT}
    assert all(scene.start[d] is start[d] for d in start)
    assert scene.start[THERMOSTAT] == world_before[THERMOSTAT] and scene.start[LIGHT] == {"on": True}
    assert changes(scene.start, scene.home) == [(THERMOSTAT, "target", world_before[THERMOSTAT]["target"], 23)]
    # the episode's records are whole, right, and its own (never the home's dicts)
    assert episode.initial_state["devices"] == world_before
    assert episode.final_state["devices"] == {**world_before, THERMOSTAT: {**world_before[THERMOSTAT], "target": 23}}
    assert all(episode.initial_state["devices"][d] is not start[d] for d in (THERMOSTAT, LIGHT, "lobby-light"))
    assert all(episode.final_state["devices"][d] is not scene.home.devices[d].state for d in (THERMOSTAT, LIGHT))
    assert [s.after["devices"] for s in episode.tool_calls] == [
        {THERMOSTAT: {**world_before[THERMOSTAT], "target": 21}},
        {THERMOSTAT: {**world_before[THERMOSTAT], "target": 23}},
        {LIGHT: {"on": False}}, {LIGHT: {"on": True}}, {}]
    assert building.device_states() == world_before  # the world itself never changed


def test_a_bench_record_judges_a_change_back_as_no_change(building, thermostat_task):
    record = run_job(Job(thermostat_task, "function-calling", "fake", knowledge_format="retrieval"), building,
                     _script(), oracle=2)
    assert record["error"] is None and record["success"] is True
    assert record["changed"] == [THERMOSTAT] and record["collateral"] == []
    assert record["knowledge_format"] == "retrieval" and record["episode"]["knowledge_format"] == "retrieval"
    episode = record["episode"]
    assert len(episode["initial_state"]["devices"]) == len(episode["final_state"]["devices"]) == 5000
    assert episode["final_state"]["devices"][LIGHT] == episode["initial_state"]["devices"][LIGHT] == {"on": True}


def test_a_job_without_a_knowledge_format_records_none(thermostat_task):
    job = Job(thermostat_task, "function-calling", "offline")
    assert "knowledge_format" not in blank_record(job, 2) and "knowledge_format" not in job.identity()
    assert Job(thermostat_task, "function-calling", "offline", knowledge_format="full").identity()[
        "knowledge_format"] == "full"
