"""``mcp_tools``: a remote home's tools for every agent design, against ``lares serve-home`` in a subprocess.

The three Lares scenarios end in the same states, by the same calls, as in process; errors, questions and
Home Assistant's dialect travel too; a server that cannot be reached is one sentence."""

import pytest

from lares_kit import load_world, run_agent
from lares_kit.agents.scenarios import LARES_SCENARIOS
from lares_kit.run_context import RunContext
from lares_kit.serve.app import HomeServer
from lares_kit.serve.client import McpConnectError, mcp_tools, mirror_home
from lares_kit.serve.service import HomeService
from lares_kit.tools.toolbox import default_tools
from lares_kit.tools.users import ScriptedUser

DESIGNS = ["function-calling", "intent-action", "react", "react-parallel", "sage"]


def served(scenario, *extra):
    seed = [] if scenario.seed is None else ["--seed", str(scenario.seed)]
    return mcp_tools(" ".join(["lares serve-home", scenario.world, "--mcp stdio", *seed, *extra]))


def in_process(scenario, agent):
    home = load_world(scenario.world, seed=scenario.seed)
    tools = default_tools(home) if agent == "sage" else None  # sage: the same tools for its device agent
    return run_agent(scenario.instruction, home, agent, tools=tools, user=ScriptedUser(answers=list(scenario.answers)))


@pytest.mark.parametrize("agent", DESIGNS)
def test_every_design_runs_the_lares_scenarios_through_mcp(agent):
    for scenario in LARES_SCENARIOS:
        with served(scenario) as tools:
            home = tools.home()
            remote = run_agent(scenario.instruction, home, agent, tools=tools,
                               user=ScriptedUser(answers=list(scenario.answers)))
            served_now = tools.knowledge()
        local = in_process(scenario, agent)
        where = f"{agent}, {scenario.name}"
        assert remote.status == local.status, where
        assert [(s.tool, s.arguments) for s in remote.tool_calls] == [(s.tool, s.arguments) for s in local.tool_calls]
        assert remote.final_state["devices"] == local.final_state["devices"], where
        assert remote.final_state["robot"] == local.final_state["robot"], where
        # the copy the agent read is the served home: its devices as the server publishes them
        assert {d["id"]: d["state"] for r in served_now["rooms"] for d in r["devices"]} == \
            remote.final_state["devices"], where
        assert scenario.check(remote) == scenario.check(local), where
    if agent in ("function-calling", "intent-action", "sage"):  # react's 10 rounds are too few for the far search
        assert all(scenario.check(in_process(scenario, agent)) for scenario in LARES_SCENARIOS)


def test_over_streamable_http_the_served_home_changes():
    service = HomeService(load_world("lares-home"))
    with HomeServer(service, port=0) as server, mcp_tools(server.mcp_url, headers=server.headers) as tools:
        episode = run_agent("turn on the light in the kitchen", tools.home(), "intent-action", tools=tools)
    assert episode.status == "done" and service.home.devices["kitchen-light"].state == {"on": True}
    assert repr(tools).startswith(f"McpTools('{server.mcp_url}': toggle_light, set_light")


def test_a_server_error_reaches_the_model_once_as_an_error():
    with mcp_tools("lares serve-home lares-home --mcp stdio") as tools:
        home = tools.home()
        from lares_kit.tools.toolbox import Toolbox

        obs = Toolbox(home, tools=list(tools)).dispatch("move_robot", {"destination_room_id": "office"})
    assert not obs.ok and obs.content.startswith("Error: The Office is not next to the Hallway;")


def test_a_question_nobody_answers_ends_the_run_as_in_process():
    daytime = next(s for s in LARES_SCENARIOS if s.answers)
    with served(daytime) as tools:
        remote = run_agent(daytime.instruction, tools.home(), "function-calling", tools=tools)
    local = run_agent(daytime.instruction, load_world("lares-home"), "function-calling")
    assert remote.status == local.status == "no_answer"
    assert remote.asked == local.asked


def test_home_assistants_dialect_through_mcp():
    with mcp_tools("lares serve-home lares-home --mcp stdio --tools ha") as tools:
        home = tools.home()
        done = run_agent("turn on the light in the kitchen", home, "function-calling", tools=tools, tool_set="ha")
        from lares_kit.tools.toolbox import Toolbox

        missing = Toolbox(home, tools=list(tools)).dispatch("HassTurnOn", {"name": "Toaster"})
    assert done.status == "done" and home.devices["kitchen-light"].state == {"on": True}
    assert [s.tool for s in done.tool_calls] == ["GetLiveContext", "HassTurnOn", "halt"]
    assert missing.content.startswith('{"success": false, "error": "There is no device called')  # HA's error shape


def test_the_copy_is_what_an_agent_may_know():
    home = load_world("lares-home")
    copy = mirror_home(home.knowledge())
    assert copy.knowledge() == home.knowledge() and copy.items == {}  # the dog is not in it until seen


@pytest.mark.parametrize("target, says", [
    ("", "mcp_tools needs a server"),
    ("no-such-program-here", "Could not connect to the MCP server 'no-such-program-here': FileNotFoundError"),
    ("lares worlds", "Could not connect to the MCP server 'lares worlds': MCPError: Connection closed"),
    ("http://127.0.0.1:1/mcp", "Could not connect to the MCP server 'http://127.0.0.1:1/mcp': ConnectError"),
    ("lares serve-home no-such-world --mcp stdio", "Could not connect to the MCP server 'lares serve-home "
     "no-such-world --mcp stdio': MCPError: Connection closed. The server said: lares: no-such-world: no world "
     "file with this id or path; known worlds:"),
])
def test_a_server_that_cannot_be_reached_is_one_sentence(target, says):
    with pytest.raises(McpConnectError) as err:
        mcp_tools(target, timeout=10)
    assert str(err.value).startswith(says) and "\n" not in str(err.value)


@pytest.mark.parametrize("source, answers, locked", [("letterbox", [], True), ("owner", ["Yes, please."], False)])
def test_the_served_homes_gate_refuses_or_asks_through_the_agents_user(source, answers, locked):
    with mcp_tools(f"lares serve-home shared-house --mcp stdio --source {source}") as tools:
        home = tools.home()
        episode = run_agent("unlock the front door", home, "function-calling", tools=tools,
                            context=RunContext(source=source),
                            user=ScriptedUser(answers=answers))
    assert home.devices["front-door-lock"].state == {"locked": locked}
    assert episode.asked == ([] if locked else ["Shall I unlock the front door lock (front-door-lock)? Please answer "
                                                "yes or no."])


@pytest.mark.parametrize("agent", ["function-calling", "sage"])
def test_a_home_of_your_own_catches_up_with_the_served_one_before_the_first_prompt(agent):
    # The served office light is on; the home passed in says off. Read unsynced, the knowledge would make the
    # agent answer "it is already off" and do nothing.
    service = HomeService(load_world("lares-home"))
    service.call("set_light", {"light_id": "office-light", "on": True})
    with HomeServer(service, port=0) as server, mcp_tools(server.mcp_url, headers=server.headers) as tools:
        episode = run_agent("turn off the light in the office", load_world("lares-home"), agent, tools=tools)
    assert episode.status == "done" and service.home.devices["office-light"].state == {"on": False}
