"""Exercise 08, evaluation: write benchmark checks, show they can fail, and read a run by category.

Notebook: ``exercises/08_evaluation.ipynb`` (after ``notebooks/08_evaluation.ipynb``).
A check returns a :class:`~lares_kit.bench.judging.checks.CheckResult` -- a kind,
passed or not, and a sentence that explains a failure -- as the benchmark's
own checks do. The checks here run real benchmark tasks with the offline
model, and also hand your check episodes that were changed on purpose (a
change moved before the question, a device that should not have changed),
so a check that always passes is caught.

What each case should give is worked out here from the episode itself, never
from what the offline model is expected to do, so the verdicts do not move
when the model's rules do.
"""

from __future__ import annotations

import copy
import fnmatch
import math
import re
from functools import cache
from statistics import mean

from ....agents import run_agent
from ....bench.judging.checks import CheckResult
from ....bench.scene import set_stage
from ....bench.suites.tasks import load_suite
from ....episode import Episode
from ....episode_steps import Question
from ....home.worlds import load_world
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call
from ...matching import has_id

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]


# ------------------------------------------------------------ the episodes
@cache
def _tasks() -> dict:
    return {t.id: t for suite in ("lares-home", "townhouse") for t in load_suite(suite)}


@cache
def _episode_data(task_id: str) -> dict:
    task = _tasks()[task_id]
    scene = set_stage(task, load_world(task.world))
    episode = run_agent(task.instruction, scene.home, agent="function-calling", model="offline", user=scene.user,
                        max_steps=task.max_steps, context=scene.run_context)
    return episode.to_dict()


def _episode(task_id: str) -> Episode:
    return Episode.from_dict(copy.deepcopy(_episode_data(task_id)))  # a fresh copy: answers may change it


def _change_before_question(task_id: str) -> Episode:
    # The same episode with its first device change moved before its first question.
    episode = _episode(task_id)
    question = next(s for s in episode.steps if isinstance(s, Question))
    change = next(s for s in episode.tool_calls if s.after.get("devices"))
    episode.steps.remove(change)
    episode.steps.insert(episode.steps.index(question), change)
    return episode


def _oven_left_on(task_id: str) -> Episode:
    episode = _episode(task_id)
    episode.final_state["devices"]["oven"] = {"on": True, "temperature": 180}
    return episode


def _lights_back_off(task_id: str) -> Episode:
    # As if the searcher had switched every light back off before it halted: the home ends as it began.
    episode = _episode(task_id)
    episode.final_state["devices"] = copy.deepcopy(episode.initial_state["devices"])
    return episode


def _changes(episode: Episode) -> list[str]:
    before, after = episode.initial_state["devices"], episode.final_state["devices"]
    return [dev for dev, state in after.items() if state != before.get(dev)]


def _result(got: object, kind: str, case: str) -> CheckResult:
    if not all(hasattr(got, name) for name in ("kind", "passed", "reason")):
        raise Incorrect(f"For {case}, return a CheckResult(kind, passed, reason); got {type(got).__name__} {got!r}.")
    if got.kind != kind:
        raise Incorrect(f"For {case}, the kind should be {kind!r}, so a report can tell the checks apart; "
                        f"got {got.kind!r}.")
    if not isinstance(got.passed, bool):
        raise Incorrect(f"For {case}, passed should be True or False; got {got.passed!r}.")
    if not isinstance(got.reason, str) or len(got.reason.strip()) < 10:
        raise Incorrect(f"For {case}, give a reason: a sentence a person can read (got {got.reason!r}).")
    return got


# --------------------------------------------------------------------- q1
def _asks_first(episode: Episode, pattern: str) -> tuple[bool, str | None]:
    """(passed, the device changed before the question or None)."""
    rx = re.compile(pattern, re.IGNORECASE)
    for step in episode.tool_calls:
        if isinstance(step, Question) and rx.search(step.question):
            return True, None
        if step.after.get("devices"):
            return False, next(iter(step.after["devices"]))
    return False, None


def _test_asks_first(asks_first) -> str:
    cases = [
        ("day|night", "the daytime task (lh-office-daytime), pattern 'day|night'",
         lambda: _episode("lh-office-daytime")),
        ("day|night", "the daytime task with the light switched on before the question",
         lambda: _change_before_question("lh-office-daytime")),
        ("which (light|lamp|room)", "the daytime task, pattern 'which (light|lamp|room)'",
         lambda: _episode("lh-office-daytime")),
        ("day|night", "the sunny-morning task (the light stays off), pattern 'day|night'",
         lambda: _episode("lh-appropriate-morning")),
        (".", "'Set the heating to 21 degrees.' (th-heating-21), pattern '.'", lambda: _episode("th-heating-21")),
    ]
    for pattern, case, make in cases:
        episode = make()
        got = _result(call(asks_first, episode, pattern, case=case), "asks_first", case)
        want, device = _asks_first(episode, pattern)
        asked = "; ".join(repr(q) for q in episode.asked) or "nothing"
        if got.passed != want:
            if want:
                raise Incorrect(f"For {case}, the check should pass: the agent asked {asked} before changing "
                                "anything; it said: " + got.reason)
            why = (f"{device} changed before any question matching it" if device else
                   f"no question matches {pattern!r} (asked: {asked})")
            raise Incorrect(f"For {case}, the check should fail -- {why} -- but it passed. A check that cannot fail "
                            "measures nothing.")
        if device and not has_id(got.reason, device):
            raise Incorrect(f"For {case}, the check fails, rightly; now say why: the reason should name the device "
                            f"that changed first, {device!r}. It says: {got.reason!r}")
    return "Your check passes an agent that asks first, and fails one that acts first -- saying which device."


# --------------------------------------------------------------------- q2
def _test_allowed(only_allowed_changed) -> str:
    cases = [
        ("the dog search (lh-light-for-dog), allowed ['*-light']", lambda: _episode("lh-light-for-dog"), ["*-light"]),
        ("the dog search, allowed ['bedroom-light']", lambda: _episode("lh-light-for-dog"), ["bedroom-light"]),
        ("the heating task (th-heating-21), allowed ['hall-thermostat']", lambda: _episode("th-heating-21"),
         ["hall-thermostat"]),
        ("the heating task, allowed ['hall']", lambda: _episode("th-heating-21"), ["hall"]),
        ("the heating task with the oven left on at the end, allowed ['hall-thermostat']",
         lambda: _oven_left_on("th-heating-21"), ["hall-thermostat"]),
        ("the dog search with every light switched back off before the halt, allowed []",
         lambda: _lights_back_off("lh-light-for-dog"), []),
    ]
    for case, make, allowed in cases:
        episode = make()
        got = _result(call(only_allowed_changed, episode, list(allowed), case=case), "unchanged", case)
        bad = [d for d in _changes(episode) if not any(fnmatch.fnmatchcase(d, p) for p in allowed)]
        if got.passed != (not bad):
            if bad:
                raise Incorrect(f"For {case}, the check should fail: {', '.join(bad)} changed and no pattern allows "
                                "it (patterns match the whole id, as fnmatch does: 'hall' allows only a device called "
                                "hall) -- but it passed.")
            changed = _changes(episode)
            raise Incorrect(f"For {case}, the check should pass: " + (
                f"only {', '.join(changed)} changed, and {allowed} allows it" if changed else
                "every device ends as it began (compare episode.initial_state with episode.final_state, not the "
                "calls on the way)") + f". It said: {got.reason!r}")
        missing = [d for d in bad if not has_id(got.reason, d)]
        if missing:
            raise Incorrect(f"For {case}, the check fails, rightly; the reason should name every device that "
                            f"changed without leave ({', '.join(bad)}), and it leaves out {', '.join(missing)}.")
    return "Your check compares the start with the end, honours the patterns, and names what changed."


# --------------------------------------------------------------------- q3
@cache
def _real_results() -> tuple:
    from ....bench.judging.oracle import oracle_steps
    from ....bench.runner import RESULT_KEYS, Job, run_job

    world = load_world("lares-home")
    tasks = [t for t in _tasks().values() if t.suite == "lares-home"]
    records = [run_job(Job(t, "function-calling", "offline"), world, None, oracle_steps(t, world)) for t in tasks]
    return tuple({k: r[k] for k in RESULT_KEYS} for r in records)


def _by_category(results: list[dict]) -> dict:
    out = {}
    for category in dict.fromkeys(r["category"] for r in results):
        rows = [r for r in results if r["category"] == category]
        solved = [r for r in rows if r["success"]]
        out[category] = {"success_rate": len(solved) / len(rows),
                         "steps_per_oracle": mean(r["steps"] / r["oracle_steps"] for r in solved) if solved else None}
    return out


def _row(success: bool, steps: int, oracle: int, category: str, task: str) -> dict:
    return {"task": task, "world": "lares-home", "category": category, "agent": "function-calling", "model": "offline",
            "success": success, "steps": steps, "oracle_steps": oracle, "llm_calls": steps, "prompt_tokens": 1000,
            "completion_tokens": 20, "seconds": 0.1, "error": None}


SMALL = [_row(True, 2, 2, "direct", "a"), _row(False, 1, 2, "direct", "b"),
         _row(True, 4, 2, "search", "c"), _row(True, 30, 5, "search", "d"), _row(False, 20, 5, "search", "e"),
         _row(False, 3, 2, "clarification", "f")]


def _close(a: object, b: float | None) -> bool:
    if b is None or a is None:
        return a is None and b is None
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isclose(a, b, abs_tol=1e-3)


def _test_by_category(by_category) -> str:
    cases = [("six hand-made results (direct, search, clarification)", lambda: [dict(r) for r in SMALL]),
             ("the lares-home suite, function-calling, offline model", lambda: [dict(r) for r in _real_results()])]
    for case, make in cases:
        results = make()
        got = call(by_category, results, case=case)
        want = _by_category(results)
        if not isinstance(got, dict):
            raise Incorrect(f"For {case}, return a dict {{category: {{'success_rate': ..., 'steps_per_oracle': ...}}}}"
                            f"; got {type(got).__name__}.")
        if sorted(got) != sorted(want):
            raise Incorrect(f"For {case}, the categories should be {sorted(want)}; got {sorted(got)}.")
        for category, row in want.items():
            mine = got[category]
            if not isinstance(mine, dict) or not {"success_rate", "steps_per_oracle"} <= set(mine):
                raise Incorrect(f"For {case}, category {category!r} should map to a dict with 'success_rate' and "
                                f"'steps_per_oracle'; got {mine!r}.")
            rate, ratio = mine["success_rate"], mine["steps_per_oracle"]
            rows = [r for r in results if r["category"] == category]
            if not _close(rate, row["success_rate"]):
                hint = " -- a fraction from 0 to 1, not a percentage" if _close(rate, 100 * row["success_rate"]) else ""
                raise Incorrect(f"For {case}, {category}: success_rate should be {row['success_rate']:.3f}{hint}; "
                                f"got {rate!r}.")
            if _close(ratio, row["steps_per_oracle"]):
                continue
            want_text = "None (no episode was solved)" if row["steps_per_oracle"] is None else \
                f"{row['steps_per_oracle']:.3f}"
            every = mean(r["steps"] / r["oracle_steps"] for r in rows)
            solved = [r for r in rows if r["success"]]
            pooled = sum(r["steps"] for r in solved) / sum(r["oracle_steps"] for r in solved) if solved else None
            if _close(ratio, every):
                why = (" You averaged every episode; count only the solved ones "
                       "(a failed episode's steps say nothing about efficiency).")
            elif _close(ratio, pooled):
                why = " That is total steps over total oracle steps; take the mean of each solved episode's own ratio."
            else:
                why = ""
            raise Incorrect(f"For {case}, {category}: steps_per_oracle should be {want_text}; got {ratio!r}.{why}")
    return "Success and steps/oracle by category, as the benchmark table reports them."


q1 = Problem("Ask before acting", ("asks_first",), _test_asks_first, hints=[
    "Go through episode.tool_calls in order. A question is a Question step (isinstance(step, Question), "
    "step.question); a call that changed the home has a non-empty step.after['devices'] ({device id: new state}).",
    "Return CheckResult('asks_first', True, ...) at the first question that matches (re.search(pattern, "
    "question, re.IGNORECASE)); at a change that comes first, return a fail whose reason names the device; "
    "after the loop, fail: no such question was asked.",
])
q2 = Problem("Nothing else changed", ("only_allowed_changed",), _test_allowed, hints=[
    "episode.initial_state['devices'] and episode.final_state['devices'] map each device id to its state: a device "
    "changed if the two differ.",
    "fnmatch.fnmatchcase(device_id, pattern) matches a whole id against a glob such as '*-light'. Collect the "
    "changed devices no pattern allows, and name them all in the reason.",
])
q3 = Problem("Success by category", ("by_category",), _test_by_category, hints=[
    "Group the results by r['category']; success_rate is the share of the group with r['success'] True.",
    "steps_per_oracle: over the solved episodes only, the mean of r['steps'] / r['oracle_steps'] "
    "(statistics.mean); None when nothing in the category was solved.",
])
EXERCISE = Exercise("08_evaluation", [q1, q2, q3])
bind = EXERCISE.bind
