"""Exercise 09, a ReAct output parser that handles several Actions.

Notebook: ``exercises/09_react_parser.ipynb`` (for ``notebooks/09_react_two_models``).
Self-contained: an Action here is ``{"tool": NAME, "arguments": {...}}``
after ``Action:``, as in the smart-building paper's format. The model is told
to write one Action, and sometimes writes three; the parser must read them
all, so the agent can decide deliberately what to run.
"""

from __future__ import annotations

from .checking import PLACEHOLDER, ____, Exercise, Incorrect, Problem, call, expect_equal

__all__ = ["q1", "q2", "q3", "bind", "____", "PLACEHOLDER"]

ONE = 'Thought: The kitchen is dark.\nAction: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}'
THREE = ('Thought: Three lights to switch.\n'
         'Action: {"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}\n'
         'Action: {"tool": "set_light", "arguments": {"light_id": "office-light", "on": true}}\n\n'
         'Action:\n```json\n{"tool": "set_light", "arguments": {"light_id": "lounge-light", "on": false}}\n```')
FINAL = "Thought: Everything is done.\nFinal Answer: The kitchen light is on."


def _test_final(final_answer) -> str:
    for text, want in [(FINAL, "The kitchen light is on."), (ONE, None),
                       ("Final Answer:  Done, see you.\n", "Done, see you."), ("final answer: ok", "ok")]:
        expect_equal(call(final_answer, text, case=repr(text[:40])), want, f"the reply {text[:40]!r}")
    return "Final answers found, stripped; no final answer gives None."


def _test_actions(parse_actions) -> str:
    cases = [(ONE, [{"tool": "set_light", "arguments": {"light_id": "kitchen-light", "on": True}}]),
             (THREE, [{"tool": "set_light", "arguments": {"light_id": d, "on": on}}
                      for d, on in [("kitchen-light", True), ("office-light", True), ("lounge-light", False)]]),
             (FINAL, [])]
    for text, want in cases:
        expect_equal(call(parse_actions, text, case=f"a reply with {len(want)} Action(s)"), want,
                     f"a reply with {len(want)} Action(s)")
    bad = 'Thought: x\nAction: {"tool": "set_light", "arguments": {"light_id": "kitchen-light"'
    try:
        got = parse_actions(bad)
    except ValueError as exc:
        if "JSON" not in str(exc):
            raise Incorrect(f"For an Action whose JSON is cut off, the ValueError should say the JSON is not "
                            f"valid; it says {str(exc)!r}.") from None
    else:
        raise Incorrect(f"For an Action whose JSON is cut off, expected a ValueError; got {got!r}.")
    return "One, three, or no Actions, fenced or not; broken JSON is an error with a reason."


def _test_note(ignored_note) -> str:
    expect_equal(call(ignored_note, 1, case="one Action"), "", "one Action")
    for n in (2, 3):
        note = call(ignored_note, n, case=f"{n} Actions")
        if not isinstance(note, str) or str(n) not in note or str(n - 1) not in note or "one" not in note.lower():
            raise Incorrect(f"For {n} Actions, the note should say how many Actions came ({n}), how many were not "
                            f"run ({n - 1}), and to send one at a time; it says {note!r}.")
    return "The model learns what happened to its extra Actions, and what to do next."


q1 = Problem("The final answer", ("final_answer",), _test_final, hints=[
    "re.search(r'Final Answer\\s*:\\s*(.*)', text, re.IGNORECASE | re.DOTALL) finds it.",
    "Return match.group(1).strip(), or None when there is no match.",
])
q2 = Problem("Every Action", ("parse_actions",), _test_actions, hints=[
    "Split the text at each 'Action:' (re.split(r'Action\\s*:', text)); the first piece is the Thought.",
    "In each piece, remove a ```json fence, then read the first JSON object: json.JSONDecoder().raw_decode(piece.strip()) "
    "returns (value, end) and ignores what follows.",
    "Catch json.JSONDecodeError and raise ValueError(f'Action {n} is not valid JSON: ...').",
])
q3 = Problem("Tell the model", ("ignored_note",), _test_note, hints=[
    "For 1 Action there is nothing to say: return ''.",
    "For n > 1: f'Your reply had {n} Actions; only the first was run and the other {n - 1} were not. "
    "Send one Action at a time.'",
])
EXERCISE = Exercise("09_react_parser", [q1, q2, q3])
bind = EXERCISE.bind
