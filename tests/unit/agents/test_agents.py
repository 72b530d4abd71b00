"""Agent loops driven by a scripted fake model: malformed replies, statuses, the prompt contract."""

import pytest
from fakes import FakeClient, api_error, bad_args, call, calls, decide, empty, text

from lares_kit import load_world
from lares_kit.agents import AGENTS, get_agent, run_agent
from lares_kit.episode_steps import Error, Final, Intent, Question, ToolCall
from lares_kit.errors import LaresError
from lares_kit.tools.users import ScriptedUser

HALT = call("halt", message_to_user="Done.")
KITCHEN = call("set_light", light_id="kitchen-light", on=True)


@pytest.fixture
def home():
    return load_world("lares-home")


def run(home, script, agent="function-calling", **kw):
    # The Lares layout and pretty JSON: the contract these tests spell out (the lean style has its own tests).
    kw.setdefault("prompt_style", "lares")
    kw.setdefault("knowledge_format", "full")
    client = FakeClient(script)
    episode = run_agent("turn on the light in the kitchen", home, agent=agent, model="fake", client=client, **kw)
    return episode, client


def fc(*replies):
    return list(replies)


def ia(*actions):
    # intent-action: each action reply preceded by a decision for the function it calls
    script = []
    for reply in actions:
        name = reply.choices[0].message.tool_calls[0].function.name
        script += [decide(name), reply]
    return script


# ------------------------------------------------------------- happy paths
@pytest.mark.parametrize("agent,script", [("function-calling", fc(KITCHEN, HALT)),
                                          ("intent-action", ia(KITCHEN, HALT))])
def test_a_clean_run_ends_done(home, agent, script):
    ep, client = run(home, script, agent)
    assert ep.status == "done" and ep.final_message == "Done."
    assert home.devices["kitchen-light"].state == {"on": True}
    assert [type(s) for s in ep.tool_calls] == [ToolCall, Final]
    assert len(ep.llm_calls) == len(client.requests) == len(script)
    assert ep.usage == {"prompt_tokens": 100 * len(script), "completion_tokens": 10 * len(script),
                        "cached_prompt_tokens": 0}


def test_function_calling_offers_every_tool_with_auto_choice(home):
    ep, client = run(home, fc(KITCHEN, HALT))
    request = client.requests[0]
    assert request["tool_choice"] == "auto" and request["parallel_tool_calls"] is False
    assert [t["function"]["name"] for t in request["tools"]] == ["toggle_light", "set_light", "move_robot",
                                                                "look_with_robot", "ask_user", "halt"]


def test_intent_action_forces_decide_then_only_the_chosen_function(home):
    ep, client = run(home, ia(KITCHEN, HALT), "intent-action")
    intent, action = client.requests[0], client.requests[1]
    assert [t["function"]["name"] for t in intent["tools"]] == ["decide_best_function"]
    assert intent["tool_choice"] == {"type": "function", "function": {"name": "decide_best_function"}}
    enum = intent["tools"][0]["function"]["parameters"]["properties"]["best_function"]["enum"]
    assert enum == ["toggle_light", "set_light", "move_robot", "look_with_robot", "ask_user", "halt"]
    assert [t["function"]["name"] for t in action["tools"]] == ["set_light"]
    assert action["tool_choice"] == {"type": "function", "function": {"name": "set_light"}}
    assert [s.kind for s in ep.steps] == ["intent", "call", "intent", "final"]
    assert [c.phase for c in ep.llm_calls] == ["intent", "action", "intent", "action"]


def test_intent_summary_replaces_the_raw_intent_call(home):
    ep, client = run(home, ia(KITCHEN, HALT), "intent-action")
    history = client.requests[2]["messages"][4:]  # the second intent request
    assert history[0] == {"role": "assistant",
                          "content": "I have decided to call set_light because: It is the next step."}
    assert history[1]["tool_calls"][0]["function"]["name"] == "set_light"
    assert history[2]["role"] == "tool" and history[2]["content"].startswith("The light in the Kitchen")
    assert not any("decide_best_function" in str(m.get("tool_calls")) for m in history)


def test_prompt_layout_and_the_only_user_message(home):
    ep, client = run(home, fc(KITCHEN, HALT))
    for request in client.requests:
        msgs = request["messages"]
        assert [m["role"] for m in msgs[:4]] == ["system", "system", "system", "user"]
        assert msgs[1]["content"].startswith("WORLD KNOWLEDGE (latest)\n{")
        assert [m["content"] for m in msgs if m["role"] == "user"] == ["turn on the light in the kitchen"]


@pytest.mark.parametrize("mode,header,kitchen_after", [
    ("latest", "WORLD KNOWLEDGE (latest)", True),
    ("initial", "WORLD KNOWLEDGE (initial: the state at the start of the task; "
                "changes since are only in the history)", False),
])
def test_knowledge_modes(home, mode, header, kitchen_after):
    import json

    ep, client = run(home, fc(KITCHEN, HALT), knowledge=mode)
    second = client.requests[1]["messages"][1]["content"]
    first_line, _, body = second.partition("\n")
    assert first_line == header
    kitchen = next(d for r in json.loads(body)["rooms"] for d in r["devices"] if d["id"] == "kitchen-light")
    assert kitchen["state"]["on"] is kitchen_after


def test_knowledge_none_leaves_the_message_out(home):
    ep, client = run(home, fc(KITCHEN, HALT), knowledge="none")
    msgs = client.requests[0]["messages"]
    assert [m["role"] for m in msgs] == ["system", "system", "user"]
    assert not any("WORLD KNOWLEDGE" in m["content"] for m in msgs)


# ------------------------------------------------------- malformed replies
def test_a_reply_without_a_call_is_an_error_step_and_the_loop_recovers(home):
    ep, client = run(home, [text("I think the light should be on."), KITCHEN, HALT])
    assert isinstance(ep.steps[0], Error) and ep.steps[0].reply == "I think the light should be on."
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    notes = client.requests[1]["messages"][4:]
    assert notes == [{"role": "assistant", "content": "I think the light should be on."},
                     {"role": "system", "content": "Error: " + ep.steps[0].message}]


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_empty_choices_is_an_error_step(home, agent):
    script = [empty()] + (fc(KITCHEN, HALT) if agent == "function-calling" else ia(KITCHEN, HALT))
    ep, _ = run(home, script, agent)
    assert isinstance(ep.steps[0], Error) and "no choices" in ep.steps[0].message
    assert ep.status == "done"


def test_function_calling_unknown_tool_becomes_an_error_observation(home):
    ep, client = run(home, fc(call("fly", to="moon"), KITCHEN, HALT))
    first = ep.steps[0]
    assert (isinstance(first, ToolCall) and not first.ok
            and first.result.startswith("Error: There is no tool called 'fly'"))
    tool_msg = client.requests[1]["messages"][-1]
    assert tool_msg == {"role": "tool", "tool_call_id": first.call_id, "content": first.result}
    assert ep.status == "done"


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_bad_json_arguments_become_an_error_observation(home, agent):
    script = (fc(bad_args("set_light"), KITCHEN, HALT) if agent == "function-calling"
              else ia(bad_args("set_light"), KITCHEN, HALT))
    ep, _ = run(home, script, agent)
    bad = ep.tool_calls[0]
    assert not bad.ok and bad.arguments is None and bad.raw_arguments == '{"light_id": "kitchen-light",'
    assert "not valid JSON" in bad.result and bad.result.startswith("Error: ")
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]


def test_function_calling_runs_only_the_first_of_two_calls_unless_parallel(home):
    two = calls(("set_light", {"light_id": "kitchen-light", "on": True}),
                ("set_light", {"light_id": "office-light", "on": True}))
    ep, client = run(home, fc(two, HALT))
    assert [s.ok for s in ep.tool_calls] == [True, False, True]
    assert ep.tool_calls[1].result.startswith("Error: Only one function call is allowed")
    assert home.devices["office-light"].state["on"] is False
    # both calls of the turn share one assistant message, each with its tool answer
    history = client.requests[1]["messages"][4:]
    assert [m["role"] for m in history] == ["assistant", "tool", "tool"] and len(history[0]["tool_calls"]) == 2


def test_function_calling_parallel_runs_every_call(home):
    two = calls(("set_light", {"light_id": "kitchen-light", "on": True}),
                ("set_light", {"light_id": "office-light", "on": True}))
    ep, client = run(home, fc(two, HALT), options={"parallel_tool_calls": True})
    assert client.requests[0]["parallel_tool_calls"] is True
    assert [s.ok for s in ep.tool_calls] == [True, True, True]
    assert home.devices["office-light"].state["on"] is True


def test_intent_action_two_calls_when_one_was_forced(home):
    two = calls(("set_light", {"light_id": "kitchen-light", "on": True}),
                ("set_light", {"light_id": "office-light", "on": True}))
    ep, _ = run(home, [decide("set_light"), two, decide("halt"), HALT], "intent-action")
    assert [s.ok for s in ep.tool_calls] == [True, False, True]
    assert home.devices["office-light"].state["on"] is False and ep.status == "done"


def test_intent_action_two_decisions_uses_the_first_and_notes_it(home):
    two = calls(("decide_best_function", {"reasoning": "a", "best_function": "set_light"}),
                ("decide_best_function", {"reasoning": "b", "best_function": "halt"}))
    ep, _ = run(home, [two, KITCHEN, decide("halt"), HALT], "intent-action")
    assert isinstance(ep.steps[0], Error) and "only the first was used" in ep.steps[0].message
    assert isinstance(ep.steps[1], Intent) and ep.steps[1].function == "set_light"
    assert ep.status == "done"


@pytest.mark.parametrize("bad_intent,why", [
    (decide("fly"), "best_function must be one of"),
    (bad_args("decide_best_function"), "not valid JSON"),
])
def test_intent_action_unusable_decisions_lose_the_step(home, bad_intent, why):
    ep, client = run(home, [bad_intent, *ia(KITCHEN, HALT)], "intent-action")
    assert isinstance(ep.steps[0], Error) and why in ep.steps[0].message
    assert ep.status == "done" and home.devices["kitchen-light"].state["on"]
    assert client.requests[1]["tools"][0]["function"]["name"] == "decide_best_function"  # the next step's intent


def test_intent_action_a_later_call_to_another_function_is_not_run(home):
    look_then_light = calls(("look_with_robot", {}), ("set_light", {"light_id": "kitchen-light", "on": True}))
    ep, _ = run(home, [decide("look_with_robot"), look_then_light, *ia(KITCHEN, HALT)], "intent-action")
    refused = ep.tool_calls[1]
    assert not refused.ok and "Only one function call is allowed per step" in refused.result
    assert ep.status == "done"


# ---------------------------------------------------------------- statuses
@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
@pytest.mark.parametrize("at", [0, 1])
def test_api_error_ends_with_model_error(home, agent, at):
    good = fc(KITCHEN) if agent == "function-calling" else [decide("set_light")]
    script = good[:at] + [api_error("upstream is down")]
    ep, _ = run(home, script, agent)
    assert ep.status == "model_error" and "upstream is down" in ep.error
    assert "upstream is down" in ep.final_message and ep.llm_calls[-1].error
    assert ep.final_state["devices"]["kitchen-light"] == home.devices["kitchen-light"].state


def test_a_broken_client_is_a_model_error_not_a_crash(home):
    ep, _ = run(home, [])  # the fake raises when its script is exhausted
    assert ep.status == "model_error" and "ScriptExhausted" in ep.error


@pytest.mark.parametrize("agent,per_step", [("function-calling", 1), ("intent-action", 2)])
def test_step_limit(home, agent, per_step):
    light = call("toggle_light", light_id="kitchen-light")
    script = [light] * 3 if agent == "function-calling" else ia(light, light, light)
    ep, client = run(home, script, agent, max_steps=3)
    assert ep.status == "step_limit" and "3 steps" in ep.final_message
    assert len(client.requests) == 3 * per_step


def test_intent_action_default_step_limit_is_20(home):
    ep, client = run(home, [decide("look_with_robot"), call("look_with_robot")] * 20, "intent-action")
    assert ep.status == "step_limit" and ep.max_steps == 20 and len(client.requests) == 40


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_a_question_with_no_answer_ends_with_no_answer(home, agent):
    ask = call("ask_user", question="Is it daytime?")
    ep, _ = run(home, [ask] if agent == "function-calling" else ia(ask), agent)
    assert ep.status == "no_answer" and ep.asked == ["Is it daytime?"]
    assert isinstance(ep.steps[-1], Question) and ep.steps[-1].answer is None


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_a_question_records_the_answer(home, agent):
    ask = call("ask_user", question="Is it daytime?")
    on = call("set_light", light_id="office-light", on=True)
    script = fc(ask, on, HALT) if agent == "function-calling" else ia(ask, on, HALT)
    ep, client = run(home, script, agent, user=ScriptedUser(answers=["No, it is night."]))
    question = ep.tool_calls[0]
    assert isinstance(question, Question) and question.answer == "No, it is night."
    assert question.result == "The user answered: No, it is night."
    assert ep.status == "done" and ep.asked == ["Is it daytime?"]


def test_an_exact_repeat_that_changed_nothing_is_blocked(home):
    look = call("look_with_robot")
    ep, _ = run(home, fc(look, look, HALT))
    assert ep.tool_calls[0].ok and not ep.tool_calls[1].ok
    assert "already called look_with_robot" in ep.tool_calls[1].result


# ----------------------------------------------------------------- registry
def test_unknown_agent_lists_the_known_ones(home):
    with pytest.raises(LaresError, match="function-calling, intent-action"):
        run_agent("x", home, agent="telepathy", model="fake", client=FakeClient([]))
    assert {"function-calling", "intent-action"} <= set(AGENTS) and get_agent("function-calling")


@pytest.mark.parametrize("kw", [{"knowledge": "some"}, {"max_steps": 0}])
def test_bad_settings_raise_lares_error(home, kw):
    with pytest.raises(LaresError):
        run_agent("x", home, model="fake", client=FakeClient([]), **kw)


def test_a_world_id_is_loaded(home):
    ep = run_agent("x", "lares-home", agent="function-calling", model="fake", client=FakeClient([HALT]))
    assert ep.world == "lares-home" and ep.status == "done"


# ------------------------------------------------------- with the offline model
def test_lazy_exports():
    import lares_kit

    assert lares_kit.run_agent is run_agent and lares_kit.Episode.__name__ == "Episode"


def test_a_smaller_toolbox_shrinks_both_phases(home):
    from lares_kit.tools.toolbox import halt, set_light

    ep, client = run(home, ia(KITCHEN, HALT), "intent-action", tools=[set_light, halt])
    enum = client.requests[0]["tools"][0]["function"]["parameters"]["properties"]["best_function"]["enum"]
    assert enum == ["set_light", "halt"] and ep.status == "done"


@pytest.mark.parametrize("agent", ["function-calling", "intent-action"])
def test_offline_dog_search_leaves_a_replayable_trail(agent):
    home = load_world("lares-home").reset(seed=5)  # Bruno is in the office
    ep = run_agent("turn on the light for my dog", home, agent=agent)
    assert ep.status == "done" and ep.model == "offline"
    robot = [s.after["robot"] for s in ep.tool_calls]
    moves = [s.arguments["destination_room_id"] for s in ep.tool_calls if s.tool == "move_robot" and s.ok]
    path = [ep.initial_state["robot"], *robot]
    assert [room for before, room in zip(path, path[1:], strict=False) if room != before] == moves
    first_seen = next(i for i, s in enumerate(ep.tool_calls) if "bruno" in s.after["seen"])
    assert ep.tool_calls[first_seen].tool == "look_with_robot" and robot[first_seen] == "office"
    # Redraw the last frame from the start state plus each step's changes: it is the final truth.
    devices = {dev: dict(state) for dev, state in ep.initial_state["devices"].items()}
    for step in ep.tool_calls:
        devices.update(step.after["devices"])
    assert devices == ep.final_state["devices"]


def test_offline_episode_round_trips_and_rebuilds_the_same_prompt(tmp_path):
    from lares_kit.episode import Episode
    from lares_kit.tools.users import ScriptedUser

    home = load_world("lares-home")
    ep = run_agent("set the office light depending on whether it's daytime", home, knowledge="initial",
                   user=ScriptedUser(answers=["Yes, it is daytime."]))
    loaded = Episode.load(ep.save(tmp_path / "ep.json"))
    assert loaded == ep and loaded.messages() == ep.messages()
    assert ep.status == "done" and ep.asked and home.devices["office-light"].state == {"on": False}


def test_bench_loops_prints_ratios(capsys):
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_loops.py"
    module = runpy.run_path(str(script))
    assert module["main"]([]) == 0
    out = capsys.readouterr().out
    assert "total intent-action     latest   4/4 ok" in out and "x)" in out
