"""One simulated home served to outside clients: its tools, what an agent may know, and its changes.

:class:`HomeService` is what ``lares serve-home`` puts behind every door
(MCP, the HTTP simulator API, MQTT). It holds the home, one
:class:`~lares_kit.tools.toolbox.Toolbox` in the chosen dialect (the Lares tools or
Home Assistant's), and the home's safety gate, which sees every call whatever
door it came through. It knows no protocol: the doors translate.

* :meth:`HomeService.call` runs one tool call and returns a :class:`CallResult`:
  the sentence the tool answered, whether it failed, and -- when the tool
  must ask the person (``ask_user``, a confirmation) -- the question, so the
  door can ask its client (MCP elicitation) and call again with the answer.
* :meth:`HomeService.knowledge` is what the agent may know (the world
  knowledge; never the hidden things), :meth:`HomeService.truth` the hidden
  truth (only ``--debug`` shows it).
* Every change to the home -- a device's state, the robot's room -- is told
  to the listeners (:meth:`HomeService.listen`): the server-sent events of
  ``GET /events`` and the MQTT state topics.

Calls may come from several threads (uvicorn's loop, the MQTT client's
thread): one lock keeps them one at a time, as in one agent's episode.

Examples:
    >>> from lares_kit import load_world
    >>> service = HomeService(load_world("lares-home"))
    >>> seen = []
    >>> stop = service.listen(seen.append)
    >>> service.call("set_light", {"light_id": "kitchen-light", "on": True}).text
    'The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit.'
    >>> seen
    [{'type': 'device', 'id': 'kitchen-light', 'room': 'kitchen', 'state': {'on': True}}]
    >>> result = service.call("ask_user", {"question": "Is it daytime?"})
    >>> result.question
    'Is it daytime?'
    >>> service.call("ask_user", {"question": "Is it daytime?"}, answer="No, it is night.").text
    'The user answered: No, it is night.'
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ..home.graph import Home
from ..run_context import RunContext
from ..safety.policy import DEFAULT_SOURCE
from ..tools.toolbox import Observation, Toolbox, default_tools
from ..tools.users import NoAnswer

__all__ = ["HomeService", "CallResult", "NeedsAnswer", "DeviceLink"]

Listener = Callable[[dict[str, Any]], None]


class DeviceLink(Protocol):
    """An outside device a world device is bound to (:mod:`lares_kit.serve.mqtt`)."""

    def send(self, device: Any, changes: dict[str, Any]) -> dict[str, Any]:
        """Send ``changes``; return the state the device reports (raise ToolError with a sentence if none)."""


class NeedsAnswer(NoAnswer):
    """Raised by the service's user when a tool asks the person and no answer came with the call."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


class _CallerAnswers:
    # The person behind the client: a tool that asks gets the answer sent with the call, else NeedsAnswer.
    def __init__(self) -> None:
        self.answer: str | None = None
        self.last: str | None = None  # the safety gate reads the last answer (a yes can confirm a change)

    def ask(self, question: str) -> str:
        if self.answer is None:
            raise NeedsAnswer(question)
        answer, self.answer = self.answer, None
        self.last = answer
        return answer


@dataclass
class CallResult:
    """What one tool call gave: the text the model reads, and the question when the person must answer first."""

    tool: str
    text: str  # the tool's sentence (an error's without the "Error: " the model reads before it)
    ok: bool = True
    final: bool = False  # the call was halt
    question: str | None = None  # set when the tool asked the person: call again with the answer
    content: str | None = None  # what a model reads (lares_kit.tools.toolbox.Observation.content); None: the text
    json_errors: bool = False  # a Home Assistant tool: its errors read as JSON

    def as_json(self) -> dict[str, Any]:
        """The ``POST /call`` answer: ``{"tool", "result", "ok"}`` (and ``"question"``), as models read it."""
        out: dict[str, Any] = {"tool": self.tool, "result": self.content or self.text, "ok": self.ok}
        if self.question is not None:
            out["question"] = self.question
        return out


class HomeService:
    """The served home: one Toolbox per source (dialect ``tool_set``), its listeners and its lock.

    ``source`` is who the clients speak for unless a call names another (a
    token of ``lares serve-home --token-for``), as ``lares run --source``: the
    home's safety policy decides from it what is refused or needs confirming.
    Each source has its own Toolbox, so its own safety gate: a question the
    gate asked one source can be answered only in that source's calls, and a
    source the policy does not trust is never asked -- its changes are refused.
    The service owns a :class:`~lares_kit.run_context.RunContext` (``context``)
    as :func:`lares_kit.run_agent` does; a call made for another source runs in
    :meth:`context_for` that source. The time is the home's one clock.
    """

    def __init__(self, home: Home, *, tool_set: str = "lares", source: str = DEFAULT_SOURCE) -> None:
        from ..agents.dialects import dialect  # the agents package imports the models

        self.home = home
        self.tool_set = dialect(tool_set).name
        self.context = RunContext(source=source)
        self._user = _CallerAnswers()
        self._tools = dialect(tool_set).tools(home)
        self.toolbox = Toolbox(home, tools=self._tools, user=self._user, source=source)
        self._toolboxes: dict[str, Toolbox] = {source: self.toolbox}  # source -> its Toolbox (and safety gate)
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        self.calls = 0  # tool calls served
        self._commanders: dict[str, Toolbox] = {}  # source -> the Lares-tools Toolbox its device commands go through
        self._bound: dict[str, DeviceLink] = {}  # device id -> the outside device it is bound to

    # ------------------------------------------------------------ reading
    @property
    def source(self) -> str:
        """Who the clients speak for unless a call names another: the service's context's ``source``."""
        return self.context.source

    def context_for(self, source: str | None) -> RunContext:
        """The context a call from ``source`` runs in (None: the service's own).

        Args:
            source: Who makes the call (the source of the caller's token), or None.
        """
        return self.context if source is None else self.context.but(source=source)

    @property
    def tool_names(self) -> list[str]:
        return self.toolbox.names

    def schemas(self) -> list[dict[str, Any]]:
        """The tools' OpenAI ``tools`` entries (name, description, JSON schema of the arguments)."""
        return self.toolbox.schemas()

    def knowledge(self) -> dict[str, Any]:
        """What an agent may know of the home now (:meth:`lares_kit.home.graph.Home.knowledge`): no hidden things."""
        with self._lock:
            return self.home.knowledge()

    def truth(self) -> dict[str, Any]:
        """Everything, hidden things included (:meth:`lares_kit.home.graph.Home.truth`): for ``--debug`` only."""
        with self._lock:
            return self.home.truth()

    # ------------------------------------------------------------ calling
    def call(self, name: str, arguments: str | dict[str, Any] | None, *, answer: str | None = None,
             source: str | None = None) -> CallResult:
        """Run one tool call through the source's Toolbox (and its safety gate); tell the listeners what changed.

        Args:
            name: The tool's name.
            arguments: Its arguments, a dict or JSON text.
            answer: The person's answer to the question a previous call returned (``CallResult.question``).
            source: Who makes the call (the source of the caller's token); None: the service's own source.
        """
        with self._lock:
            who = self.context_for(source).source
            box = self._toolboxes.get(who)
            if box is None:
                box = self._toolboxes[who] = Toolbox(self.home, tools=self._tools, user=self._user, source=who)
            return self._run(box, name, arguments, answer)

    def _run(self, box: Toolbox, name: str, arguments: str | dict[str, Any] | None, answer: str | None) -> CallResult:
        with self._lock:
            home = self.home
            robot_before = home.robot.room
            home.mark_changes()
            self._user.answer = answer
            time_before = home.time
            try:
                obs: Observation = box.dispatch(name, arguments)
            except NeedsAnswer as need:  # nothing happened: the call comes again with the answer
                home.time = time_before
                return CallResult(name, f"The person must answer first: {need.question}", ok=False,
                                  question=need.question)
            except NoAnswer:  # pragma: no cover - the service's user raises only NeedsAnswer
                return CallResult(name, "The person gave no answer.", ok=False)
            finally:
                self._user.answer = None
                changed = home.changes_since_mark()
            self.calls += 1
            changed = {dev_id: old for dev_id, old in changed.items() if home.devices[dev_id].state != old}
            failed = self._send_to_bound(changed)
            if failed:
                obs = Observation(name, obs.arguments, failed, ok=False, json_errors=obs.json_errors)
            events = [self._device_event(dev_id) for dev_id, old in changed.items()
                      if home.devices[dev_id].state != old]
            if home.robot.room != robot_before:
                events.append({"type": "robot", "id": home.robot.id, "room": home.robot.room})
        for event in events:
            self.notify(event)
        return CallResult(name, obs.text, ok=obs.ok, final=obs.final, content=obs.content,
                          json_errors=obs.json_errors)

    def command(self, device_id: str, update: dict[str, Any], *, source: str) -> CallResult:
        """Change a device as a command from outside the agents (an MQTT command topic) asks, through the tools.

        The change goes through the Lares tools (``set_light`` for a light's
        ``on``, else ``set_device`` per attribute) of a Toolbox whose source is
        ``source``, so the home's safety policy judges it like any call.

        Args:
            device_id: The device.
            update: Attribute -> new value, e.g. ``{"on": True}`` or ``{"position": 40}``.
            source: Who sends it, for the safety policy (``"mqtt"``).
        """
        with self._lock:
            if source not in self._commanders:
                from ..tools.device_tools import DEVICE_TOOLS

                tools = default_tools(self.home)
                tools += [fn for fn in DEVICE_TOOLS if fn not in tools]
                self._commanders[source] = Toolbox(self.home, tools=tools, source=source, block_repeats=False)
            box = self._commanders[source]
            device = self.home.devices.get(device_id)
            if device is None:
                return CallResult("set_device", f"There is no device {device_id!r}.", ok=False)
            result = CallResult("set_device", f"Nothing to change on {device_id}.")
            for attribute, value in update.items():
                if device.type == "light" and attribute == "on":
                    name, args = "set_light", {"light_id": device_id, "on": bool(value)}
                else:
                    name, args = "set_device", {"device_id": device_id, "attribute": attribute, "value": value}
                result = self._run(box, name, args, None)
                if not result.ok:
                    break
            return result

    def episode(self, work: Callable[[Home], Any]) -> Any:
        """Run ``work(home)`` -- a whole agent episode in the served home -- alone; tell the listeners what changed.

        A door that runs an agent itself (the Wyoming door's intent handling)
        runs it here: one episode at a time with the other doors' calls, and
        every change it makes is told to the event stream and MQTT, and sent on
        to bound devices, as a tool call's would be.

        Args:
            work: What to run; it gets the home and returns what it returns.
        """
        with self._lock:
            home = self.home
            before = {dev_id: dict(dev.state) for dev_id, dev in home.devices.items()}
            robot_before = home.robot.room
            try:
                return work(home)
            finally:
                changed = {dev_id: old for dev_id, old in before.items() if home.devices[dev_id].state != old}
                self.calls += 1
                self._send_to_bound(changed)
                events = [self._device_event(dev_id) for dev_id, old in changed.items()
                          if home.devices[dev_id].state != old]
                if home.robot.room != robot_before:
                    events.append({"type": "robot", "id": home.robot.id, "room": home.robot.room})
                for event in events:  # under the lock: the next episode's changes come after these
                    self.notify(event)

    # ------------------------------------------------------------ bound devices
    def bind(self, device_id: str, link: DeviceLink) -> None:
        """Bind a device to an outside one: the tools' changes to it go to ``link``, its state comes from it.

        ``link.send(device, changes)`` gets the new values the tool set, and
        returns the state the outside device reported, or raises
        :class:`~lares_kit.errors.ToolError` with a sentence (no answer in
        time). :meth:`apply_state` takes what it reports later.
        """
        self._bound[device_id] = link

    def unbind(self, device_id: str) -> None:
        """Let the simulation hold the device again (the outside device's door has closed)."""
        self._bound.pop(device_id, None)

    def _send_to_bound(self, changed: dict[str, dict[str, Any]]) -> str:
        # The tool changed bound devices in the simulation: put them back, send the change, take what they report.
        from ..errors import ToolError

        for dev_id, old in changed.items():
            link = self._bound.get(dev_id)
            if link is None:
                continue
            device = self.home.devices[dev_id]
            wanted = {k: v for k, v in device.state.items() if old.get(k) != v}
            device.state = dict(old)
            try:
                reported = link.send(device, wanted)
            except ToolError as exc:
                return str(exc)
            self.home.update_device(dev_id, reported)
        return ""

    def apply_state(self, device_id: str, update: dict[str, Any]) -> None:
        """Set a device's state from outside the agent's tools (an external MQTT device reported it)."""
        with self._lock:
            before = dict(self.home.devices[device_id].state)
            self.home.update_device(device_id, update)
            changed = self.home.devices[device_id].state != before
            event = self._device_event(device_id)
        if changed:
            self.notify(event)

    def _device_event(self, device_id: str) -> dict[str, Any]:
        device = self.home.devices[device_id]
        return {"type": "device", "id": device_id, "room": device.room, "state": dict(device.state)}

    # ------------------------------------------------------------ listening
    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` on every change; returns the function that stops it.

        An event is ``{"type": "device", "id", "room", "state"}`` or ``{"type": "robot", "id", "room"}``.
        Hidden things (where the dog is) are never told.
        """
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def notify(self, event: dict[str, Any]) -> None:
        for listener in list(self._listeners):
            listener(event)
