"""What every agent loop shares: asking the model, running its calls, recording both.

A loop (:mod:`~lares_kit.agents.function_calling`,
:mod:`~lares_kit.agents.intent_action`) decides *what* to offer the model and
*which* of its calls to run; an :class:`AgentRun` does the bookkeeping, so
the loop itself fits on one screen:

* :meth:`AgentRun.ask_model` rebuilds the messages from the Episode's steps,
  makes one request, records its usage, and turns an unusable reply (no
  choices, no function call) into an :class:`~lares_kit.episode_steps.Error` step;
  :meth:`AgentRun.ask_text` asks for plain text (the ReAct Thought and
  Action). Both go through :meth:`AgentRun.request`, the one place a model
  is called;
* :meth:`AgentRun.run_calls` runs the reply's calls through the Toolbox and
  records each as a :class:`~lares_kit.episode_steps.ToolCall` with the truth after
  it; calls that were not allowed get an error result instead of running.
  :meth:`AgentRun.call` runs one call given by name (the ReAct Action). After
  a call that ran and did not end the episode, the home's ``during:`` events
  now due happen (:func:`lares_kit.home.during.play`) and are recorded as
  :class:`~lares_kit.episode_steps.Meanwhile` steps -- here, where every design's
  calls go, so they happen at the same point whatever the design.

Every request is bounded and says what it wants: ``max_tokens`` by phase
(:data:`MAX_TOKENS`: an intent needs little; one runaway reply must not keep
a single-threaded server busy for minutes) and an explicit ``temperature``
(:class:`RequestOptions`, 0 unless set, so runs repeat). The run's server
profile (:mod:`lares_kit.models.servers`) is applied to every request: an
empty string instead of null content beside tool calls where null is
refused. What a loop does when a server ignores a forced ``tool_choice`` is
in :mod:`~lares_kit.agents.forced_choice`.

A request that fails (``openai.APIError`` after the client's own retries)
raises :class:`ModelFailed`, which :func:`lares_kit.agents.run_agent` turns
into the status ``model_error``. Nothing else escapes.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from ..episode import Episode
from ..episode_steps import Error, Final, LLMCall, Question, ToolCall
from ..errors import LaresError
from ..home.during import happened_since, happened_so_far, play, where_seen
from ..home.graph import Home
from ..run_context import RunContext
from ..sentences.markers import room_line
from ..sentences.understood import final_status
from ..tools.toolbox import Toolbox
from ..tools.users import NoAnswer, User
from .dialects import Dialect, dialect
from .prompts import PromptStyle, prompt_style

__all__ = ["AgentRun", "ModelFailed", "Listener", "RequestOptions", "MAX_TOKENS", "house_rules_of", "where_line"]

# The Error steps of an unusable reply (the model reads them in the history and can do better next turn).
EMPTY_REPLY = "The model sent an empty reply (no choices)."
REFUSED_FORMAT = "The server refused response_format"  # the start of the note when a server refuses a kind
NO_CALL = "Your reply had no function call. Reply by calling one of the functions; call halt when the task is done."

# max_tokens by phase: room for the reply the phase needs, not for a runaway. The offline model's longest
# replies in the benchmark: intent 113, action 139, turn 463 (a halt with a long answer), thought 147,
# react action 66 (a list of parallel actions 166).
MAX_TOKENS = {
    "intent": 256,  # decide_best_function: a reasoning of at most REASONING_MAX_CHARS (prompts.py) and a name
    "action": 512,  # one call with its arguments (intent-action's action, react's Action)
    "actions": 1024,  # react-parallel: a list of independent Actions
    "turn": 1024,  # function-calling and sage: a call, or a halt whose message may list a whole floor
    "thought": 768,  # react's planner: a Thought, or a Thought and the Final Answer
}
DEFAULT_MAX_TOKENS = 1024  # a phase not listed above


class ModelFailed(Exception):
    """The model could not answer (API error after retries, or an unreadable response)."""


@dataclass
class Listener:
    """Passes ``ask_user`` questions to the real user and keeps the last answer.

    Examples:
        >>> from lares_kit.tools.users import ScriptedUser
        >>> ear = Listener(ScriptedUser(answers=["yes"]))
        >>> ear.ask("Is it day?"), ear.last
        ('yes', 'yes')
    """

    user: User
    last: str | None = None

    def ask(self, question: str) -> str:
        self.last = None
        self.last = self.user.ask(question)
        return self.last


@dataclass(frozen=True)
class RequestOptions:
    """What every design sends with each request; a design's own options extend it.

    Examples:
        >>> RequestOptions().temperature, RequestOptions(temperature=0.7).temperature
        (0.0, 0.7)
        >>> RequestOptions(temperature="warm")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: option temperature must be a number from 0 to 2, not 'warm'
    """

    # Sent explicitly with every request: 0 makes a run repeat (a server's own default, often 0.2 or 0.8,
    # makes two runs of the same lesson differ). Passed unchanged to real models.
    temperature: float = 0.0
    # A sampling seed sent with every request (a benchmark trial's), for servers that take one; None: not sent.
    seed: int | None = None

    def __post_init__(self) -> None:
        ok = isinstance(self.temperature, (int, float)) and not isinstance(self.temperature, bool)
        if not ok or not 0 <= self.temperature <= 2:
            raise LaresError(f"option temperature must be a number from 0 to 2, not {self.temperature!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise LaresError(f"option seed must be a whole number, not {self.seed!r}")


@dataclass
class AgentRun:
    """One run in progress: the Episode being written, the home, the tools and the model."""

    episode: Episode
    home: Home
    toolbox: Toolbox  # its user should be a Listener, so questions record their answers
    client: Any  # an openai.OpenAI, or anything with .chat.completions.create(**request)
    model: str
    max_steps: int = 20
    # The design's settings: a RequestOptions (or a subclass) run_agent fills from options= (every design:
    # temperature; function-calling: parallel calls; react: action_format, parser).
    options: Any = field(default_factory=RequestOptions)
    # The react agent's second model (the light model that writes Actions).
    executor_client: Any = None  # None: the planner's client
    executor_model: str = ""  # "": the planner's model
    # What the server accepts (lares_kit.models.servers.ServerProfile); None: everything, as the offline model.
    # A loop replaces it when the server refuses or ignores something, for the rest of the run.
    server: Any = None
    # A forced tool_choice the server ignored was answered by the fallback at least once in this run: a later
    # miss is then one bad reply (a lost step), not a server that never calls (lares_kit.agents.forced_choice).
    fallback_worked: bool = False
    # Names this run's requests as one conversation for a server's prompt cache (``prompt_cache_key``), sent to
    # the servers that take it (lares_kit.models.servers); the offline model reports the prefix it repeats.
    cache_key: str = field(default_factory=lambda: f"lares-{uuid.uuid4().hex}")
    # How the prompts are written (lares_kit.agents.prompts.PromptStyle); None: the episode's prompt_style by name.
    style: Any = None
    # The tool dialect (lares_kit.agents.dialects): "lares", or "ha" -- Home Assistant's intent tools and static
    # context; the design's setup and prompts read it.
    tool_set: str = "lares"
    # Who speaks, from where, as which source (lares_kit.run_context); run_agent's context=.
    context: RunContext = field(default_factory=RunContext)

    @property
    def dialect(self) -> Dialect:
        """The run's tool dialect (:mod:`lares_kit.agents.dialects`): its tools, role prompt and knowledge."""
        return dialect(self.tool_set)

    @property
    def prompts(self) -> PromptStyle:
        """The run's prompt style: ``style``, else the one the episode names."""
        return self.style if self.style is not None else prompt_style(self.episode.prompt_style)

    # --------------------------------------------------------------- model
    def ask_model(self, turn: int, phase: str, tools: list[dict[str, Any]], tool_choice: Any,
                  parallel: bool = False) -> Any | None:
        """Ask the model once with ``tools``; return its message when it holds a function call, else None.

        The messages are rebuilt from the Episode. A reply with no choices or
        no call is recorded as an Error step (the turn is lost, as in Lares).
        ``parallel``: the request's ``parallel_tool_calls``. Raises
        :class:`ModelFailed` if the request fails.
        """
        message = self.request(turn, phase, self.episode.messages(self.home), tools=tools, tool_choice=tool_choice,
                               parallel_tool_calls=parallel)
        if message is None:
            self.error(turn, EMPTY_REPLY)
            return None
        if not message.tool_calls:
            self.error(turn, NO_CALL, reply=message.content or "")
            return None
        return message

    def ask_text(self, turn: int, phase: str, messages: list[dict[str, Any]], *, executor: bool = False,
                 **params: Any) -> str:
        """Ask for plain text (no tools); the reply's text, "" when it has none.

        ``executor``: ask the light model (react's Action writer) instead of
        the main one. ``params`` go into the request (``stop``, ``response_format``).
        """
        message = self.request(turn, phase, messages, executor=executor, **params)
        return (message.content or "") if message is not None else ""

    def ask_in_format(self, turn: int, phase: str, build: Callable[[], tuple[str, list[dict[str, Any]],
                                                                          dict[str, Any]]], *,
                      executor: bool = False) -> str:
        """Ask for text in a ``response_format`` the run's server takes; a refused kind is learned here.

        ``build()`` gives the request for the server as it is now: its kind
        (``json_schema``, ``json_object`` or ``text``), messages and params.
        When the server refuses that kind, the run's server profile learns
        it for the rest of the run, a note in the transcript says what is
        asked for now, and the request is built again -- the design's loop
        never sees the quirk. Raises :class:`ModelFailed` for any other failure.

        Args:
            turn: The step number, for the records.
            phase: The phase the request's usage is recorded under.
            build: Makes the request from the run's current ``server`` profile.
            executor: Ask the light model (react's Action writer) instead of the main one.
        """
        from ..models.servers import FORMATS, refused_format  # here: the models package imports openai

        for _ in range(len(FORMATS)):
            kind, messages, params = build()
            try:
                return self.ask_text(turn, phase, messages, executor=executor, **params)
            except ModelFailed as exc:
                if kind == "text" or self.server is None or not refused_format(exc):
                    raise
                self.server = self.server.without_format(kind)  # learned: for the rest of this run
                now = self.server.response_format(kind)
                self.error(turn, f"{REFUSED_FORMAT} {kind}; this run now asks for {now}" +
                           (" with the schema in the prompt." if now != "json_schema" else "."))
        raise ModelFailed("the server refused every response_format")  # not reached: "text" is never refused

    def request(self, turn: int, phase: str, messages: list[dict[str, Any]], *, executor: bool = False,
                **params: Any) -> Any | None:
        """The one model call of every loop: send one request, record its usage; the first choice's message.

        None when the reply has no choices. The request is bounded:
        ``max_tokens`` by ``phase`` (:data:`MAX_TOKENS`) and the options'
        ``temperature``, unless ``params`` set them; the messages are made fit
        for the run's server. Usage is recorded under ``phase``; a server that
        sends none has the request counted here (a documented estimate,
        :func:`lares_kit.knowledge.tokens.count_request`). Raises
        :class:`ModelFailed` if the request fails.
        """
        client = (self.executor_client or self.client) if executor else self.client
        model = (self.executor_model or self.model) if executor else self.model
        params.setdefault("max_tokens", MAX_TOKENS.get(phase, DEFAULT_MAX_TOKENS))
        params.setdefault("temperature", getattr(self.options, "temperature", 0.0))
        if getattr(self.options, "seed", None) is not None:
            params.setdefault("seed", self.options.seed)
        if self.server is None or self.server.cache_key:  # one conversation for the server's prompt cache
            params.setdefault("prompt_cache_key", self.cache_key)
        if self.server is not None:
            messages = self.server.messages(messages)
        start = time.perf_counter()
        try:
            response = client.chat.completions.create(model=model, messages=messages, **params)
            choices = list(response.choices or [])
            message = choices[0].message if choices else None
            usage = response.usage
        except Exception as exc:  # APIError after retries, a timeout, or a reply that is not a completion
            # Imported here for start-up cost: lares_kit.models loads the openai SDK.
            from ..models.api_errors import explain  # one sentence a learner can act on, not the server's dump

            text = explain(exc, getattr(client, "base_url", None), self.server.name if self.server else None)
            self.episode.llm_calls.append(LLMCall(phase, turn, seconds=time.perf_counter() - start, error=text))
            raise ModelFailed(text) from exc
        cached = 0
        if usage is not None:
            prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
            cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None) or 0
        else:  # some local servers send no usage; count the request ourselves
            from ..knowledge.tokens import count_request

            prompt, completion = count_request(messages, params.get("tools")), 0
        self.episode.llm_calls.append(LLMCall(phase, turn, prompt, completion, time.perf_counter() - start,
                                              cached_tokens=cached))
        return message

    # --------------------------------------------------------------- calls
    def run_calls(self, turn: int, message: Any, *, one_only: bool = False, only: str | None = None) -> bool:
        """Run the calls of one reply in order; True when the episode has ended.

        ``one_only``: the calls after the first are answered with an error and
        not run. ``only``: a call to any other function is answered with an
        error and not run (the function was not offered).
        """
        text = message.content or ""
        for i, call in enumerate(message.tool_calls):
            said = text if i == 0 else ""  # the reply's text goes with its first call
            name = _name(call)
            if one_only and i > 0:
                self.refuse(turn, call, "Only one function call is allowed per step; this call was not run.", said)
            elif only is not None and name != only:
                self.refuse(turn, call, f"Only {only} was offered in this step; this call to {name} was not run.", said)
            elif self.execute(turn, call, said):
                return True
        return False

    def execute(self, turn: int, call: Any, text: str = "") -> bool:
        """Dispatch one call of a reply and record it; True when it ended the episode (halt, no answer)."""
        return self.call(turn, _name(call), _raw(call), text, call_id=getattr(call, "id", ""))

    def call(self, turn: int, name: str, raw: str, text: str = "", *, call_id: str = "",
             step: type[ToolCall] = ToolCall) -> bool:
        """Run one call -- a tool name and its arguments as JSON text -- and record it; True when it ended the episode.

        A question is recorded as a Question and the halt as a Final; any other
        call as ``step`` (a ToolCall, or react's Action, which shows as
        Action / Observation).
        """
        call_id = self._call_id(turn, call_id)
        self.home.mark_changes()  # the home notes what the call changes: cheap even with 5,000 devices
        mark = happened_so_far(self.home)  # a sub-agent's run inside this call may play events: they count too
        try:
            obs = self.toolbox.dispatch(name, raw)
        except NoAnswer as exc:
            asked = Question(name, _json_object(raw), f"Error: no answer ({exc}).", ok=False, turn=turn,
                             call_id=call_id, raw_arguments=raw, text=text, after=self.truth_after())
            self.episode.steps.append(asked)
            self.finish("no_answer", f"Stopped: the agent asked {asked.question!r} and got no answer.")
            return True
        kind = Final if obs.final else Question if name == "ask_user" and obs.ok else step
        record = kind(obs.tool, obs.arguments, obs.content, ok=obs.ok, turn=turn, call_id=call_id,
                      raw_arguments=raw, text=text, after=self.truth_after())
        if isinstance(record, Question):
            record.answer = getattr(self.toolbox.user, "last", None)
        self.episode.steps.append(record)
        if obs.final:  # "done", or "not_understood" when the message says so (lares_kit.sentences.understood)
            self.finish(final_status(obs.text), obs.text)
        else:
            self.meanwhile(turn, mark, name, obs.ok)
        return obs.final

    def meanwhile(self, turn: int, mark: int, tool: str, ok: bool) -> None:
        """Let the home's events now due happen after a call (:func:`lares_kit.home.during.play`) and record each.

        Nothing happens in a home without ``during:`` events, so its episodes are as they always were.

        Args:
            turn: The turn of the call.
            mark: How many events had happened before the call (:func:`lares_kit.home.during.happened_so_far`).
            tool: The tool that ran (its time on the clock; a look counts for "after the first look").
            ok: Whether the call worked.
        """
        if self.home.during is None:
            return
        play(self.home, tool, ok)
        for step in happened_since(self.home, mark):
            step.turn, step.shows = turn, where_seen(step.change, self.episode.knowledge, self.dialect.static)
            self.episode.steps.append(step)

    def refuse(self, turn: int, call: Any, reason: str, text: str = "") -> None:
        """Record a call that is not run, answered with ``Error: reason`` (the API needs an answer per call)."""
        raw = _raw(call)
        self.home.mark_changes()  # nothing runs: no device changes
        self.episode.steps.append(ToolCall(
            _name(call), _json_object(raw), f"Error: {reason}", ok=False, turn=turn,
            call_id=self._call_id(turn, getattr(call, "id", "")),
            raw_arguments=raw, text=text, after=self.truth_after()))

    # ------------------------------------------------------------- records
    def _call_id(self, turn: int, given: str | None) -> str:
        # Some servers send calls without ids; the history still needs one to pair call and result.
        return given or f"call_{turn}_{len(self.episode.steps)}"

    def truth_after(self, before: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """The truth now, for replay: devices that changed since ``before``, robot, items, sightings.

        ``before`` (device states) None: the devices changed since ``home.mark_changes()``.
        """
        if before is None:
            devices = {dev: copy.deepcopy(self.home.devices[dev].state)
                       for dev, old in self.home.changes_since_mark().items() if self.home.devices[dev].state != old}
        else:
            now = self.home.device_states()
            devices = {dev: state for dev, state in now.items() if state != before.get(dev)}
        return {"time": self.home.time, "robot": self.home.robot.room,
                "devices": devices,
                "items": {item.id: item.room for item in self.home.items.values()},
                "seen": copy.deepcopy(self.home.seen)}

    def error(self, turn: int, message: str, reply: str = "") -> None:
        self.episode.steps.append(Error(message, reply=reply, turn=turn))

    def finish(self, status: str, message: str) -> None:
        self.episode.status, self.episode.final_message = status, message


def _name(call: Any) -> str:
    # A custom (non-function) tool call has no .function; it still gets a name to report.
    fn = getattr(call, "function", None)
    return str(getattr(fn, "name", None) or getattr(call, "type", "unknown"))


def _raw(call: Any) -> str:
    args = getattr(getattr(call, "function", None), "arguments", None)
    return args if isinstance(args, str) else json.dumps(args) if args is not None else ""


def _json_object(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def house_rules_of(box: Any, by_name: bool = False) -> str:
    """The house rules the toolbox's safety gate holds this instruction to, for the prompt ("" when none).

    Args:
        box: The run's :class:`~lares_kit.tools.toolbox.Toolbox`; its ``safety`` gate writes the rules.
        by_name: True to name devices by name only, as Home Assistant's static context does.
    """
    return box.safety.house_rules(by_name=by_name) if box.safety else ""


def where_line(home: Any, room: str | None) -> str:
    """" The person is in the Kitchen (kitchen)." when the run knows the room they speak from, else "".

    A benchmark task's ``setup.room`` (a Home Assistant test's ``context_device``: the satellite that heard the
    request) is the run context's ``room``; a room the home does not have is not said.

    Args:
        home: The home of the run.
        room: The room id the person speaks from (:attr:`lares_kit.run_context.RunContext.room`), or None.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> where_line(home, None), where_line(home, "kitchen"), where_line(home, "attic")
        ('', ' The person is in the Kitchen (kitchen).', '')
    """
    return room_line(home.room_name(room), room) if room is not None and room in home.graph else ""
