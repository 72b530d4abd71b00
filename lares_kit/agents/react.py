"""The ReAct agent of the smart-building paper: a planner writes Thoughts, a light model writes Actions.

Taught in ``notebooks/09_react_two_models.ipynb``. The paper is "A general
AI agent framework for smart buildings based on large language models and
ReAct strategy" (2025). One round is:

1. **Prompt A** to the complex model (``--model``, the planner): background
   (the building and its knowledge), role, tool descriptions, format rules,
   chat history (short-term memory), the new input and this task's
   Thought / Action / Observation so far. It writes a **Thought** -- or a
   **Final Answer**, which ends the turn. (A ``stop`` at ``Action:`` keeps it
   from writing the Action itself.)
2. **Prompt B** to the light model (``--executor-model``): tool descriptions
   and the new input -- the request, the steps so far and the new Thought.
   It writes the **Action** as JSON, constrained by ``response_format``
   json_schema when the server takes it (else ``json_object`` with the
   schema in the prompt: :func:`executor_request`, from the run's server
   profile, :mod:`lares_kit.models.servers`; a refusal is learned once).
3. The **output parser** (:mod:`~lares_kit.agents.react_parser`) reads it;
   the **tool manager** runs it: the function library is the Toolbox, its
   schemas feed the description generator (:func:`describe_tools`), its
   filter drops a repeated identical call (``Toolbox.block_repeats``), its
   dispatcher executes. The **Observation** goes into the next round.

At most 10 rounds, as in the paper. Options (``run_agent(..., options=)``):
``action_format`` -- ``"json_schema"`` (default; one Action, constrained),
``"text"`` (``Action: {...}`` lines, read by ``parser``) or ``"parallel"``
(a list of independent actions, all run in one round: the paper's future
work); ``parser`` -- ``"one"`` (default) or ``"naive"`` (see the parser).

In Home Assistant's dialect (``run_agent(..., tool_set="ha")``) the tools
are its intent tools and Prompt A's background says the knowledge message is
the static context, without states (:data:`HA_KNOWLEDGE`).

The offline executor cannot read a Thought the way a language model does: it
works the Action out again from the request and the steps so far, which is
why Prompt B carries them (a real light model mostly needs the Thought).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from ..episode_steps import Action, Thought, ToolCall
from ..errors import LaresError
from ..ha.tools import HA_API_PROMPT
from ..sentences.markers import source_line, speaker_line
from .agent_run import MAX_TOKENS, REFUSED_FORMAT, AgentRun, RequestOptions, house_rules_of, where_line
from .react_parser import POLICIES, Parsed, ignored_note, parse_actions, parse_thought

__all__ = ["ReactOptions", "run_react", "run_react_parallel", "describe_tools", "prompt_a", "prompt_b",
           "action_format", "executor_request", "rounds", "MAX_ITERATIONS", "ACTION_FORMATS"]

MAX_ITERATIONS = 10  # the paper's limit on Thought-Action-Observation rounds
ACTION_FORMATS = ("json_schema", "text", "parallel")

PROMPT_A = """Background: you are the assistant of {name}. {description} The people who work here talk to you; \
the WORLD KNOWLEDGE message lists its rooms, devices and their current states.{speaker}

Role: understand what the user wants, plan how to do it with the tools, and check the results. Read sensors \
before judging the air in a room. If a request contradicts itself or cannot be done here, say so instead of acting.

Tools (another assistant writes the call for you from your Thought):
{tools}

Format: answer with exactly one step, in one of these two forms, and stop.
Thought: what you know so far and the one thing to do next, naming the device or tool
or, when the task is done or cannot be done, or you must ask the user something:
Thought: why you are finished
Final Answer: what you tell the user
After each Thought another assistant writes the Action, and you will see its Observation."""

PROMPT_B = """You write tool calls for the assistant of a smart building.

Tools:
{tools}
- halt(message_to_user): finish, telling the user the result.

The user's request, the steps so far (Thought:, Action:, Observation:) and the newest Thought follow.{speaker}
{rule}"""

# What Prompt A says the knowledge message is, in the Lares dialect and in Home Assistant's (lares_kit.agents.dialects)
LARES_KNOWLEDGE = "the WORLD KNOWLEDGE message lists its rooms, devices and their current states."
HA_KNOWLEDGE = "the static context lists its areas and devices, without their states. " + HA_API_PROMPT

_RULES = {
    "text": 'Reply with one line: Action: {"tool": NAME, "arguments": {...}} for the newest Thought. Your reply must '
            "contain only one JSON object: one Action.",
    "json_schema": "Reply with the Action for the newest Thought as one JSON object "
                   '{"tool": NAME, "arguments": {...}}.',
    "parallel": 'Reply with one JSON object {"actions": [...]} listing every Action the newest Thought needs that '
                "does not depend on the result of another, each {\"tool\": NAME, \"arguments\": {...}}.",
}


@dataclass(frozen=True)
class ReactOptions(RequestOptions):
    """How the react agent talks to its models; ``run_agent(..., options={...})`` sets them (and ``temperature``).

    Examples:
        >>> ReactOptions(action_format="text", parser="naive").parser
        'naive'
        >>> ReactOptions(action_format="bogus")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: option action_format must be one of json_schema, text, parallel; got 'bogus'
    """

    action_format: str = "json_schema"  # one of ACTION_FORMATS
    parser: str = "one"  # how a text reply with several Actions is read: one of POLICIES ("one", "naive", "all")
    max_iterations: int = MAX_ITERATIONS

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, known in (("action_format", ACTION_FORMATS), ("parser", POLICIES)):
            if getattr(self, name) not in known:
                raise LaresError(f"option {name} must be one of {', '.join(known)}; got {getattr(self, name)!r}")
        if not isinstance(self.max_iterations, int) or isinstance(self.max_iterations, bool) or self.max_iterations < 1:
            raise LaresError(f"option max_iterations must be a whole number of at least 1; got {self.max_iterations!r}")


def describe_tools(schemas: list[dict[str, Any]]) -> str:
    """The description generator: one line per tool from its schema (ids are in the knowledge, not here).

    Args:
        schemas: Tool schemas in the OpenAI format, as ``Toolbox.schemas()`` gives them.

    Examples:
        >>> from lares_kit import Toolbox, load_world
        >>> schemas = Toolbox(load_world("lares-home")).schemas(["set_light"])
        >>> print(describe_tools(schemas))  # doctest: +NORMALIZE_WHITESPACE
        - set_light(light_id, on): Switch a light on or off.
          Safe to repeat: it says so if the light is already that way.
          light_id: ID of the light, e.g. "kitchen-light". on: true to switch it on, false to switch it off.
    """
    lines = []
    for schema in schemas:
        fn = schema["function"]
        props = fn["parameters"]["properties"]
        args = " ".join(f"{name}: {spec.get('description', '')}" for name, spec in props.items())
        lines.append(f"- {fn['name']}({', '.join(props)}): {fn['description']}" + (f" {args}" if args else ""))
    return "\n".join(lines)


def _speaker(run: AgentRun) -> str:
    # who speaks and where; an instruction not from the owner says so, and an untrusted one its house rules
    return (speaker_line(getattr(run.toolbox.memory, "user", "")) + where_line(run.home, run.context.room)
            + source_line(run.episode.source) + house_rules_of(run.toolbox, by_name=run.dialect.static))


def _knowledge(run: AgentRun) -> list[dict[str, str]]:
    message = run.episode.knowledge_message(run.home)  # in the episode's knowledge format (lares_kit.knowledge.modes)
    return [message] if message is not None else []


def _rounds_so_far(run: AgentRun) -> list[tuple[str, str]]:
    """The scratchpad as (what the agent wrote, what it observed) pairs, oldest first.

    A round is its Thought with its first Action, then one pair per further
    Action (parallel calls); a parser note or error joins the observation.
    """
    pad: list[list[str]] = []  # [written, observed]
    for step in run.episode.steps:
        if isinstance(step, Thought):
            pad.append([f"Thought: {step.text}", ""])
        elif isinstance(step, ToolCall) and pad:
            action = "Action: " + json.dumps({"tool": step.tool, "arguments": step.arguments or {}})
            if not pad[-1][1] and "Action:" not in pad[-1][0]:
                pad[-1] = [f"{pad[-1][0]}\n{action}", step.result]
            else:
                pad.append([action, step.result])
        elif getattr(step, "kind", "") == "error" and pad and not step.message.startswith(REFUSED_FORMAT):
            # (a refused response_format is about the wire, not the task: it stays out of the prompts)
            pad[-1][1] = f"{pad[-1][1]} {step.message}".strip()
    return [(said, seen) for said, seen in pad]


def prompt_a(run: AgentRun, tools: str, history: list[dict[str, str]]) -> list[dict[str, str]]:
    """Prompt A, the planner's messages: background, role, tools, format, chat history, new input, scratchpad.

    Args:
        run: The run in progress: its home, instruction and steps so far (the scratchpad) fill the prompt.
        tools: The tool descriptions, as :func:`describe_tools` writes them.
        history: Earlier turns of this session (short-term memory), as chat messages, oldest first.
    """
    home = run.home
    system = PROMPT_A.format(name=home.name, description=home.description or "", speaker=_speaker(run), tools=tools)
    if run.dialect.static:  # the static context has no states: Home Assistant's rules say where they are
        system = system.replace(LARES_KNOWLEDGE, HA_KNOWLEDGE)
    messages = [{"role": "system", "content": system}, *_knowledge(run), *history,
                {"role": "user", "content": run.episode.instruction}]
    for said, seen in _rounds_so_far(run):
        messages.append({"role": "assistant", "content": said})
        if seen:
            messages.append({"role": "user", "content": f"Observation: {seen}"})
    return messages


def prompt_b(run: AgentRun, tools: str, fmt: str) -> list[dict[str, str]]:
    """Prompt B, the executor's messages: tool descriptions and the new input (request, steps, newest Thought).

    Args:
        run: The run in progress: its instruction and steps so far, ending with the newest Thought.
        tools: The tool descriptions, as :func:`describe_tools` writes them.
        fmt: The action format, one of :data:`ACTION_FORMATS`: it picks the reply rule at the end.
    """
    lines = [f"Question: {run.episode.instruction}"]
    for said, seen in _rounds_so_far(run):
        lines.append(said)
        if seen:
            lines.append(f"Observation: {seen}")
    system = PROMPT_B.format(tools=tools, speaker=_speaker(run), rule=_RULES[fmt])
    return [{"role": "system", "content": system}, *_knowledge(run), {"role": "user", "content": "\n".join(lines)}]


def action_format(names: list[str], fmt: str) -> dict[str, Any] | None:
    """The ``response_format`` for the executor: one Action, a list of them, or None for text.

    Args:
        names: The tool names an Action may call (the ``tool`` enum).
        fmt: One of :data:`ACTION_FORMATS`: ``json_schema`` (one Action), ``parallel`` (a list), ``text`` (None).

    Examples:
        >>> action_format(["read_device", "halt"], "json_schema")["json_schema"]["schema"]["required"]
        ['tool', 'arguments']
        >>> action_format(["halt"], "text") is None
        True
    """
    one = {"type": "object", "properties": {"tool": {"type": "string", "enum": list(names)},
                                            "arguments": {"type": "object"}},
           "required": ["tool", "arguments"], "additionalProperties": False}
    if fmt == "text":
        return None
    schema = one if fmt == "json_schema" else {
        "type": "object", "properties": {"actions": {"type": "array", "minItems": 1, "items": one}},
        "required": ["actions"], "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "action" if fmt == "json_schema" else "actions",
                                                   "schema": schema}}


def _run(run: AgentRun, turn: int, tool: str, arguments: dict[str, Any]) -> bool:
    """Execute one Action through the tool manager, shown as Action / Observation; True when the episode ended."""
    return run.call(turn, tool, json.dumps(arguments), step=Action)


def run_react(run: AgentRun) -> None:
    """Thought (planner) -> Action (executor) -> Observation, until a Final Answer or the round limit.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up, with a ReactOptions in ``run.options``.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> ep = run_agent("turn on the light in meeting room 1", load_world("smart-building"), agent="react")
        >>> [s.kind for s in ep.steps], ep.status
        (['thought', 'action', 'thought', 'final'], 'done')
    """
    opts = run.options  # a ReactOptions
    memory = run.toolbox.memory
    history = memory.messages() if memory is not None else []  # chat history: earlier turns of this session
    if memory is not None:
        memory.add("user", run.episode.instruction)
    offered = [n for n in run.toolbox.names if n != "halt"]  # a Final Answer is how the planner stops
    tools = describe_tools(run.toolbox.schemas(offered))
    try:
        _loop(run, opts, tools, history)
    finally:
        if memory is not None and run.episode.final_message and run.episode.status == "done":
            memory.add("assistant", run.episode.final_message)


def _loop(run: AgentRun, opts: ReactOptions, tools: str, history: list[dict[str, str]]) -> None:
    limit = min(run.max_steps, opts.max_iterations)
    for turn in range(1, limit + 1):
        planned = parse_thought(run.ask_text(turn, "thought", prompt_a(run, tools, history), stop=["\nAction:"]))
        run.episode.steps.append(Thought(planned.thought or planned.error, turn))
        if planned.final_answer is not None:
            _run(run, turn, "halt", {"message_to_user": planned.final_answer})
            return
        parsed = _act(run, opts, turn, tools)
        if parsed.final_answer is not None:
            _run(run, turn, "halt", {"message_to_user": parsed.final_answer})
            return
        if parsed.error:
            run.error(turn, parsed.error)
            continue
        for action in parsed.actions:
            if _run(run, turn, action.tool, action.arguments):
                return
        if parsed.ignored:
            run.error(turn, ignored_note(parsed.ignored + 1))
    run.finish("step_limit", f"Stopped: {limit} rounds used up before a Final Answer.")


def _act(run: AgentRun, opts: ReactOptions, turn: int, tools: str) -> Parsed:
    """Ask the executor for the Action(s) of the newest Thought and parse them.

    A server that refuses the ``response_format`` kind is asked again with the
    next kind it may take: the model-call path learns it
    (:meth:`~lares_kit.agents.agent_run.AgentRun.ask_in_format`).
    """
    fmt = opts.action_format
    text = run.ask_in_format(turn, "action", lambda: executor_request(run, tools, fmt), executor=True)
    return parse_actions(text, "all" if fmt == "parallel" else opts.parser)


def executor_request(run: AgentRun, tools: str, fmt: str) -> tuple[str, list[dict[str, str]], dict[str, Any]]:
    """The executor's request for action format ``fmt`` on the run's server: the kind, messages and extras.

    ``json_schema`` where the server takes it; else ``json_object`` (or
    plain text) with the schema written into Prompt B, which the output
    parser reads the same way.

    Args:
        run: The run in progress; its ``server`` profile says which ``response_format`` kinds it takes.
        tools: The tool descriptions, as :func:`describe_tools` writes them.
        fmt: One of :data:`ACTION_FORMATS`.

    Examples:
        >>> from lares_kit import Toolbox, load_world, run_agent
        >>> from lares_kit.models.servers import profile_for
        >>> ep = run_agent("hello", load_world("smart-building"), agent="react")
        >>> run = AgentRun(ep, load_world("smart-building"), None, None, "offline", server=profile_for("llamacpp"))
        >>> run.toolbox = Toolbox(run.home)
        >>> kind, messages, extra = executor_request(run, "- halt(message_to_user): finish.", "json_schema")
        >>> kind, extra["response_format"], messages[0]["content"].splitlines()[-1][:48]
        ('json_object', {'type': 'json_object'}, 'The JSON schema of your reply: {"type": "object"')
    """
    wanted = "text" if fmt == "text" else "json_schema"
    kind = run.server.response_format(wanted) if run.server is not None else wanted
    messages = prompt_b(run, tools, fmt)
    extra: dict[str, Any] = {"max_tokens": MAX_TOKENS["actions" if fmt == "parallel" else "action"]}
    schema = action_format(run.toolbox.names, fmt)
    if kind == "json_schema" and schema is not None:
        extra["response_format"] = schema
    elif schema is not None:  # json_object or text: the shape goes into the prompt instead
        shape = json.dumps(schema["json_schema"]["schema"])
        messages[0] = {**messages[0], "content": f"{messages[0]['content']}\nThe JSON schema of your reply: {shape}"}
        if kind == "json_object":
            extra["response_format"] = {"type": "json_object"}
    return kind, messages, extra


def run_react_parallel(run: AgentRun) -> None:
    """The react agent with parallel function calls: independent Actions run in one round.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up; its action format is set to ``parallel``.
    """
    run.options = replace(run.options, action_format="parallel")
    run_react(run)


def rounds(episode: Any) -> int:
    """How many Thought-Action-Observation rounds an episode took (planner calls).

    Args:
        episode: A finished react Episode (any Episode: other designs have no planner calls, so 0).

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> rounds(run_agent("hello", load_world("smart-building"), agent="react"))
        1
    """
    return sum(1 for c in episode.llm_calls if c.phase == "thought")
