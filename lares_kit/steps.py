"""The typed steps of an Episode: what the agent thought, did, asked and said.

Taught in ``notebooks/03_function_calling_loop.ipynb`` beside :mod:`lares_kit.episode`.
Each record is a small dataclass a notebook can show as it is:

* :class:`Intent` -- the decision of the intent step (which function, and why);
* :class:`ToolCall` -- a call and its observation (what the model reads back),
  with the true state of the home right after it (``after``) so a replay can
  redraw the map at every step without running anything again;
* :class:`Question` -- an ``ask_user`` call, with the user's answer;
* :class:`Final` -- the ``halt`` call that ended the episode;
* :class:`Error` -- a reply that could not be used (no call, bad intent,
  empty reply). Calls that went wrong are ToolCalls with ``ok=False``;
* :class:`Thought` and :class:`Action` -- the ReAct agent's Thought and a
  call made from its Action (a ToolCall that reads "Action / Observation").

Every step has the ``turn`` it belongs to (1 for the first model turn).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Union

__all__ = ["Intent", "ToolCall", "Question", "Final", "Error", "Thought", "Action", "LLMCall", "Step",
           "step_from_dict"]


def _wrap(label: str, text: str, mark: str = "  ") -> list[str]:
    # " 3 label    text that goes on..." with continuation lines under the text
    head = f"{mark} {label:<8} "
    return textwrap.wrap(text, width=100, initial_indent=head, subsequent_indent=" " * len(head)) or [head]


@dataclass
class Intent:
    """The intent step's decision: call ``function`` next, because ``reasoning``.

    Examples:
        >>> Intent("The kitchen light is off.", "set_light").summary
        'I have decided to call set_light because: The kitchen light is off.'
    """

    reasoning: str
    function: str
    turn: int = 0
    kind: ClassVar[str] = "intent"

    @property
    def summary(self) -> str:
        """The line kept in the history instead of the raw intent call (as Lares does)."""
        return f"I have decided to call {self.function} because: {self.reasoning}"

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("thinks", f"{self.reasoning} -> {self.function}", mark)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class ToolCall:
    """One tool call and its observation.

    ``result`` is the tool message content exactly as the model reads it
    (errors start with ``"Error: "``). ``after`` is the truth right after
    the call: ``{"time", "robot": room, "devices": {changed id: state},
    "items": {id: room}, "seen": home.seen}``.

    Examples:
        >>> call = ToolCall("set_light", {"light_id": "kitchen-light", "on": True}, "The light ... is now on.")
        >>> call.raw_arguments
        '{"light_id": "kitchen-light", "on": true}'
        >>> call.render()[0]
        '   calls    set_light(light_id="kitchen-light", on=true)'
    """

    tool: str
    arguments: dict[str, Any] | None  # None when the model's JSON could not be read
    result: str
    ok: bool = True
    turn: int = 0
    call_id: str = ""
    raw_arguments: str = ""  # the arguments exactly as the model sent them
    text: str = ""  # assistant text sent with the call(s) of this turn, if any
    after: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "call"

    def __post_init__(self) -> None:
        if not self.raw_arguments and self.arguments is not None:
            self.raw_arguments = json.dumps(self.arguments)
        if not self.call_id:
            self.call_id = f"call_{self.turn}_{self.tool}"

    @property
    def call_text(self) -> str:
        """The call as code: ``set_light(light_id="kitchen-light", on=true)``."""
        if self.arguments is None:
            return f"{self.tool}({self.raw_arguments})"
        return f"{self.tool}(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in self.arguments.items()) + ")"

    def render(self, mark: str = "  ") -> list[str]:
        lines = _wrap("says", self.text, mark) if self.text else []
        lines += _wrap("calls", self.call_text, "  " if lines else mark)
        return lines + _wrap("result", self.result)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class Question(ToolCall):
    """An ``ask_user`` call; ``answer`` is None when the user had no answer."""

    answer: str | None = None
    kind: ClassVar[str] = "question"

    @property
    def question(self) -> str:
        return str((self.arguments or {}).get("question", self.raw_arguments))

    def render(self, mark: str = "  ") -> list[str]:
        answer = self.answer if self.answer is not None else "(no answer)"
        return _wrap("asks", self.question, mark) + _wrap("answer", answer)


@dataclass
class Final(ToolCall):
    """The ``halt`` call that ended the episode; ``result`` is the message to the user."""

    kind: ClassVar[str] = "final"

    @property
    def message(self) -> str:
        return self.result

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("halts", self.message, mark)


@dataclass
class Error:
    """A model reply the loop could not use; ``reply`` is any text the model sent."""

    message: str
    reply: str = ""
    turn: int = 0
    kind: ClassVar[str] = "error"

    def render(self, mark: str = "  ") -> list[str]:
        if not self.reply:
            return _wrap("error", self.message, mark)
        return _wrap("says", self.reply, mark) + _wrap("error", self.message)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class Thought:
    """The ReAct planner's Thought: its reasoning before an Action or the Final Answer.

    Examples:
        >>> Thought("The room is stuffy; I read its sensor first.", turn=1).render(" 1")
        [' 1 Thought  The room is stuffy; I read its sensor first.']
    """

    text: str
    turn: int = 0
    kind: ClassVar[str] = "thought"

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("Thought", self.text, mark)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass
class Action(ToolCall):
    """A ReAct Action that ran: a ToolCall shown as ``Action`` and ``Observation``.

    Examples:
        >>> Action("read_device", {"device_id": "office-1-sensor"}, "The air sensor ...").render()[1]
        '   Observation The air sensor ...'
    """

    kind: ClassVar[str] = "action"

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("Action", self.call_text, mark) + _wrap("Observation", self.result)


@dataclass
class LLMCall:
    """One request to the model: which phase, its token usage and how long it took."""

    phase: str  # "turn" (function calling), "intent" or "action" (intent-action), "thought" (react)
    turn: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    error: str = ""  # set when the request failed


Step = Union[Intent, ToolCall, Question, Final, Error, Thought, Action]
_KINDS = {cls.kind: cls for cls in (Intent, ToolCall, Question, Final, Error, Thought, Action)}


def step_from_dict(data: dict[str, Any]) -> Step:
    """Rebuild a step from its ``to_dict()`` form.

    Examples:
        >>> step_from_dict(Intent("why", "halt", turn=2).to_dict())
        Intent(reasoning='why', function='halt', turn=2)
    """
    data = dict(data)
    kind = data.pop("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown step kind {kind!r}; kinds: {', '.join(_KINDS)}")
    return _KINDS[kind](**data)
