"""Exercise 09, a ReAct output parser that handles several Actions.

Notebook: ``exercises/09_react_parser.ipynb`` (for ``notebooks/09_react_two_models``).
Self-contained: an Action here is ``{"tool": NAME, "arguments": {...}}``
after ``Action:``, as in the smart-building paper's format. The model is told
to write one Action, and sometimes writes three; the parser must read them
all, so the agent can decide deliberately what to run.
"""

from __future__ import annotations

import re
from collections import Counter

from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call, expect_equal
from ...matching import has_word, numbers_in

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]

ONE = ('Thought: The kitchen is dark.\n'
       'Action: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}')
THREE = ('Thought: Three lights to switch.\n'
         'Action: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}\n'
         'Action: {"tool": "set_light", "arguments": {"light_id": "office-light", "on": true}}\n\n'
         'Action:\n```json\n{"tool": "set_light", "arguments": {"light_id": "lounge-light", "on": false}}\n```')
FINAL = "Thought: Everything is done.\nFinal Answer: The kitchen light is on."


def _test_final(final_answer) -> str:
    for text, want in [(FINAL, "The kitchen light is on."), (ONE, None),
                       ("Final Answer:  Done, see you.\n", "Done, see you."), ("final answer: ok", "ok")]:
        got = call(final_answer, text, case=repr(text[:40]))
        if want is None and got is not None:
            raise Incorrect(f"For the reply {text[:40]!r}..., which has an Action and no 'Final Answer:', expected "
                            f"None; your function returned {got!r}.")
        expect_equal(got, want, f"the reply {text[:40]!r}")
    return "Final answers found, stripped; no final answer gives None."


def _test_actions(parse_actions) -> str:
    cases = [(ONE, [{"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": True}}]),
             (THREE, [{"tool": "set_light", "arguments": {"light_id": d, "on": on}}
                      for d, on in [("kitchen-light", True), ("office-light", True), ("lounge-light", False)]]),
             (FINAL, [])]
    for text, want in cases:
        got = call(parse_actions, text, case=f"a reply with {len(want)} Action(s)")
        if isinstance(got, list) and len(got) != len(want):
            raise Incorrect(f"For a reply with {len(want)} Action(s), expected {len(want)} in the list; your function "
                            f"found {len(got)}. Read every Action, fenced in ```json or not.")
        expect_equal(got, want, f"a reply with {len(want)} Action(s)")
    bad = 'Thought: x\nAction: {"tool": "set_light", "arguments": {"light_id": "kitchen-light"'
    try:
        got = parse_actions(bad)
    except ValueError as exc:
        if not has_word(str(exc), "JSON"):
            raise Incorrect(f"For an Action whose JSON is cut off, the ValueError should say the JSON is not "
                            f"valid; it says {str(exc)!r}.") from None
    else:
        raise Incorrect(f"For an Action whose JSON is cut off, expected a ValueError; got {got!r}.")
    return "One, three, or no Actions, fenced or not; broken JSON is an error with a reason."


# "Send one Action at a time", "one per reply", "a single Action", "one by one": the instruction the note must give.
_ONE_AT_A_TIME = re.compile(r"\b(?:one|1|single)\b(?:\W+\w+){0,3}?\W+(?:actions?|at\W+a\W+time|per|by\W+one|each)\b",
                            re.IGNORECASE)


def _note_problem(note: str, n: int) -> str:
    """What a note for ``n`` Actions leaves out ("" when nothing): numbers in digits or words, read as words."""
    said = Counter(numbers_in(note))
    instruction = _ONE_AT_A_TIME.search(note)
    if instruction and n - 1 == 1 and numbers_in(instruction.group(0))[:1] == [1]:
        said[1] -= 1  # the "one" of "one at a time" is not the count of Actions left out
    missing = []
    if said[n] < 1:
        missing.append(f"how many Actions came ({n})")
    if said[n - 1] < 1:
        missing.append(f"how many were not run ({n - 1})")
    if instruction is None:
        missing.append("to send one Action at a time")
    return "; ".join(missing)


def _test_note(ignored_note) -> str:
    expect_equal(call(ignored_note, 1, case="one Action"), "", "one Action")
    for n in (2, 3):
        note = call(ignored_note, n, case=f"{n} Actions")
        if not isinstance(note, str):
            raise Incorrect(f"For {n} Actions, return the note as a string; got {type(note).__name__} {note!r}.")
        missing = _note_problem(note, n)
        if missing:
            raise Incorrect(f"For {n} Actions, the note should say how many Actions came, how many were not run, "
                            f"and to send one at a time (numbers in digits or words). It does not say {missing}: "
                            f"{note!r}.")
    return "The model learns what happened to its extra Actions, and what to do next."


q1 = Problem("The final answer", ("final_answer",), _test_final, hints=[
    "re.search(r'Final Answer\\s*:\\s*(.*)', text, re.IGNORECASE | re.DOTALL) finds it.",
    "Return match.group(1).strip(), or None when there is no match.",
])
q2 = Problem("Every Action", ("parse_actions",), _test_actions, hints=[
    "Split the text at each 'Action:' (re.split(r'Action\\s*:', text)); the first piece is the Thought.",
    "In each piece, remove a ```json fence, then read the first JSON object: "
    "json.JSONDecoder().raw_decode(piece.strip()) returns (value, end) and ignores what follows.",
    "Catch json.JSONDecodeError and raise ValueError(f'Action {n} is not valid JSON: ...').",
])
q3 = Problem("Tell the model", ("ignored_note",), _test_note, hints=[
    "For 1 Action there is nothing to say: return ''.",
    "For n > 1: f'Your reply had {n} Actions; only the first was run and the other {n - 1} were not. "
    "Send one Action at a time.'",
])
EXERCISE = Exercise("09_react_parser", [q1, q2, q3])
bind = EXERCISE.bind
