"""Episodes: the record of one agent run, as plain data.

Taught in ``notebooks/03_function_calling_loop.ipynb``. An :class:`Episode` is a list of
typed steps plus what is needed to read, replay and compare the run: the
instruction, the world, the agent and model names, the LLM calls with their
token usage, the timing, and the true state of the home at the start and at
the end. The agent loops in :mod:`lares_kit.agents` write Episodes; widgets
and the benchmark only read them.

The chat messages for the next turn are *built from the steps* each turn
(:meth:`Episode.messages`), so what the model saw is always reproducible from
the record. Their layout is a contract the offline model relies on:

1. ``system``: the role prompt;
2. ``system``: ``WORLD KNOWLEDGE (latest)`` or ``WORLD KNOWLEDGE (initial: ...)``
   and the knowledge (JSON, or the outline lines) -- left out when the knowledge mode is ``none``;
3. ``system``: the goal;
4. ``user``: the instruction -- the only user message;
5. the history: tool calls and their results, intent summaries as
   assistant text, and error notes as ``system`` messages. What happened in
   the home meanwhile (:class:`~lares_kit.episode_steps.Meanwhile`, a ``during:``
   event) is never in it: only the ``latest`` knowledge shows the change,
   with one more line under its header saying what changed
   (:func:`lares_kit.home.during.changed_note`; none while nothing has).

That is the Lares layout (``layout="lares"``). In the ``stable`` layout (the
``lean`` prompt style's) the knowledge message comes last, after the
history, when it is re-read every turn (mode ``latest``): everything before
it repeats from one call to the next, so a server's prompt cache can reuse
it (:mod:`lares_kit.models.offline.prompt_cache`). Knowledge that does not change
(mode ``initial``, Home Assistant's static context) stays second.

The knowledge message is written by :func:`lares_kit.knowledge.modes.knowledge_prompt`
in the episode's knowledge mode (``knowledge``: when it is taken) and format
(``knowledge_format``: how it is written); ``KNOWLEDGE_MODES`` and
``knowledge_header`` are importable from here as well. Rendering a transcript
and the ``lares run --json`` object live here too; this module never imports
the agents, the models or the widgets.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, ClassVar, Union

from .episode_steps import Error, Final, Intent, LLMCall, Meanwhile, Question, Step, ToolCall, step_from_dict
from .home.during import changed_note
from .home.graph import Home
from .knowledge.modes import KNOWLEDGE_MODES, knowledge_header, knowledge_prompt

__all__ = ["Episode", "Step", "Intent", "ToolCall", "Question", "Final", "Error", "LLMCall", "Meanwhile",
           "KNOWLEDGE_MODES", "STATUSES", "knowledge_header"]

# running: not finished yet; done: the agent called halt; not_understood: it halted saying it did not understand
# words of the instruction (lares_kit.sentences.understood); step_limit: it ran out of steps;
# no_answer: it asked and nobody
# answered; model_error: the model could not be reached (after the client's retries).
STATUSES = ("running", "done", "not_understood", "step_limit", "no_answer", "model_error")


REPLY_ECHO_CHARS = 2000  # how much of an unusable reply goes back to the model in the history


def _clip(text: str) -> str:
    """A reply as the history repeats it: at most :data:`REPLY_ECHO_CHARS` characters.

    Examples:
        >>> _clip("ok"), _clip("x" * 5000)[-30:]
        ('ok', '[... 3000 more characters cut]')
    """
    if len(text) <= REPLY_ECHO_CHARS:
        return text
    return f"{text[:REPLY_ECHO_CHARS]} [... {len(text) - REPLY_ECHO_CHARS} more characters cut]"


@dataclass
class Episode:
    """One run of an agent on one instruction in one home.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> ep = Episode.start("turn on the light in the kitchen", home, agent="intent-action",
        ...                    model="offline", system_prompt="You control a home.", goal_prompt="Do it.")
        >>> [m["role"] for m in ep.messages(home)]
        ['system', 'system', 'system', 'user']
        >>> ep.messages(home)[1]["content"].splitlines()[0]
        'WORLD KNOWLEDGE (latest)'
        >>> ep.status, ep.tool_calls
        ('running', [])
    """

    instruction: str
    world: str
    agent: str
    model: str
    knowledge: str = "latest"  # the knowledge mode, when it is taken: one of KNOWLEDGE_MODES
    status: str = "running"  # one of STATUSES
    final_message: str = ""
    error: str = ""  # the model error's text when status is model_error
    max_steps: int = 20
    # steps: list[Step], oldest first; Question and Final are kinds of ToolCall
    steps: list[Step] = field(default_factory=list)
    llm_calls: list[LLMCall] = field(default_factory=list)
    started_at: float = 0.0  # seconds since the epoch
    seconds: float = 0.0  # wall time of the whole run
    # The prompts as sent, so a saved episode says exactly what the model was told.
    system_prompt: str = ""
    goal_prompt: str = ""
    # home.knowledge() at the start: the knowledge message in mode "initial"
    initial_knowledge: dict[str, Any] = field(default_factory=dict)
    # home.truth() at the start and at the end (hidden things included: for replay and judges)
    initial_state: dict[str, Any] = field(default_factory=dict)
    final_state: dict[str, Any] = field(default_factory=dict)
    # who gave the instruction ("owner", "guest", "letterbox"...): the safety policy decides from it
    source: str = "owner"
    # the knowledge format, how it is written: one of lares_kit.knowledge.modes.KNOWLEDGE_FORMATS ("full": Lares's JSON)
    knowledge_format: str = "full"
    # the prompt style the agent wrote its prompts in (lares_kit.agents.prompts.PROMPT_STYLES: "lares", "lean")
    prompt_style: str = "lares"
    # where the knowledge message goes: "lares" (second) or "stable" (last, when it changes every turn)
    layout: str = "lares"

    FORMAT: ClassVar[str] = "lares-episode/1"
    KNOWLEDGE_CHANGES: ClassVar[bool] = True  # the knowledge message is re-rendered every turn in mode latest

    @classmethod
    def start(cls, instruction: str, home: Home, *, clock: Callable[[], float] | None = None,
              **kwargs: Any) -> "Episode":
        """A new running Episode with the home's knowledge and truth as they are now.

        ``clock`` gives ``started_at`` in seconds since the epoch (default: the wall clock);
        tests pass a fixed one. Nothing the agents or checks decide reads it.

        Examples:
            >>> from lares_kit import load_world
            >>> Episode.start("hi", load_world("lares-home"), agent="intent-action", model="offline",
            ...               clock=lambda: 1.8e9).started_at
            1800000000.0
        """
        import time

        return cls(instruction=instruction, world=home.id, started_at=(clock or time.time)(),
                   initial_knowledge=home.knowledge(), initial_state=home.truth(), **kwargs)

    # ------------------------------------------------------------- reading
    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call made (questions and the final halt included), oldest first."""
        return [s for s in self.steps if isinstance(s, ToolCall)]

    @property
    def errors(self) -> list[Step]:
        """Error steps and failed tool calls: every place the model's reply went wrong."""
        return [s for s in self.steps if isinstance(s, Error) or (isinstance(s, ToolCall) and not s.ok)]

    @property
    def asked(self) -> list[str]:
        """The questions put to the user, in order."""
        return [s.question for s in self.steps if isinstance(s, Question)]

    @property
    def usage(self) -> dict[str, int]:
        """Total tokens over all LLM calls; ``cached_prompt_tokens``: of the prompt tokens, those a cache reused."""
        return {"prompt_tokens": sum(c.prompt_tokens for c in self.llm_calls),
                "completion_tokens": sum(c.completion_tokens for c in self.llm_calls),
                "cached_prompt_tokens": sum(c.cached_tokens for c in self.llm_calls)}

    # --------------------------------------------------------- chat messages
    def messages(self, home: Home | None = None) -> list[dict[str, Any]]:
        """The chat messages for the next model call, rebuilt from the steps.

        ``home`` is needed in knowledge mode ``latest``: its knowledge is
        re-rendered every turn, as Lares does.
        """
        return self.laid_out([{"role": "system", "content": self.system_prompt},
                              {"role": "system", "content": self.goal_prompt},
                              {"role": "user", "content": self.instruction}, *self.history()],
                             self.knowledge_message(home))

    def laid_out(self, messages: list[dict[str, Any]], knowledge: dict[str, Any] | None) -> list[dict[str, Any]]:
        """``messages`` (a system prompt first) with the knowledge message where the episode's ``layout`` puts it.

        Args:
            messages: The request's other messages, oldest first; the first is the role prompt.
            knowledge: The knowledge message, or None for none.
        """
        if knowledge is None:
            return list(messages)
        if self.layout == "stable" and self.knowledge == "latest" and self.KNOWLEDGE_CHANGES:
            return [*messages, knowledge]  # what changes every turn goes last
        return [messages[0], knowledge, *messages[1:]]

    def knowledge_message(self, home: Home | None = None, needs: Any = None) -> dict[str, Any] | None:
        """The world-knowledge system message (None in knowledge mode ``none``).

        Taken as the episode's ``knowledge`` mode says and written in its
        ``knowledge_format``, by :func:`lares_kit.knowledge.modes.knowledge_prompt`:
        ``full`` is Lares's pretty JSON, the others are smaller. ``needs``: only
        the part a call's arguments can name (``rooms``, ``lights``, ``devices``;
        an intent-action step's lean action call); None: all of it.
        """
        if self.knowledge == "latest" and home is None:
            raise ValueError("knowledge mode 'latest' needs the home: episode.messages(home)")
        # retrieval keeps showing the rooms the robot has been in (a search must remember where it looked)
        visited = [self.initial_state.get("robot"), *(s.after.get("robot") for s in self.tool_calls)]
        changed = changed_note(self.steps, home) if self.knowledge == "latest" and getattr(home, "during", None) else ""
        content = knowledge_prompt(home, self.knowledge, self.knowledge_format, self.instruction,
                                   initial=self.initial_knowledge, visited=[r for r in visited if r],
                                   home_id=self.world, needs=needs, changed=changed)
        return None if content is None else {"role": "system", "content": content}

    def history(self) -> list[dict[str, Any]]:
        """The steps as chat messages: calls of one turn share one assistant message."""
        msgs: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []  # tool messages answering the open assistant message
        open_call: dict[str, Any] | None = None  # the assistant message of the current turn's calls
        open_turn = None
        for step in self.steps:
            if isinstance(step, Meanwhile):
                continue  # the world's doing, not a message: the model is never told (only its knowledge shows it)
            if isinstance(step, ToolCall):
                if open_call is None or open_turn != step.turn:
                    msgs.extend(results)
                    results = []
                    open_call = {"role": "assistant", "content": step.text or None, "tool_calls": []}
                    open_turn = step.turn
                    msgs.append(open_call)
                open_call["tool_calls"].append({"id": step.call_id, "type": "function", "function": {
                    "name": step.tool, "arguments": step.raw_arguments}})
                results.append({"role": "tool", "tool_call_id": step.call_id, "content": step.result})
                continue
            msgs.extend(results)
            results, open_call = [], None
            if isinstance(step, Intent):
                # Lares keeps this one-line summary instead of the raw intent call.
                msgs.append({"role": "assistant", "content": step.summary})
            elif isinstance(step, Error):
                if step.reply:  # clipped: a runaway reply must not grow every later prompt (the step keeps it all)
                    msgs.append({"role": "assistant", "content": _clip(step.reply)})
                msgs.append({"role": "system", "content": f"Error: {step.message}"})
        return msgs + results

    # ------------------------------------------------------------- exports
    def to_run_json(self) -> dict[str, Any]:
        """The ``lares run --json`` object (DESIGN.md section 3)."""
        state: dict[str, Any] = dict(self.final_state.get("devices", {}))
        state["robot"] = self.final_state.get("robot")
        return {
            "instruction": self.instruction, "world": self.world, "agent": self.agent, "model": self.model,
            "final_message": self.final_message, "status": self.status,
            "steps": [{"tool": s.tool, "arguments": s.arguments if s.arguments is not None else s.raw_arguments,
                       "result": s.result, "ok": s.ok} for s in self.tool_calls],
            "llm_calls": len(self.llm_calls), "usage": self.usage, "asked": self.asked, "state": state,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, as JSON-ready data; :meth:`from_dict` reads it back."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["steps"] = [s.to_dict() for s in self.steps]
        data["llm_calls"] = [asdict(c) for c in self.llm_calls]
        return {"format": self.FORMAT, **data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Episode":
        """Read an Episode written by :meth:`to_dict`.

        Examples:
            >>> ep = Episode("hi", "lares-home", "intent-action", "offline",
            ...              steps=[Intent("look first", "look_with_robot")])
            >>> Episode.from_dict(ep.to_dict()) == ep
            True
        """
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["steps"] = [step_from_dict(s) for s in data.get("steps", [])]
        kwargs["llm_calls"] = [LLMCall(**c) for c in data.get("llm_calls", [])]
        return cls(**kwargs)

    def save(self, path: Union[str, Path]) -> Path:
        """Write the episode as JSON; return the path."""
        from .files.atomic import write_json_atomic

        return write_json_atomic(path, self.to_dict())  # a crash mid-save leaves the old file, never half

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Episode":
        """Read an episode saved with :meth:`save`; a file that is not one is a DataFileError naming it.

        Examples:
            >>> import tempfile, pathlib
            >>> saved = pathlib.Path(tempfile.mkdtemp()) / "episode.json"
            >>> _ = saved.write_text('{"instruction": "hi", "steps": "none"}')
            >>> Episode.load(saved)
            Traceback (most recent call last):
            ...
            lares_kit.errors.DataFileError: .../episode.json: not a saved episode (it cannot be rebuilt: ValueError)
        """
        from .errors import DataFileError, brief
        from .files.reading import parse_json, read_text_file  # size, encoding and nesting within limits

        source = str(path)
        data = parse_json(read_text_file(path), source, strict=True)
        if not isinstance(data, dict):
            raise DataFileError(source, "", f"not a saved episode: it holds {brief(data)}, not a mapping")
        try:
            # Rebuilt and used once, as a replay would: a field of the wrong kind fails here, with the file's
            # name, not later in a widget. Anything may be wrong in a file, so any exception means "not one".
            episode = cls.from_dict(data)
            episode.transcript()
            episode.to_run_json()
        except Exception as exc:  # noqa: BLE001
            raise DataFileError(source, "",
                                f"not a saved episode (it cannot be rebuilt: {type(exc).__name__})") from None
        return episode

    # ----------------------------------------------------------- rendering
    def transcript(self) -> str:
        """A readable terminal transcript: reasoning, calls, results, questions, the end.

        Examples:
            >>> ep = Episode("turn on the light in the kitchen", "lares-home", "intent-action", "offline",
            ...              steps=[Intent("The kitchen light is off.", "set_light", turn=1),
            ...                     ToolCall("set_light", {"light_id": "kitchen-light", "on": True},
            ...                              "The light in the Kitchen (kitchen-light) is now on.", turn=1)])
            >>> print(ep.transcript())  # doctest: +NORMALIZE_WHITESPACE
            > turn on the light in the kitchen
              [lares-home, agent intent-action, model offline, knowledge latest]
             1 thinks   The kitchen light is off. -> set_light
               calls    set_light(light_id="kitchen-light", on=true)
               result   The light in the Kitchen (kitchen-light) is now on.
            = running after 1 step(s), 0 LLM call(s), 0 prompt tokens
        """
        lines = [f"> {self.instruction}",
                 f"  [{self.world}, agent {self.agent}, model {self.model}, knowledge {self.knowledge}]"]
        turn = None
        for step in self.steps:
            mark = f"{step.turn:>2}" if step.turn != turn else "  "
            turn = step.turn
            lines.extend(step.render(mark))
        if self.final_message and not (self.steps and isinstance(self.steps[-1], Final)):
            lines.append(f"< {self.final_message}")  # a halt step already shows its message
        turns = len({s.turn for s in self.steps})
        lines.append(f"= {self.status} after {turns} step(s), {len(self.llm_calls)} LLM call(s), "
                     f"{self.usage['prompt_tokens']} prompt tokens")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.transcript()
