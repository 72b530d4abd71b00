"""``lares run`` and ``lares demo``: one instruction, or the three Lares scenarios, in the terminal.

``lares run "INSTRUCTION"`` loads the world (``--world``), hides the movable
things (``--seed``), runs the agent and prints a transcript, or with
``--json`` the one object of DESIGN.md section 3. The ``--answer`` replies
go to ``ask_user`` in order; without them the person at the terminal is
asked (an empty line means no answer).

**Persistent commands** ("when I open the fridge, turn on the dining
light"): the sage agent always gets a poller (:class:`~lares_kit.persistent.monitor.Monitor`
on a simulated clock), so its condition agent registers the condition
instead of acting at once. After the episode the transcript shows each
condition's code and the sandbox's verdict. ``--event "TIME DEVICE
ATTRIBUTE=VALUE ..."`` (repeatable, e.g. ``--event "30s fridge door=open"``;
TIME is ``30``, ``30s`` or ``2m`` after the episode) then plays what happens
next on that clock (:func:`lares_kit.bench.events.play_events`, as the
benchmark does) and shows each firing with its simulated time and the run it
started. Other agents have no condition agent: with them the events still
play, and the transcript says that nothing was registered.

**Who is talking** (``--person NAME``): in a world that lists its residents
(``users:``), NAME must be one of them. The sage agent reads it as the
speaker (whose profile "put the game on" uses); react agents give it to their
memory; function-calling and intent-action use it only with ``--memory``, so
without it ``--person`` is refused rather than ignored.

**Who gives the instruction, and when** (``--source NAME``, ``--time-of-day
TIME``): the world's safety policy (:mod:`lares_kit.safety.gate`) trusts only the
sources it lists as trusted -- ``--source letterbox --time-of-day 4am`` in the
``shared-house`` is the Lares write-up's voice through the letterbox, and
every change it asks for is refused. The default source is the owner; the
time of day is parsed (``04:00``, ``4am``, ``23:30:00``, ``night``) and starts
the home's simulated clock (:mod:`lares_kit.home.clock`), which the poller moves
on. With ``--json`` the object then also has ``source`` and ``time_of_day``.

**Which tools** (``--tools ha``): Home Assistant's intent tools and static
context instead of the Lares tools and world knowledge
(:mod:`lares_kit.agents.dialects`); ``--json`` then adds ``tool_set``.

**Output**: with ``--json``, standard output holds exactly one JSON object
whatever happens -- the run object, or ``{"status": "error", "error": ...}``
when the run could not start (the sentence is also on standard error).
Questions for the person at the terminal, and anything else printed during
the run, go to standard error. Keys added beside the fixed ones when a
poller was used (the sage agent, or ``--event``): ``conditions``, ``events``,
``firings``, ``notices`` and ``state_after_events`` (``state`` stays the
home right after the episode).

**Record and replay** (``--record DIR``, ``--model replay:DIR``): see
:mod:`lares_kit.models.recording.replay`; a request the recording does not hold is bad input.

Exit status: 0 when the episode ran (whatever its status), 1 when the model
could not be reached, 2 for bad input.

``lares demo`` runs the scenarios of :mod:`lares_kit.agents.scenarios` with
the offline model and prints each transcript with its check.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import textwrap
from typing import Any

from ..agents import get_agent, run_agent
from ..agents.hints import event_hint, step_limit_hint
from ..agents.scenarios import LARES_SCENARIOS
from ..errors import LaresError
from ..home.clock import Clock
from ..home.graph import Home
from ..home.worlds import load_world
from ..persistent.phrases import is_persistent
from ..run_context import RunContext
from ..safety.policy import DEFAULT_SOURCE
from ..tools.users import ScriptedUser, TerminalUser

__all__ = ["cli_run", "cli_demo", "check_person", "check_time_of_day", "request_options"]

# What --json adds beside the fixed keys when a poller was used.
PERSISTENT_KEYS = ("conditions", "events", "firings", "notices", "state_after_events")


def cli_run(args: argparse.Namespace) -> int:
    """Run ``lares run`` with parsed arguments; return the exit status.

    Args:
        args: The ``run`` subcommand's arguments, as ``lares_kit.cli.commands.build_parser().parse_args`` returns them.

    Examples:
        >>> from lares_kit.cli.commands import build_parser
        >>> args = build_parser().parse_args(["run", "turn on the light in the kitchen", "--json"])
        >>> cli_run(args)  # doctest: +ELLIPSIS
        {
          "instruction": "turn on the light in the kitchen",
        ...
        0
    """
    if not args.json:
        text, code = _run(args)
        print(text)
        return code
    stdout = sys.stdout
    try:
        # Anything printed during the run (a question, a library's chatter) goes to stderr:
        # stdout holds the one JSON document.
        with contextlib.redirect_stdout(sys.stderr):
            data, code = _run(args)
    except (Exception, KeyboardInterrupt) as exc:
        reason = str(exc) if isinstance(exc, LaresError) else \
            "stopped" if isinstance(exc, KeyboardInterrupt) else f"{type(exc).__name__}: {exc}"
        from ..models import resolve_model

        print(json.dumps({"instruction": args.instruction, "world": args.world, "agent": args.agent,
                          "model": resolve_model(args.model), "status": "error", "error": reason}, indent=2),
              file=stdout)
        raise  # `lares` prints the sentence on stderr and exits 2 (130 when stopped)
    print(json.dumps(data, indent=2), file=stdout)
    return code


def _run(args: argparse.Namespace) -> tuple[Any, int]:
    """One episode, then its events; the transcript (or the JSON object) and the exit status."""
    from ..bench.events import parse_at_texts, parse_event_texts, play_events
    from ..persistent.monitor import Monitor

    spec = get_agent(args.agent)  # an unknown agent is the first thing to say
    options = request_options(args)
    server = getattr(args, "server", None)
    if server:
        from ..models.servers import profile_for

        profile_for(server)  # an unknown name is said before the world loads
    home = load_world(args.world).reset(seed=args.seed)
    memory = getattr(args, "memory", None)
    person = check_person(getattr(args, "person", None), home, args.agent, memory)
    when = check_time_of_day(getattr(args, "time_of_day", None))
    if when is not None:  # as a task's setup.time_of_day: the home's clock starts there, the poller moves it on
        home.clock = Clock.simulated(start=when)
    source = getattr(args, "source", None)
    # who gives the instruction and who speaks (a benchmark task's setup.source and setup.user), what the server takes
    context = RunContext(source=DEFAULT_SOURCE if source is None else source, person=person or "", server=server)
    tool_set = getattr(args, "tools", None) or "lares"  # --tools lares|ha: the tool dialect (agents.dialects)
    events = sorted(parse_event_texts(getattr(args, "event", None) or [], home) + parse_at_texts(
        getattr(args, "at", None) or [], home), key=lambda e: e.after)  # --at: the clock runs on to a time
    # Without --answer the person at the terminal is asked; with --json the
    # question goes to stderr so stdout holds only the JSON object.
    user = ScriptedUser(answers=list(args.answer)) if args.answer else TerminalUser(sys.stderr if args.json else None)
    if memory == "default":  # --memory with no path: the home's own store
        from ..memory.store import memory_path

        memory = memory_path(home.id)
    # The poller: sage's condition agent registers with it; events play against it after the episode.
    monitor = Monitor(home) if spec.persistent or events else None
    from ..models.client import run_clients  # --record DIR, --model replay:DIR: the clients they need

    model, client, executor, clients = run_clients(args.model, getattr(args, "executor_model", None),
                                                   spec.executor, record=getattr(args, "record", None),
                                                   argv=getattr(args, "argv", None))
    try:
        episode = run_agent(args.instruction, home, agent=args.agent, model=model, client=client,
                            knowledge=args.knowledge, knowledge_format=getattr(args, "knowledge_format", None),
                            user=user, max_steps=args.max_steps, memory=memory, monitor=monitor, context=context,
                            executor=executor, options=options,
                            tool_set=tool_set, prompt_style=getattr(args, "prompt_style", None))
        log = play_events(events, home, monitor) if events else None
        persistent = _persistent(monitor, events, log, home) if monitor is not None else None
    finally:
        if monitor is not None:
            monitor.close()
    if clients:  # a request the replay did not hold is the command's error; else what was recorded or replayed
        from ..models.recording.replay import command_report

        command_report(clients, sys.stderr)
    code = 1 if episode.status == "model_error" else 0
    if args.json:
        data = episode.to_run_json()
        if source is not None or when is not None:  # beside the fixed keys: who said it, and when
            data.update(source=episode.source, time_of_day=when)
        if tool_set != "lares":  # and in which tool dialect
            data["tool_set"] = tool_set
        if persistent is not None:
            data.update({key: persistent[key] for key in PERSISTENT_KEYS})
        return data, code
    hint = step_limit_hint(episode, args.max_steps)  # "~ ... give it more with --max-steps 40", or ""
    return episode.transcript() + hint + _persistent_text(episode, persistent, args.agent), code


def request_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``options`` for run_agent from ``--temperature`` and ``--action-format``; a LaresError names a bad value.

    Args:
        args: The ``run`` subcommand's arguments (``temperature`` and ``action_format``, None when not given).

    Examples:
        >>> from lares_kit.cli.commands import build_parser
        >>> request_options(build_parser().parse_args(["run", "hi", "--temperature", "0.7"]))
        {'temperature': 0.7}
        >>> request_options(build_parser().parse_args(["run", "hi", "--temperature", "warm"]))
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --temperature must be a number from 0 to 2, not 'warm'
        >>> request_options(build_parser().parse_args(["run", "hi", "--agent", "react", "--action-format", "yaml"]))
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: --action-format must be one of json_schema, text, parallel, not 'yaml'
    """
    from ..agents.react import ACTION_FORMATS

    options: dict[str, Any] = {}
    text = getattr(args, "temperature", None)
    if text is not None:
        try:
            options["temperature"] = float(text)
        except ValueError:
            options["temperature"] = None
        if options["temperature"] is None or not 0 <= options["temperature"] <= 2:
            raise LaresError(f"--temperature must be a number from 0 to 2, not {text!r}")
    fmt = getattr(args, "action_format", None)
    if fmt is not None:
        if fmt not in ACTION_FORMATS:
            raise LaresError(f"--action-format must be one of {', '.join(ACTION_FORMATS)}, not {fmt!r}")
        if not get_agent(args.agent).executor:
            raise LaresError(f"--action-format is how react's executor writes Actions; {args.agent} has no executor: "
                             "leave it out, or use --agent react.")
        options["action_format"] = fmt
    return options or None


def check_time_of_day(text: str | None) -> str | None:
    """``--time-of-day`` as given, once it reads as a time; a LaresError says what would.

    Args:
        text: The option's value (``04:00``, ``4am``, ``23:30:00``, ``night``...), or None when it was not given.

    Examples:
        >>> check_time_of_day("4am"), check_time_of_day(None)
        ('4am', None)
        >>> check_time_of_day("teatime")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.sentences.times.TimeError: --time-of-day: 'teatime' is not a time of day:
        give a clock time like 04:00, 4am or 23:30:00, or a word such as night, evening, morning or midnight.
    """
    from ..sentences.times import TimeError, minutes_of_day

    if text is None:
        return None
    try:
        minutes_of_day(text)
    except TimeError as exc:
        raise TimeError(f"--time-of-day: {exc}") from None
    return text


def check_person(person: str | None, home: Home, agent: str, memory: Any = None) -> str | None:
    """The ``--person`` to use (a resident's id), or a LaresError saying why it cannot be used.

    Args:
        person: The option's value, a resident's name in any case; None or "" when it was not given.
        home: The world being run: when it lists residents, ``person`` must be one of them.
        agent: The agent name given with ``--agent``: only designs with a memory can hear who is speaking.
        memory: The ``--memory`` value (a store path or ``"default"``), or None when it was not given.

    Examples:
        >>> from lares_kit import load_world
        >>> check_person("Dmitriy", load_world("sage-home"), "sage")
        'dmitriy'
        >>> check_person("bob", load_world("sage-home"), "sage")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: sage-home knows these people: amal, dmitriy; --person 'bob' is not one of them.
        >>> check_person("ana", load_world("smart-building"), "intent-action")  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: intent-action reads --person only from its memory:
        add --memory (the home's memory store), or use --agent sage or --agent react.
    """
    from ..memory.profiles import residents

    if not person:
        return None
    known = residents(home)
    if known:  # a world with residents: only they can speak (their profiles are what the agents read)
        match = next((r for r in known if r.lower() == person.strip().lower()), None)
        if match is None:
            raise LaresError(f"{home.id} knows these people: {', '.join(known)}; "
                             f"--person {person!r} is not one of them.")
        person = match
    if not get_agent(agent).memory and not memory:  # react and sage always keep a memory for the speaker
        raise LaresError(f"{agent} reads --person only from its memory: add --memory (the home's memory store), "
                         "or use --agent sage or --agent react.")
    return person


def _persistent(monitor: Any, events: list[Any], log: Any, home: Home) -> dict[str, Any]:
    """What the poller saw, as data for ``--json`` (``transcripts``: the fired runs, for the text)."""
    conditions = [{"id": c.id, "description": c.description, "code": c.code,
                   "instruction": c.action.instruction if c.action else None,
                   "reads": [f"{d}.{a}" if a else d for d, a in c.reads], "verdict": "accepted", "reason": None,
                   "value": _first_value(monitor, c.id), "fired": c.fired, "enabled": c.enabled,
                   "sandbox": monitor.sandbox.isolation} for c in monitor.list()]
    conditions += [{"id": None, "description": "", "code": code, "instruction": None, "reads": [],
                    "verdict": "refused", "reason": why, "value": None, "fired": 0, "enabled": False,
                    "sandbox": monitor.sandbox.isolation} for code, why in monitor.refused]
    firings, transcripts = [], []
    for firing in log.firings if log is not None else []:
        fired = firing["episode"]
        run = fired.to_run_json() if hasattr(fired, "to_run_json") else {}
        firings.append({"seconds": firing["seconds"], "condition": firing["condition"],
                        "instruction": firing["instruction"], "status": run.get("status"),
                        "final_message": run.get("final_message"), "steps": run.get("steps", []),
                        "llm_calls": run.get("llm_calls", 0), "usage": run.get("usage"), "error": firing["error"]})
        transcripts.append(fired.transcript() if hasattr(fired, "transcript") else "")
    state_after = None
    if log is not None:  # the same shape as the run object's "state"
        truth = home.truth()
        state_after = {**truth["devices"], "robot": truth.get("robot")}
    return {"conditions": conditions, "events": [{"seconds": e.after, "states": e.states} for e in events],
            "firings": firings, "notices": list(monitor.notices), "state_after_events": state_after,
            "transcripts": transcripts, "jail": list(monitor.sandbox.jail), "interval": monitor.interval,
            "hint": event_hint(monitor, home)}


def _first_value(monitor: Any, condition_id: str) -> bool | None:
    # The test run at registration is the first timeline row of the condition.
    return next((c.value for c in monitor.timeline if c.condition_id == condition_id), None)


def _persistent_text(episode: Any, data: dict[str, Any] | None, agent: str) -> str:
    """The transcript's tail: registered conditions with their verdicts, then events and firings in time order."""
    from ..bench.events import SETTLE_TICKS

    lines: list[str] = []

    def say(text: str, indent: str = "") -> None:
        lines.extend(textwrap.wrap(text, 104, initial_indent=indent, subsequent_indent=indent + "  ",
                                   break_on_hyphens=False, break_long_words=False))  # a hint stays whole

    asked = is_persistent(episode.instruction)
    if data is None:  # no poller: say something only when the instruction reads as a persistent command
        if asked:
            say(f'~ This reads as a persistent command ("when X, do Y"), and {agent} carries instructions out '
                "at once: only --agent sage registers one with a poller, to run each time X happens.")
        return "".join("\n" + line for line in lines)
    if not (data["conditions"] or data["events"] or asked):
        return ""
    accepted = [c for c in data["conditions"] if c["verdict"] == "accepted"]
    if not data["conditions"]:
        say("~ No persistent command was registered: " + (
            "the answer above says why." if agent == "sage" else
            f"{agent} has no condition agent; only --agent sage registers persistent commands."))
    else:
        say(f"~ Persistent commands: {len(accepted)} registered, checked every {data['interval']:g} s on a "
            "simulated clock")
    for c in data["conditions"]:
        if c["verdict"] == "accepted":
            then = f'"{c["instruction"]}"' if c["instruction"] else "(no action attached)"
            say(f"{c['id']}: when {c['description'] or c['id']} -> {then}", "  ")
        else:
            say("a condition the sandbox refused:", "  ")
        lines.extend(f"    | {line}" for line in c["code"].splitlines())
        lines.extend(_wrapped("sandbox", _verdict(c, data["jail"])))
    if accepted and not data["events"]:
        how = ("--at plays the clock on to that time" if data["hint"].startswith("--at") else
               "repeatable; TIME is 30, 30s or 2m after the episode")
        say(f"To see it fire, play what happens next: {data['hint']} ({how}).", "  ")
    if data["events"]:
        say("~ After the episode, on the simulated clock:")
        # rows: (seconds, order, lines). A tick at t comes before an event at t (play_events ticks, then
        # changes the home), so at equal times a firing is listed first.
        rows = []
        for event in data["events"]:  # the world's doing, not the agent's
            changes = "; ".join(f"{dev} " + " ".join(f"{a}={_word(v)}" for a, v in update.items())
                                for dev, update in event["states"].items())
            said = changes or "(the clock runs on to here: --at)"
            rows.append((event["seconds"], 1, [f"  t={event['seconds']:>5g}s  event   {said}"]))
        for firing, transcript in zip(data["firings"], data["transcripts"]):
            failed = f" (failed: {firing['error']})" if firing["error"] else ""
            head = (f"  t={firing['seconds']:>5g}s  fires   {firing['condition']} turned True -> "
                    f"\"{firing['instruction']}\"{failed}")
            rows.append((firing["seconds"], 0, [head] + [f"      {line}" for line in transcript.splitlines()]))
        for _, _, row in sorted(rows, key=lambda row: row[:2]):
            lines.extend(row)
        n = len(data["firings"])
        say(f"{n} firing{'s' if n != 1 else ''}; the poller went on {data['interval'] * SETTLE_TICKS:g} s after "
            "the last event.", "  ")
    for notice in data["notices"]:
        say(f"notice: {notice}", "  ")
    return "".join("\n" + line for line in lines)


def _word(value: Any) -> str:
    # true, 5, open: a value as it was typed in --event
    return value if isinstance(value, str) else json.dumps(value)


def _verdict(condition: dict[str, Any], jail: list[str]) -> str:
    if condition["verdict"] == "refused":
        return f"refused: {condition['reason']}"
    reads = ", ".join(condition["reads"]) or "no device"
    where = (f"each check runs in a separate worker process with OS limits ({', '.join(jail)})"
             if condition["sandbox"] == "process" and jail else "each check runs checked and guarded in this process")
    return (f"accepted: the checker allowed its syntax (it reads {reads}); a test run on the home now gave "
            f"{condition['value']}; {where}.")


def _wrapped(label: str, text: str) -> list[str]:
    body = textwrap.wrap(text, 96) or [""]
    return [f"    {label:<8} {body[0]}"] + [f"    {'':<8} {line}" for line in body[1:]]


def cli_demo(args: argparse.Namespace | None = None) -> int:
    """Run the three Lares scenarios with the offline model; 0 when every check passes.

    Args:
        args: The ``demo`` subcommand's parsed arguments; it takes none, so None does as well.
    """
    failed = 0
    scenarios = [s for s in LARES_SCENARIOS if s.seed is None]  # the demo's placement, as in Lares
    for number, scenario in enumerate(scenarios, 1):
        home = load_world(scenario.world).reset(seed=scenario.seed)
        hidden = ", ".join(f"{item.name} in the {home.room_name(item.room)}" for item in home.items.values())
        print(f"\n=== {number}. {scenario.instruction}")
        print(f"    (hidden from the agent: {hidden})")
        if scenario.answers:
            print(f"    (the scripted user will answer: {' / '.join(scenario.answers)})")
        user = ScriptedUser(answers=list(scenario.answers))
        episode = run_agent(scenario.instruction, home, model="offline", user=user)
        print(episode.transcript())
        ok = scenario.check(episode)
        failed += not ok
        print(f"    check: {'passed' if ok else 'FAILED'} ({scenario.check.__doc__.splitlines()[0]})")
    print(f"\n{len(scenarios) - failed} of {len(scenarios)} scenarios passed. The offline model is a rule-based "
          "stand-in for an LLM; run `lares run \"...\" --model NAME` to try a real one.")
    return 1 if failed else 0
