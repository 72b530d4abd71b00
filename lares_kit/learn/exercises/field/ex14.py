"""Exercise 14, valid is not right: reading what a real small model did, and checking its calls.

Notebook: ``exercises/14_valid_not_right.ipynb`` (for ``notebooks/14_a_small_local_model``).
No model runs: the episodes are the real ones shipped in ``lares_kit/data/recorded/`` (SmolLM2-135M as
``local``, Qwen2.5-Coder-1.5B as ``local-qwen``), replayed from their recordings by
:func:`~lares_kit.bench.recorded.replay`, and the calls to check are ones those models wrote. The checks
compare the student's code with the reference rules of :mod:`lares_kit.models.local.prompt`
(:func:`~lares_kit.models.local.prompt.argument_problem`, :func:`~lares_kit.models.local.prompt.parse_call`)
on several cases each, so a hard-coded answer fails.
"""

from __future__ import annotations

import functools
from typing import Any

from ....bench.recorded import PLAN, replay
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal
from ...matching import has_id

__all__ = ["q1", "q2", "q3", "recorded", "PARAMETERS", "bind", "____", "PLACEHOLDER"]


@functools.lru_cache(maxsize=None)
def recorded(key: str) -> Any:
    """A shipped real-model episode, replayed from its recording (no model runs): an Episode.

    Args:
        key: The episode's key, e.g. ``"local/function-calling/kitchen/latest"`` (model/design/scenario/knowledge).
    """
    planned = {episode.key: episode for episode in PLAN}
    if key not in planned:
        raise KeyError(f"{key!r} is not a recorded episode; some are {list(planned)[:3]}")
    return replay(planned[key])


@functools.lru_cache(maxsize=None)
def _parameters() -> dict[str, dict]:
    from ....home.worlds import load_world
    from ....tools import Toolbox

    return {s["function"]["name"]: s["function"]["parameters"] for s in Toolbox(load_world("lares-home")).schemas()}


PARAMETERS = _parameters()  # the Lares home's tools: name -> the JSON schema of its arguments, as the model sees it


# ---------------------------------------------------------------- q1: where it started going round in circles
REPEAT_CASES = ["local/function-calling/kitchen/latest", "local-qwen/function-calling/kitchen/latest",
                "local-qwen/function-calling/dog/latest", "local/react/kitchen/latest",
                "offline/react/dog/latest/executor=local-qwen", "local-qwen/intent-action/dog/latest",
                "local/intent-action/kitchen/latest"]


def _first_repeat(episode: Any, same=lambda step: step.call_text, anywhere: bool = True) -> int | None:
    # The reference, and the mistakes students make (a name only; only the call just before).
    seen: list[str] = []
    for step in episode.tool_calls:
        if same(step) in (seen if anywhere else seen[-1:]):
            return step.turn
        seen.append(same(step))
    return None


def _test_repeat(first_repeat) -> str:
    loops = 0
    for key in REPEAT_CASES:
        episode = recorded(key)
        want = _first_repeat(episode)
        got = call(first_repeat, episode, case=key)
        if got == want and type(got) is type(want):
            loops += want is not None
            continue
        calls = ", ".join(f"{s.turn}: {s.call_text[:40]}" for s in episode.tool_calls[:8])
        why = ""
        if got is not None and got == _first_repeat(episode, same=lambda step: step.tool):
            why = (" That turn calls the same function as before with other arguments: compare the whole call "
                   "(step.call_text), not just its name.")
        elif got is not None and got == _first_repeat(episode, anywhere=False):
            why = " An earlier repeat is not next to its twin: compare with every call before, not only the last."
        elif want is not None and got == next(i for i, s in enumerate(episode.tool_calls) if s.turn == want):
            why = " That is its position in the list: return the turn (step.turn) the agent made it in."
        elif want is None:
            why = " No call in it is made twice: return None."
        raise Incorrect(f"For {key} (calls by turn: {calls}), the first repeated call is at turn {want!r}, but your "
                        f"function returned {got!r}.{why}")
    return (f"Right: {loops} of {len(REPEAT_CASES)} real episodes made a call they had already made, most of them "
            "again and again until the step limit. A grammar keeps a call well-formed; it cannot make the model "
            "read the result.")


# ---------------------------------------------------------------- q2: an argument check
# (function, arguments, the keys a right sentence may name (empty: valid), what is wrong, who wrote it)
ARGUMENT_CASES = [
    ("toggle_light", {"light_id": "kitchen-light"}, (), "", "Qwen, kitchen"),
    ("toggle_light", {"light_id": "lounge-light", "on": True}, ("on",),
     "'on' is not a parameter of toggle_light", "Qwen, dog"),
    ("toggle_light", {"id": "robot", "room": "hallway"}, ("light_id", "id", "room"),
     "'light_id' is missing (and 'id', 'room' are not parameters)", "SmolLM2, react"),
    ("set_light", {"light_id": "kitchen-light", "on": "true"}, ("on",),
     "'on' must be a boolean, and \"true\" is a string", ""),
    ("set_light", {"light_id": "kitchen-light", "on": 1}, ("on",),
     "'on' must be a boolean, and 1 is a number", ""),
    ("set_light", {"light_id": "garage-light", "on": True}, ("light_id",),
     "'light_id' must be one of the enum's values, and there is no garage-light", ""),
    ("set_light", {"light_id": "kitchen-light"}, ("on",), "'on' is required", ""),
    ("set_light", {"light_id": "office-light", "on": True}, (), "", "Qwen, daytime"),
    ("look_with_robot", {}, (), "", "SmolLM2, kitchen"),
    ("halt", {"message_to_user": "The light in the Kitchen is now on."}, (), "", "Qwen, react"),
]


def _test_arguments(argument_error) -> str:
    for name, arguments, at_fault, what, who in ARGUMENT_CASES:
        case = f"{name}({arguments})" + (f" (written by {who})" if who else "")
        got = call(argument_error, PARAMETERS[name], arguments, case=case)
        if got is not None and not isinstance(got, str):
            raise Incorrect(f"For {case}: return None (valid) or a sentence saying what is wrong (a str); your "
                            f"function returned {got!r}.")
        if not at_fault:
            expect_equal(got, None, f"{case}, which is valid")
        elif got is None:
            raise Incorrect(f"For {case}: {what}, but your function returned None (valid).")
        elif not any(has_id(got, key) for key in at_fault):
            raise Incorrect(f"For {case}: {what}, and your sentence {got!r} does not name the argument at fault "
                            f"({' or '.join(at_fault)}).")
    bad = sum(bool(c[2]) for c in ARGUMENT_CASES)
    return (f"Right on all {len(ARGUMENT_CASES)} calls, {bad} of them invalid. Qwen wrote the first invalid one "
            "under its grammar (llama.cpp let the extra key through) and the toolbox refused it: check every call, "
            "constrained or not.")


# ---------------------------------------------------------------- q3: read the call in a reply
REPLIES = [
    ('<tool_call>\n{"name": "toggle_light", "arguments": {"light_id": "kitchen-light"}}\n</tool_call>',
     "Qwen's own tags around the call"),
    ("I will turn on the light in the kitchen for you.", "prose, no call"),
    ('Sure! Here it is: {"name": "halt", "arguments": {"message_to_user": "Done."}} Anything else?',
     "prose around the call"),
    ('lights = {kitchen: on}\ncall = {"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}',
     "braces that are not JSON before the call"),
    ('{"light_id": "kitchen-light", "on": true}', "arguments, but no function name"),
    ('{"name": "look_with_robot", "arguments": {}}', "a call with no arguments"),
    ('{"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": tr', "cut off by the token limit"),
]


def _reference_call(text: str) -> tuple[str, dict] | None:
    from ....models.local.prompt import parse_call

    return parse_call(text)


def _test_read(read_call) -> str:
    for text, what in REPLIES:
        case = f"{text!r} ({what})"
        want, got = _reference_call(text), call(read_call, text, case=case)
        if isinstance(got, list) and want is not None and got == list(want):
            raise Incorrect(f"For {case}: return a tuple (name, arguments), not a list: got {got!r}.")
        if isinstance(got, dict) and want is not None and got.get("name") == want[0]:
            raise Incorrect(f"For {case}: return the pair (name, arguments) as a tuple, not the whole object.")
        expect_equal(got, want, case)
    return (f"Right on all {len(REPLIES)} replies. A free model's text needs this reader, and it still finds no "
            "call in prose; under the grammar there is always exactly one.")


q1 = Problem("Where it went round in circles", ("first_repeat",), _test_repeat, hints=[
    "Walk episode.tool_calls in order, keeping the step.call_text of every call so far; the first call whose text "
    "is already kept is the repeat.",
    "Return that step's step.turn (not its position in the list); after the loop, return None.",
])
q2 = Problem("An argument check", ("argument_error",), _test_arguments, hints=[
    "Four rules, in order: every key in parameters['required'] is there; every key sent is in "
    "parameters['properties']; each value has its property's 'type'; a value with an 'enum' is one of it.",
    "Types: {'string': str, 'boolean': bool}; a value is a boolean only if isinstance(value, bool) -- 1 is not "
    "one in JSON. Name the key in each sentence: f\"missing {key!r}\".",
    "Return None only after every rule has passed.",
])
q3 = Problem("Read the call in a reply", ("read_call",), _test_read, hints=[
    "json.JSONDecoder().raw_decode(text, start) reads one JSON value that starts at index start (and may be "
    "followed by more text); it raises json.JSONDecodeError when there is none.",
    "Try every index where text has a '{': the first value that is a dict with a 'name' is the call; return "
    "(value['name'], value.get('arguments', {})). No such value: None.",
])
EXERCISE = Exercise("14_valid_not_right", [q1, q2, q3])
bind = EXERCISE.bind
