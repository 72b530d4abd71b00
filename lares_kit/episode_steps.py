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
  call made from its Action (a ToolCall that reads "Action / Observation");
* :class:`Meanwhile` -- not the agent's doing: what happened in the home while
  it worked (a ``during:`` event, :mod:`lares_kit.home.during`). The model is
  never told; only its knowledge or its tools can show the change.

Every step has the ``turn`` it belongs to (1 for the first model turn), and
renders itself in the three forms the toolkit shows: :meth:`render` (its lines
in a terminal transcript, :meth:`lares_kit.episode.Episode.transcript`),
:meth:`render_html` (its entry in the app's transcript list) and
:meth:`render_line` (one line of plain text, as the app's picture lists it).
A new kind of step is shown everywhere once it has those three.
"""

from __future__ import annotations

import abc
import html
import json
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Union

__all__ = ["Intent", "ToolCall", "Question", "Final", "Error", "Thought", "Action", "Meanwhile", "LLMCall", "Step",
           "step_from_dict"]


def _wrap(label: str, text: str, mark: str = "  ") -> list[str]:
    # " 3 label    text that goes on..." with continuation lines under the text
    head = f"{mark} {label:<8} "
    return textwrap.wrap(text, width=100, initial_indent=head, subsequent_indent=" " * len(head)) or [head]


_e = html.escape
_RED = "color:#b00020"  # failed calls and errors, in the app's transcript


class _Shown(abc.ABC):
    """What every step shares: its HTML entry around its own body, and its plain-data form.

    A step class defines ``kind``, ``turn``, ``render`` (transcript lines),
    ``_html_body`` (the entry's HTML after the turn number) and
    ``render_line``.
    """

    kind: ClassVar[str]
    turn: int

    @abc.abstractmethod
    def _html_body(self) -> str:
        """The HTML of the entry after its turn number (each step kind writes its own)."""

    def render_html(self) -> str:
        """The step as one entry of the app's transcript list: an ``<li>`` marked with its kind and turn.

        Examples:
            >>> print(Intent("The kitchen is dark.", "set_light").render_html())  # doctest: +NORMALIZE_WHITESPACE
            <li class="lares-step" data-kind="intent" data-turn="0"><b class="lares-turn">0</b>
            <i>thinks</i> The kitchen is dark. &rarr; <b>set_light</b></li>
        """
        return (f'<li class="lares-step" data-kind="{self.kind}" data-turn="{self.turn}">'
                f'<b class="lares-turn">{self.turn}</b> {self._html_body()}</li>')

    def to_dict(self) -> dict[str, Any]:
        """The step as JSON-ready data, its ``kind`` first (:func:`step_from_dict` reads it back)."""
        return {"kind": self.kind, **asdict(self)}  # type: ignore[call-overload]


@dataclass
class Intent(_Shown):
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
        """The step's lines in a transcript; ``mark`` (the turn number, or blanks) starts the first."""
        return _wrap("thinks", f"{self.reasoning} -> {self.function}", mark)

    def _html_body(self) -> str:
        return f"<i>thinks</i> {_e(self.reasoning)} &rarr; <b>{_e(self.function)}</b>"

    def render_line(self) -> str:
        """One line of plain text, its turn first.

        Examples:
            >>> Intent("The kitchen is dark.", "set_light", turn=1).render_line()
            '1 thinks The kitchen is dark. -> set_light'
        """
        return f"{self.turn} thinks {self.reasoning} -> {self.function}"


@dataclass
class ToolCall(_Shown):
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
        """The step's lines in a transcript; ``mark`` (the turn number, or blanks) starts the first."""
        lines = _wrap("says", self.text, mark) if self.text else []
        lines += _wrap("calls", self.call_text, "  " if lines else mark)
        return lines + _wrap("result", self.result)

    def _html_body(self) -> str:
        colour = "" if self.ok else f' style="{_RED}"'
        return f"<code>{_e(self.call_text)}</code><br><span{colour}>{_e(self.result)}</span>"

    def render_line(self) -> str:
        """One line of plain text, its turn first.

        Examples:
            >>> ToolCall("look_with_robot", {}, "The robot sees a bed.", turn=2).render_line()
            '2 look_with_robot() -> The robot sees a bed.'
        """
        return f"{self.turn} {self.call_text} -> {self.result}"


@dataclass
class Question(ToolCall):
    """An ``ask_user`` call; ``answer`` is None when the user had no answer."""

    answer: str | None = None
    kind: ClassVar[str] = "question"

    @property
    def question(self) -> str:
        return str((self.arguments or {}).get("question", self.raw_arguments))

    @property
    def answer_text(self) -> str:
        """The answer as shown: ``"(no answer)"`` when there was none."""
        return self.answer if self.answer is not None else "(no answer)"

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("asks", self.question, mark) + _wrap("answer", self.answer_text)

    def _html_body(self) -> str:
        return f"<i>asks</i> {_e(self.question)}<br><i>answer</i> {_e(self.answer_text)}"

    def render_line(self) -> str:
        """One line of plain text, its turn first.

        Examples:
            >>> Question("ask_user", {"question": "Is it daytime?"}, "No.", answer="No.", turn=1).render_line()
            '1 asks Is it daytime? -- answer: No.'
        """
        return f"{self.turn} asks {self.question} -- answer: {self.answer_text}"


@dataclass
class Final(ToolCall):
    """The ``halt`` call that ended the episode; ``result`` is the message to the user."""

    kind: ClassVar[str] = "final"

    @property
    def message(self) -> str:
        return self.result

    def render(self, mark: str = "  ") -> list[str]:
        return _wrap("halts", self.message, mark)

    def _html_body(self) -> str:
        return f"<i>halts</i> <b>{_e(self.message)}</b>"

    def render_line(self) -> str:
        return f"{self.turn} halts: {self.message}"


@dataclass
class Error(_Shown):
    """A model reply the loop could not use; ``reply`` is any text the model sent."""

    message: str
    reply: str = ""
    turn: int = 0
    kind: ClassVar[str] = "error"

    def render(self, mark: str = "  ") -> list[str]:
        """The step's lines in a transcript; ``mark`` (the turn number, or blanks) starts the first."""
        if not self.reply:
            return _wrap("error", self.message, mark)
        return _wrap("says", self.reply, mark) + _wrap("error", self.message)

    def _html_body(self) -> str:
        return f'<span style="{_RED}"><i>error</i> {_e(self.message)}</span>'

    def render_line(self) -> str:
        """One line of plain text, its turn first.

        Examples:
            >>> Error("The reply called no tool.", turn=3).render_line()
            '3 error: The reply called no tool.'
        """
        return f"{self.turn} error: {self.message}"


@dataclass
class Thought(_Shown):
    """The ReAct planner's Thought: its reasoning before an Action or the Final Answer.

    Examples:
        >>> Thought("The room is stuffy; I read its sensor first.", turn=1).render(" 1")
        [' 1 Thought  The room is stuffy; I read its sensor first.']
        >>> print(Thought("The room is stuffy.", turn=1).render_html())  # doctest: +NORMALIZE_WHITESPACE
        <li class="lares-step" data-kind="thought" data-turn="1"><b class="lares-turn">1</b>
        <i>Thought</i> The room is stuffy.</li>
    """

    text: str
    turn: int = 0
    kind: ClassVar[str] = "thought"

    def render(self, mark: str = "  ") -> list[str]:
        """The step's lines in a transcript; ``mark`` (the turn number, or blanks) starts the first."""
        return _wrap("Thought", self.text, mark)

    def _html_body(self) -> str:
        return f"<i>Thought</i> {_e(self.text)}"

    def render_line(self) -> str:
        """One line of plain text, its turn first.

        Examples:
            >>> Thought("The room is stuffy.", turn=1).render_line()
            '1 Thought: The room is stuffy.'
        """
        return f"{self.turn} Thought: {self.text}"


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
class Meanwhile(_Shown):
    """What happened in the home while the agent worked (a ``during:`` event): the world's doing, not the agent's.

    ``after`` is the truth right after it, shaped like :attr:`ToolCall.after` (``devices``: those it set), so a
    replay redraws the map; ``shows`` says where the agent could read the change (its knowledge, a tool, a look).

    Examples:
        >>> step = Meanwhile("Ana switched the light in the Lounge (lounge-light) off", "after step 2", "set",
        ...                  {"lounge-light": {"on": False}}, turn=2, step=2,
        ...                  shows="the latest knowledge shows it from the next request")
        >>> for line in step.render("  "): print(line)  # doctest: +NORMALIZE_WHITESPACE
                    (meanwhile: Ana switched the light in the Lounge (lounge-light) off -- the latest
                     knowledge shows it from the next request)
        >>> step.render_line()
        '2 meanwhile: Ana switched the light in the Lounge (lounge-light) off'
    """

    text: str  # what happened, in words
    when: str  # the moment the file gave: "after step 2", "at 30s", "after the first look"
    change: str  # "move", "set", "carry" or "clock" (lares_kit.home.during.CHANGES)
    what: Any  # move: {item: room}; set: {device: {attribute: value}}; carry: a room id; clock: a time of day
    turn: int = 0
    step: int = 0  # the home's step count when it happened
    seconds: float = 0.0  # how long the actions had taken on the home's clock by then
    shows: str = ""  # where the agent could find out (lares_kit.home.during.where_seen); "" when not said
    after: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "meanwhile"

    def render(self, mark: str = "  ") -> list[str]:
        """The step's lines in a transcript: in brackets, as something that happened rather than something done."""
        said = f"(meanwhile: {self.text}" + (f" -- {self.shows})" if self.shows else ")")
        head = f"{mark} {'':<8} "
        return textwrap.wrap(said, width=100, initial_indent=head, subsequent_indent=" " * (len(head) + 1))

    def _html_body(self) -> str:
        shows = f" <small>({_e(self.shows)})</small>" if self.shows else ""
        return f'<span style="color:#5a5a8c"><i>meanwhile</i> {_e(self.text)}{shows}</span>'

    def render_line(self) -> str:
        """One line of plain text, its turn first."""
        return f"{self.turn} meanwhile: {self.text}"


@dataclass
class LLMCall:
    """One request to the model: which phase, its token usage and how long it took."""

    phase: str  # "turn" (function calling), "intent" or "action" (intent-action), "thought" (react)
    turn: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    error: str = ""  # set when the request failed
    # Of prompt_tokens, those the server said repeat the start of an earlier request (its prompt cache:
    # usage.prompt_tokens_details.cached_tokens); 0 when it says nothing.
    cached_tokens: int = 0


Step = Union[Intent, ToolCall, Question, Final, Error, Thought, Action, Meanwhile]
_KINDS = {cls.kind: cls for cls in (Intent, ToolCall, Question, Final, Error, Thought, Action, Meanwhile)}


def step_from_dict(data: dict[str, Any]) -> Step:
    """Rebuild a step from its ``to_dict()`` form.

    Args:
        data: A step's ``to_dict()`` form, as an Episode's JSON holds it (its ``kind`` says which step).

    Examples:
        >>> step_from_dict(Intent("why", "halt", turn=2).to_dict())
        Intent(reasoning='why', function='halt', turn=2)
    """
    data = dict(data)
    kind = data.pop("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown step kind {kind!r}; kinds: {', '.join(_KINDS)}")
    return _KINDS[kind](**data)
