"""The SAGE agent: a coordinator whose tools are sub-agents -- a tree of prompts.

Taught in ``notebooks/11_device_apis_and_disambiguation.ipynb`` to
``13_persistent_commands.ipynb``. SAGE (Rivkin et al., "SAGE: Smart home
Agent with Grounded Execution", 2023) answers a request with a top-level
agent that never sees the whole home; it calls tools, and some tools are
agents with their own prompt and tools:

* ``device_agent`` -- finds devices from descriptions
  (:mod:`lares_kit.device_apis.nearby`), reads capability docs, gets attributes
  and runs commands (:mod:`lares_kit.device_apis.documents`); a device with no docs is
  read and set with ``read_device`` / ``set_device``;
* ``preference_agent`` -- reads the speaker's profile and past requests
  (:mod:`lares_kit.memory.profiles`, the same SQLite store as the ReAct memory);
  the request being served joins the past requests once it is served, so
  it never shows up in its own profile;
* ``condition_agent`` -- writes a condition as a small Python function from
  the device docs and registers it with the poller (:mod:`lares_kit.persistent.monitor`);
  when it fires, the stored instruction runs through this agent again;
* plus ``tv_guide``, ``weather`` (:mod:`lares_kit.device_apis.tv_and_weather`), ``ask_user``, ``halt``.

Each agent in the tree -- the coordinator too -- is the same function-calling
loop (:func:`~lares_kit.agents.function_calling.run_function_calling`: one
screen, one stop rule: ``halt``, a step limit); a sub-agent's answer is its ``halt``
message, and its model calls are counted in the coordinator's Episode. The
coordinator gets no WORLD KNOWLEDGE dump -- what it knows about the home
comes through its tools, which is SAGE's point: its only knowledge mode is
``none``. :func:`sage_setup` builds the coordinator's tools and prompts for
:func:`~lares_kit.agents.run_agent`, and :func:`run_sage` runs it.

In Home Assistant's dialect (``run_agent(..., tool_set="ha")``, see
:mod:`~lares_kit.agents.dialects`) the device agent gets the static context
and the intent tools instead of the capability documents
(:data:`HA_DEVICE_PROMPT`); the coordinator and the other agents are the same.

Every agent of the tree shares the run's safety gate (:mod:`lares_kit.safety.gate`):
the same source and time of day. A device change the policy holds back for
confirmation ends the device agent with the question to ask; only the
coordinator talks to the person, so it asks through ``ask_user`` and, after
a yes, hands the task on again -- the gate heard the yes and lets that one
change through.

A sub-agent whose model call fails ends the whole run with the status
``model_error`` (:class:`SubAgentFailed`), as a failure of the coordinator's
own model does: handed back as a tool error, the coordinator would answer
around it and end ``done`` with the light still off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..device_apis.documents import (
    DEVICE_API_TOOLS,
    device_capabilities,
    get_attribute,
    get_capability_docs,
    list_devices,
)
from ..device_apis.nearby import find_device
from ..device_apis.tv_and_weather import GUIDE_TOOLS
from ..episode import Episode
from ..ha.tools import HA_API_PROMPT, ha_tools_for
from ..memory.profiles import PREFERENCE_TOOLS, residents, seed_memory, speaker
from ..persistent.monitor import PERSISTENT_TOOLS
from ..sentences.markers import speaker_line
from ..tools.remote import RemoteTools
from ..tools.toolbox import StopRun, Toolbox, ask_user, halt, read_device, set_device
from ..tools.users import NoUser
from .agent_run import AgentRun, ModelFailed, house_rules_of, where_line
from .dialects import start_episode
from .function_calling import FunctionCallingOptions, run_function_calling

__all__ = ["run_sage", "sage_setup", "SageTree", "SubAgentFailed", "COORDINATOR_PROMPT", "SUB_AGENTS",
           "SUB_AGENT_MAX_STEPS", "UNDOCUMENTED", "CONFIRM_PROMPT", "HA_DEVICE_PROMPT"]

COORDINATOR_PROMPT = (
    "You are SAGE, the assistant of a smart home. You do not see the devices directly: hand device work to "
    "device_agent, questions about what the person likes or asked before to preference_agent, and anything that "
    "should happen later, when something happens (\"when I open the fridge...\"), to condition_agent. tv_guide "
    "and weather answer what is on and what the weather is. Work out concrete values before you hand a task on "
    "(which team, which channel, which temperature). Ask the user only when a device or wish is truly ambiguous. "
    "Call halt with a short answer for the person when the request is done or cannot be done."
)
# Added to the coordinator's prompt in a home with a safety policy (a home without one keeps the prompt above).
CONFIRM_PROMPT = (" When the device agent says the home's safety policy needs the person's confirmation, ask its "
                  "question with ask_user and, after a clear yes, hand the same task on again.")
GOAL = "Carry out the request that follows, one tool call at a time."


def _goal(person: str, home: Any = None, rules: str = "", room: str | None = None) -> str:
    # "You are talking to X." only when we know X: the offline model fills user_profile(person=...) from it;
    # where they are, when the run knows it; the house rules an untrusted instruction is held to.
    return GOAL + speaker_line(person) + (where_line(home, room) if home is not None else "") + rules


# sub-agent -> (its role prompt, its tools). Each ends with halt, whose message is its answer.
SUB_AGENTS: dict[str, tuple[str, list[Callable[..., str]]]] = {
    "device": ("You are SAGE's device agent. Find the device the request means with find_device (or "
               "list_devices), read the capability docs before a command you have not used, read attributes you "
               "need (for changes relative to the current value), then run the commands. If several devices fit "
               "equally, do nothing and halt with the question to ask the person. Halt with what you did.",
               [find_device, *DEVICE_API_TOOLS, halt]),
    "preference": ("You are SAGE's preference agent. Answer the question about the person from their profile "
                   "(user_profile) and their past requests (recall). Halt with the answer, quoting the facts.",
                   [*PREFERENCE_TOOLS, halt]),
    "condition": ("You are SAGE's condition agent. For 'when X, do Y': find the device X is about, read its "
                  "capability docs to learn the attribute and its values, write a condition function with "
                  "create_condition that returns True when X holds, then notify_on_condition with Y as the "
                  "instruction. For a time ('every evening at 7', 'at 6:30 on weekdays', 'in ten minutes') the "
                  "condition reads the device \"clock\": get(\"clock\", \"time\") == \"19:00\", "
                  "get(\"clock\", \"weekday\"), or get(\"clock\", \"minutes\") for a delay (read it now with "
                  "get_attribute). A device with no capability docs has the attributes get_attribute lists. "
                  "You can also list and cancel conditions. Halt with what you set up.",
                  [find_device, list_devices, get_capability_docs, get_attribute, *PERSISTENT_TOOLS, halt]),
}
# For a home with devices that document no capabilities (worlds without `docs:`), the device agent also
# gets the home's own device tools -- which the safety gate understands -- and is told what to do when it
# stops a change. A home where every device has docs keeps the prompt and tools above unchanged.
UNDOCUMENTED = ((" A device that documents no capabilities is read with read_device and changed with set_device. "
                 "If the home's safety policy needs the person's confirmation, do nothing more and halt with the "
                 "question to ask them."), [read_device, set_device])
# The device agent in Home Assistant's dialect (run_agent(..., tool_set="ha")): the static context is its map.
HA_DEVICE_PROMPT = ("You are SAGE's device agent. Carry out the device task with Home Assistant's intent tools; read "
                    "the current state with GetLiveContext when the task depends on it (a change relative to the "
                    "current value). If several devices fit equally, do nothing and halt with the question to ask the "
                    "person. If the home's safety policy needs the person's confirmation, do nothing more and halt "
                    "with the question to ask them. Halt with what you did. " + HA_API_PROMPT)
# The device agent with the tools given to run_agent (the home's own, or a remote home's: lares_kit.serve.client):
# it reads the world knowledge, as a function-calling agent does, and only the coordinator talks to the person.
GIVEN_TOOLS_PROMPT = ("You are SAGE's device agent. Carry out the device task with the functions you have, using the "
                      "world knowledge; move the robot and look with it to find movable things. If several devices "
                      "fit equally, do nothing and halt with the question to ask the person. If the home's safety "
                      "policy needs the person's confirmation, do nothing more and halt with the question to ask "
                      "them. Halt with what you did.")
SUB_AGENT_MAX_STEPS = 15  # a sub-agent's own step limit (all the lights: one command each)


class SubAgentFailed(ModelFailed, StopRun):
    """A sub-agent's model call failed: a ModelFailed (run_agent ends the run ``model_error``) that the
    coordinator's Toolbox lets through instead of turning it into a tool error (a StopRun)."""


@dataclass
class SageTree:
    """What the sub-agent tools of one run share: the run, the speaker's memory, the poller, the trace.

    A fired persistent command runs through SAGE again by
    :func:`lares_kit.agents.run_agent` (the design's ``persistent`` spec).
    """

    run: AgentRun
    memory: Any  # lares_kit.memory.agent_memory.Memory of the speaker, over a seeded store
    monitor: Any = None  # lares_kit.persistent.monitor.Monitor, or None: no persistent commands in this run
    device_tools: list[Callable[..., str]] | None = None  # run_agent(tools=...): the device agent's, not its own
    sub_episodes: list[Episode] = field(default_factory=list)  # every sub-agent run, oldest first

    def delegate(self, kind: str, request: str) -> str:
        """Run one sub-agent on ``request`` in the same home; its halt message is the answer."""
        prompt, tools = SUB_AGENTS[kind]
        parent = self.run
        ha = kind == "device" and parent.dialect.static  # Home Assistant's dialect: static context, intent tools
        given = kind == "device" and self.device_tools is not None  # run_agent(..., tools=...): the device agent's
        steps = parent.max_steps if given else SUB_AGENT_MAX_STEPS  # with the robot a search is many calls
        if given:
            prompt, tools = GIVEN_TOOLS_PROMPT, [*self.device_tools, halt]
        elif ha:
            prompt, tools = HA_DEVICE_PROMPT, [*ha_tools_for(parent.home), halt]
        elif kind == "device" and any(not device_capabilities(parent.home, d) for d in parent.home.devices):
            prompt, tools = prompt + UNDOCUMENTED[0], [*tools[:-1], *UNDOCUMENTED[1], tools[-1]]  # halt last
        # The coordinator's safety gate, shared: the same source and time, and a yes the coordinator heard
        # through ask_user confirms the change the sub-agent then makes (lares_kit.safety.gate).
        box = Toolbox(parent.home, tools=list(tools), user=NoUser(), memory=self.memory, monitor=self.monitor,
                      source=parent.toolbox.source, safety=parent.toolbox.safety)
        episode = start_episode("ha" if ha else "lares", request, parent.home, agent=f"sage/{kind}",
                                model=parent.model, knowledge="latest" if ha or given else "none",
                                max_steps=steps,
                                system_prompt=prompt,
                                goal_prompt=_goal(self.memory.user, parent.home, house_rules_of(box, ha),
                                                  parent.context.room))
        sub = AgentRun(episode, parent.home, box, parent.client, parent.model, steps,
                       options=FunctionCallingOptions(temperature=parent.options.temperature, seed=parent.options.seed),
                       server=parent.server, context=parent.context)
        try:
            with parent.home.nested_marks():  # the coordinator's step records what the whole sub-agent changed
                run_function_calling(sub)
        except ModelFailed as exc:  # the whole run ends model_error, as when the coordinator's own call fails
            episode.error = str(exc)
            sub.finish("model_error", f"Stopped: the model call failed ({exc}).")
            self._join(kind, episode)  # the failed call is part of the run's record and cost
            raise SubAgentFailed(f"in the {kind} agent: {exc}") from exc
        self._join(kind, episode)
        calls = "; ".join(f"{s.call_text} -> {'ok' if s.ok else 'error'}" for s in episode.tool_calls
                          if s.tool != "halt")
        answer = episode.final_message if episode.status == "done" else \
            f"The {kind} agent stopped without an answer ({episode.status}): {episode.final_message}"
        return answer + (f"\n(The {kind} agent called: {calls}.)" if calls else "")

    def _join(self, kind: str, episode: Episode) -> None:
        # A finished sub-agent run: kept, and its model calls counted in the coordinator's Episode.
        parent = self.run
        episode.final_state = parent.home.truth()
        self.sub_episodes.append(episode)
        turn = len(parent.episode.llm_calls)
        for call in episode.llm_calls:  # the tree's cost is the run's cost
            call.phase, call.turn = f"{kind}_agent", turn
            parent.episode.llm_calls.append(call)


def _tools(tree: SageTree) -> list[Callable[..., str]]:
    # The sub-agents as plain typed tools; closures carry the tree (no classes made at runtime).
    def device_agent(request: str) -> str:
        """Hand a task about devices to the device agent, in words with every value worked out, e.g.
        "set the TV by the plant to channel 3". It finds the device, reads its docs, runs the commands and says
        what it did.

        Args:
            request: The device task, e.g. "dim the lights by the fireplace to a third of their current value".
        """
        return tree.delegate("device", request)

    def preference_agent(question: str) -> str:
        """Ask the preference agent about the person: favourite teams, sports, genres, shows, usual settings,
        past requests.

        Args:
            question: What you need to know, e.g. "Which team does the person support?".
        """
        return tree.delegate("preference", question)

    def condition_agent(request: str) -> str:
        """Hand a persistent command to the condition agent: "when X happens, do Y". It writes and registers the
        condition; Y runs later, each time X becomes true. It also lists and cancels them.

        Args:
            request: The whole persistent command, e.g. "turn on the light in the dining room when I open the
                fridge".
        """
        return tree.delegate("condition", request)

    tools: list[Callable[..., str]] = [device_agent, preference_agent]
    if tree.monitor is not None:
        tools.append(condition_agent)
    return [*tools, *GUIDE_TOOLS, ask_user, halt]


def sage_setup(run: AgentRun, tools: list[Callable[..., str]] | None, user: Any, memory: Any,
               monitor: Any) -> tuple[Toolbox, str, str]:
    """The coordinator's Toolbox (its sub-agents as tools), role prompt and goal, for one run.

    ``memory`` is the speaker's (run_agent always gives one): the residents'
    profiles are written into its store once, and with no speaker named it
    speaks for the home's (:func:`lares_kit.memory.profiles.speaker`).

    Args:
        run: The run being set up: its home, and its episode's source.
        tools: None, or the tools its device agent uses instead of its own (the home's Lares tools, or a remote
            home's from :func:`lares_kit.serve.client.mcp_tools`; their ``ask_user`` and ``halt`` are left out:
            only the coordinator talks to the person). The coordinator's tools are always its sub-agents.
        user: Who answers the coordinator's ``ask_user`` (only the coordinator talks to the person).
        memory: The speaker's :class:`~lares_kit.memory.agent_memory.Memory`; its ``user`` is set to the home's speaker
            if empty.
        monitor: The poller the condition agent registers with; None leaves ``condition_agent`` out.
    """
    if residents(run.home):
        seed_memory(run.home, memory.store)  # the residents' profiles, once per store
    if not memory.user:
        memory.user = speaker(run.home, run.context.person)
    # Given tools are the device agent's; the coordinator keeps its sub-agents, ask_user and halt.
    device_tools = None if tools is None else [fn for fn in tools if fn.__name__ not in ("ask_user", "halt")]
    if isinstance(tools, RemoteTools):  # a remote home's tools: the home catches up first
        tools.sync(run.home)
    tree = SageTree(run, memory, monitor, device_tools=device_tools)
    box = Toolbox(run.home, tools=_tools(tree), user=user, memory=memory, monitor=monitor, source=run.episode.source)
    return box, COORDINATOR_PROMPT + (CONFIRM_PROMPT if box.safety else ""), _goal(
        memory.user, run.home, house_rules_of(box), run.context.room)


def run_sage(run: AgentRun) -> None:
    """Run the coordinator (the function-calling loop) until ``halt``, a question with no answer, or ``run.max_steps``.

    Args:
        run: The run :func:`~lares_kit.agents.run_agent` set up with :func:`sage_setup`; the request joins the
            speaker's past requests when it ends.

    Examples:
        >>> from lares_kit import load_world, run_agent
        >>> home = load_world("sage-home")
        >>> ep = run_agent("dim the lights by the fireplace to a third of their current value", home, agent="sage")
        >>> ep.status, home.devices["fireplace-strip"].state["level"]
        ('done', 30)
        >>> [s.tool for s in ep.steps]
        ['device_agent', 'halt']
    """
    memory = run.toolbox.memory
    try:
        run_function_calling(run)
    finally:
        # The request becomes a past request once it is served, not before: the preference agent must
        # not read the request it is answering as something the person "often asks about".
        memory.store.add("user", run.episode.instruction, user=memory.user, session=memory.session)
