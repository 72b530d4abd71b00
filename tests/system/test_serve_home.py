"""``lares serve-home``: the MCP server (stdio and streamable HTTP, driven by the mcp SDK's own client), the
simulator API (/world, /call, /debug, /events), the safety policy on every door, and stopping within 2 s."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from lares_kit import load_world
from lares_kit.sentences.markers import DONE_HINT
from lares_kit.serve.app import HomeServer
from lares_kit.serve.mcp_server import KNOWLEDGE_URI, PROMPT_NAME
from lares_kit.serve.service import HomeService

LARES_TOOLS = ["toggle_light", "set_light", "move_robot", "look_with_robot", "ask_user", "halt"]


def stdio(*args):
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "lares_kit", "serve-home", *args, "--mcp", "stdio"])


def text(result):
    return "\n".join(part.text for part in result.content if part.type == "text")


async def answer_yes(context, params):
    return types.ElicitResult(action="accept", content={"answer": "Yes, it is daytime."})


async def tour(target, *, mode="auto"):
    """What one client session sees: tools, a call, resources, the prompt, and a question to the person."""
    seen = {}
    async with Client(target, mode=mode, elicitation_callback=answer_yes) as client:
        listed = await client.list_tools()
        seen["tools"] = [t.name for t in listed.tools]
        seen["schema"] = next(t.input_schema for t in listed.tools if t.name == "set_light")
        result = await client.call_tool("set_light", {"light_id": "kitchen-light", "on": True})
        seen["call"] = (text(result), result.is_error)
        wrong = await client.call_tool("move_robot", {"destination_room_id": "office"})
        seen["wrong"] = (text(wrong), wrong.is_error)
        knowledge = json.loads((await client.read_resource(KNOWLEDGE_URI)).contents[0].text)
        seen["kitchen"] = next(d["state"] for r in knowledge["rooms"] for d in r["devices"]
                               if d["id"] == "kitchen-light")
        seen["hidden"] = "bruno" in json.dumps(knowledge)
        resources = await client.list_resources()
        seen["resources"] = sorted(str(r.uri) for r in resources.resources)
        room = json.loads((await client.read_resource("lares://home/rooms/kitchen")).contents[0].text)
        seen["room"] = (room["name"], [d["id"] for d in room["devices"]])
        prompt = await client.get_prompt(PROMPT_NAME, {"instruction": "turn on the light for my dog"})
        seen["prompt"] = prompt.messages[0].content.text
        asked = await client.call_tool("ask_user", {"question": "Is it daytime?"})
        seen["asked"] = (text(asked), asked.is_error)
    return seen


def check_tour(seen):
    assert seen["tools"] == LARES_TOOLS
    assert seen["schema"]["properties"]["light_id"]["enum"][0] == "lounge-light"  # the in-process schema, enums too
    assert seen["call"] == ("The light in the Kitchen (kitchen-light) is now on. The Kitchen is lit.", False)
    assert seen["wrong"][1] and seen["wrong"][0].startswith("The Office is not next to the Hallway")
    assert seen["kitchen"] == {"on": True} and not seen["hidden"]  # what the agent may know, never where the dog is
    assert KNOWLEDGE_URI in seen["resources"] and "lares://home/devices/office-light" in seen["resources"]
    assert seen["room"] == ("Kitchen", ["kitchen-light"])
    assert seen["prompt"].startswith("You control a smart home") and seen["prompt"].endswith(
        "Instruction: turn on the light for my dog")
    assert seen["asked"] == ("The user answered: Yes, it is daytime.", False)  # elicitation asked the client's user


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026-07-28 protocol ("input required") and the earlier one
def test_the_mcp_sdk_client_over_stdio(mode):
    check_tour(anyio.run(lambda: tour(stdio("lares-home"), mode=mode)))


@pytest.fixture
def served():
    service = HomeService(load_world("lares-home"))
    with HomeServer(service, port=0) as server:
        yield server


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_mcp_sdk_client_over_streamable_http(served, mode):
    check_tour(anyio.run(lambda: tour(served.link("/mcp"), mode=mode)))
    assert served.service.home.devices["kitchen-light"].state == {"on": True}  # the served home changed


async def call_as(target, tool, arguments, *, elicit=None):
    async with Client(target, elicitation_callback=elicit) as client:
        return await client.call_tool(tool, arguments)


def test_the_safety_policy_refuses_a_call_for_the_source_the_server_serves():
    # shared-house trusts only its residents: the letterbox's "open the door" is refused whatever the door
    result = anyio.run(lambda: call_as(stdio("shared-house", "--source", "letterbox"), "set_device",
                                       {"device_id": "front-door-lock", "attribute": "locked", "value": False}))
    assert result.is_error and text(result).startswith("Refused by the home's safety policy")


def test_a_confirmation_goes_to_the_clients_user_by_elicitation():
    # The owner may unlock the shared house's door once the person confirms: the gate's question is asked
    # through ask_user, which the server turns into an elicitation; a yes lets the same call through, once.
    unlock = {"device_id": "front-door-lock", "attribute": "locked", "value": False}

    async def go():
        async with Client(stdio("shared-house"), elicitation_callback=answer_yes) as client:
            first = await client.call_tool("set_device", unlock)
            question = text(first).split('"')[1]  # the gate's own words
            asked = await client.call_tool("ask_user", {"question": question})
            again = await client.call_tool("set_device", unlock)
            return text(first), text(asked), text(again), again.is_error

    first, asked, again, failed = anyio.run(go)
    assert first.startswith("Confirmation needed: unlocking a door")
    assert asked == "The user answered: Yes, it is daytime."
    assert not failed and "is now unlocked" in again


def test_a_client_without_elicitation_gets_a_sentence_and_nothing_is_asked(served):
    result = anyio.run(lambda: call_as(served.link("/mcp"), "ask_user", {"question": "Is it daytime?"}))
    assert result.is_error and "does not support elicitation" in text(result) and "Is it daytime?" in text(result)


def test_a_declined_question_does_nothing(served):
    async def decline(context, params):
        return types.ElicitResult(action="decline")

    result = anyio.run(lambda: call_as(served.link("/mcp"), "ask_user", {"question": "Shall I?"}, elicit=decline))
    assert result.is_error and text(result) == "The person did not answer, so nothing was done."


def test_home_assistants_tools_can_be_served():
    async def go():
        async with Client(stdio("lares-home", "--tools", "ha")) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            done = await client.call_tool("HassTurnOn", {"name": "Light", "area": "Kitchen"})
            missing = await client.call_tool("HassTurnOn", {"name": "Toaster"})
            return names, text(done), missing

    names, done, missing = anyio.run(go)
    assert "HassTurnOn" in names and "GetLiveContext" in names and "move_robot" not in names
    reply = json.loads(done)  # Home Assistant's intent response
    assert reply["response_type"] == "action_done" and reply["data"]["success"][0]["id"] == "light.kitchen_light"
    assert missing.is_error and text(missing).startswith("There is no device called 'Toaster'.")


# ------------------------------------------------------------ the simulator API
def test_world_call_and_debug(served):
    base = served.base_url
    with httpx.Client(base_url=base, timeout=10, headers=served.headers) as http:
        assert http.get("/").json()["mcp"] == "/mcp"
        world = http.get("/world").json()
        assert world["home"] == "lares-home" and "bruno" not in json.dumps(world)
        done = http.post("/call", json={"tool": "set_light", "arguments": {"light_id": "office-light", "on": True}})
        assert done.json() == {"tool": "set_light", "ok": True,
                               "result": "The light in the Office (office-light) is now on. The Office is lit. "
                                         + DONE_HINT}
        wrong = http.post("/call", json={"tool": "fly", "arguments": {}}).json()
        assert not wrong["ok"] and wrong["result"].startswith("Error: There is no tool called 'fly'.")
        asked = http.post("/call", json={"tool": "ask_user", "arguments": {"question": "Day?"}}).json()
        assert asked["question"] == "Day?" and not asked["ok"]
        answered = http.post("/call", json={"tool": "ask_user", "arguments": {"question": "Day?"}, "answer": "Yes."})
        assert answered.json()["result"] == "The user answered: Yes."
        bad = http.post("/call", content=b"{not json", headers={"content-type": "application/json"})
        assert bad.status_code == 400 and "not valid JSON" in bad.json()["error"]
        shapeless = http.post("/call", json=["set_light"])
        assert shapeless.status_code == 400 and "Tools: toggle_light" in shapeless.json()["error"]
        hidden = http.get("/debug")
        assert hidden.status_code == 404 and "--debug" in hidden.json()["error"]


def test_debug_shows_the_hidden_truth_only_when_asked():
    with HomeServer(HomeService(load_world("lares-home")), port=0, debug=True) as server:
        truth = httpx.get(server.base_url + "/debug", headers=server.headers, timeout=10).json()
    assert truth["items"]["bruno"]["room"] == "bedroom"


def read_events(url, wanted, found, ready):
    with httpx.stream("GET", url, timeout=20) as response:
        for line in response.iter_lines():
            if line.startswith("event: hello"):
                ready.set()
            if line.startswith("data:") and '"type"' in line:
                found.append(json.loads(line[5:]))
                if len(found) >= wanted:
                    return


def test_events_follow_changes_from_every_door(served):
    found, ready = [], threading.Event()
    reader = threading.Thread(target=read_events, args=(served.link("/events"), 3, found, ready), daemon=True)
    reader.start()
    assert ready.wait(10)
    httpx.post(served.base_url + "/call", json={"tool": "set_light", "arguments": {"light_id": "lounge-light",
                                                                                   "on": True}},
               headers=served.headers, timeout=10)
    anyio.run(lambda: call_as(served.link("/mcp"), "move_robot", {"destination_room_id": "lounge"}))
    served.service.command("bedroom-light", {"on": True}, source="mqtt")
    reader.join(10)
    assert found == [{"type": "device", "id": "lounge-light", "room": "lounge", "state": {"on": True}},
                     {"type": "robot", "id": "robot", "room": "lounge"},
                     {"type": "device", "id": "bedroom-light", "room": "bedroom", "state": {"on": True}}]


# ------------------------------------------------------------ the command line
def start(*args):
    return subprocess.Popen([sys.executable, "-m", "lares_kit", "serve-home", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_serve_home_stops_within_2_s_of_sigint_with_clients_connected():
    server = start("lares-home", "--debug")
    try:
        banner = server.stdout.readline()
        assert banner.startswith("Serving The Lares home at http://127.0.0.1:")
        base = banner.split(" at ")[1].split()[0]
        token = next(line for line in iter(server.stdout.readline, "") if "token:" in line).split()[1]
        found, ready = [], threading.Event()
        threading.Thread(target=read_events, args=(f"{base}/events?token={token}", 99, found, ready),
                         daemon=True).start()
        assert ready.wait(10)  # an event stream held open

        session_open, release = threading.Event(), threading.Event()

        async def hold_session():
            async with Client(f"{base}/mcp?token={token}") as client:
                await client.list_tools()
                session_open.set()
                await anyio.to_thread.run_sync(release.wait, 30)

        holder = threading.Thread(target=lambda: _quietly(lambda: anyio.run(hold_session)), daemon=True)
        holder.start()
        assert session_open.wait(10)  # an MCP session open
        held = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))  # an idle connection
        start_time = time.perf_counter()
        os.kill(server.pid, signal.SIGINT)
        code = server.wait(timeout=30)
        assert code == 0 and time.perf_counter() - start_time < 2.0
        assert "stopped after 0 tool calls" in server.stderr.read()
        held.close()
        release.set()
    finally:
        server.kill()
        server.wait()


def _quietly(work):
    try:
        work()
    except BaseException:  # noqa: S110 - the server went away under the session: that is the test
        pass


def test_bad_worlds_and_busy_ports_exit_2_with_a_sentence():
    done = subprocess.run([sys.executable, "-m", "lares_kit", "serve-home", "no-such-world"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and "no-such-world" in done.stderr and "Traceback" not in done.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = subprocess.run([sys.executable, "-m", "lares_kit", "serve-home", "lares-home", "--port", str(port)],
                               capture_output=True, text=True, timeout=60, check=False)
    assert taken.returncode == 2 and "try another --port" in taken.stderr and "Traceback" not in taken.stderr
