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
from lares_kit.users import ScriptedUser
from lares_kit.widgets import describe_home, draw_home, render_png, room_layout
from lares_kit.widgets.app import AgentApp
from lares_kit.widgets.drawing import DARK, LIT, _box_size
from lares_kit.widgets.homemap import HomeMap
from lares_kit.widgets.replay import SearchReplay, replay_frames

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
    width, height = _box_size(pos)
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
    texts = lambda fig: " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "Bruno" not in texts(draw_home(home))
    assert "Bruno (dog) hidden" in texts(draw_home(home, god_view=True))
    assert "Hidden: Bruno (dog) in Bedroom" in describe_home(home, god_view=True)


def test_render_png_is_a_picture_of_a_sensible_size():
    png = render_png(load_world("townhouse"), god_view=True, path=["hall", "stairs", "landing"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and 20_000 < len(png) < 400_000


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
    app = AgentApp(client=FakeClient(script))
    app.instruction.value = "turn on the light in the kitchen"
    app.run_button.click()  # what the page does
    episode = app.wait()
    assert episode.status == "done" and not app.running
    assert 'data-room="kitchen" data-lit="true"' in app.map.words.value
    assert app.transcript.value.index("halts") < app.transcript.value.index("set_light")  # newest first
    assert app.remaining.value == "<b>18</b> tool calls remaining"
    assert 'data-status="done"' in app.status.value


def test_app_waits_for_the_answer_without_blocking_the_caller():
    script = _script([("ask_user", {"question": "Is it daytime?"}),
                      ("set_light", {"light_id": "office-light", "on": False}),
                      ("halt", {"message_to_user": "It's daytime, so I left the office light off."})])
    app = AgentApp(client=FakeClient(script))
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
    app = AgentApp(client=FakeClient(_script([("ask_user", {"question": "Is it daytime?"})])))
    app.run("set the office light depending on whether it's daytime")
    _wait_for(lambda: app.pending_question is not None)
    app.no_answer_button.click()
    assert app.wait().status == "no_answer"


def test_app_shows_a_failure_in_the_page():
    app = AgentApp(agent="telepathy", client=FakeClient([]))
    app.run("anything")
    app.wait()
    assert "unknown agent" in app.status.value and not app.run_button.disabled


def test_scripted_episode_replays_like_a_live_one():
    home = load_world("lares-home")
    episode = run_agent("set the office light depending on whether it's daytime", home, model="fake",
                        user=ScriptedUser(answers=["no"]),
                        client=FakeClient(_script([("ask_user", {"question": "Is it daytime?"}),
                                                   ("halt", {"message_to_user": "ok"})])))
    assert replay_frames(episode)[1].caption == "asks 'Is it daytime?' -> no"
