"""Widgets: the drawing, HomeMap, SearchReplay and AgentApp, driven without a browser.

The agent runs use the scripted fake client (tests/fakes.py), so these tests
pin the widgets, not the offline model's choices.
"""

from __future__ import annotations

import subprocess
import sys
import time
from itertools import combinations

import pytest
from fakes import FakeClient, call, decide
from matplotlib.colors import to_hex

from lares_kit import load_world, run_agent
from lares_kit.episode import Episode
from lares_kit.tools.users import ScriptedUser
from lares_kit.widgets import describe_home, draw_home, render_png, room_layout
from lares_kit.widgets.app import AgentApp
from lares_kit.widgets.drawing import DARK, LIT
from lares_kit.widgets.homemap import HomeMap
from lares_kit.widgets.layout import box_size
from lares_kit.widgets.replay import SearchReplay, draw_frames, replay_frames

WORLDS = ["lares-home", "garden-flat", "townhouse"]

# The dog search as Lares's write-up tells it: try the kitchen, dark, light on,
# look, nothing; back, bedroom, dark, light on, look: Bruno; halt.
DOG_SEARCH = [
    ("move_robot", {"destination_room_id": "kitchen"}),
    ("look_with_robot", {}),
    ("set_light", {"light_id": "kitchen-light", "on": True}),
    ("look_with_robot", {}),
    ("move_robot", {"destination_room_id": "hallway"}),
    ("move_robot", {"destination_room_id": "bedroom"}),
    ("set_light", {"light_id": "bedroom-light", "on": True}),
    ("look_with_robot", {}),
    ("halt", {"message_to_user": "Bruno is in the bedroom; its light is on now."}),
]


def _script(calls):
    replies = []
    for name, args in calls:
        replies += [decide(name, f"Next: {name}."), call(name, **args)]
    return replies


@pytest.fixture
def dog_episode() -> Episode:
    home = load_world("lares-home")
    return run_agent("turn on the light for my dog", home, model="fake", client=FakeClient(_script(DOG_SEARCH)))


def _room_colours(fig) -> list[str]:
    return [to_hex(p.get_facecolor()) for p in fig.axes[0].patches if type(p).__name__ == "FancyBboxPatch"]


# ----------------------------------------------------------------- drawing
def test_importing_the_package_loads_no_drawing_or_widget_library():
    code = "import sys, lares_kit; print(sorted(m for m in ('matplotlib', 'ipywidgets', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("world", WORLDS)
def test_layout_is_stable_and_rooms_never_overlap(world):
    home = load_world(world)
    pos = room_layout(home)
    assert pos == room_layout(load_world(world)) and set(pos) == set(home.graph.nodes)
    width, height = box_size(pos)
    for (a, pa), (b, pb) in combinations(pos.items(), 2):
        assert abs(pa[0] - pb[0]) >= width or abs(pa[1] - pb[1]) >= height, f"{a} overlaps {b}"


def test_a_layout_in_the_world_file_wins():
    home = load_world("lares-home")
    home.extra["layout"] = {room: [i, 0] for i, room in enumerate(home.graph.nodes)}
    assert room_layout(home)["office"] == (4.0, 0.0)


def test_rooms_are_filled_by_light():
    home = load_world("lares-home")
    assert _room_colours(draw_home(home)).count(LIT) == 1  # only the hallway
    home.update_device("bedroom-light", {"on": True})
    colours = _room_colours(draw_home(home))
    assert colours.count(LIT) == 2 and colours.count(DARK) == 3


def test_hidden_things_show_only_in_god_view():
    home = load_world("lares-home")
    def texts(fig):
        return " ".join(t.get_text() for t in fig.axes[0].texts)

    assert "Bruno" not in texts(draw_home(home))
    assert "Bruno (dog) hidden" in texts(draw_home(home, god_view=True))
    assert "Hidden: Bruno (dog) in Bedroom" in describe_home(home, god_view=True)


def test_render_png_is_a_picture_of_a_sensible_size():
    png = render_png(load_world("townhouse"), god_view=True, path=["hall", "stairs", "landing"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and 20_000 < len(png) < 400_000


# ------------------------------------------------------- readable pictures
# Every word is drawn inside its room, nothing runs off the figure, and a strip of maps has one
# legend that covers no map: checked on the rendered figure (window extents), in every world and
# in a generated building too big for labels.
BIG = "generated-40"


def _home(world: str):
    if world == BIG:
        from lares_kit.home.generator import generate_home

        return generate_home(rooms=40, devices=80, seed=1)
    return load_world(world)


def _rendered(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _extent(artist, renderer):
    from matplotlib.transforms import Bbox

    box = artist.get_window_extent(renderer)
    patch = artist.get_bbox_patch() if hasattr(artist, "get_bbox_patch") else None
    return Bbox.union([box, patch.get_window_extent(renderer)]) if patch is not None else box


def _inside(inner, outer, slack=1.0) -> bool:
    return (inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack and inner.y0 >= outer.y0 - slack
            and inner.y1 <= outer.y1 + slack)


def _spills(fig) -> list[str]:
    """Names, labels and marks that are not inside their room's box."""
    renderer = _rendered(fig)
    out = []
    for ax in fig.axes:
        rooms = {p.get_gid()[5:]: p.get_window_extent(renderer) for p in ax.patches
                 if (p.get_gid() or "").startswith("room:")}
        for artist in [*ax.texts, *ax.lines]:
            kind, _, rest = (artist.get_gid() or "").partition(":")
            if kind in ("name", "label", "mark") and not _inside(_extent(artist, renderer), rooms[rest.split(":")[0]]):
                what = artist.get_text() if hasattr(artist, "get_text") else rest
                out.append(f"{kind} {what!r} spills out of {rest}")
    return out


def _clipped(fig) -> list[str]:
    """Texts that run off the figure's edges."""
    renderer = _rendered(fig)
    page = fig.bbox
    texts = [*fig.texts, *(t for ax in fig.axes for t in [*ax.texts, ax.title])]
    out = [t.get_text() for t in texts if t.get_text() and not _inside(_extent(t, renderer), page)]
    return out + [f"legend of {len(fig.legends)}" for lg in fig.legends
                  if not _inside(lg.get_window_extent(renderer), page)]


def _busy_frames(home) -> list:
    """Three frames that crowd the labels: start, a walk across the home, every thing seen in one room."""
    from lares_kit.widgets.replay import Frame

    truth = home.truth()
    start = home.robot.room
    far = max(home.graph.nodes, key=lambda r: (len(home.route(start, r)), r))
    walk = home.route(start, far)
    seen_all = {i: {"room": far, "time": 1} for i in truth["items"]}
    crowded = {**truth, "robot": far, "items": {i: {**it, "room": far} for i, it in truth["items"].items()}}
    caption = "move_robot(destination_room_id=\"" + far + "\") -> " + "The robot moved on and it is dark there. " * 4
    return [Frame(0, truth, {}, [start], "start: 'find everything in the house, please, and be quick about it'"),
            Frame(1, {**truth, "robot": far}, {}, walk, caption),
            Frame(2, crowded, seen_all, walk, "look_with_robot() -> " + "Also here: many things. " * 6)]


@pytest.mark.parametrize("world", [*WORLDS, "smart-building", "shared-house", "sage-home", BIG])
def test_every_word_stays_inside_its_room_and_on_the_page(world):
    home = _home(world)
    single = draw_home(home, god_view=True, path=list(home.graph.nodes)[:3], title=f"{home.name}: god view")
    strip = draw_frames(home, _busy_frames(home), god_view=True)
    for fig in (single, strip):
        assert _spills(fig) == [] and _clipped(fig) == []


@pytest.mark.parametrize("world", [*WORLDS, "smart-building", BIG])
def test_a_strip_has_one_legend_that_covers_no_map(world):
    home = _home(world)
    fig = draw_frames(home, _busy_frames(home), god_view=True)
    renderer = _rendered(fig)
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    legend = fig.legends[0].get_window_extent(renderer)
    assert not any(legend.overlaps(ax.get_window_extent(renderer)) for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["lit", "dark", "robot", "seen by the robot", "hidden (god view)", "robot's path"]


def test_strip_captions_are_whole_words_over_their_own_map():
    home = load_world("lares-home")
    frames = _busy_frames(home)
    fig = draw_frames(home, frames)
    renderer = _rendered(fig)
    captions = {t.get_gid(): t for ax in fig.axes for t in ax.texts if (t.get_gid() or "").startswith("caption:")}
    assert len(captions) == 3
    for ax, frame in zip(fig.axes, frames):
        text = captions[f"caption:{frame.step}"]
        box = text.get_window_extent(renderer)
        panel = ax.get_window_extent(renderer)
        assert panel.x0 - 6 <= box.x0 and box.x1 <= panel.x1 + 6  # as wide as its map, no wider
        assert not any(box.overlaps(other.get_window_extent(renderer)) for other in fig.axes)
        shown = text.get_text().replace("\n", " ")
        full = " ".join(f"step {frame.step}: {frame.caption}".split())
        if shown != full:  # shortened: whole words, then an ellipsis
            kept = shown.removesuffix("\u2026")
            assert shown.endswith("\u2026") and full.startswith(kept) and full[len(kept)] == " "


def test_a_wide_home_wraps_its_strip_instead_of_shrinking_it():
    from lares_kit.widgets.replay import strip_shape

    assert strip_shape(load_world("lares-home"), 3)[0] == 3
    per_row, scale = strip_shape(load_world("smart-building"), 3)
    assert per_row == 2 and scale >= 0.5
    building = load_world("smart-building")
    fig = draw_frames(building, _busy_frames(building)[:2])
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 1  # two maps, one row
    fig = draw_frames(building, _busy_frames(building))
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) >= 2  # three maps: they wrap


def test_a_crowded_room_gets_bigger_maps_rather_than_dots():
    home = load_world("lares-home")
    frames = _busy_frames(home)  # the last frame has the robot and every thing in one room
    fig = draw_frames(home, frames)
    assert len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 2  # two maps a row, not three
    assert not any((line.get_gid() or "").startswith("mark:") for ax in fig.axes for line in ax.lines)
    assert "robot" in [t.get_text() for t in fig.axes[2].texts]


def test_labels_give_way_to_short_names_then_marks_as_boxes_shrink():
    from lares_kit.widgets.layout import plan_labels, room_labels

    home = load_world("lares-home")
    labels = room_labels(home, home.truth(), {}, god_view=True)
    modes = [plan_labels(home, labels, box).mode for box in [(130, 90), (70, 60), (40, 18)]]
    assert modes == ["full", "short", "marks"]
    fig = draw_home(_home(BIG), god_view=True)
    marks = {line.get_gid() for line in fig.axes[0].lines if (line.get_gid() or "").startswith("mark:")}
    assert any(gid.endswith(":robot") for gid in marks) and any(gid.endswith(":hidden") for gid in marks)


# ----------------------------------------------------------------- HomeMap
def test_home_map_redraws_the_live_home_and_toggles_god_view():
    home = load_world("lares-home")
    live = HomeMap(home)
    assert "Hidden" not in live.describe()
    live.god_view.value = True  # what the checkbox does
    assert "Hidden: Bruno (dog) in Bedroom" in live.describe()
    home.update_device("office-light", {"on": True})
    live.refresh()
    assert 'data-room="office" data-lit="true"' in live.words.value
    bundle = live._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["image/png"].startswith("iVBOR")


# ------------------------------------------------------------------ replay
def test_replay_frames_follow_the_search(dog_episode):
    frames = replay_frames(dog_episode)
    assert len(frames) == len(dog_episode.tool_calls) + 1
    assert frames[0].state == {k: dog_episode.initial_state[k] for k in frames[0].state}
    assert frames[-1].path == ["hallway", "kitchen", "hallway", "bedroom"]
    assert frames[2].caption.startswith("look_with_robot() -> Error: It's too dark")
    assert frames[2].thought == "Next: look_with_robot."
    assert "bruno" not in frames[7].seen and frames[8].seen["bruno"]["room"] == "bedroom"
    assert frames[-1].state["devices"]["bedroom-light"] == {"on": True}
    assert frames[-1].caption.startswith("halts: Bruno is in the bedroom")


def test_replay_works_from_a_saved_episode(dog_episode, tmp_path):
    loaded = Episode.load(dog_episode.save(tmp_path / "dog.json"))
    assert [f.path for f in replay_frames(loaded)] == [f.path for f in replay_frames(dog_episode)]


def test_search_replay_slider_redraws_map_and_caption(dog_episode):
    replay = SearchReplay(dog_episode)
    assert replay.slider.max == 9
    replay.slider.value = 8  # what dragging the slider does
    assert "Bruno (dog) in Bedroom" in replay.map.describe()
    assert 'data-room="bedroom" data-lit="true"' in replay.map.words.value
    assert "look_with_robot()" in replay.caption.value
    replay.slider.value = 1
    assert "Robot: Kitchen." in replay.map.describe() and "Seen: nothing yet." in replay.map.describe()
    assert len(replay.figure([0, 4, 8]).axes) == 3


# --------------------------------------------------------------------- app
def _wait_for(condition, seconds=10.0):
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_app_runs_an_instruction_and_shows_it():
    script = _script([("set_light", {"light_id": "kitchen-light", "on": True}),
                      ("halt", {"message_to_user": "The kitchen light is on."})])
    app = AgentApp(runner=run_agent, client=FakeClient(script))
    app.instruction.value = "turn on the light in the kitchen"
    app.run_button.click()  # what the page does
    episode = app.wait()
    assert episode.status == "done" and not app.running
    assert 'data-room="kitchen" data-lit="true"' in app.map.words.value
    assert app.transcript.value.index("halts") < app.transcript.value.index("set_light")  # newest first
    assert app.remaining.value == "<b>18</b> tool calls remaining"
    assert 'data-status="done"' in app.status.value


def test_the_saved_app_is_a_picture_of_the_whole_app_after_its_run():
    from lares_kit.widgets.snapshot import PICTURE_NOTE

    script = _script([("set_light", {"light_id": "kitchen-light", "on": True}),
                      ("halt", {"message_to_user": "The kitchen light is on."})])
    app = AgentApp(runner=run_agent, client=FakeClient(script))
    app.run("turn on the light in the kitchen")
    app.wait()
    fig = app.picture()
    words = [t.get_text() for t in fig.texts]
    assert words[0] == PICTURE_NOTE and "turn on the light in the kitchen" in words
    assert "done: The kitchen light is on." in words and any("18 tool calls remaining" in w for w in words)
    transcript = words[words.index("Transcript (newest first)") + 1:]
    assert transcript[0].startswith("2 halts") and any(w.startswith("1 set_light(") for w in transcript)
    assert len(fig.axes) == 1 and _spills(fig) == [] and _clipped(fig) == []
    assert "robot's path" not in [t.get_text() for t in fig.legends[0].get_texts()]  # the robot never moved
    bundle = app._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and bundle["image/png"].startswith("iVBOR")
    assert len(bundle["image/png"]) > len(app.map._repr_mimebundle_()["image/png"])  # more than the map


def test_app_waits_for_the_answer_without_blocking_the_caller():
    script = _script([("ask_user", {"question": "Is it daytime?"}),
                      ("set_light", {"light_id": "office-light", "on": False}),
                      ("halt", {"message_to_user": "It's daytime, so I left the office light off."})])
    app = AgentApp(runner=run_agent, client=FakeClient(script))
    app.run("set the office light depending on whether it's daytime")
    _wait_for(lambda: app.pending_question is not None)
    assert app.running and app.ask_panel.layout.display == "flex"
    assert "Is it daytime?" in app.question.value
    app.answer_box.value = "Yes, it's sunny."
    app.answer_button.click()
    episode = app.wait()
    assert episode.status == "done" and episode.steps[1].answer == "Yes, it's sunny."
    assert app.ask_panel.layout.display == "none"


def test_app_no_answer_ends_the_episode():
    app = AgentApp(runner=run_agent, client=FakeClient(_script([("ask_user", {"question": "Is it daytime?"})])))
    app.run("set the office light depending on whether it's daytime")
    _wait_for(lambda: app.pending_question is not None)
    app.no_answer_button.click()
    assert app.wait().status == "no_answer"


def test_app_shows_a_failure_in_the_page():
    app = AgentApp(runner=run_agent, agent="telepathy", client=FakeClient([]))
    app.run("anything")
    app.wait()
    assert "unknown agent" in app.status.value and not app.run_button.disabled


def test_app_calls_its_runner_with_run_agents_call_shape():
    # A learner's own loop can drive the app: it is called like run_agent and returns an Episode.
    calls = []

    def my_runner(instruction, home, *, agent, model, client, knowledge, user, max_steps):
        calls.append((instruction, agent, model, knowledge, max_steps, user is app.user))
        return run_agent(instruction, home, agent=agent, model=model, client=client, knowledge=knowledge,
                         user=user, max_steps=max_steps)

    script = [call("set_light", light_id="kitchen-light", on=True), call("halt", message_to_user="On.")]
    app = AgentApp(runner=my_runner, agent="function-calling", knowledge="initial", max_steps=5,
                   model="fake", client=FakeClient(script))
    app.run("turn on the light in the kitchen")
    assert app.wait().status == "done"
    assert calls == [("turn on the light in the kitchen", "function-calling", "fake", "initial", 5, True)]
    assert app.remaining.value == "<b>3</b> tool calls remaining"


def test_an_app_without_a_runner_shows_the_home_and_says_how_to_run():
    app = AgentApp()
    assert app.run("turn on the light in the kitchen") is None and not app.running
    assert "AgentApp(runner=run_agent)" in app.status.value and app.episode is None
    # no run, so nothing has shown which knowledge mode the design takes
    assert app._repr_mimebundle_()["text/plain"] == "<AgentApp on 'lares-home': agent intent-action, knowledge default>"


def test_the_app_names_the_knowledge_mode_the_design_took_once_it_has_run():
    app = AgentApp(runner=run_agent)
    assert app._repr_mimebundle_()["text/plain"] == "<AgentApp on 'lares-home': agent intent-action, knowledge default>"
    app.run("turn on the light in the kitchen")
    assert app.wait().status == "done"
    assert app._repr_mimebundle_()["text/plain"] == "<AgentApp on 'lares-home': agent intent-action, knowledge latest>"
    assert AgentApp(runner=run_agent, agent="sage", knowledge="initial")._repr_mimebundle_()["text/plain"] == (
        "<AgentApp on 'lares-home': agent sage, knowledge initial>")


def test_the_app_runs_sage_with_its_own_knowledge_mode():
    # The app passes knowledge=None ("the design's own"); sage takes only "none", and says so for any other.
    app = AgentApp(load_world("sage-home"), runner=run_agent, agent="sage")
    app.run("dim the lights by the fireplace to a third of their current value")
    episode = app.wait()
    assert (episode.status, episode.knowledge) == ("done", "none"), app.status.value
    assert app._repr_mimebundle_()["text/plain"].endswith("agent sage, knowledge none>")
    assert app.home.devices["fireplace-strip"].state["level"] == 30

    app = AgentApp(load_world("sage-home"), runner=run_agent, agent="sage", knowledge="latest")
    app.run("dim the lights by the fireplace to a third of their current value")
    assert app.wait() is None and "sage does not take the knowledge mode &#x27;latest&#x27;" in app.status.value


def test_a_runner_that_is_not_a_function_is_a_one_sentence_error():
    from lares_kit.errors import LaresError

    with pytest.raises(LaresError, match=r"^runner must be a function such as lares_kit.run_agent, not the str"):
        AgentApp(runner="run_agent")


def test_the_widgets_never_import_the_agents():
    # Widgets read Homes and Episodes; the app is handed its runner. Imports inside functions count too.
    import ast
    from pathlib import Path

    import lares_kit.widgets

    found = []
    for path in sorted(Path(lares_kit.widgets.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                package = ["lares_kit", "widgets"][:3 - node.level] if node.level else []  # every file is in widgets/
                base = ".".join(package + ([node.module] if node.module else []))
                names = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            found += [f"{path.name}:{node.lineno} {name}" for name in names
                      if name.startswith("lares_kit.agents") or name == "lares_kit.run_agent"]
    assert found == []


def test_the_app_lists_every_kind_of_step_by_its_own_rendering():
    from lares_kit.episode_steps import Thought

    episode = Episode("anything", "lares-home", "react", "offline", status="done", final_message="ok",
                      steps=[Thought("The room is stuffy.", turn=1)])
    app = AgentApp()
    app.episode = episode  # as the worker leaves it after a run
    app._show_episode(episode)
    assert '<li class="lares-step" data-kind="thought" data-turn="1">' in app.transcript.value
    assert "<i>Thought</i> The room is stuffy." in app.transcript.value and "Thought(" not in app.transcript.value
    fig = app.picture()
    assert "1 Thought: The room is stuffy." in [t.get_text() for t in fig.texts]


def test_scripted_episode_replays_like_a_live_one():
    home = load_world("lares-home")
    episode = run_agent("set the office light depending on whether it's daytime", home, model="fake",
                        user=ScriptedUser(answers=["no"]),
                        client=FakeClient(_script([("ask_user", {"question": "Is it daytime?"}),
                                                   ("halt", {"message_to_user": "ok"})])))
    assert replay_frames(episode)[1].caption == "asks 'Is it daytime?' -> no"


# ------------------------------------------------------ saved notebooks
def _run_notebooks_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "scripts" / "run_notebooks.py"
    spec = importlib.util.spec_from_file_location("run_notebooks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_saved_notebook_keeps_no_frozen_progress_bar():
    # What a kernel without LARES_PROGRESS=0 saves for run_bench: tqdm.auto's widget, frozen at 0%.
    import nbformat

    script = _run_notebooks_script()
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "e80d", "version_major": 2, "version_minor": 0},
              "text/plain": ["bench:   0%|          | 0/3 [00:00<?, ?episode/s]"]}
    cell = nbformat.v4.new_code_cell("bench = run_bench(tasks)\nprint('ok')", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="tasks: 3\n"),
        nbformat.v4.new_output("display_data", data=widget),
        nbformat.v4.new_output("stream", name="stderr",
                               text="bench:  33%|###  | 1/3\rbench: 100%|#####| 3/3 [00:01]\n"),
        nbformat.v4.new_output("stream", name="stdout", text="ok\n"),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<SearchReplay: 'x', 5 steps>",
                                                     "application/vnd.jupyter.widget-view+json": {"model_id": "f1"}})])
    nb = nbformat.v4.new_notebook(cells=[cell])
    script._tidy(nb)
    outputs = nb.cells[0].outputs
    assert [o.output_type for o in outputs] == ["stream", "display_data"]
    assert outputs[0].text == "tasks: 3\nok\n"  # the two prints, joined once the bar between them is gone
    assert set(outputs[1].data) == {"image/png", "text/plain"}  # a widget keeps its picture, loses its view


@pytest.mark.parametrize("env, off", [({"TQDM_DISABLE": "1"}, True), ({"LARES_PROGRESS": "0"}, True), ({}, False)])
def test_the_bench_progress_bar_obeys_either_switch(env, off):
    # tqdm reads TQDM_DISABLE when it is imported, so each case runs in a fresh interpreter.
    import os

    code = "from lares_kit.bench.runner import _progress; bar = _progress(3); print(bar.disable); bar.close()"
    clean = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "LARES_PROGRESS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**clean, **env}).stdout
    assert out.strip() == str(off)
