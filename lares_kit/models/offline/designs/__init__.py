"""The offline model's rules that read one design's prompts, each with the design it reads.

Part of the offline model (:mod:`lares_kit.models.offline`). The stand-in's
core (reading, planning, calls, JSON) is what every design shares: a request
that offers tools is read into beliefs and answered with the next call. A
design whose prompts have a shape of their own has its rules here, one
module each, and nothing else in the stand-in reads those prompts:

* ``sage`` (:mod:`.sage`) -- SAGE's tree of prompts: the coordinator, the
  device, preference and condition agents, told apart by their tools
  (:mod:`lares_kit.agents.sage`);
* ``intent-action`` (:mod:`.intent_action`) -- the intent tool and the
  call its reasoning states (:mod:`lares_kit.agents.intent_action`);
* ``react`` (:mod:`.react`) -- ReAct text and its Action as JSON
  (:mod:`lares_kit.agents.react`).

Each design's :class:`~lares_kit.agents.registry.AgentSpec` names the rules
it relies on (``stand_in``), so the link is in the code, not only in
prose; ``tests/unit/models/offline/designs/`` takes each design's prompts
from its real writer and checks that its own rules, and no other's, read
them. The stand-in still never imports the agents: the rules read only the
request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import intent_action, react
from .sage.rules import sage_reply

__all__ = ["DESIGN_RULES", "DesignRules", "design_reply"]

Answer = tuple[str | None, list[tuple[str, dict[str, Any]]]]  # (text, calls)


@dataclass(frozen=True)
class DesignRules:
    """One design's rules: its name, the agent module whose prompts they read, and the reply (None: not its)."""

    name: str
    reads: str  # the module whose prompts these rules read
    reply: Callable[[dict[str, Any]], Answer | None]


# In the order they are asked: a request is answered by the first whose rules claim it, else by the core.
DESIGN_RULES: dict[str, DesignRules] = {r.name: r for r in (
    DesignRules("sage", "lares_kit.agents.sage", sage_reply),
    DesignRules("intent-action", "lares_kit.agents.intent_action", intent_action.reply),
    DesignRules("react", "lares_kit.agents.react", react.reply),
)}


def design_reply(request: dict[str, Any]) -> tuple[str, Answer] | None:
    """(the rules' name, their answer) for a request one design's rules claim; None for the shared core.

    Args:
        request: a Chat Completions request body, already checked by :func:`.wire.validate`.

    Examples:
        >>> design_reply({"messages": [{"role": "user", "content": "turn on the light"}]}) is None
        True
    """
    for rules in DESIGN_RULES.values():
        answer = rules.reply(request)
        if answer is not None:
            return rules.name, answer
    return None
