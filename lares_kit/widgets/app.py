"""AgentApp: the Lares demo UI as one widget -- the home on the left, the agent on the right.

Taught in ``notebooks/app.ipynb`` (serve it as a page with ``voila
notebooks/app.ipynb``). Left: the :class:`~lares_kit.widgets.homemap.HomeMap`,
showing the truth, hidden things included, as the Lares UI does. Right: an
instruction box, example instructions, a run button, the tool calls
remaining, the agent's question when it asks one, and the transcript,
newest first.

The app runs no agent of its own: it is given a *runner*, a function with
:func:`lares_kit.run_agent`'s call shape (``AgentApp(runner=run_agent)``), and
calls it as any other caller would. So this module never imports the agents,
and a learner can hand it their own loop.

How asking works in a live kernel: the runner runs in a worker thread. When it calls
``ask_user``, :class:`PageUser` shows the question and the worker waits;
the kernel itself stays free, so the click on "Answer" reaches it, and the
worker goes on with the answer. "No answer" ends the episode with the status
``no_answer``, as a terminal user pressing Enter would.

While the agent runs, the transcript shows the history the model has been
sent so far (read from each request); when it ends, the Episode's steps.
"""

from __future__ import annotations

import base64
import html
import io
import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..episode import Episode
from ..errors import LaresError
from ..home.graph import Home
from ..tools.users import NoAnswer
from .homemap import HomeMap

__all__ = ["AgentApp", "PageUser", "Runner", "EXAMPLES", "NO_RUNNER"]

# The example instructions of the Lares UI, and the daytime scenario of its write-up.
EXAMPLES = [
    "turn on the light in the kitchen",
    "turn off all the lights",
    "turn on the light for sally",
    "turn on the light for my dog",
    "find my dog",
    "set the office light depending on whether it's daytime",
]


_LIST = "list-style:none;padding-left:0;line-height:1.35"  # entries carry their step number
NO_RUNNER = "This app has no runner: build it with AgentApp(runner=run_agent) (from lares_kit import run_agent)."


class PageUser:
    """The person looking at the page. ``ask`` shows the question and waits for :meth:`answer`.

    ``ask`` runs in the agent's worker thread; ``answer`` comes from a button
    click in the kernel's main thread. ``answer(None)`` -- or no answer
    within ``timeout`` seconds -- is no answer.

    Examples:
        >>> import threading
        >>> user = PageUser(show=lambda question: threading.Thread(target=user.answer, args=["Yes, sunny."]).start())
        >>> user.ask("Is it daytime?")
        'Yes, sunny.'
    """

    def __init__(self, show: Callable[[str], None], timeout: float = 600.0) -> None:
        self.show = show  # called with the question, in the worker thread
        self.timeout = timeout
        self.question: str | None = None  # the question waiting for an answer, if any
        self._answer: str | None = None
        self._answered = threading.Event()

    def ask(self, question: str) -> str:
        self._answered.clear()
        self._answer = None
        self.show(question)
        self.question = question  # set once the question is on show
        answered = self._answered.wait(self.timeout)
        self.question = None
        if not answered or not self._answer:
            raise NoAnswer("the person at the page gave no answer")
        return self._answer

    def answer(self, text: str | None) -> None:
        self._answer = (text or "").strip() or None
        self._answered.set()


class Runner(Protocol):
    """What runs an instruction for the app: :func:`lares_kit.run_agent`, or any function called the same way.

    The app calls it in a worker thread as ``runner(instruction, home,
    agent=..., model=..., client=..., knowledge=..., user=..., max_steps=...)``
    and shows the Episode it returns. ``model`` is a resolved model name,
    ``client`` the app's client (it watches each request to show progress),
    ``knowledge`` a knowledge mode or None (the design's own: the app's text
    form says ``knowledge default`` until a run shows which mode it took),
    ``user`` the page's :class:`PageUser`.
    """

    def __call__(self, instruction: str, home: Home, *, agent: str, model: str, client: Any, knowledge: str | None,
                 user: PageUser, max_steps: int) -> Episode: ...


class _WatchedClient:
    # Passes every request to the real client, after telling the app what it holds.
    def __init__(self, client: Any, on_request: Callable[[dict[str, Any]], None]) -> None:
        self._client, self._on_request = client, on_request
        self.chat = self
        self.completions = self

    def create(self, **request: Any) -> Any:
        self._on_request(request)
        return self._client.chat.completions.create(**request)


def _history_html(messages: list[dict[str, Any]]) -> list[str]:
    # The model's view while it runs: everything after the user's instruction.
    start = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
    items = []
    for m in messages[start + 1:]:
        if m.get("role") == "assistant" and m.get("content"):
            items.append(f"<i>thinks</i> {html.escape(str(m['content']))}")
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            items.append(f"<code>{html.escape(fn.get('name', '?'))}"
                         f"({html.escape(str(fn.get('arguments', '')))})</code>")
        if m.get("role") == "tool":
            items.append(html.escape(str(m.get("content", ""))))
    return [f'<li class="lares-step" data-kind="live">{item}</li>' for item in items]


class AgentApp:
    """The Lares demo UI. ``app.widget`` is the whole thing; display ``app`` in a notebook.

    ``runner`` runs each instruction (:class:`Runner`; usually
    :func:`lares_kit.run_agent`); without one the app shows the home and says
    it cannot run. For scripts and tests: :meth:`run` starts an instruction,
    :meth:`answer` answers a question, :meth:`wait` returns the Episode.

    Args:
        home: The home to show and act in; None: ``lares-home``.
        runner: What runs each instruction, e.g. :func:`lares_kit.run_agent`; None: the app only shows the home.
        agent: The design the runner is asked for, e.g. ``"intent-action"`` or ``"sage"``.
        model: A model name (``"offline"``, ``"gpt-4o-mini"``...); None: ``$LARES_MODEL``, else the offline model.
        knowledge: The knowledge mode (``latest``, ``initial``, ``none``); None: the design's own (sage's is
            ``none``, the others' ``latest``).
        max_steps: The most tool calls a run may make.
        examples: The example instructions shown as buttons; None: :data:`EXAMPLES`.
        client: An ``openai.OpenAI``-like client to use; None: ``make_client(model)`` for each run.

    Examples:
        >>> from lares_kit import run_agent
        >>> app = AgentApp(runner=run_agent)
        >>> app._repr_mimebundle_()["text/plain"]  # what a notebook shows as its text
        "<AgentApp on 'lares-home': agent intent-action, knowledge default>"
        >>> app.remaining.value
        '<b>20</b> tool calls remaining'
        >>> app.run("turn on the light in the kitchen") is not None, app.wait().status
        (True, 'done')
        >>> app._repr_mimebundle_()["text/plain"]  # the design's own mode, as the run took it
        "<AgentApp on 'lares-home': agent intent-action, knowledge latest>"
        >>> AgentApp(runner="run_agent")
        Traceback (most recent call last):
        ...
        lares_kit.errors.LaresError: runner must be a function such as lares_kit.run_agent, not the str 'run_agent'
    """

    def __init__(self, home: Home | None = None, *, runner: Runner | None = None, agent: str = "intent-action",
                 model: str | None = None, knowledge: str | None = None, max_steps: int = 20,
                 examples: list[str] | None = None, client: Any = None) -> None:
        import ipywidgets as w

        if runner is not None and not callable(runner):
            raise LaresError(f"runner must be a function such as lares_kit.run_agent, not the "
                             f"{type(runner).__name__} {runner!r}")
        self.runner = runner
        if home is None:
            from ..home.worlds import load_world

            home = load_world("lares-home")
        self.home, self.agent, self.model, self.knowledge = home, agent, model, knowledge
        self.max_steps, self.client = max_steps, client
        self.episode: Episode | None = None
        self.user = PageUser(show=self._show_question)
        self._thread: threading.Thread | None = None

        self.map = HomeMap(home, god_view=True)  # the page shows the truth, as the Lares UI does
        self.instruction = w.Text(placeholder="Tell Lares what to do", layout=w.Layout(width="96%"))
        self.run_button = w.Button(description="Run", button_style="primary", icon="play")
        self.reset_button = w.Button(description="Reset home", icon="undo")
        self.examples = [w.Button(description=text, layout=w.Layout(width="auto")) for text in (examples or EXAMPLES)]
        self.remaining = w.HTML()
        self.status = w.HTML()
        self.question = w.HTML()
        self.answer_box = w.Text(placeholder="Your answer", layout=w.Layout(width="60%"))
        self.answer_button = w.Button(description="Answer", button_style="warning")
        self.no_answer_button = w.Button(description="No answer")
        self.ask_panel = w.VBox([self.question, w.HBox([self.answer_box, self.answer_button, self.no_answer_button])],
                                layout=w.Layout(display="none", border="2px solid #f0a500", padding="6px"))
        self.transcript = w.HTML()

        for button in self.examples:
            button.on_click(lambda b: setattr(self.instruction, "value", b.description))
        self.run_button.on_click(lambda b: self.run())
        self.reset_button.on_click(lambda b: self.reset())
        self.answer_button.on_click(lambda b: self.answer(self.answer_box.value))
        self.no_answer_button.on_click(lambda b: self.answer(None))

        right = w.VBox([w.HTML("<b>Instruction</b>"), self.instruction,
                        w.Box(self.examples, layout=w.Layout(flex_flow="row wrap")),
                        w.HBox([self.run_button, self.reset_button, self.remaining]),
                        self.status, self.ask_panel, w.HTML("<b>Transcript</b> (newest first)"), self.transcript],
                       layout=w.Layout(width="50%", padding="0 0 0 12px"))
        self.widget = w.HBox([w.VBox([self.map.widget], layout=w.Layout(width="50%")), right])
        self._set_remaining(max_steps)

    # ---------------------------------------------------------------- actions
    def run(self, instruction: str | None = None) -> threading.Thread | None:
        """Start the runner on ``instruction`` (default: the box's text) in a worker thread.

        Returns the thread, or None when nothing started: no text, a run
        already going, or no runner (the status line then says so).
        """
        text = (instruction if instruction is not None else self.instruction.value).strip()
        if not text or self.running:
            return None
        if self.runner is None:
            self.status.value = f'<span style="color:#b00020">{html.escape(NO_RUNNER)}</span>'
            return None
        self.instruction.value = text
        self.run_button.disabled = True
        self.status.value = f"<i>running: {html.escape(text)}</i>"
        self.transcript.value = ""
        self._set_remaining(self.max_steps)
        self._thread = threading.Thread(target=self._work, args=(text,), daemon=True, name="lares-agent")
        self._thread.start()
        return self._thread

    def answer(self, text: str | None) -> None:
        """Answer the agent's pending question (None: no answer)."""
        self.ask_panel.layout.display = "none"
        self.answer_box.value = ""
        self.user.answer(text)

    def wait(self, timeout: float = 60.0) -> Episode | None:
        """Block until the current run ends; return its Episode. Not for a run that will ask: answer first."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self.episode

    def reset(self) -> None:
        """Put the home back to its start and clear the transcript."""
        if self.running:
            return
        self.home.reset()
        self.episode = None
        self.transcript.value = self.status.value = ""
        self._set_remaining(self.max_steps)
        self.map.refresh()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def pending_question(self) -> str | None:
        """The question the agent is waiting on, if any."""
        return self.user.question

    # ------------------------------------------------------------ the worker
    def _work(self, text: str) -> None:
        from ..models import make_client, resolve_model  # openai loads only when a run starts

        assert self.runner is not None  # run() starts no worker without one
        try:
            name = resolve_model(self.model)
            client = _WatchedClient(self.client or make_client(name), self._progress)
            self.episode = self.runner(text, self.home, agent=self.agent, model=name, client=client,
                                       knowledge=self.knowledge, user=self.user, max_steps=self.max_steps)
            self._show_episode(self.episode)
        except Exception as exc:  # noqa: BLE001 -- shown in the page: a worker thread has nobody else to tell
            self.status.value = (f'<span style="color:#b00020">{html.escape(type(exc).__name__)}: '
                                 f'{html.escape(str(exc))}</span>')
        finally:
            self.ask_panel.layout.display = "none"
            self.run_button.disabled = False
            self.map.refresh()

    def _progress(self, request: dict[str, Any]) -> None:
        messages = request.get("messages", [])
        calls = sum(1 for m in messages if m.get("role") == "tool")
        self._set_remaining(self.max_steps - calls)
        self.transcript.value = (f'<ul class="lares-transcript" style="{_LIST}">'
                                 f'{"".join(reversed(_history_html(messages)))}</ul>')
        self.map.refresh()

    def _show_question(self, question: str) -> None:
        self.question.value = f'<b>Lares asks:</b> <span class="lares-question">{html.escape(question)}</span>'
        self.ask_panel.layout.display = "flex"
        self.map.refresh()

    def _show_episode(self, episode: Episode) -> None:
        entries = "".join(s.render_html() for s in reversed(episode.steps))
        self.transcript.value = f'<ul class="lares-transcript" style="{_LIST}">{entries}</ul>'
        self._set_remaining(self.max_steps - len(episode.tool_calls))
        said = html.escape(episode.final_message)
        self.status.value = (f'<div class="lares-status" data-status="{episode.status}">'
                             f"<b>{episode.status}</b>: {said}</div>")

    def _set_remaining(self, n: int) -> None:
        self.remaining.value = f"<b>{max(n, 0)}</b> tool calls remaining"

    def picture(self) -> Any:
        """The whole app as a matplotlib Figure: map, instruction, status and transcript (:mod:`.snapshot`).

        Examples:
            >>> AgentApp().picture().texts[0].get_text().startswith("A picture of the app")
            True
        """
        from .snapshot import app_picture

        return app_picture(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The live app, plus a picture of the whole app for static viewers (GitHub, no kernel).
        bundle = self.widget._repr_mimebundle_(**kwargs)
        buffer = io.BytesIO()
        self.picture().savefig(buffer, format="png")
        bundle["image/png"] = base64.b64encode(buffer.getvalue()).decode("ascii")
        bundle["text/plain"] = f"<AgentApp on {self.home.id!r}: agent {self.agent}, knowledge {self._knowledge_name()}>"
        return bundle

    def _knowledge_name(self) -> str:
        # The mode the runner is given; for None (the design's own), the one the last run took, once there is one.
        if self.knowledge is not None:
            return self.knowledge
        return self.episode.knowledge if self.episode is not None and self.episode.knowledge else "default"
