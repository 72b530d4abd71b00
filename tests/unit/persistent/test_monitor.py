"""The poller: SAGE's fridge scenario at the engine level, edges, errors, cancelling, the tools."""

from datetime import datetime

import pytest

from lares_kit import Toolbox, load_world
from lares_kit.home.clock import Clock, ClockError
from lares_kit.persistent.monitor import PERSISTENT_TOOLS, Action, Monitor
from lares_kit.persistent.sandbox import ConditionError, Limits
from lares_kit.tools.toolbox import DEVICE_TOOLS, set_light

WORLD = """\
id: fridge-flat
name: A flat with a fridge
rooms:
  - {id: kitchen, name: Kitchen, exits: [dining-room]}
  - {id: dining-room, name: Dining room, exits: [kitchen]}
devices:
  - {id: fridge, name: Fridge, type: fridge, room: kitchen,
     state: {door: closed, temperature: 4, setpoint: 4, freezer_temperature: -18, freezer_setpoint: -18}}
  - {id: dining-light, name: Pendant light, type: light, room: dining-room, state: {on: false}}
  - {id: kitchen-light, name: Spotlights, type: light, room: kitchen, state: {on: true}}
robot: {id: robot, room: kitchen}
"""
FRIDGE_OPEN = "def fridge_open():\n    return get('fridge', 'door') == 'open'"


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "fridge-flat.yaml"
    path.write_text(WORLD)
    return load_world(path)


@pytest.fixture(params=["inline", "process"])
def monitor(request, home):
    with Monitor(home, isolation=request.param) as m:
        yield m


def door(home, state):
    # A person opens or closes the fridge: the world changes, not the agent.
    home.update_device("fridge", {"door": state})


def test_fridge_opens_dining_light_turns_on_once_per_opening(monitor, home):
    turned_on = []

    def agent(firing):  # stands for the SAGE agent running the stored instruction
        turned_on.append(firing.time)
        return set_light(home, "dining-light", True)

    cid = monitor.register(FRIDGE_OPEN, Action("turn on the dining room light", agent), "the fridge door is open")
    assert cid == "fridge_open"
    before = home.device_states()

    assert monitor.tick() == []  # closed
    door(home, "open")
    fired = monitor.tick()  # opened: fires
    assert [f.instruction for f in fired] == ["turn on the dining room light"]
    assert fired[0].result.startswith("The pendant light in the Dining room (dining-light) is now on.")
    for _ in range(3):
        assert monitor.tick() == []  # stays open: no more
    home.update_device("dining-light", {"on": False})
    door(home, "closed")
    assert monitor.tick() == []
    door(home, "open")
    assert len(monitor.tick()) == 1  # reopened: fires again
    assert turned_on == [datetime(2024, 1, 1, 8, 0, 20), datetime(2024, 1, 1, 8, 1, 10)]

    after = home.device_states()
    changed = {d for d in after if after[d] != before[d]}
    assert changed == {"fridge", "dining-light"}  # the door we opened, the light the action turned on
    assert [c.fired for c in monitor.timeline] == [False, False, True, False, False, False, False, True]
    assert [c.value for c in monitor.timeline] == [False, False, True, True, True, True, False, True]
    assert monitor.conditions[cid].fired == 2


def test_already_true_when_registered_waits_for_the_next_edge(monitor, home):
    door(home, "open")
    monitor.register(FRIDGE_OPEN, Action("say hi"))
    assert monitor.tick() == []
    door(home, "closed")
    monitor.tick()
    door(home, "open")
    assert len(monitor.tick()) == 1


def test_conditions_never_change_the_home(monitor, home):
    monitor.register(FRIDGE_OPEN, Action("nothing"))
    monitor.register("def reads_all():\n    s = state('fridge')\n    return s['door'] == 'open' and "
                     "get('kitchen-light', 'on')", Action("nothing"))
    before, version = home.device_states(), home.version
    for _ in range(5):
        monitor.tick()
    assert home.device_states() == before and home.version == version


def test_without_an_action_nothing_fires_until_notify(monitor, home):
    cid = monitor.register(FRIDGE_OPEN, description="the fridge door is open")
    door(home, "open")
    assert monitor.tick() == []
    door(home, "closed")
    monitor.tick()
    monitor.notify(cid, Action("turn on the dining room light"))
    door(home, "open")
    assert [f.condition_id for f in monitor.tick()] == [cid]


def test_on_fire_runs_actions_without_a_callback(home):
    seen = []
    with Monitor(home, isolation="inline", on_fire=lambda f: seen.append(f.instruction)) as monitor:
        monitor.register(FRIDGE_OPEN, Action("turn on the dining room light"))
        door(home, "open")
        monitor.tick()
    assert seen == ["turn on the dining room light"]


def test_once_cancels_after_the_first_firing(monitor, home):
    monitor.register(FRIDGE_OPEN, Action("turn all the lights off", once=True))
    door(home, "open")
    assert len(monitor.tick()) == 1
    assert monitor.list() == []
    door(home, "closed")
    monitor.tick()
    door(home, "open")
    assert monitor.tick() == []


def test_cancel_and_list(monitor, home):
    a = monitor.register(FRIDGE_OPEN, Action("a"))
    b = monitor.register(FRIDGE_OPEN, Action("b"))
    assert (a, b) == ("fridge_open", "fridge_open_2")
    assert [c.id for c in monitor.list()] == [a, b]
    assert monitor.cancel(a).id == a
    door(home, "open")
    assert [f.instruction for f in monitor.tick()] == ["b"]
    with pytest.raises(ConditionError, match="There is no condition 'fridge_opn'. Did you mean 'fridge_open_2'"):
        monitor.cancel("fridge_opn")


def test_failing_condition_is_reported_then_disabled_and_the_poller_goes_on(monitor, home):
    monitor.register("def ratio():\n    return 10 / get('fridge', 'setpoint') > 100", Action("never"))
    monitor.register(FRIDGE_OPEN, Action("still works"))
    home.update_device("fridge", {"setpoint": 0})  # a reading the condition did not expect
    for _ in range(4):
        monitor.tick()
    ratio = monitor.conditions["ratio"]
    assert not ratio.enabled and ratio.errors == 3
    assert "ZeroDivisionError" in ratio.last_error
    assert len(monitor.notices) == 3 and "failed 3 times in a row and was disabled" in monitor.notices[-1]
    assert [c.error is not None for c in monitor.timeline if c.condition_id == "ratio"] == [False, True, True, True]
    door(home, "open")
    assert [f.instruction for f in monitor.tick()] == ["still works"]


def test_a_failing_action_is_reported_and_the_poller_goes_on(monitor, home):
    def broken(firing):
        raise RuntimeError("the agent crashed")

    monitor.register(FRIDGE_OPEN, Action("x", broken))
    door(home, "open")
    (firing,) = monitor.tick()
    assert firing.error == "RuntimeError: the agent crashed"
    assert "failed: RuntimeError: the agent crashed" in monitor.notices[0]


@pytest.mark.parametrize("code, words", [
    ("def f():\n    return get('fridg', 'door') == 'open'",
     "device 'fridg' that is not in the home. Did you mean 'fridge'"),
    ("def f():\n    return get('fridge', 'dor') == 'open'",
     "reads 'dor' of 'fridge', which it does not have; fridge has: door"),
    ("def f():\n    import os\n    return True", "Line 2: imports are not allowed"),
    ("def f():\n    return get('fridge', 'door')",
     "tested on the home now and failed: The condition returned 'closed'"),
    ("def f():\n    if False:\n        return get('frige', 'door') == 'x'\n    return True", "Did you mean 'fridge'"),
])
def test_register_refuses_with_a_sentence(monitor, code, words):
    with pytest.raises(ConditionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        monitor.register(code, Action("x"))
    assert monitor.list() == []


def test_the_poller_moves_the_homes_own_clock(home):
    home.clock = Clock.simulated(start=datetime(2024, 5, 1, 18, 0))
    with Monitor(home, isolation="inline") as monitor:
        assert monitor.clock is home.clock
        monitor.tick(10)
        assert home.clock.now() == datetime(2024, 5, 1, 18, 0, 10) and home.clock.seconds == 10
        with pytest.raises(ValueError):
            monitor.tick(-1)
        home.clock = Clock.fixed("18:00")  # a fixed clock never moves: the poller says so, it does not hang
        with pytest.raises(ClockError, match="only a simulated clock can be moved"):
            monitor.tick()


# ------------------------------------------------------------------- tools
def test_tools_through_the_toolbox(home):
    with Monitor(home) as monitor:
        # block_repeats off: the repeat filter watches home.version, and cancelling a
        # condition changes the monitor, not the home, so a second list_conditions is no repeat.
        box = Toolbox(home, tools=[*DEVICE_TOOLS, *PERSISTENT_TOOLS], monitor=monitor, block_repeats=False)
        schema = box.schema("create_condition")["function"]
        assert list(schema["parameters"]["properties"]) == ["code", "description"]  # monitor is injected
        obs = box.dispatch("create_condition", {"code": FRIDGE_OPEN, "description": "the fridge door is open"})
        assert obs.ok and obs.text.startswith(
            "Condition 'fridge_open' (the fridge door is open) is ready; it is False now.")
        obs = box.dispatch("notify_on_condition", {"condition_id": "fridge_open",
                                                   "instruction": "turn on the dining room light"})
        assert obs.ok
        assert "When the fridge door is open, I will: turn on the dining room light." in obs.text
        door(home, "open")
        assert [f.instruction for f in monitor.tick()] == ["turn on the dining room light"]
        listed = box.dispatch("list_conditions", {}).text
        assert "- fridge_open (the fridge door is open): now True, fired 1 times; then: turn on the dining" in listed
        bad = box.dispatch("create_condition", {"code": "def f():\n    while True:\n        pass\n    return True",
                                                "description": "x"})
        assert not bad.ok and bad.content.startswith("Error: Line 2: loops are not allowed in a condition")
        assert box.dispatch("cancel_condition", {"condition_id": "fridge_open"}).ok
        assert box.dispatch("list_conditions", {}).text == "No conditions are being watched."
        assert not box.dispatch("cancel_condition", {"condition_id": "fridge_open"}).ok


def test_tools_without_a_monitor_say_so(home):
    box = Toolbox(home, tools=PERSISTENT_TOOLS)
    obs = box.dispatch("list_conditions", {})
    assert not obs.ok and "this Toolbox has no monitor" in obs.text


# -------------------------------------------------------------------- cost
@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_every_condition_is_evaluated_each_tick(home, isolation):
    # How long a tick takes: benchmarks/bench_scale.py (timed against plain Python in the same run).
    with Monitor(home, isolation=isolation) as monitor:
        for n in range(20):
            monitor.register(FRIDGE_OPEN.replace("fridge_open", f"c{n}"), Action("x"))
        for _ in range(5):
            monitor.tick()
    checks = [c for c in monitor.timeline if c.seconds > 0]
    assert len(checks) == 5 * 20 and all(c.value is False and c.error is None for c in checks)
    assert monitor.seconds_evaluating > 0


# ------------------------------------------------------------------ budgets
# Legal, light while the fridge is shut, and far over the step budget once it opens.
HEAVY = ("def heavy_{n}():\n    if get('fridge', 'door') == 'closed':\n        return False\n"
         "    l = [0.5] * 10000\n    m = [0.5 + 0] * 10000\n    return l" + " == m == l" * 70 + "\n")


def test_register_checks_the_code_once(home, monkeypatch):
    import lares_kit.persistent.monitor as monitor_module
    import lares_kit.persistent.sandbox.host as sandbox_module  # where the Sandbox finds check_condition

    calls = []
    real = sandbox_module.check_condition

    def counted(code, limits=None):
        calls.append(code)
        return real(code, limits)

    monkeypatch.setattr(monitor_module, "check_condition", counted)
    monkeypatch.setattr(sandbox_module, "check_condition", counted)
    with Monitor(home, isolation="inline") as monitor:
        monitor.register(FRIDGE_OPEN, Action("x"))
    assert calls == [FRIDGE_OPEN]


def test_each_heavy_condition_is_blamed_for_its_own_steps(monitor, home):
    # Twelve legal conditions turn heavy when the fridge opens: each is stopped by its own step
    # budget and named, the light one still fires, and no worker had to be killed.
    for n in range(12):
        monitor.register(HEAVY.format(n=n), Action(f"heavy {n}"))
    monitor.register(FRIDGE_OPEN, Action("light"))
    door(home, "open")
    assert [f.instruction for f in monitor.tick()] == ["light"]
    checks = {c.condition_id: c for c in monitor.timeline if c.seconds == 10.0}
    for n in range(12):
        check = checks[f"heavy_{n}"]
        assert check.value is None and not check.skipped and check.steps == 1_000_000
        assert check.error.startswith("Line 6: it needs more than 1,000,000 steps, the budget of one condition")
        assert monitor.conditions[f"heavy_{n}"].errors == 1
    assert checks["fridge_open"].value is True and 0 < checks["fridge_open"].steps < 100
    assert monitor.sandbox.restarts == 0
    with pytest.raises(ConditionError, match=r"failed: Line 6: it needs more than 1,000,000 steps"):
        monitor.register(HEAVY.format(n=99), Action("x"))  # the test run at registration stops it too


@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_a_tick_out_of_time_blames_no_one_and_the_waiting_go_first(home, isolation):
    # A tick budget of a nanosecond: each tick checks only its first condition. Nobody is blamed,
    # and the ones left waiting go first, so every condition is checked in turn.
    with Monitor(home, isolation=isolation, limits=Limits(tick_seconds=1e-9)) as monitor:
        for name in ("a", "b", "c"):
            monitor.register(FRIDGE_OPEN.replace("fridge_open", name), Action(f"fire {name}"))
        door(home, "open")
        fired = [f.condition_id for _ in range(3) for f in monitor.tick()]
        assert fired == ["a", "b", "c"]  # one a tick, in turn
        ticks = [[c.condition_id for c in monitor.timeline if c.seconds == s and not c.skipped] for s in (10, 20, 30)]
        assert ticks == [["a"], ["b"], ["c"]]
        assert all(c.enabled and c.errors == 0 for c in monitor.list())
        assert monitor.notices[0] == ("At 08:00:10 the tick used its 1e-09 s before it could check b, c; they go "
                                      "first at the next tick.")
        skipped = [c for c in monitor.timeline if c.skipped]
        assert len(skipped) == 6
        assert all(c.value is None and c.error.startswith("Not checked this tick") for c in skipped)


def test_a_device_value_no_condition_can_read_fails_only_its_readers(monitor, home):
    monitor.register(FRIDGE_OPEN, Action("open"))
    monitor.register("def warm():\n    return get('fridge', 'temperature') > 8", Action("warm"))
    home.devices["fridge"].state["temperature"] = 10**5000  # a broken sensor reports a 5,001-digit number
    door(home, "open")
    assert [f.instruction for f in monitor.tick()] == ["open"]
    assert monitor.conditions["warm"].last_error == (
        "Line 2: The device 'fridge' has a value for 'temperature' that a condition cannot read: it is a whole "
        "number of about 5,001 digits (16,610 bits); a condition may hold 4,096 bits at most.")
    assert monitor.sandbox.restarts == 0 and len(monitor.notices) == 1
