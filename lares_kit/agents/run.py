"""``lares run`` and ``lares demo``: one instruction, or the three Lares scenarios, in the terminal.

``lares run "INSTRUCTION"`` loads the world (``--world``), hides the movable
things (``--seed``), runs the agent and prints a transcript, or with
``--json`` the one object of DESIGN.md section 3. The ``--answer`` replies
go to ``ask_user`` in order; without them the person at the terminal is
asked (an empty line means no answer). Exit status: 0 when the episode ran
(whatever its status), 1 when the model could not be reached, 2 for bad input.

``lares demo`` runs the scenarios of :mod:`lares_kit.agents.scenarios` with
the offline model and prints each transcript with its check.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..users import ScriptedUser, TerminalUser
from ..worlds import load_world
from . import run_agent
from .scenarios import LARES_SCENARIOS

__all__ = ["cli_run", "cli_demo"]


def cli_run(args: argparse.Namespace) -> int:
    """Run ``lares run`` with parsed arguments; return the exit status.

    Examples:
        >>> from lares_kit.cli import build_parser
        >>> args = build_parser().parse_args(["run", "turn on the light in the kitchen", "--json"])
        >>> cli_run(args)  # doctest: +ELLIPSIS
        {
          "instruction": "turn on the light in the kitchen",
        ...
        0
    """
    home = load_world(args.world).reset(seed=args.seed)
    # Without --answer the person at the terminal is asked; with --json the
    # question goes to stderr so stdout holds only the JSON object.
    user = ScriptedUser(answers=list(args.answer)) if args.answer else TerminalUser(sys.stderr if args.json else None)
    memory = getattr(args, "memory", None)
    if memory == "default":  # --memory with no path: the home's own store
        from ..memory_store import memory_path

        memory = memory_path(home.id)
    episode = run_agent(args.instruction, home, agent=args.agent, model=args.model, knowledge=args.knowledge,
                        user=user, max_steps=args.max_steps, executor_model=getattr(args, "executor_model", None),
                        memory=memory, person=getattr(args, "person", None),
                        **({"knowledge_format": args.knowledge_format} if getattr(args, "knowledge_format", None) else {}))
    if args.json:
        print(json.dumps(episode.to_run_json(), indent=2))
    else:
        print(episode.transcript())
    return 1 if episode.status == "model_error" else 0


def cli_demo(args: argparse.Namespace | None = None) -> int:
    """Run the three Lares scenarios with the offline model; 0 when every check passes."""
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
