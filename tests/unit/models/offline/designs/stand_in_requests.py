"""The requests a design's real prompt writers send, and which stand-in rules claim each one.

Shared by the contract tests beside it: each runs its design through ``run_agent`` with the offline model
behind a client that keeps every request, so the prompts come from the agents' own writers, not from a copy.
"""

from __future__ import annotations

import copy
from typing import Any

from lares_kit import load_world, run_agent
from lares_kit.bench.scene import set_stage
from lares_kit.bench.suites.tasks import load_suite
from lares_kit.models import make_client
from lares_kit.models.offline.designs import DESIGN_RULES


class KeepingClient:
    """The offline model's client, keeping a copy of every request it is sent."""

    def __init__(self) -> None:
        self.inner = make_client("offline")
        self.base_url = self.inner.base_url
        self.requests: list[dict[str, Any]] = []
        self.chat = self  # client.chat.completions.create(...)
        self.completions = self

    def create(self, **request: Any) -> Any:
        self.requests.append(copy.deepcopy(request))
        return self.inner.chat.completions.create(**request)


def claimed_by(request: dict[str, Any]) -> tuple[str, ...]:
    """The names of the design rules that claim ``request`` (the stand-in asks them in order; () is the core)."""
    return tuple(name for name, rules in DESIGN_RULES.items() if rules.reply(copy.deepcopy(request)) is not None)


def runs(agent: str, suites: tuple[str, ...] = ("lares-home", "sage-home", "townhouse"), per_suite: int = 8,
         **how: Any) -> list[tuple[Any, list[dict[str, Any]]]]:
    """(episode, the requests it sent) for the first tasks of each suite, run by ``agent`` on the offline model."""
    out = []
    for suite in suites:
        for task in load_suite(suite)[:per_suite]:
            client = KeepingClient()
            scene = set_stage(task, load_world(task.world))
            episode = run_agent(task.instruction, scene.home, agent, "offline", client=client, user=scene.user,
                                context=scene.run_context, **how)
            out.append((episode, client.requests))
    return out
