"""Two costs that grow with the home, each against a baseline measured in the same run.

* **loading a 5,000-device world** from the file ``lares worlds generate`` writes
  (JSON, which is YAML too): :func:`lares_kit.load_world` -- parse, validate,
  build the networkx graph and the Home -- against ``json.loads`` of the same
  text, the least any loader must do. Goal: under 2 s.
* **one poller tick** with 20 persistent conditions, for each sandbox
  isolation mode (:class:`lares_kit.monitor.Monitor`), against calling the same
  20 condition functions as plain Python on the same device states -- what the
  checks, the limits and (for ``process``) the worker round trip cost on top.
  Goal: well under the poller's 10 simulated seconds a tick; under 0.1 s.

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
from lares_kit.cli import main as lares  # noqa: E402
from lares_kit.monitor import Action, Monitor  # noqa: E402

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
