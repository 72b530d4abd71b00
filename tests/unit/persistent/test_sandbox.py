"""The condition sandbox: every attack in the corpus is stopped, legitimate conditions run.

The corpus is data (lares_kit/data/sandbox_attacks.yaml); each entry says
where it must be stopped: by the checker before anything runs, or while
running (a guard or an OS limit). Both isolation modes are run.
"""

import ast
import dataclasses
import datetime
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import lares_kit
from lares_kit.persistent.sandbox import (
    ConditionError,
    Limits,
    Outcome,
    Sandbox,
    check_condition,
    checker,
    run_condition,
    running,
)

CORPUS = Path(lares_kit.__file__).parent / "data" / "sandbox_attacks.yaml"
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
    ("def drift():\n    t = get('fridge', 'temperature')\n"
     "    return abs(t - get('fridge', 'setpoint')) * 2 + 1 < 3", True),
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
    assert time.perf_counter() - started < 10  # answer_seconds (1.3 s) and a restart, on a busy machine
    assert outcome.value is None and "did not answer within 1.3 s, so it was stopped and restarted" in outcome.error
    assert box.restarts == 1
    assert pid not in children_of(os.getpid())
    box.close()


def test_a_worker_that_dies_is_reported_and_restarted():
    box = Sandbox(isolation="process", worker_command=[sys.executable, "-c", FAKE_WORKER_DIES])
    box.load("f", "def f():\n    return True")
    box.load("g", "def g():\n    return False")
    outcomes = box.evaluate(STATES)
    assert "worker process ended with exit code 3" in outcomes["f"].error
    assert "worker process ended with exit code 3" in outcomes["g"].error  # the restarted fake dies too
    assert box.restarts == 2
    box.close()


def test_memory_limit_stops_a_huge_allocation_in_the_jail():
    # The jail on its own (without the checker): RLIMIT_AS turns a 2 GB allocation into MemoryError.
    folder = str(Path(lares_kit.__file__).parent / "persistent")  # the sandbox package is standard library only
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from sandbox import Limits, worker\n"
              "print(worker._jail(Limits()))\n"
              "try:\n    x = bytearray(2 * 10**9)\nexcept MemoryError:\n    print('MemoryError')\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script, folder], capture_output=True, text=True,
                          timeout=30, check=False)
    assert "RLIMIT_AS=268435456" in done.stdout
    assert "MemoryError" in done.stdout


def test_the_worker_imports_only_the_standard_library():
    # The worker's interpreter sees no site-packages and never runs lares_kit/__init__.py: it loads
    # the sandbox's own modules and the standard library, nothing else.
    worker = Path(lares_kit.__file__).parent / "persistent" / "sandbox" / "worker.py"
    load = json.dumps({"op": "load", "id": "f", "code": "def f():\n    return True"}) + "\n"
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-X", "importtime", str(worker), "--worker",
                           json.dumps(dataclasses.asdict(Limits()))], input=load, capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0 and done.stdout.splitlines()[1] == '{"ok": true}', done.stderr[-500:]
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    ours = {name for name in imported if name.startswith("lares_sandbox.")}
    assert ours == {f"lares_sandbox.{m}" for m in ("limits", "guards", "checker", "running")}
    # org.python.core: copy.py looks for Jython's module and does not find it.
    allowed = {*sys.stdlib_module_names, "lares_sandbox", "org"}
    assert [name for name in imported[1:] if name.split(".")[0] not in allowed] == []  # [0]: the table's header


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


def test_messages_never_say_line_none_or_show_a_memory_address():
    bad_text = ["def f():\n    return '\ud800' == 'a'", "def f\udfff():\n    return True",
                "def f():\n    return 'a\x00' == 'a'", "def f():\n    return True\x00",
                "\ufeffdef f():\n    return True",
                "def f():\n    return 'open", "def f():\n\treturn True\n        return False"]
    for code in bad_text:
        with pytest.raises(ConditionError) as refused:
            check_condition(code)
        assert "Line None" not in str(refused.value) and "nested too deeply" not in str(refused.value)
        assert str(refused.value).startswith(("Line ", "The ")), str(refused.value)


@pytest.mark.parametrize("code, words", [
    ("def f():\n    return '\ud800' == 'a'", "Line 2: the condition contains U+D800, half of a surrogate pair"),
    ("def f():\n    return 'a\x00' == 'a'", "Line 2: the condition contains a NUL character"),
    ("def f():\n    x = [1][1:2, 3]\n    return True", "Line 2: a slice (a:b) goes inside square brackets"),
    ("def f():\n    return " + "abs(" * 110 + "1" + ")" * 110 + " == 1", "Line 2: the condition is nested too deeply"),
])
def test_text_python_cannot_read_is_named_with_its_line(code, words):
    with pytest.raises(ConditionError) as refused:
        check_condition(code)
    assert str(refused.value).startswith(words)


ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
RUN_ERRORS = [
    ("def f():\n    return get(get, 'door') == 1", "A device id is text, e.g. get('fridge', 'door'), not a function"),
    ("def f():\n    return get('fridge', get) == 1", "has no attribute a function"),
    ("def f():\n    return state('fridge')[get] == 1", "there is no key a function; the keys are: 'door'"),
    ("def f():\n    return {1: 2}[state] == 1", "there is no key a function; the keys are: 1"),
    ("def f():\n    x = get\n    return x + 1 > 0",
     "TypeError: unsupported operand type(s) for +: 'function' and 'int'"),
    ("def f():\n    return int(get) > 0", "TypeError: int() argument must be"),
    ("def f():\n    return get('x' * 5000, 'door') == 1", "There is no device 'xxxxxxxxxxx"),
    ("def f():\n    return state('fridge')['dor'] == 1", "there is no key 'dor'; the keys are: 'door', 'temperature'"),
]


@pytest.mark.parametrize("code, words", RUN_ERRORS, ids=[w[:30] for _, w in RUN_ERRORS])
def test_run_errors_are_short_sentences_with_no_memory_address(code, words, worker_box):
    for box in (Sandbox(isolation="inline"), worker_box):
        box.load("f", code)
        message = box.evaluate(STATES, ["f"])["f"].error
        box.drop("f")
        assert re.match(r"Line [23]: ", message) and words in message, message
        assert not ADDRESS.search(message) and len(message) < 400, message


def test_limits_refuse_nonsense_with_a_sentence():
    with pytest.raises(ValueError, match=r"^Limits.max_steps must be a whole number above 0, not -1\.$"):
        Limits(max_steps=-1)
    with pytest.raises(ValueError, match=r"^Limits.tick_seconds must be a number above 0, not 'fast'\.$"):
        Limits(tick_seconds="fast")
    with pytest.raises(ValueError, match="cpu_seconds .* must be at least tick_seconds"):
        Limits(cpu_seconds=2)
    with pytest.raises(ConditionError, match=r"^Device states are a dict"):
        run_condition("def f():\n    return True", ["fridge"])


# ------------------------------------------------------ checking is linear
def fill(head: str, line: str, tail: str = "    return True\n", size: int = 3990) -> str:
    # The largest condition of one shape: a head, then `line` as often as fits.
    code = "def big():\n" + head
    while len(code) + len(line) + len(tail) <= size:
        code += line
    return code + tail


LARGEST_LEGAL = {
    # Each is accepted; before folding remembered each node, every BinOp folded its whole subtree again.
    "list products": fill("", "    x = [0] * 10000" + " * 1" * 90 + "\n"),
    "list sums": fill("", "    x = ([0] * 5000" + " + []" * 90 + ")\n"),
    "text sums": fill("", "    x = 'a' * 9999" + " + ''" * 90 + "\n"),
    "powers": fill("", "    x = 2" + " ** 1" * 95 + "\n"),
    "big divisions": fill("", "    x = 7 ** 1400" + " // 3" * 90 + "\n"),
    "differences": fill("", "    x = 7 ** 1400" + " - 3" * 90 + "\n"),
    "negations": fill("", "    x = " + "-" * 90 + "1\n"),
    "a comparison chain": "def big():\n    a = 1\n    return a" + " == a" * 790 + "\n",
    "a long list": "def big():\n    x = [" + ",".join(["1"] * 1975) + "]\n    return True\n",
}


@pytest.mark.parametrize("code", LARGEST_LEGAL.values(), ids=list(LARGEST_LEGAL))
def test_checking_folds_each_node_once(code, monkeypatch):
    folded = []
    fold = checker._Folding._fold

    def counted(self, node):
        folded.append(id(node))
        return fold(self, node)

    monkeypatch.setattr(checker._Folding, "_fold", counted)
    assert len(code) <= Limits().max_code_chars
    check_condition(code)
    assert len(folded) == len(set(folded))  # no node twice: the work grows with the code, not its square
    assert len(folded) <= sum(1 for _ in ast.walk(ast.parse(code)))


def test_folding_has_a_budget_and_the_run_has_the_last_word():
    # Folding these lines would cost 1.5 million steps: the checker stops folding at a tenth of
    # max_steps and accepts, and the run, which has the same work to do, is stopped by its budget.
    code = fill("", "    x = [0] * 9999 + [1]\n")
    assert check_condition(code).name == "big"
    with pytest.raises(ConditionError, match=r"^Line \d+: it needs more than 1,000,000 steps"):
        run_condition(code, STATES)


# ------------------------------------------------------------------ budgets
BIG_DEVICE = {"log": {"events": [0.5] * 10_000, "text": "a" * 10_000, "count": 3}}
HEAVY = {
    # Legal conditions that each need far more than the default step budget.
    "a comparison chain over long lists": "def heavy():\n    l = [0.5] * 10000\n    m = [0.5 + 0] * 10000\n"
                                          "    return l" + " == m == l" * 70 + "\n",
    "one comparison of lists of long text": "def heavy():\n    s = 'a' * 9999 + 'b'\n    t = 'a' * 9999 + 'b'\n"
                                            "    return [s] * 10000 == [t] * 10000\n",
    "reading a long list again and again": fill("", "    x = get('log', 'events')\n"),
    "reading a whole big device again and again": fill("", "    x = state('log')\n"),
    "searching long text": fill("    n = 'a' * 97 + 'ba'\n", "    x = n in get('log', 'text')\n"),
    "max over a long list": fill("", "    x = max(get('log', 'events'))\n"),
    "slicing copies": fill("    l = [0.5] * 10000\n", "    x = l[::-1]\n"),
}


@pytest.mark.parametrize("isolation", ["inline", "process"])
@pytest.mark.parametrize("code", HEAVY.values(), ids=list(HEAVY))
def test_a_heavy_legal_condition_is_stopped_at_its_step_budget(code, isolation):
    with Sandbox(isolation=isolation) as box:
        box.load("heavy", code)
        box.load("light", "def light():\n    return get('log', 'count') == 3")
        outcomes = box.evaluate({**STATES, **BIG_DEVICE})
        assert box.restarts == 0  # the evaluator stopped it: the worker was not killed
    heavy = outcomes["heavy"]
    assert heavy.value is None and heavy.steps == Limits().max_steps
    assert re.match(r"Line \d+: it needs more than 1,000,000 steps, the budget of one condition", heavy.error)
    assert outcomes["light"] == Outcome(True, None, outcomes["light"].steps)
    assert 0 < outcomes["light"].steps < 100


def test_steps_are_counted_the_same_in_both_modes():
    code = LEGITIMATE[4][0]
    with Sandbox(isolation="inline") as inline, Sandbox(isolation="process") as worker:
        steps = [box.load("c", code) and box.evaluate(STATES)["c"].steps for box in (inline, worker)]
    assert steps[0] == steps[1] > 0


@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_every_isolation_mode_stops_a_condition_at_its_time_budget(isolation):
    # Steps left unbounded, so only the clock can stop it; the steps it did show it was cut short.
    code = HEAVY["a comparison chain over long lists"]
    needs = running._run(running._compile(check_condition(code), Limits(max_steps=10**12)), STATES)
    assert needs.value is True and needs.steps > 2_000_000
    with Sandbox(Limits(max_steps=10**12, time_seconds=0.001), isolation=isolation) as box:
        box.load("heavy", code)
        outcome = box.evaluate(STATES)["heavy"]
        assert box.restarts == 0
    assert re.match(r"Line \d+: it ran for more than 0.001 s, the time budget of one condition in one tick\.$",
                    outcome.error)
    assert 0 < outcome.steps < needs.steps


@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_a_tick_out_of_time_skips_the_rest_without_blame(isolation):
    # The first condition always runs; with a tick budget of a nanosecond, nothing else does.
    with Sandbox(Limits(tick_seconds=1e-9), isolation=isolation) as box:
        for n in range(3):
            box.load(f"c{n}", f"def c{n}():\n    return get('fridge', 'door') == 'open'")
        outcomes = box.evaluate(STATES, ["c2", "c0", "c1"])
    assert list(outcomes) == ["c2", "c0", "c1"]
    assert outcomes["c2"].value is True and not outcomes["c2"].skipped
    for key in ("c0", "c1"):
        assert outcomes[key].skipped and outcomes[key].value is None
        assert outcomes[key].error == "Not checked this tick: the conditions before it used the tick's 1e-09 s."


def test_after_a_restart_the_host_keeps_the_tick_budget():
    box = Sandbox(Limits(tick_seconds=1e-9), isolation="process",
                  worker_command=[sys.executable, "-c", FAKE_WORKER_DIES])
    for key in ("f", "g", "h"):
        box.load(key, f"def {key}():\n    return True")
    outcomes = box.evaluate(STATES)
    assert "worker process ended with exit code 3" in outcomes["f"].error and not outcomes["f"].skipped
    assert outcomes["g"].skipped and outcomes["h"].skipped
    assert box.restarts == 1
    box.close()


# ------------------------------------------------------------ whole numbers
LARGEST_NUMBER = "x = 2 ** 4095 + (2 ** 4095 - 1)"  # 4096 bits: the largest a condition may hold
GROWING = ["x + 1", "x - -1", "-x - 1", "x - -x", "x * 2", "2 * x", "x ** 2", "abs(-x) + 1", "max(x, 0) + 1",
           "min(x, x) + x", "int(x) + x", "round(x) + 1", "x + True", "x // 1 + 1", "-(-x) + 1", "(x % (x + 1)) + 1"]


@pytest.mark.parametrize("expression", GROWING)
def test_no_operator_grows_a_number_past_the_limit(expression):
    code = f"def grows():\n    {LARGEST_NUMBER}\n    return {expression} > 0\n"
    with pytest.raises(ConditionError, match=r"^Line 3: a value is too big: the number would need [0-9,]+ bits .*; "
                                             r"the limit is 4,096 bits\.$"):
        run_condition(code, STATES)


@pytest.mark.parametrize("statement", ["x += 1", "x -= -1", "x *= 2", "x -= -x"])
def test_augmented_assignment_is_guarded_too(statement):
    code = f"def grows():\n    {LARGEST_NUMBER}\n    {statement}\n    return x > 0\n"
    with pytest.raises(ConditionError, match=r"^Line 3: a value is too big"):
        run_condition(code, STATES)


def test_the_largest_number_itself_is_fine():
    assert run_condition(f"def fits():\n    {LARGEST_NUMBER}\n    return x - 1 > 0 and x // 2 > 0", STATES)


# ------------------------------------------------------------- device values
def holds_itself() -> list:
    value = [1]
    value.append(value)
    return value


def nested(depth: int) -> list:
    value: list = [1]
    for _ in range(depth):
        value = [value]
    return value


UNREADABLE = {
    "a number of 5,000 digits (no JSON)": (10**5000, "it is a whole number of about 5,001 digits (16,610 bits)"),
    "a number of 2,000 digits": (10**2000, "it is a whole number of about 2,001 digits (6,644 bits)"),
    "a list with a 5,000-digit number": ([1, 10**5000], "it holds a whole number of about 5,001 digits"),
    "a list that holds itself": (holds_itself(), "it is nested more than 20 levels deep (or holds itself)"),
    "data nested 30 deep": (nested(30), "it is nested more than 20 levels deep"),
    "a dict with tuple keys": ({(1, 2): 3}, "it has keys that are not text, numbers, True/False or None"),
}


@pytest.mark.parametrize("isolation", ["inline", "process"])
@pytest.mark.parametrize("value, why", UNREADABLE.values(), ids=list(UNREADABLE))
def test_a_value_a_condition_cannot_read_fails_only_its_readers(value, why, isolation):
    states = {**STATES, "meter": {"reading": value, "unit": "kWh"}}
    with Sandbox(isolation=isolation) as box:
        box.load("reads_it", "def reads_it():\n    return get('meter', 'reading') == 1")
        box.load("reads_all", "def reads_all():\n    return state('meter')['unit'] == 'kWh'")
        box.load("reads_other", "def reads_other():\n    return get('meter', 'unit') == 'kWh'")
        box.load("fridge_open", "def fridge_open():\n    return get('fridge', 'door') == 'open'")
        outcomes = box.evaluate(states)
        assert box.restarts == 0  # before, the worker was restarted once per condition
    assert outcomes["reads_other"].value is True and outcomes["fridge_open"].value is True
    for key in ("reads_it", "reads_all"):
        assert outcomes[key].error == (f"Line 2: The device 'meter' has a value for 'reading' that a condition "
                                       f"cannot read: {why}{outcomes[key].error.split(why)[1]}")
        assert "memory" not in outcomes[key].error


def test_both_modes_read_the_same_copy_of_unusual_values():
    states = {"tv": {"pair": (1, 2), "presets": {1: "movie"}, "since": datetime.date(2024, 5, 1), "nan": math.nan}}
    code = ("def same():\n    return get('tv', 'pair') == [1, 2] and get('tv', 'presets') == {'1': 'movie'} "
            "and get('tv', 'since') == '2024-05-01' and get('tv', 'nan') != get('tv', 'nan')")
    with Sandbox(isolation="inline") as inline, Sandbox(isolation="process") as worker:
        for box in (inline, worker):
            box.load("same", code)
        assert inline.evaluate(states)["same"].value is True
        assert worker.evaluate(states)["same"].value is True


def test_checking_prints_no_python_warnings():
    # "invalid decimal literal" and similar SyntaxWarnings would land on a learner's stderr.
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run_condition("def f():\n    return (1if True else 0) == 1", STATES) is True
        with pytest.raises(ConditionError):
            check_condition("def f():\n    return 0x1for")
    assert caught == []
