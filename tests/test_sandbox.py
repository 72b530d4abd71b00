"""The condition sandbox: every attack in the corpus is stopped, legitimate conditions run.

The corpus is data (lares_kit/data/sandbox_attacks.yaml); each entry says
where it must be stopped: by the checker before anything runs, or while
running (a guard or an OS limit). Both isolation modes are run.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import lares_kit.sandbox as sandbox_module
from lares_kit.sandbox import (
    ConditionError,
    Limits,
    Sandbox,
    check_condition,
    run_condition,
)

CORPUS = Path(sandbox_module.__file__).parent / "data" / "sandbox_attacks.yaml"
ATTACKS = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
STATES = {"fridge": {"door": "open", "temperature": 4, "setpoint": 4},
          "dining-light": {"on": False}, "kitchen-light": {"on": True, "brightness": 80}}


def children_of(pid: int) -> list[int]:
    # Processes whose parent is pid (Linux /proc); [] elsewhere.
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def worker_box():
    box = Sandbox(isolation="process")
    yield box
    box.close()


@pytest.fixture(scope="module")
def canary(tmp_path_factory):
    return tmp_path_factory.mktemp("canary") / "escaped"


def test_corpus_is_big_and_well_formed():
    assert len(ATTACKS) >= 50
    assert len({a["id"] for a in ATTACKS}) == len(ATTACKS)
    for attack in ATTACKS:
        assert set(attack) == {"id", "tries", "code", "stopped_by"}, attack["id"]
        assert attack["stopped_by"] in ("check", "run"), attack["id"]


def stop_stage(box: Sandbox, attack: dict, canary: Path) -> tuple[str, str]:
    code = attack["code"].replace("CANARY", str(canary))
    try:
        box.load(attack["id"], code)
    except ConditionError as exc:
        return "check", str(exc)
    outcome = box.evaluate(dict(STATES), [attack["id"]])[attack["id"]]
    box.drop(attack["id"])
    return ("run", outcome.error) if outcome.error else ("passed", repr(outcome.value))


@pytest.mark.parametrize("attack", ATTACKS, ids=[a["id"] for a in ATTACKS])
def test_attack_is_stopped_in_the_worker(attack, worker_box, canary):
    states_before = repr(STATES)
    stage, message = stop_stage(worker_box, attack, canary)
    assert stage == attack["stopped_by"], message
    assert message.startswith(("Line ", "The ")), message  # a sentence for the model
    assert not canary.exists()
    assert repr(STATES) == states_before
    if worker_box._worker.running:  # the worker starts with the first condition that passes the checker
        assert children_of(worker_box._worker.proc.pid) == []


@pytest.mark.parametrize("attack", ATTACKS, ids=[a["id"] for a in ATTACKS])
def test_attack_is_stopped_inline(attack, canary):
    box = Sandbox(isolation="inline")
    stage, message = stop_stage(box, attack, canary)
    assert stage == attack["stopped_by"], message
    assert not canary.exists()


def test_no_process_left_behind_and_no_restart_needed(worker_box, canary):
    # Every attack was stopped by the checker or a guard: the jail never had to kill the worker.
    assert worker_box.restarts == 0
    pid = worker_box._worker.proc.pid
    assert children_of(pid) == []
    worker_box.close()
    assert not worker_box._worker.running
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert pid not in children_of(os.getpid())
    assert not canary.exists()


# ------------------------------------------------------------ legitimate code
LEGITIMATE = [
    ("def fridge_open():\n    return get('fridge', 'door') == 'open'", True),
    ("def too_warm():\n    return get('fridge', 'temperature') > 8", False),
    ("def open_and_dark():\n    return get('fridge', 'door') == 'open' and not get('dining-light', 'on')", True),
    ("def either():\n    return get('dining-light', 'on') or get('kitchen-light', 'brightness') >= 50", True),
    ("def drift():\n    t = get('fridge', 'temperature')\n    return abs(t - get('fridge', 'setpoint')) * 2 + 1 < 3", True),
    (("def dim() -> bool:\n    '''The kitchen light is below a third.'''\n"
      "    return round(get('kitchen-light', 'brightness') / 3, 1) < 30"), True),
    (("def branch():\n    door = state('fridge')['door']\n    if door == 'open':\n        return True\n"
      "    else:\n        return False"), True),
    ("def any_on():\n    return any([get('dining-light', 'on'), get('kitchen-light', 'on')])", True),
    ("def all_on():\n    return all([get('dining-light', 'on'), get('kitchen-light', 'on')])", False),
    ("def counted():\n    n = 0\n    n += 1 if get('kitchen-light', 'on') else 0\n    n += 2\n    return n == 3", True),
    ("def between():\n    return 2 <= get('fridge', 'temperature') <= 6 and max(1, 2) == 2 and min([3, 4]) == 3", True),
    ("def words():\n    return len(get('fridge', 'door')) == 4 and 'pe' in get('fridge', 'door')", True),
    ("def numbers():\n    return int('12') + float('0.5') == 12.5 and str(3) == '3' and bool(1)", True),
    ("def maybe():\n    x = None\n    return x is None", True),
    ("def choice():\n    return get('fridge', 'door') in ('open', 'ajar')", True),
]


@pytest.mark.parametrize("code, expected", LEGITIMATE, ids=[c.split("(")[0][4:] for c, _ in LEGITIMATE])
def test_legitimate_conditions_run_inline(code, expected):
    assert run_condition(code, STATES) is expected


def test_legitimate_conditions_run_in_the_worker():
    with Sandbox(isolation="process") as box:
        for n, (code, _) in enumerate(LEGITIMATE):
            box.load(f"c{n}", code)
        outcomes = box.evaluate(STATES)
    assert [outcomes[f"c{n}"].value for n in range(len(LEGITIMATE))] == [e for _, e in LEGITIMATE]


# ----------------------------------------------------------------- messages
def test_messages_are_sentences_for_the_model():
    with pytest.raises(ConditionError, match=r"^Line 2: imports are not allowed in a condition; use get\(device_id, "):
        check_condition("def f():\n    import os\n    return True")
    with pytest.raises(ConditionError, match="returned 'open', not True or False"):
        run_condition("def f():\n    return get('fridge', 'door')", STATES)
    with pytest.raises(ConditionError, match=r"Line 2: There is no device 'fridg'. Did you mean 'fridge'\?"):
        run_condition("def f():\n    return get('fridg', 'door') == 'open'", STATES)
    with pytest.raises(ConditionError, match="has no attribute 'dor'; it has: door, temperature, setpoint"):
        run_condition("def f():\n    return get('fridge', 'dor') == 'open'", STATES)
    with pytest.raises(ConditionError, match="Line 3: ZeroDivisionError"):
        run_condition("def f():\n    x = 0\n    return 1 / x > 0", STATES)


def test_reads_are_reported_for_checking_against_the_home():
    checked = check_condition("def f():\n    return get('fridge', 'door') == 'open' and state('lamp')['on']")
    assert checked.name == "f"
    assert checked.reads == [("fridge", "door"), ("lamp", None)]


@pytest.mark.parametrize("code, words", [
    ("def f():\n    return " + "(" * 300 + "1" + ")" * 300 + " == 1", "nested parentheses"),
    ("def f():\n    return " + "- " * 400 + "1 == 1", "nested too deeply"),
    ("def f():\n    return True\n" + "#" * 5000, "characters long"),
    ("def f(:\n    return True", "Line 1"),
    ("", "exactly one function"),
    ("def get():\n    return True", "name the function for what it checks"),
])
def test_shape_limits(code, words):
    with pytest.raises(ConditionError, match=words):
        check_condition(code)


def test_worst_case_condition_is_bounded_without_the_jail():
    # A 4000-character condition built to be slow still ends quickly inline:
    # no loops, flat containers, and every sequence at most max_length.
    body = "def slow():\n    n = 10 ** 1200\n    l = [n] * 10000\n    k = n + 1\n"
    while len(body) < 3960:
        body += "    x = k in l\n"
    started = time.perf_counter()
    assert run_condition(body + "    return True", {}) is True
    assert time.perf_counter() - started < 5


# -------------------------------------------------------------------- jail
FAKE_WORKER_HANGS = "import sys, time\nsys.stdout.write('{\"jail\": []}\\n'); sys.stdout.flush()\n" \
                    "for line in sys.stdin:\n    if 'eval' in line:\n        time.sleep(60)\n" \
                    "    else:\n        sys.stdout.write('{\"ok\": true}\\n'); sys.stdout.flush()\n"
FAKE_WORKER_DIES = FAKE_WORKER_HANGS.replace("time.sleep(60)", "sys.exit(3)")


def test_time_limit_kills_a_worker_that_does_not_answer():
    # Stands for an escape the checker missed: the host stops it after time_seconds.
    box = Sandbox(Limits(time_seconds=0.3), isolation="process",
                  worker_command=[sys.executable, "-c", FAKE_WORKER_HANGS])
    box.load("f", "def f():\n    return True")
    pid = box._worker.proc.pid
    started = time.perf_counter()
    outcome = box.evaluate(STATES)["f"]
    assert time.perf_counter() - started < 3
    assert outcome.value is None and "took longer than 0.3 s" in outcome.error
    assert box.restarts == 1
    assert pid not in children_of(os.getpid())
    box.close()


def test_a_worker_that_dies_is_reported_and_restarted():
    box = Sandbox(isolation="process", worker_command=[sys.executable, "-c", FAKE_WORKER_DIES])
    box.load("f", "def f():\n    return True")
    box.load("g", "def g():\n    return False")
    outcomes = box.evaluate(STATES)
    assert "worker process ended" in outcomes["f"].error
    assert "worker process ended" in outcomes["g"].error  # the restarted fake dies too
    assert box.restarts == 2
    box.close()


def test_memory_limit_stops_a_huge_allocation_in_the_jail():
    # The jail on its own (without the checker): RLIMIT_AS turns a 2 GB allocation into MemoryError.
    folder = str(Path(sandbox_module.__file__).parent)
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import sandbox\n"
              "print(sandbox._jail(sandbox.Limits()))\n"
              "try:\n    x = bytearray(2 * 10**9)\nexcept MemoryError:\n    print('MemoryError')\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script, folder], capture_output=True, text=True,
                          timeout=30, check=False)
    assert "RLIMIT_AS=268435456" in done.stdout
    assert "MemoryError" in done.stdout


def test_worker_is_jailed_and_gets_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    with Sandbox(isolation="process") as box:
        box.load("f", "def f():\n    return True")
        pid = box._worker.proc.pid
        assert {"RLIMIT_AS=268435456", "RLIMIT_FSIZE=0", "RLIMIT_NOFILE=3"} <= set(box.jail)
        if Path(f"/proc/{pid}/environ").exists():
            assert b"sk-should-not-leak" not in Path(f"/proc/{pid}/environ").read_bytes()
            assert sorted(os.listdir(f"/proc/{pid}/fd")) == ["0", "1", "2"]
        assert box.evaluate(STATES)["f"].value is True
    assert pid not in children_of(os.getpid())
