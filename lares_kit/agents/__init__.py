"""Agent loops, by name, and :func:`run_agent`, the one way to run them.

Taught in ``notebooks/03_function_calling_loop.ipynb`` onwards. :data:`AGENTS`
maps an agent name to its loop; each loop is one function over an
:class:`~lares_kit.agents.shared.AgentRun` and fits on one screen:

* ``function-calling`` -- all tools offered, the model picks
  (:mod:`~lares_kit.agents.function_calling`);
* ``intent-action`` -- the Lares design: decide with reasoning, then act
  (:mod:`~lares_kit.agents.intent_action`).

:func:`run_agent` builds the pieces (model client, Toolbox, Episode), runs
the loop and returns the Episode. It never raises for what the model does:
the outcome is in ``episode.status``.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..episode import KNOWLEDGE_MODES, Episode
from ..errors import LaresError
from ..home import Home
from ..tools import Toolbox
from ..users import NoUser, User
from .function_calling import run_function_calling
from .intent_action import run_intent_action
from .prompts import GOAL_PROMPT, ROLE_PROMPT
from .shared import AgentRun, Listener, ModelFailed

__all__ = ["AGENTS", "DEFAULT_MAX_STEPS", "run_agent", "get_agent", "AgentRun"]

# agent name -> loop. Later designs (react, sage) add themselves here.
AGENTS: dict[str, Callable[[AgentRun], None]] = {
    "function-calling": run_function_calling,
    "intent-action": run_intent_action,
}
DEFAULT_MAX_STEPS = 20  # Lares allows 20 ticks (its write-up says 10)


def get_agent(name: str) -> Callable[[AgentRun], None]:
    """The loop registered under ``name``; a LaresError lists the known names.

    Examples:
        >>> get_agent("intent-action").__name__
        'run_intent_action'
        >>> get_agent("telepathy")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: unknown agent 'telepathy'; agents: function-calling, intent-action
    """
    if name not in AGENTS:
        raise LaresError(f"unknown agent {name!r}; agents: {', '.join(AGENTS)}")
    return AGENTS[name]


def run_agent(
    instruction: str,
    home: Home | str,
    agent: str = "intent-action",
    model: str | None = None,
    client: Any = None,
    knowledge: str = "latest",
    user: User | None = None,
    max_steps: int | None = None,
    tools: list[Callable[..., str]] | None = None,
    parallel_tool_calls: bool = False,
) -> Episode:
    """Run one instruction with one agent in one home; return the Episode.

    ``home`` is a Home (used as it is: reset it first if you need to) or a
    world id. ``model`` goes through :func:`lares_kit.models.resolve_model`
    (None -> ``$LARES_MODEL`` -> ``"offline"``); ``client`` defaults to
    ``make_client(model)``. ``knowledge`` is ``latest``, ``initial`` or
    ``none``. ``user`` answers ``ask_user`` (default: nobody, so a question
    ends the episode with ``no_answer``). ``tools`` defaults to the home's
    default tools.

    Examples:
        >>> from lares_kit import load_world
        >>> from lares_kit.users import ScriptedUser
        >>> home = load_world("lares-home")
        >>> ep = run_agent("set the office light depending on whether it's daytime", home,
        ...                user=ScriptedUser(answers=["No, it is night."]))
        >>> ep.status, ep.asked != [], home.devices["office-light"].state
        ('done', True, {'on': True})
    """
    loop = get_agent(agent)
    if knowledge not in KNOWLEDGE_MODES:
        raise LaresError(f"unknown knowledge mode {knowledge!r}; modes: {', '.join(KNOWLEDGE_MODES)}")
    steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
    if steps < 1:
        raise LaresError(f"max_steps must be at least 1, got {steps}")
    if isinstance(home, str):
        from ..worlds import load_world

        home = load_world(home)
    name = model
    if client is None or model is None:
        from ..models import make_client, resolve_model

        name = resolve_model(model)
        if client is None:
            client = make_client(name)  # fails at once (MissingAPIKey) for a remote model with no key
    toolbox = Toolbox(home, tools=tools, user=Listener(user if user is not None else NoUser()))
    episode = Episode.start(instruction, home, agent=agent, model=name, knowledge=knowledge, max_steps=steps,
                            system_prompt=ROLE_PROMPT, goal_prompt=GOAL_PROMPT)
    run = AgentRun(episode, home, toolbox, client, name, steps, parallel_tool_calls)
    start = time.perf_counter()
    try:
        loop(run)
    except ModelFailed as exc:
        episode.error = str(exc)
        run.finish("model_error", f"Stopped: the model call failed ({exc}).")
    episode.seconds = time.perf_counter() - start
    episode.final_state = home.truth()
    return episode
