"""Persistent commands for a time: a condition reads the home's clock as the device "clock" (issue 38, part 4)."""

from __future__ import annotations

import pytest

from lares_kit import load_world
from lares_kit.bench.events import parse_at_texts
from lares_kit.cli.commands import main
from lares_kit.errors import LaresError
from lares_kit.home.clock import Clock
from lares_kit.home.graph import Device
from lares_kit.persistent.monitor import Action, Monitor
from lares_kit.persistent.sandbox import ConditionError

DAY = 24 * 3600


def _firings(code: str, seconds: float, start: str = "08:00", world: str = "townhouse") -> list[str]:
    home = load_world(world)
    home.clock = Clock.simulated(start)
    fired: list[str] = []
    with Monitor(home, isolation="inline") as monitor:
        cid = monitor.register(code, None, "a time")
        monitor.notify(cid, Action("x", lambda *_a, **_k: fired.append(f"{monitor.clock.now():%a %H:%M}")))
        for _ in range(int(seconds // monitor.interval)):
            monitor.tick()
    return fired


def test_a_time_of_day_fires_once_a_day():
    code = 'def at_seven():\n    return get("clock", "time") == "19:00"'
    assert _firings(code, 3 * DAY) == ["Mon 19:00", "Tue 19:00", "Wed 19:00"]


def test_weekdays_only_skip_the_weekend():
    code = ('def weekday_mornings():\n    return get("clock", "time") == "06:30" and '
            'get("clock", "weekday") not in ("saturday", "sunday")')
    assert _firings(code, 7 * DAY) == ["Tue 06:30", "Wed 06:30", "Thu 06:30", "Fri 06:30", "Mon 06:30"]


def test_a_delay_fires_once():
    code = 'def in_ten():\n    return get("clock", "minutes") >= 10'
    assert _firings(code, DAY, start="23:55") == ["Tue 00:05"]


def test_the_clock_has_three_readings_and_names_them():
    home = load_world("lares-home")
    with Monitor(home, isolation="inline") as monitor, pytest.raises(ConditionError) as err:
        monitor.register('def hour():\n    return get("clock", "hour") == 7', None, "x")
    assert str(err.value) == "The clock has no 'hour'; it has: time, weekday, minutes."


def test_a_device_called_clock_is_the_homes_own():
    home = load_world("lares-home")
    home.devices["clock"] = Device("clock", "Kitchen clock", "sensor", "kitchen", {"battery": 80})
    with Monitor(home, isolation="inline") as monitor:
        assert monitor.register('def low():\n    return get("clock", "battery") < 20', None, "x")
        with pytest.raises(ConditionError):
            monitor.register('def seven():\n    return get("clock", "time") == "19:00"', None, "x")


def test_at_runs_the_clock_to_the_next_such_time():
    home = load_world("townhouse")  # 08:00 on Monday 2024-01-01
    assert [e.after for e in parse_at_texts(["7:59", "08:01", "sunday 8am"], home)] == [60.0, 86340.0, 518400.0]
    with pytest.raises(LaresError, match=r"^--at 'someday 19:00': "):
        parse_at_texts(["someday 19:00"], home)


def test_a_bad_at_is_one_sentence_and_exit_2(capsys):
    assert main(["run", "turn on the kitchen light", "--agent", "sage", "--at", "25:00"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--at '25:00'" in err
