"""The lean prompt style and what came with it: the outline format, auto, slices, layouts, the action call, caching."""

from __future__ import annotations

import copy
import dataclasses
import json
from types import SimpleNamespace

import networkx as nx
import pytest

from lares_kit import load_world
from lares_kit.agents import run_agent
from lares_kit.agents.prompts import ACTION_PROMPT, LEAN_ROLE_PROMPT, PROMPT_STYLES, ROLE_PROMPT, forced, prompt_style
from lares_kit.episode_steps import Intent
from lares_kit.errors import LaresError
from lares_kit.home.generator import generate_home
from lares_kit.home.graph import Item
from lares_kit.home.worlds import parse_world, world_paths
from lares_kit.knowledge.formats import parse_outline, render_compact, render_outline, slice_knowledge
from lares_kit.knowledge.modes import knowledge_prompt, resolve_format
from lares_kit.knowledge.retrieval import relevant_rooms
from lares_kit.knowledge.tokens import REPLY_PRIMING, count_request, count_tokens
from lares_kit.models import make_client
from lares_kit.models.offline.designs.intent_action import stated_call
from lares_kit.models.offline.prompt_cache import PromptCache
from lares_kit.models.offline.reading import read_request
from lares_kit.models.offline.replying import respond
from lares_kit.run_context import RunContext
from lares_kit.tools.schema import short_schema
from lares_kit.tools.toolbox import Toolbox
from lares_kit.tools.users import ScriptedUser

KITCHEN = "turn on the light in the kitchen"


def _recorded(instruction, world="lares-home", agent="intent-action", **kwargs):
    """(episode, home, requests): a run whose requests are recorded (copied) on their way to the offline model."""
    inner, requests = make_client("offline"), []

    def create(**request):
        requests.append(copy.deepcopy(request))
        return inner.chat.completions.create(**request)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    home = load_world(world)
    if "server" in kwargs:  # what the model's server accepts is part of the run's context
        kwargs["context"] = RunContext(server=kwargs.pop("server"))
    return run_agent(instruction, home, agent, model="offline", client=client, **kwargs), home, requests


def _is_knowledge(message):
    return message["role"] == "system" and message["content"].startswith("WORLD KNOWLEDGE")


def _tool_names(request):
    return [t["function"]["name"] for t in request.get("tools") or []]


# ------------------------------------------------------------------ the outline format
@pytest.mark.parametrize("world", sorted(world_paths()))
def test_outline_round_trips_every_world(world):
    """render_outline is lossless for every shipped world (wohnung: floors, aliases, language), a sighting included."""
    home = load_world(world)
    for item in list(home.items)[:1]:  # sage-home has none
        home.record_sighting(item, home.robot.room)
    k = home.knowledge()
    assert parse_outline(render_outline(k)) == k and (k["seen"] or not home.items)


def test_outline_round_trips_a_generated_home_and_awkward_names():
    """A 400-device home, and names/aliases/state values with quotes, backslashes, commas and '=' come back exactly."""
    k = generate_home(devices=400).knowledge()
    assert parse_outline(render_outline(k)) == k
    odd = {"home": "h", "name": 'Ann\'s "flat" \\ 2', "time": 3, "robot": {"id": "robot", "room": "hall"}, "seen": {},
           "rooms": [{"id": "hall", "name": 'The "hall"\\', "aliases": ['a "b"', "c\\d"], "exits": [], "devices": [
               {"id": "lamp", "name": 'Lamp "x" \\', "type": "light", "state": {"on": True, "note": 'a, b=c "d"'}}]}]}
    assert parse_outline(render_outline(odd)) == odd


@pytest.mark.parametrize("text", [
    'home h "H": time=0\n  lamp "Lamp" light: on=true',  # a device before any room
    'home h "H": time=0\nhall "Hall", no exits\n  x "y" light: on=',  # a state with no value
    'home h "H": time=0\nhall "Hall", no exits\nthis is not an outline line',
])
def test_a_broken_outline_is_none_not_half_a_home(text):
    """A line that is not an outline line (after the home line) makes the whole text unreadable."""
    assert parse_outline(text) is None


def test_outline_round_trips_ids_types_and_keys_that_are_not_plain_words():
    """World files accept "ceiling fan" as a type, spaces in ids and state keys, a line separator in a name: the
    outline quotes what is not a plain word, and an agent run in such a home still sees the home."""
    home = parse_world({"id": "tiny", "rooms": [{"id": "hall", "name": "Hall\u2028way", "exits": []}],
                        "devices": [{"id": "fan", "name": "Fan", "type": "ceiling fan", "room": "hall",
                                     "state": {"on": False, "colour temp": 3}}],
                        "robot": {"id": "robot", "room": "hall"}}, "tiny")
    home.seen["tom"] = {"room": "hall", "time": 1}
    home.items["tom"] = Item("tom", "Tom", "house cat", "hall")
    assert parse_outline(render_outline(home.knowledge())) == home.knowledge()
    episode = run_agent("turn on the fan in the hall", home, "function-calling")
    assert "There is no hall" not in episode.final_message


def test_outline_is_much_smaller_than_compact_json():
    """The outline's point: at most ~70% of compact JSON's tokens (townhouse)."""
    k = load_world("townhouse").knowledge()
    assert count_tokens(render_outline(k)) <= 0.7 * count_tokens(render_compact(k))


@pytest.mark.parametrize("world", ["lares-home", "townhouse"])
def test_offline_model_reads_outline_and_retrieval_as_it_reads_json(world):
    """The offline model gets the same rooms, devices, states, robot and sightings from every format."""
    home = load_world(world)
    home.record_sighting(next(iter(home.items)), home.robot.room)

    def beliefs(fmt):
        msgs = [{"role": "system", "content": knowledge_prompt(home, "latest", fmt, KITCHEN)},
                {"role": "user", "content": KITCHEN}]
        b = read_request(msgs)
        return b.rooms, b.devices, b.robot, b.prior_seen

    compact = beliefs("compact")
    assert compact[0] and compact[1] and beliefs("outline") == compact == beliefs("retrieval")


# ------------------------------------------------------------------ auto
@pytest.mark.parametrize("home, fmt", [
    (lambda: load_world("lares-home"), "outline"), (lambda: load_world("townhouse"), "outline"),
    (lambda: load_world("smart-building"), "retrieval"), (lambda: generate_home(devices=5000), "retrieval"),
])
def test_auto_is_outline_while_small_else_retrieval(home, fmt):
    """auto resolves by the outline's size; any other format resolves to itself."""
    h = home()
    assert (resolve_format(h, "auto"), resolve_format(h, "compact")) == (fmt, "compact")


def test_auto_skips_rendering_a_home_with_many_ids(monkeypatch):
    """A home with more than AUTO_IDS rooms and devices is retrieved without rendering its outline to count it."""
    building = generate_home(devices=5000)
    monkeypatch.setattr("lares_kit.knowledge.modes.render_outline",
                        lambda k: pytest.fail("rendered 5,000 devices to count"))
    assert resolve_format(building, "auto") == "retrieval"


def test_run_agent_records_the_resolved_format():
    """Episodes say what was sent (outline/retrieval), never "auto"; sage keeps its own format under auto."""
    assert run_agent(KITCHEN, load_world("lares-home")).knowledge_format == "outline"
    assert run_agent(KITCHEN, load_world("smart-building"), "function-calling").knowledge_format == "retrieval"
    sage = run_agent(KITCHEN, load_world("lares-home"), "sage", knowledge_format="auto")
    assert (sage.status, sage.knowledge_format, sage.knowledge) == ("done", "full", "none")


# ------------------------------------------------------------------ slice_knowledge
def test_slices_keep_only_the_part_asked_for():
    """lights: light devices, no exits; rooms: exits, no devices; an unknown part is refused by name."""
    k = load_world("smart-building").knowledge()
    lights = slice_knowledge(k, ["lights"])
    assert all(d["type"] == "light" for r in lights["rooms"] for d in r["devices"])
    assert all(r["exits"] == [] for r in lights["rooms"]) and any(r["devices"] for r in lights["rooms"])
    rooms = slice_knowledge(k, ["rooms"])
    assert all(r["devices"] == [] for r in rooms["rooms"]) and any(r["exits"] for r in rooms["rooms"])
    assert slice_knowledge(k, ["devices"])["rooms"][0]["devices"] == k["rooms"][0]["devices"]
    with pytest.raises(ValueError, match="rooms, lights, devices"):
        slice_knowledge(k, ["windows"])


# ------------------------------------------------------------------ prompt styles
def test_prompt_style_names():
    """lean is the default; an unknown name is a LaresError that lists the styles; the CLI (which names them itself,
    for start-up time) offers exactly the library's."""
    from lares_kit.cli.commands import PROMPT_STYLE_NAMES

    assert prompt_style(None).name == "lean"
    assert set(PROMPT_STYLE_NAMES) == set(PROMPT_STYLES) and len(PROMPT_STYLE_NAMES) == len(PROMPT_STYLES)
    with pytest.raises(LaresError, match="lares, lean"):
        prompt_style("chatty")


@pytest.mark.parametrize("style, role, layout", [("lares", ROLE_PROMPT, "lares"), ("lean", LEAN_ROLE_PROMPT, "stable")])
def test_run_agent_records_the_style(style, role, layout):
    """The episode keeps the style's name, its role prompt as sent, and its layout."""
    ep = run_agent(KITCHEN, load_world("lares-home"), prompt_style=style)
    assert (ep.status, ep.prompt_style, ep.system_prompt, ep.layout) == ("done", style, role, layout)


def test_a_custom_style_is_accepted_and_recorded():
    """A PromptStyle of one's own runs (here: Lares texts with the lean action call) and is recorded by its name."""
    mine = dataclasses.replace(PROMPT_STYLES["lares"], name="mine", action="needed")
    ep, home, requests = _recorded(KITCHEN, prompt_style=mine)
    assert (ep.status, ep.prompt_style, ep.layout) == ("done", "mine", "lares")
    assert home.devices["kitchen-light"].state["on"] is True
    assert any(r["messages"][0]["content"] == ACTION_PROMPT for r in requests)


# ------------------------------------------------------------------ layout
def test_lean_layout_puts_the_knowledge_last():
    """stable layout: the changing knowledge message ends every request, so the rest repeats call to call."""
    ep, _, requests = _recorded("find my dog", agent="function-calling")
    assert ep.status == "done" and len(requests) > 2
    assert all(_is_knowledge(r["messages"][-1]) for r in requests)
    assert not any(_is_knowledge(m) for r in requests for m in r["messages"][:-1])


def test_lares_layout_and_initial_knowledge_keep_it_second():
    """The Lares layout has the knowledge second; so does the lean one when the knowledge never changes (initial)."""
    for kwargs in ({"prompt_style": "lares"}, {"knowledge": "initial"}):
        ep, _, requests = _recorded("find my dog", agent="function-calling", **kwargs)
        assert ep.status == "done"
        assert all(_is_knowledge(r["messages"][1]) for r in requests)
        assert sum(_is_knowledge(m) for r in requests for m in r["messages"]) == len(requests)


# ------------------------------------------------------------------ the lean action call
@pytest.fixture(scope="module")
def dog_runs():
    """'find my dog' with intent-action in both styles: (episode, home, requests) each."""
    return {style: _recorded("find my dog", prompt_style=style) for style in ("lean", "lares")}


def test_lean_action_call_carries_only_the_decision_and_its_part(dog_runs):
    """Each action request is [ACTION_PROMPT, the instruction, the decision] plus the part of the home it names."""
    ep, _, requests = dog_runs["lean"]
    actions = [r for r in requests if _tool_names(r) != ["decide_best_function"]]
    intents = [s for s in ep.steps if isinstance(s, Intent)]
    assert len(actions) == len(intents)
    parts = {}
    for request, intent in zip(actions, intents):
        msgs = request["messages"]
        assert _tool_names(request) == [intent.function]
        assert msgs[:3] == [{"role": "system", "content": ACTION_PROMPT}, {"role": "user", "content": "find my dog"},
                            {"role": "assistant", "content": intent.summary}]
        assert len(msgs) in (3, 4) and (len(msgs) == 3 or _is_knowledge(msgs[3]))
        parts.setdefault(intent.function, []).append(parse_outline(msgs[3]["content"]) if len(msgs) == 4 else None)
    assert parts["look_with_robot"] and all(p is None for p in parts["look_with_robot"] + parts["halt"])
    for k in parts["move_robot"]:
        assert any(r["exits"] for r in k["rooms"]) and all(r["devices"] == [] for r in k["rooms"])
    for k in parts["set_light"]:
        devices = [d for r in k["rooms"] for d in r["devices"]]
        assert devices and all(d["type"] == "light" for d in devices) and all(r["exits"] == [] for r in k["rooms"])


def test_lean_action_call_does_the_same_as_the_lares_one(dog_runs):
    """The cheaper action call loses nothing: the same calls, the dog found, the episode done."""
    (lean, lean_home, _), (lares, _, _) = dog_runs["lean"], dog_runs["lares"]
    assert lean.status == "done" and "bruno" in lean_home.seen
    assert [(c.tool, c.arguments) for c in lean.tool_calls] == [(c.tool, c.arguments) for c in lares.tool_calls]


def test_ask_user_keeps_the_full_prompt():
    """ask_user's text depends on the conversation: its action call is the intent call's prompt, not the lean one."""
    ep, _, requests = _recorded("set the office light depending on whether it's daytime",
                                user=ScriptedUser(answers=["No, it is night."]))
    assert ep.status == "done" and ep.asked
    ask = [r for r in requests if _tool_names(r) == ["ask_user"]]
    assert ask and all(r["messages"][0]["content"] == LEAN_ROLE_PROMPT for r in ask)


# ------------------------------------------------------------------ the decision states the call
def test_every_lean_decision_states_its_call(dog_runs):
    """The reasoning ends with 'Call: NAME {args}' for the function chosen, and the action makes exactly that call."""
    ep, _, _ = dog_runs["lean"]
    intents = [s for s in ep.steps if isinstance(s, Intent)]
    for intent, call in zip(intents, ep.tool_calls, strict=True):
        assert intent.reasoning.rstrip().endswith("}") and " Call: " in intent.reasoning
        assert stated_call([{"role": "assistant", "content": intent.summary}]) == (intent.function, call.arguments)


def test_a_forced_function_gets_the_stated_arguments():
    """The decision, not the offline model's own plan, says which light (here a light the instruction never named)."""
    home = load_world("lares-home")
    decision = 'I will. Call: set_light {"light_id": "bedroom-light", "on": true}'
    msgs = [{"role": "system", "content": ACTION_PROMPT}, {"role": "user", "content": KITCHEN},
            {"role": "assistant", "content": decision},
            {"role": "system", "content": knowledge_prompt(home, "latest", "outline", KITCHEN)}]
    request = {"messages": msgs, "tools": [Toolbox(home).schema("set_light")], "tool_choice": forced("set_light")}
    assert respond(request).calls == [("set_light", {"light_id": "bedroom-light", "on": True})]
    msgs[2] = {"role": "assistant", "content": "I will switch a light on."}  # no stated call: its own plan
    assert respond(request).calls == [("set_light", {"light_id": "kitchen-light", "on": True})]


def test_stated_call_is_none_after_a_tool_result():
    """Only a decision with nothing but system messages after it states the next call."""
    decision = {"role": "assistant", "content": 'x. Call: halt {"message_to_user": "done"}'}
    assert stated_call([decision, {"role": "system", "content": "WORLD KNOWLEDGE (latest)"}])[0] == "halt"
    assert stated_call([decision, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]) is None
    assert stated_call([{"role": "assistant", "content": "x. Call: halt {not json}"}]) is None


# ------------------------------------------------------------------ short schemas
def test_short_schema_keeps_what_makes_calls_valid():
    """Names, types, enums, required are kept; descriptions shrink to a first sentence, none on enums and booleans;
    Toolbox(descriptions="short") sends fewer tokens than the docstrings."""
    home = load_world("smart-building")
    full = Toolbox(home).schemas()
    before = copy.deepcopy(full)
    short = Toolbox(home, descriptions="short").schemas()
    assert short == [short_schema(t) for t in full] and full == before  # the same, and nothing changed in place
    assert count_request([], short) < count_request([], full)
    for f, s in ((a["function"], b["function"]) for a, b in zip(full, short)):
        assert (s["name"], s["parameters"]["required"]) == (f["name"], f["parameters"]["required"])
        assert f["description"].startswith(s["description"][:-1]) and ". " not in s["description"][:-1]
        for name, spec in f["parameters"]["properties"].items():
            small = dict(s["parameters"]["properties"][name])
            text = small.pop("description", None)
            assert small == {k: v for k, v in spec.items() if k != "description"}  # type, enum... unchanged
            if "enum" in spec or spec.get("type") == "boolean":
                assert text is None
            elif text is not None:
                assert "e.g." not in text and text.endswith(".")


# ------------------------------------------------------------------ retrieval fixes (smart-building)
def _full_rooms(instruction):
    home = load_world("smart-building")
    return home, relevant_rooms(home, instruction, home.robot.room)[1]


def test_a_room_named_in_full_does_not_hide_another_the_device_words_point_to():
    """Naming Ana's office (or office 1) in full must not hide the rooms with a strip light (or a desk lamp)."""
    _, full = _full_rooms("Switch the strip light on, then open the window in Ana's office.")
    assert {"server-room", "office-3"} <= full
    _, full = _full_rooms("Turn on the desk lamp and open the window in office 1.")  # office 1 has desk lights
    assert {"office-1", "office-3", "office-4"} <= full


def test_the_nearest_room_with_the_device_asked_for_is_shown():
    """Office 4 has no fan: the nearest room with one is shown whole, so the agent can say where it is."""
    home, full = _full_rooms("Switch on the fan in office 4.")
    fans = {d.room for d in home.devices.values() if d.type == "fan"}
    hops = nx.single_source_shortest_path_length(home.graph, "office-4")
    nearest = min(hops[r] for r in fans)
    assert "office-4" in full and any(r in fans and hops[r] == nearest for r in full)


def test_a_number_that_is_a_value_pulls_in_no_room():
    """'to 2 degrees' is a setting, not office 2 or meeting room 2 (nor, in a building, office 21)."""
    _, full = _full_rooms("Set the thermostat in office 4 to 2 degrees.")
    assert full == {"office-4", "lobby"}
    building = generate_home(rooms=200, devices=1000, seed=1)
    assert "office-21" in building.graph
    assert relevant_rooms(building, "Please put office 112's thermostat on 21 degrees.")[1] == {"office-112"}


# ------------------------------------------------------------------ cached tokens
def _req(key, *texts, tools=None):
    return {"messages": [{"role": "user" if i else "system", "content": t} for i, t in enumerate(texts)],
            "prompt_cache_key": key, "tools": tools}


def test_prompt_cache_usage():
    """Repeated: all cached; extended: the old part; another key: cold; beyond its size the least recent is dropped."""
    cache = PromptCache(conversations=2)
    first = _req("a", "You control a home.", "turn on the kitchen light")
    prompt, cached = cache.usage(first)
    assert cached == 0 and cache.usage(first) == (prompt, prompt)
    longer = {**first, "messages": first["messages"] + [{"role": "assistant", "content": "Done."}]}
    total, cached = cache.usage(longer)
    assert cached == prompt - REPLY_PRIMING < total  # all but the old reply priming and the new message
    assert cache.usage({**longer, "prompt_cache_key": "b"})[1] == 0
    cache.usage(longer)  # "a" used again: "b" is now the least recent
    cache.usage({**longer, "prompt_cache_key": "c"})
    assert cache.usage(longer)[1] == total  # "a" kept
    assert cache.usage({**longer, "prompt_cache_key": "b"})[1] == 0  # "b" dropped
    keyless = _req(None, "You control a home.", "hi")
    assert cache.usage(keyless)[1] == 0 and cache.usage(keyless)[1] == 0  # no key, no conversation: never cached


def test_stable_layout_keeps_the_history_in_the_cached_prefix():
    """lean: each call's cached prefix grows with the history; with the knowledge second it stops at the knowledge."""
    runs = {}
    for name, style in [("lean", "lean"), ("lares", "lares"),
                        ("lean-second", dataclasses.replace(PROMPT_STYLES["lean"], name="x", order="lares"))]:
        runs[name], _, _ = _recorded("find my dog", agent="function-calling", prompt_style=style)
    lean = [c.cached_tokens for c in runs["lean"].llm_calls]
    assert len(lean) > 3 and lean[0] == 0 and lean[1:] == sorted(set(lean[1:]))  # strictly growing
    second = [c.cached_tokens for c in runs["lean-second"].llm_calls]
    assert sum(lean) > sum(second) and lean[-1] > second[-1]
    last = {n: ep.llm_calls[-1] for n, ep in runs.items()}
    assert last["lean"].cached_tokens / last["lean"].prompt_tokens > \
        last["lares"].cached_tokens / last["lares"].prompt_tokens


def test_intent_action_alternates_its_tools_so_nothing_is_cached_in_the_lares_style(dog_runs):
    """Tools come first in a prompt, and intent-action offers different ones each call: no prefix repeats."""
    ep, _, _ = dog_runs["lares"]
    assert len(ep.llm_calls) > 2 and all(c.cached_tokens == 0 for c in ep.llm_calls)


def test_episode_usage_and_run_json_count_cached_tokens():
    """usage['cached_prompt_tokens'] is the sum over the LLM calls, in the episode and in its run JSON."""
    ep = run_agent("find my dog", load_world("lares-home"), "function-calling")
    assert ep.usage["cached_prompt_tokens"] == sum(c.cached_tokens for c in ep.llm_calls) > 0
    assert ep.to_run_json()["usage"]["cached_prompt_tokens"] == ep.usage["cached_prompt_tokens"]


def test_bench_records_cached_tokens():
    """A bench record has cached_prompt_tokens, and the summary rows a cached_share."""
    from lares_kit.bench import run_bench
    from lares_kit.bench.suites.tasks import load_suite

    tasks = [t for t in load_suite("lares-home") if t.category == "direct" and not t.held_out]
    bench = run_bench(tasks, agents=["function-calling"], models=["offline"])
    assert bench.records and all(r["success"] and r["cached_prompt_tokens"] > 0 for r in bench.records)
    assert all("cached_prompt_tokens" in r for r in bench.results)
    rows = bench.summary["overall"] + bench.summary["by_category"]
    assert rows and all(0 < row["cached_share"] < 1 for row in rows)


@pytest.mark.parametrize("server, sent", [("ollama", False), ("offline", True)])
def test_prompt_cache_key_only_to_servers_that_take_it(server, sent):
    """ollama is not sent OpenAI's prompt_cache_key; the offline profile gets one key for the whole run."""
    _, _, requests = _recorded(KITCHEN, agent="function-calling", server=server)
    keys = {r.get("prompt_cache_key") for r in requests}
    assert (keys != {None}) is sent and len(keys) == 1


# ------------------------------------------------------------------ the CLI
def test_cli_run_with_a_style_and_format(capsys):
    """lares run --prompt-style --knowledge-format --json: exit 0, usage with cached_prompt_tokens."""
    from lares_kit.cli.commands import main

    code = main(["run", KITCHEN, "--prompt-style", "lares", "--knowledge-format", "full", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "done" and "cached_prompt_tokens" in out["usage"]


# ------------------------------------------------------------------ big homes
@pytest.fixture(scope="module")
def big_world(tmp_path_factory):
    """A generated 5,000-device building written by `lares worlds generate`, and 5 generated tasks for it."""
    from lares_kit.bench.suites.generated import generate_tasks
    from lares_kit.cli.commands import main

    path = tmp_path_factory.mktemp("big") / "building.yaml"
    assert main(["worlds", "generate", "--devices", "5000", "--seed", "1", "--out", str(path)]) == 0
    home = load_world(str(path))
    return path, home, generate_tasks(home, n=5, seed=1)


@pytest.mark.parametrize("agent", ["intent-action", "function-calling"])
def test_cli_run_in_a_5000_device_building_stays_small(big_world, agent, capsys):
    """auto retrieves in a big building: a run is done with fewer than 5,000 prompt tokens per call."""
    from lares_kit.cli.commands import main

    path, _, tasks = big_world
    capsys.readouterr()
    code = main(["run", "--world", str(path), tasks[0].instruction, "--agent", agent, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "done"
    assert out["usage"]["prompt_tokens"] < 5000 * out["llm_calls"]


def test_generated_tasks_in_a_5000_device_building_pass_their_checks(big_world):
    """Every generated task passes its benchmark checks with the defaults, each call under 5,000 prompt tokens."""
    from lares_kit.bench.judging.checks import Outcome, run_checks
    from lares_kit.bench.scene import set_stage

    _, home, tasks = big_world
    client = make_client("offline")
    assert len(tasks) == 5
    for task in tasks:
        scene = set_stage(task, home)
        ep = run_agent(task.instruction, scene.home, "function-calling", model="offline", client=client,
                       user=scene.user, max_steps=task.max_steps, memory=scene.memory, context=scene.run_context)
        checks = run_checks(task.expect, Outcome.from_run(ep.to_run_json(), scene))
        assert ep.status == "done" and all(c.passed for c in checks), (task.id, checks)
        assert ep.knowledge_format == "retrieval" and max(c.prompt_tokens for c in ep.llm_calls) < 5000
