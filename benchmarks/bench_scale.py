"""Costs that grow with the home or the condition, each against a baseline measured in the same run.

* **loading a 5,000-device world** from the file ``lares worlds generate`` writes
  (JSON, which is YAML too): :func:`lares_kit.load_world` -- parse, validate,
  build the networkx graph and the Home -- against ``json.loads`` of the same
  text, the least any loader must do. Goal: under 2 s.
* **one poller tick** with 20 persistent conditions, for each sandbox
  isolation mode (:class:`lares_kit.persistent.monitor.Monitor`), against calling the same
  20 condition functions as plain Python on the same device states -- what the
  checks, the limits and (for ``process``) the worker round trip cost on top.
  Goal: well under the poller's 10 simulated seconds a tick; under 0.1 s.
* **checking the largest legal conditions** (:func:`lares_kit.persistent.sandbox.check_condition`),
  each shape as long as ``Limits.max_code_chars`` allows, against Python's own
  ``compile`` of the same text. Goal: under 1 s each (a chained product of
  lists took 16 s when every operator folded its whole subtree again).
* **a heavy legal condition** (a ``l == m == l ...`` chain over lists of
  10,000 long texts) stopped by its step budget, per isolation mode, against
  the same function run to the end as plain Python; and one tick of twelve such
  conditions plus a light one. Goal: each stop well under ``Limits.time_seconds``
  (1 s), the tick under ``tick_seconds`` (2 s).

These were timed assertions in the tests; timings belong here, where a busy
machine makes a number slower instead of a test red.

    .venv/bin/python benchmarks/bench_scale.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lares_kit import load_world  # noqa: E402
from lares_kit.cli.commands import main as lares  # noqa: E402
from lares_kit.persistent.monitor import Action, Monitor  # noqa: E402
from lares_kit.persistent.sandbox import Limits, Sandbox, check_condition  # noqa: E402

CONDITION = "def fridge_open_{n}():\n    return get('fridge', 'door') == 'open'"
FRIDGE_FLAT = """\
id: fridge-flat
name: A flat with a fridge
rooms:
  - {id: kitchen, name: Kitchen, exits: [hall]}
  - {id: hall, name: Hall, exits: [kitchen]}
devices:
  - {id: fridge, name: Fridge, type: fridge, room: kitchen, state: {door: closed}}
  - {id: kitchen-light, name: Light, type: light, room: kitchen, state: {"on": false}}
robot: {id: robot, room: hall}
"""


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def world_loading(folder: Path, repeat: int) -> tuple[float, float]:
    path = folder / "big.yaml"
    assert lares(["worlds", "generate", "--rooms", "1000", "--devices", "5000", "--seed", "1",
                  "--out", str(path)]) == 0
    text = path.read_text()
    home = load_world(path)
    assert len(home.devices) == 5000
    return median_seconds(lambda: load_world(path), repeat), median_seconds(lambda: json.loads(text), repeat)


def ticking(folder: Path, isolation: str, repeat: int) -> tuple[float, float]:
    path = folder / "fridge-flat.yaml"
    path.write_text(FRIDGE_FLAT)
    home = load_world(path)
    codes = [CONDITION.format(n=n) for n in range(20)]
    with Monitor(home, isolation=isolation) as monitor:
        for code in codes:
            monitor.register(code, Action("turn on the kitchen light"))
        monitor.tick()  # warm up: the worker starts, the code is compiled
        tick = median_seconds(monitor.tick, repeat)
    # The baseline: the same functions, compiled once, called on the same states with no checks at all.
    states = home.device_states()
    scope = {"get": lambda device, attribute: states[device][attribute]}
    for code in codes:
        exec(code, scope)  # noqa: S102 -- the benchmark's own trusted code
    functions = [scope[f"fridge_open_{n}"] for n in range(20)]
    plain = median_seconds(lambda: [f() for f in functions], repeat)
    return tick, plain


def largest(head: str, line: str, tail: str = "    return True\n") -> str:
    """The longest condition of one shape that the size limit allows: a head, then ``line`` as often as fits.

    Args:
        head: Lines after ``def big():``, before the repeated ones (often "").
        line: The line repeated to fill it up.
        tail: The last line, its ``return``.
    """
    code = "def big():\n" + head
    while len(code) + len(line) + len(tail) <= Limits().max_code_chars:
        code += line
    return code + tail


SHAPES = {
    "chained list products": largest("", "    x = [0] * 10000" + " * 1" * 90 + "\n"),
    "chained list sums": largest("", "    x = ([0] * 5000" + " + []" * 90 + ")\n"),
    "a comparison chain": "def big():\n    a = 1\n    return a" + " == a" * 790 + "\n",
    "negations": largest("", "    x = " + "-" * 90 + "1\n"),
}
# The l == m == l ... chain over 10,000 long texts: legal, and slow in plain Python too
# (each == reads 10**8 characters).
HEAVY = ("def heavy():\n    s = 'a' * 9999 + 'b'\n    t = 'a' * 9999 + 'b'\n    l = [s] * 10000\n    m = [t] * 10000\n"
         "    return l" + " == m == l" * 190 + "\n")


# Kinds of work a condition can repeat until its step budget runs out: the slowest sets how long a budget can take.
BIG_DEVICE = {"log": {"events": [0.5] * 10_000, "ints": list(range(10_000)), "text": "a" * 10_000,
                      "table": {f"k{n}": n for n in range(3000)}}}
WORK = {
    "comparing float lists": largest("    l = [0.5] * 10000\n    m = [0.5 + 0] * 10000\n", "    x = l == m\n"),
    "'in' over a list": largest("    l = [0.5] * 10000\n", "    x = 'z' in l\n"),
    "any() over numbers": largest("    l = get('log', 'ints')\n", "    x = any(l)\n"),
    "slicing a list": largest("    l = [0.5] * 10000\n", "    x = l[::-1]\n"),
    "reading a 3,000-key dict": largest("", "    x = get('log', 'table')\n"),
    "reading a whole device": largest("", "    x = state('log')\n"),
    "searching text": largest("    n = 'a' * 97 + 'ba'\n", "    x = n in get('log', 'text')\n"),
    "dividing big numbers": largest("    a = 7 ** 1450\n    b = 3 ** 1200 + 1\n", "    x = a // b\n"),
}


def slowest_work(repeat: int) -> tuple[str, float]:
    times = {}
    with Sandbox(isolation="inline") as box:
        for name, code in WORK.items():
            box.load(name, code)
            times[name] = median_seconds(lambda: box.evaluate(BIG_DEVICE, [name]), repeat)  # noqa: B023
    name = max(times, key=times.get)
    return name, times[name]


def checking(repeat: int) -> list[tuple[str, int, float, float]]:
    rows = []
    for name, code in SHAPES.items():
        seconds = median_seconds(lambda: check_condition(code), repeat)  # noqa: B023 -- called at once
        python = median_seconds(lambda: compile(code, "<condition>", "exec"), repeat)  # noqa: B023
        rows.append((name, len(code), seconds, python))
    return rows


def heavy(isolation: str, repeat: int) -> tuple[float, float, float]:
    """Seconds to stop HEAVY at its step budget; to run it to the end as plain Python; one tick of 12 + 1.

    Args:
        isolation: The sandbox's isolation mode: ``"process"`` or ``"inline"``.
        repeat: How many times each is timed; medians are returned.
    """
    with Sandbox(isolation=isolation) as box:
        box.load("heavy", HEAVY)
        outcome = box.evaluate({})["heavy"]
        assert outcome.steps == Limits().max_steps, outcome
        stopped = median_seconds(lambda: box.evaluate({}), repeat)
    scope: dict = {}
    exec(HEAVY, scope)  # noqa: S102 -- the benchmark's own trusted code
    plain = median_seconds(scope["heavy"], max(1, repeat // 4))
    flat = tempfile.mkdtemp()
    path = Path(flat) / "fridge-flat.yaml"
    path.write_text(FRIDGE_FLAT)
    home = load_world(path)
    with Monitor(home, isolation=isolation) as monitor:
        for n in range(12):  # light at registration: heavy once the fridge opens
            monitor.register(HEAVY.replace("def heavy():\n", f"def heavy_{n}():\n    if get('fridge', 'door') == "
                                                              "'closed':\n        return False\n"), Action("x"))
        monitor.register(CONDITION.format(n=0), Action("turn on the kitchen light"))
        home.update_device("fridge", {"door": "open"})
        tick = median_seconds(monitor.tick, max(1, repeat // 4))
    return stopped, plain, tick


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs of each measurement; the median is shown")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        load, parse = world_loading(folder, max(3, args.repeat // 4))
        print(f"loading a 5,000-device world: {load:.3f} s (goal 2 s); json.loads of the same file "
              f"{parse:.3f} s; {load / parse:.1f}x the bare parse")
        for isolation in ("inline", "process"):
            tick, plain = ticking(folder, isolation, args.repeat)
            print(f"one tick, 20 conditions, {isolation:>7}: {tick * 1e3:.2f} ms (goal 100 ms); plain Python "
                  f"{plain * 1e6:.1f} us; {tick / plain:,.0f}x")
        for name, chars, seconds, python in checking(max(3, args.repeat // 4)):
            print(f"checking the largest legal condition, {name} ({chars:,} chars): {seconds * 1e3:.1f} ms "
                  f"(goal 1 s); Python's own compile {python * 1e3:.1f} ms; {seconds / python:.1f}x")
        limits = Limits()
        name, seconds = slowest_work(max(3, args.repeat // 4))
        print(f"the slowest of {len(WORK)} kinds of work spends a condition's {limits.max_steps:,} steps in "
              f"{seconds * 1e3:.1f} ms ({name}); the time budget, {limits.time_seconds:g} s, is "
              f"{limits.time_seconds / seconds:.0f}x that")
        for isolation in ("inline", "process"):
            stopped, plain, tick = heavy(isolation, max(3, args.repeat // 4))
            print(f"a heavy legal condition, {isolation:>7}: stopped at {limits.max_steps:,} steps after "
                  f"{stopped * 1e3:.2f} ms (time budget {limits.time_seconds:g} s); plain Python runs it to the "
                  f"end in {plain * 1e3:.0f} ms ({plain / stopped:,.0f}x); one tick of 12 of them and a light one "
                  f"{tick * 1e3:.1f} ms (tick budget {limits.tick_seconds:g} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
