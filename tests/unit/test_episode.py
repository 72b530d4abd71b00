"""Episodes as data: steps, messages rebuilt from them, JSON round trips, the run object, transcripts."""

import json

import pytest
from fakes import FakeClient, call, calls, decide, text

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.episode import Episode, knowledge_header
from lares_kit.episode_steps import Error, Final, Intent, LLMCall, Question, ToolCall, step_from_dict
from lares_kit.sentences.markers import DONE_HINT
from lares_kit.tools.users import ScriptedUser

RUN_KEYS = ["instruction", "world", "agent", "model", "final_message", "status", "steps", "llm_calls", "usage",
            "asked", "state"]


@pytest.fixture
def home():
    return load_world("lares-home")


@pytest.fixture
def episode(home):
    """A dog search by hand: every kind of step, parallel calls, an error, a question."""
    script = [
        calls(("toggle_light", {"light_id": "bedroom-light"}), ("move_robot", {"destination_room_id": "bedroom"})),
        text("Let me look."),
        call("look_with_robot"),
        call("ask_user", question="Is that your dog?"),
        call("halt", message_to_user="The bedroom light is on; Bruno is there."),
    ]
    return run_agent("turn on the light for my dog", home, agent="function-calling", model="fake",
                     client=FakeClient(script), user=ScriptedUser(answers=["Yes"]),
                     options={"parallel_tool_calls": True}, prompt_style="lares", knowledge_format="full")


def test_step_kinds_and_the_truth_after_each_call(episode):
    assert [s.kind for s in episode.steps] == ["call", "call", "error", "call", "question", "final"]
    toggle, move, _, look, _, _ = episode.steps
    assert toggle.after["devices"] == {"bedroom-light": {"on": True}} and toggle.after["robot"] == "hallway"
    assert move.after["devices"] == {} and move.after["robot"] == "bedroom"
    assert look.after["seen"] == {"bruno": {"room": "bedroom", "time": 3}}
    assert look.after["items"] == {"bruno": "bedroom", "sally": "office"}
    assert episode.initial_state["devices"]["bedroom-light"] == {"on": False}
    assert episode.final_state["devices"]["bedroom-light"] == {"on": True}


def test_convenience_views(episode):
    assert episode.asked == ["Is that your dog?"]
    assert [type(s) for s in episode.errors] == [Error]
    assert len(episode.tool_calls) == 5 and isinstance(episode.tool_calls[-1], Final)
    assert episode.usage == {"prompt_tokens": 500, "completion_tokens": 50, "cached_prompt_tokens": 0}
    assert episode.seconds > 0 and episode.started_at > 0


def test_messages_group_a_turns_calls_and_keep_errors(episode, home):
    history = episode.messages(home)[4:]
    roles = [m["role"] for m in history]
    assert roles == ["assistant", "tool", "tool", "assistant", "system", "assistant", "tool", "assistant", "tool",
                     "assistant", "tool"]
    assert [c["function"]["name"] for c in history[0]["tool_calls"]] == ["toggle_light", "move_robot"]
    assert history[3] == {"role": "assistant", "content": "Let me look."}
    assert history[4]["content"].startswith("Error: ")
    ids = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert ids == [m["tool_call_id"] for m in history if m["role"] == "tool"]


def test_messages_need_the_home_in_latest_mode(episode):
    with pytest.raises(ValueError, match="needs the home"):
        episode.messages()


def test_initial_knowledge_is_the_start(episode):
    episode.knowledge = "initial"
    msg = episode.messages()[1]["content"]
    assert msg.startswith(knowledge_header("initial") + "\n")
    assert json.loads(msg.partition("\n")[2]) == episode.initial_knowledge


def test_dict_round_trip_keeps_every_step_type(episode):
    again = Episode.from_dict(json.loads(json.dumps(episode.to_dict())))
    assert again == episode
    assert [type(s) for s in again.steps] == [type(s) for s in episode.steps]
    assert again.steps[4].answer == "Yes" and isinstance(again.llm_calls[0], LLMCall)


def test_save_and_load(episode, tmp_path, home):
    path = episode.save(tmp_path / "dog.json")
    assert json.loads(path.read_text())["format"] == "lares-episode/1"
    loaded = Episode.load(path)
    assert loaded == episode and loaded.messages(home) == episode.messages(home)


def test_run_json_is_the_contract(episode):
    data = episode.to_run_json()
    assert list(data) == RUN_KEYS
    assert data["status"] == "done" and data["final_message"] == "The bedroom light is on; Bruno is there."
    assert all(list(s) == ["tool", "arguments", "result", "ok"] for s in data["steps"])
    assert data["steps"][0] == {"tool": "toggle_light", "arguments": {"light_id": "bedroom-light"},
                                "result": "The light in the Bedroom (bedroom-light) is now on. The Bedroom is lit. "
                                          + DONE_HINT,
                                "ok": True}
    assert data["llm_calls"] == 5
    assert data["usage"] == {"prompt_tokens": 500, "completion_tokens": 50, "cached_prompt_tokens": 0}
    assert data["asked"] == ["Is that your dog?"]
    assert data["state"]["robot"] == "bedroom" and data["state"]["bedroom-light"] == {"on": True}
    assert set(data["state"]) == {"robot", "lounge-light", "hallway-light", "kitchen-light", "bedroom-light",
                                  "office-light"}
    json.dumps(data)


def test_run_json_shows_unreadable_arguments_as_sent():
    ep = Episode("x", "w", "a", "m", steps=[ToolCall("set_light", None, "Error: bad", ok=False, raw_arguments="{oops")])
    assert ep.to_run_json()["steps"] == [{"tool": "set_light", "arguments": "{oops", "result": "Error: bad",
                                          "ok": False}]


def test_transcript_reads_like_a_story(episode):
    out = episode.transcript()
    for expected in ["> turn on the light for my dog", "toggle_light(light_id=\"bedroom-light\")",
                     "move_robot(destination_room_id=\"bedroom\")", "error", "Let me look.", "Also here: Bruno, a dog",
                     "asks     Is that your dog?", "answer   Yes", "halts    The bedroom light is on; Bruno is there.",
                     "= done after 5 step(s), 5 LLM call(s), 500 prompt tokens"]:
        assert expected in out, expected
    assert str(episode) == out


def test_intent_steps_render_their_reasoning(home):
    script = [decide("set_light", "The kitchen is dark."), call("set_light", light_id="kitchen-light", on=True),
              decide("halt"), call("halt", message_to_user="Done.")]
    ep = run_agent("turn on the light in the kitchen", home, model="fake", client=FakeClient(script))
    assert " 1 thinks   The kitchen is dark. -> set_light" in ep.transcript()


@pytest.mark.parametrize("step", [
    Intent("why", "halt", turn=1),
    ToolCall("move_robot", {"destination_room_id": "lounge"}, "moved", turn=2, after={"robot": "lounge"}),
    Question("ask_user", {"question": "Day?"}, "The user answered: no", turn=3, answer="no"),
    Final("halt", {"message_to_user": "bye"}, "bye", turn=4),
    Error("no call", reply="hmm", turn=5),
])
def test_each_step_round_trips(step):
    assert step_from_dict(json.loads(json.dumps(step.to_dict()))) == step


def test_unknown_step_kind_is_refused():
    with pytest.raises(ValueError, match="unknown step kind"):
        step_from_dict({"kind": "dream"})
