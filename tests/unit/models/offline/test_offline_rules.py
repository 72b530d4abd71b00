"""Rules of the offline model, tested with wordings the task suites do not use.

Each fix to the offline model came from a failed benchmark task; these tests
use other phrasings and other homes, so a rule is tested as a rule and not
as the answer to one task: "which one?" when several devices fit, "where's
the X?", "preheat", "downstairs"/"upstairs", "X off and Y on".
"""

from __future__ import annotations

import re

import pytest

from lares_kit import ScriptedUser, load_world
from lares_kit.agents import run_agent


def _run(world: str, instruction: str, answers=(), states=None):
    home = load_world(world)
    for device, state in (states or {}).items():
        home.update_device(device, state)
    user = ScriptedUser(answers=list(answers))
    episode = run_agent(instruction, home, agent="function-calling", model="offline", user=user)
    on = {d: dev.state.get("on") for d, dev in home.devices.items()}
    return episode, user, on, home


def test_several_devices_fit_the_same_words_so_it_asks_which_and_acts_on_the_answer():
    episode, user, on, _ = _run("garden-flat", "switch the lamp on please", answers=["the floor lamp"])
    assert len(user.asked) == 1 and user.asked[0].startswith("Which one do you mean:")
    assert "the desk lamp in the Study" in user.asked[0]
    assert on["living-room-lamp"] is True and on["study-light"] is False and on["main-bedroom-light"] is False


def test_plural_and_named_devices_do_not_ask():
    _, user, on, _ = _run("garden-flat", "turn on all the lamps")
    assert user.asked == [] and on["living-room-lamp"] and on["study-light"] and on["main-bedroom-light"]
    _, user, on, _ = _run("garden-flat", "turn on the floor lamp and the desk lamp")
    assert user.asked == [] and on["living-room-lamp"] and on["study-light"] and not on["main-bedroom-light"]


def test_two_lights_in_the_named_room_ask_which_one():
    _, user, on, _ = _run("townhouse", "switch on the light in the main bedroom", answers=["the ceiling one"])
    assert user.asked and "bedside lamp" in user.asked[0]
    assert on["main-bedroom-light"] is True and on["bedside-lamp"] is False


def test_where_is_a_pet_sends_the_robot_to_look():
    episode, _, _, home = _run("lares-home", "where's the dog?")
    assert episode.status == "done" and home.robot.room == home.items["bruno"].room
    assert "Bruno" in episode.final_message


def test_preheat_switches_the_oven_on_as_well():
    _, _, on, home = _run("townhouse", "please preheat the oven to 200")
    assert on["oven"] is True and home.devices["oven"].state["temperature"] == 200


def test_upstairs_and_downstairs_are_the_floors_of_the_house():
    lights = {"living-room-light": {"on": True}, "landing-light": {"on": True}, "spare-room-light": {"on": True}}
    _, _, on, home = _run("townhouse", "switch off the lights upstairs", states=lights)
    upstairs = {d for d, dev in home.devices.items() if dev.type == "light" and home.graph.nodes[dev.room]["floor"] > 0}
    assert upstairs and not any(on[d] for d in upstairs) and on["living-room-light"] is True


def test_one_verb_with_an_on_and_an_off():
    _, _, on, _ = _run("lares-home", "switch the office light on and the hallway light off")
    assert on["office-light"] is True and on["hallway-light"] is False


def test_a_means_that_defeats_its_purpose_is_asked_about_and_the_answer_is_followed():
    lit = {"office-light": {"on": True}}
    _, user, on, _ = _run("lares-home", "switch the office light off so that I can do my reading",
                          answers=["yes, sorry, I meant on"], states=lit)
    assert user.asked and "so that you can do your reading" in user.asked[0] and on["office-light"] is True
    _, user, on, _ = _run("lares-home", "please turn the office light on so I can get some sleep",
                          answers=["oh, never mind then"])
    assert user.asked and on["office-light"] is False  # left as it was


def test_a_means_that_serves_its_purpose_is_just_done():
    _, user, on, _ = _run("lares-home", "turn on the office light so I can read")
    assert user.asked == [] and on["office-light"] is True
    _, user, on, _ = _run("lares-home", "switch off the kitchen light to save electricity",
                          states={"kitchen-light": {"on": True}})
    assert user.asked == [] and on["kitchen-light"] is False


@pytest.mark.parametrize("instruction, expected", [
    ("switch on the fan in office 2 and set its thermostat to 19",
     {"office-2-fan": ("on", True), "office-2-thermostat": ("target", 19)}),
    ("open the window in meeting room 2 and switch the light on in there",
     {"meeting-room-2-window": ("open", True), "meeting-room-2-light": ("on", True)}),
    ("set the thermostat in office 2 to 18, and the one in office 5 to 24",
     {"office-2-thermostat": ("target", 18), "office-5-thermostat": ("target", 24)}),
    ("cut all the lights in the kitchen", {"kitchen-light": ("on", False)}),
    ("office 2 is empty now, we don't need any lights there", {"office-2-light": ("on", False)}),
])
def test_references_back_and_other_ways_of_saying_off(instruction, expected):
    home = load_world("smart-building")
    for device in expected:  # start from the opposite, so every change is visible
        attribute, value = expected[device]
        home.update_device(device, {attribute: (not value) if isinstance(value, bool) else 22})
    run_agent(instruction, home, agent="function-calling", model="offline")
    assert {d: home.devices[d].state[a] for d, (a, _) in expected.items()} == {d: v for d, (_, v) in expected.items()}


def test_questions_about_floors_and_how_warm_a_room_is():
    episode, *_ = _run("smart-building", "how many storeys has this building got?")
    assert episode.final_message.startswith("The home has 2 floors")
    episode, _, _, home = _run("smart-building", "how cold is it in office 2?")
    temperature = home.devices["office-2-sensor"].state["temperature"]
    assert f"temperature {temperature}" in episode.final_message


def test_an_app_the_tv_does_not_have_is_refused_and_an_oven_asks_how_hot():
    episode, _, on, _ = _run("townhouse", "stream YouTube on the telly")
    assert "cannot play youtube" in episode.final_message and on["living-room-tv"] is False
    episode, user, on, home = _run("townhouse", "switch on the oven please", answers=["make it 180"])
    assert user.asked == ["What temperature shall I set the oven in the Kitchen to?"]
    assert on["oven"] is True and home.devices["oven"].state["temperature"] == 180
    episode, user, on, home = _run("townhouse", "switch on the oven please", answers=["hot, I suppose"])
    assert episode.final_message.startswith("I asked, but I could not tell") and on["oven"] is False
    assert home.devices["oven"].state["temperature"] == 0


# ---------------------------------------------------------------- the contradiction follow-up
# "Lower it to make it warmer" is asked about; the answer is then followed ONCE. The model is stateless and
# re-reads the conversation every turn, so before the fix "I meant warmer" raised the target by 2 each turn
# (19 -> 21 -> 23 -> ...) until the home's limit stopped it with an error.

def _sets(episode, device):
    return [s for s in episode.steps if getattr(s, "tool", "") == "set_device"
            and s.arguments.get("device_id") == device]


@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react"])
@pytest.mark.parametrize("knowledge", ["latest", "initial"])
def test_a_relative_answer_to_a_contradiction_is_one_step_then_a_report(agent, knowledge):
    home = load_world("smart-building")  # office 3's thermostat: target 19
    user = ScriptedUser(answers=["ah sorry, I meant warmer obviously"])
    episode = run_agent("Could you turn the thermostat in office 3 down to heat the room up?", home, agent=agent,
                        model="offline", user=user, knowledge=knowledge)
    assert len(user.asked) == 1 and "colder, not warmer" in user.asked[0]
    assert home.devices["office-3-thermostat"].state["target"] == 21
    assert len(_sets(episode, "office-3-thermostat")) == 1
    assert episode.status == "done" and "target 21" in episode.final_message


@pytest.mark.parametrize("answer, target, sets", [
    ("no -- cooler, like I said", 17, 1),            # the means after all: one step down
    ("lower it then", 17, 1),
    ("I don't want it warmer, I'm boiling", 17, 1),  # a negated direction does not count
    ("put it on 23 please", 23, 1),                  # a number is the target
    ("yes, go on", 21, 1),                           # yes to "Do you want it warmer?"
    ("hmm, never mind, keep it as it is", 19, 0),
    ("whatever you think", 19, 0),                   # unclear: nothing is changed, and it says so
])
def test_each_kind_of_answer_to_a_contradiction(answer, target, sets):
    home = load_world("smart-building")
    user = ScriptedUser(answers=[answer])
    episode = run_agent("lower the heating in office 3 so the room gets warmer", home, agent="function-calling",
                        model="offline", user=user)
    assert len(user.asked) == 1 and episode.status == "done"
    assert home.devices["office-3-thermostat"].state["target"] == target
    assert len(_sets(episode, "office-3-thermostat")) == sets
    if answer.startswith("whatever"):
        assert episode.final_message.startswith("I could not tell from your answer")


def test_the_cooler_contradiction_and_a_step_that_needs_the_owners_yes():
    _, user, _, home = _run("townhouse", "crank the heat up so we can cool things down", answers=["cooler, sorry"])
    assert "warmer, not cooler" in user.asked[0] and home.devices["hall-thermostat"].state["target"] == 17
    # From 25 one step warmer is 27: above the home's limit the policy asks first; after the yes it is set once.
    episode, user, _, home = _run("townhouse", "bring the thermostat down to warm us up", states={
        "hall-thermostat": {"target": 25}}, answers=["warmer, of course", "yes"])
    assert len(user.asked) == 2 and user.asked[1].startswith("Shall I set the target")
    assert home.devices["hall-thermostat"].state["target"] == 27 and episode.status == "done"


def test_lights_off_to_see_better_follows_the_answer_either_way():
    on = {"kitchen-light": {"on": True}}
    episode, user, lights, _ = _run("garden-flat", "switch off the lights in the kitchen to see better",
                                    answers=["no, honestly, I want it dark in there"], states=on)
    assert "darker, not brighter" in user.asked[0] and lights["kitchen-light"] is False
    episode, user, lights, _ = _run("garden-flat", "switch off the lights in the kitchen to see better",
                                    answers=["oh -- brighter, yes"], states=on)
    assert lights["kitchen-light"] is True and "already on" in episode.final_message


@pytest.mark.parametrize("answer, wanted, expected", [
    ("Yeah. Warmer.", "warmer", ("warmer", None)),
    ("Oh, yes please!", "cooler", ("cooler", None)),
    ("turn it down, it's too warm", "warmer", ("cooler", None)),
    ("not colder -- warmer!", "cooler", ("warmer", None)),
    ("18.5 would be lovely", "warmer", ("number", 18.5)),
    ("forget about it", "cooler", ("leave", None)),
    ("no", "warmer", ("unclear", None)),
    ("lights on, I can't see a thing", "brighter", ("brighter", None)),
])
def test_reading_an_answer_to_a_contradiction(answer, wanted, expected):
    from lares_kit.models.offline.request_kinds.contradiction import read_answer

    assert read_answer(answer, wanted) == expected


@pytest.mark.parametrize("answer, target", [("warmer -- sorry!", 21), ("no, down", 17), ("20 please", 20),
                                            ("forget it", 19)])
def test_sage_asks_about_a_contradiction_and_hands_over_one_plain_task(answer, target):
    home = load_world("townhouse")
    user = ScriptedUser(answers=[answer])
    episode = run_agent("knock the heating down so the house heats up", home, agent="sage", model="offline", user=user)
    assert len(user.asked) == 1 and "colder, not warmer" in user.asked[0] and episode.status == "done"
    assert home.devices["hall-thermostat"].state["target"] == target


# ---------------------------------------------------------------- refusing what the home cannot do
# A clear request the home has no device or tool for is refused with the reason ("this home has no coffee
# machine", "no phone", "the robot has no arms or hands"), never answered "I could not understand": that is no
# refusal. Text that asks for nothing still gets "I could not understand". Wordings of our own, in several homes.

NOT_UNDERSTOOD = "could not understand"


def _says(world: str, instruction: str, agent: str = "function-calling", knowledge: str = "latest"):
    home = load_world(world)
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    episode = run_agent(instruction, home, agent=agent, model="offline", user=ScriptedUser(answers=[]),
                        knowledge=knowledge)
    changed = [d for d, dev in home.devices.items() if dev.state != before[d]]
    return episode, changed, home


@pytest.mark.parametrize("world, instruction, missing", [
    ("lares-home", "Brew me an espresso, would you?", "no coffee machine"),
    ("garden-flat", "Could you whip up some pancakes for breakfast?", "no oven or hob"),
    ("lares-home", "I'd love a slice of toast", "no toaster"),
    ("smart-building", "please wash up the mugs in the staff kitchen", "no dishwasher"),
    ("townhouse", "do my laundry", "no washing machine"),
    ("garden-flat", "hoover the living room", "no robot vacuum"),
    ("lares-home", "Please water the houseplants", "no sprinkler"),
])
def test_an_appliance_the_home_lacks_is_named_in_the_refusal(world, instruction, missing):
    episode, changed, _ = _says(world, instruction)
    message = episode.final_message
    assert episode.status == "done" and changed == []
    assert message.startswith("I can't ") and f"this home has {missing}" in message and "no arms or hands" in message
    assert NOT_UNDERSTOOD not in message and "My tools only" in message


@pytest.mark.parametrize("instruction, closest", [
    ("Could you make me a hot chocolate?", "the kettle in the Kitchen"),
    ("roast a chicken for tonight", "the oven in the Kitchen"),
])
def test_an_appliance_the_home_has_is_named_as_the_closest_thing_and_left_alone(instruction, closest):
    episode, changed, _ = _says("townhouse", instruction)
    assert f"the closest thing here is {closest}" in episode.final_message and changed == []
    assert NOT_UNDERSTOOD not in episode.final_message


@pytest.mark.parametrize("instruction, emergency", [
    ("Ring the police, quickly!", True),
    ("could you get an ambulance on the phone... call an ambulance", True),
    ("text my landlord that the boiler is broken", False),
    ("Please order a taxi for seven", False),
    ("book me a table at the Italian place", False),
    ("email the plumber", False),
])
def test_a_service_outside_the_home_is_refused_and_an_emergency_gets_advice(instruction, emergency):
    episode, changed, _ = _says("smart-building", instruction)
    message = episode.final_message
    assert "I have no way to reach anyone outside this home" in message and changed == []
    assert ("If this is an emergency" in message) is emergency and NOT_UNDERSTOOD not in message
    assert not re.search(r"\bI('ve| have)? (called|phoned|texted|ordered|booked|emailed)\b", message)


@pytest.mark.parametrize("world, instruction", [
    ("lares-home", "carry my laptop from the lounge to the bedroom"),
    ("lares-home", "grab my keys from the hallway"),
    ("garden-flat", "put the book back on the shelf in the study"),
    ("townhouse", "take the bins out"),
    ("townhouse", "walk the dog round the block"),
    ("smart-building", "fetch the parcel from the lobby"),
    ("garden-flat", "I need my glasses from the bedroom"),
    ("townhouse", "make the bed in the spare room"),
])
def test_a_job_for_hands_is_refused_because_the_robot_has_none(world, instruction):
    episode, changed, _ = _says(world, instruction)
    message = episode.final_message
    assert message.startswith("I can't ") and "the robot has no arms or hands" in message, message
    assert changed == [] and NOT_UNDERSTOOD not in message and "move the robot from room to room" in message


@pytest.mark.parametrize("world, instruction, missing", [
    ("townhouse", "warm the spare room up a bit", "no heating in the Spare room"),
    ("townhouse", "put the heating on in the box room... I mean the spare room", "no heating in the Spare room"),
    ("smart-building", "switch on the fan in the lobby", "no fan in the Lobby"),
    ("smart-building", "close the window in the server room", "no window in the Server room"),
    ("smart-building", "switch on the sprinklers in office 2", "no sprinkler"),
])
def test_a_device_the_named_room_lacks_is_refused_with_the_nearest_one(world, instruction, missing):
    episode, changed, _ = _says(world, instruction)
    assert missing in episode.final_message and changed == [] and NOT_UNDERSTOOD not in episode.final_message


def test_the_nearest_device_is_counted_in_exits_from_the_named_room():
    episode, _, home = _says("smart-building", "turn the fan on in the server room")
    nearest = episode.final_message.split("The nearest I have: ")[1].split(";")[0]
    import networkx as nx
    hops = nx.single_source_shortest_path_length(home.graph, "server-room")
    fans = sorted(hops[d.room] for d in home.devices.values() if d.type == "fan")
    named = next(d for d in home.devices.values() if d.type == "fan" and d.room in nearest.lower().replace(" ", "-"))
    assert hops[named.room] == fans[0]


@pytest.mark.parametrize("agent", ["function-calling", "intent-action", "react"])
def test_every_agent_design_gets_the_same_refusal(agent):
    episode, changed, _ = _says("lares-home", "Can you phone my sister for me?", agent=agent)
    assert episode.final_message.startswith("I can't phone your sister") and changed == []


def test_a_compound_request_does_what_it_can_and_refuses_the_rest():
    episode, changed, _ = _says("lares-home", "switch on the kitchen light and make me a cappuccino")
    assert changed == ["kitchen-light"] and "no coffee machine" in episode.final_message
    assert "did not understand" not in episode.final_message


@pytest.mark.parametrize("instruction", ["asdf qwerty zxcv", "blue seventeen", "the weather is lovely today",
                                         "flibbertigibbet", "make it so", "do it", "get going"])
def test_text_that_asks_for_nothing_clear_is_still_not_understood(instruction):
    episode, changed, _ = _says("lares-home", instruction)
    assert NOT_UNDERSTOOD in episode.final_message and changed == []


@pytest.mark.parametrize("instruction, device", [
    ("put the lights on in the kitchen", "kitchen-light"),
    ("turn on the big light in the office", "office-light"),
    ("switch the office light on", "office-light"),
])
def test_on_as_a_place_does_not_stop_switching(instruction, device):
    _, changed, _ = _says("lares-home", instruction)
    assert changed == [device]


def test_a_tool_the_model_does_not_know_may_do_the_job_so_it_does_not_claim_it_cannot():
    from lares_kit.models.offline.reading import Beliefs
    from lares_kit.models.offline.request_kinds.infeasible import recognise_infeasible

    b = Beliefs("text my brother that dinner is ready", "latest", {}, {}, None, {}, [])
    assert recognise_infeasible(b, {"halt", "setlight"}).message.startswith("I can't text your brother")
    assert recognise_infeasible(b, {"halt", "sendsms"}) is None


def test_feeling_cold_in_a_room_with_no_heating_names_the_nearest_heating():
    episode, changed, _ = _says("townhouse", "brr, the spare room is like an icebox -- I'm freezing up here")
    message = episode.final_message
    assert "no heating in the Spare room" in message and "the thermostat in the Hall" in message
    assert changed == [] and ". ." not in message


def test_a_question_about_a_device_the_room_lacks_says_so():
    episode, changed, _ = _says("smart-building", "is the fan running in the lobby?")
    assert episode.final_message.startswith("There is no fan in the Lobby") and changed == []
    assert NOT_UNDERSTOOD not in episode.final_message



def test_a_look_in_the_dark_tells_the_model_which_light_to_switch_on():
    # The map leaves the bedroom's light out: the only place its id appears is the tool's error sentence.
    import json

    from lares_kit import Toolbox
    from lares_kit.episode import knowledge_header
    from lares_kit.models.offline.reading import read_request

    house = load_world("lares-home")
    house.move_robot("bedroom")
    blind_map = house.knowledge()
    next(r for r in blind_map["rooms"] if r["id"] == "bedroom")["devices"] = []
    result = Toolbox(house).dispatch("look_with_robot", "{}")
    assert not result.ok and "(bedroom-light) first" in result.content
    messages = [{"role": "system", "content": knowledge_header("latest") + "\n" + json.dumps(blind_map)},
                {"role": "user", "content": "find my dog"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                 "function": {"name": "look_with_robot", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": result.content}]
    beliefs = read_request(messages)
    light = beliefs.devices["bedroom-light"]
    assert (light.type, light.room, light.state["on"]) == ("light", "bedroom", False)
    assert beliefs.is_lit("bedroom") is False and beliefs.lights_in("bedroom") == [light]


@pytest.mark.parametrize("person, expected", [("amal", "amal"), ("Ana Lima", "Ana Lima"), ("mary-jane", "mary-jane"),
                                               ("", "")])
def test_both_readers_take_the_speaker_from_the_contract_sentence(person, expected):
    # The agents write "You are talking to NAME." with contract.speaker_line; the Lares reader and SAGE's reader
    # must read the same name back (they once had two regexes that differed).
    from lares_kit.models.offline.designs.sage.reading import read_talk
    from lares_kit.models.offline.reading import read_request
    from lares_kit.sentences.markers import speaker_line

    messages = [{"role": "system", "content": "Carry out the request." + speaker_line(person)},
                {"role": "user", "content": "set my usual temperature"}]
    assert read_request(messages).speaker == expected
    assert read_talk(messages, []).person == expected


@pytest.mark.parametrize("result, message", [
    ("Error: Refused by the home's safety policy: no door is unlocked at night.",
     "Refused by the home's safety policy: no door is unlocked at night."),
    ("The Door lock (front-door-lock) is now unlocked.", "Done. The Door lock (front-door-lock) is now unlocked."),
])
def test_the_sage_device_agent_reports_a_refusal_without_done(result, message):
    # The refusal is recognised by contract.is_refusal, so a change of the gate's wording cannot turn it into "Done.".
    import json

    from lares_kit.device_apis.documents import capability_doc
    from lares_kit.models.offline.designs.sage.devices import device_step
    from lares_kit.models.offline.designs.sage.reading import read_talk
    from lares_kit.sentences.markers import is_refusal

    unlock = {"device_id": "front-door-lock", "capability": "lock", "command": "unlock", "arguments": {}}
    history = [("find_device", {"description": "front door"}, "Best match: front-door-lock (Hallway: the smart lock)"),
               ("get_capability_docs", {"device_id": "front-door-lock", "capability": "lock"},
                capability_doc(load_world("sage-home"), "front-door-lock", "lock")),
               ("execute_command", unlock, result)]
    messages = [{"role": "user", "content": "unlock the front door"}]
    for n, (name, args, answer) in enumerate(history):
        messages += [{"role": "assistant", "content": "", "tool_calls": [
                         {"id": f"c{n}", "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}}]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": answer}]
    tools = [{"function": {"name": n}} for n in ("find_device", "get_capability_docs", "execute_command", "halt")]
    assert device_step(read_talk(messages, tools)) == ("halt", {"message_to_user": message})
    assert is_refusal(result) == message.startswith("Refused")


def test_an_answer_that_names_no_room_is_not_taken_for_one():
    # Without a map the model asks where the dog is; "I'm not sure" told it nothing, and its reply must not
    # claim otherwise: it changes nothing, says the answer named no room, and says what would work.
    from lares_kit import load_world, run_agent
    from lares_kit.tools import ScriptedUser

    home = load_world("lares-home")
    before = {d: dict(dev.state) for d, dev in home.devices.items()}
    episode = run_agent("turn on the light for my dog", home, agent="function-calling", knowledge="none",
                        user=ScriptedUser(answers=["I'm not sure."]))
    assert "You told me" not in episode.final_message
    assert 'Your answer ("I\'m not sure.") names no room,' in episode.final_message
    assert "for example" in episode.final_message
    assert {d: dev.state for d, dev in home.devices.items()} == before
