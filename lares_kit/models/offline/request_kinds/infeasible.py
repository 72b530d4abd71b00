"""Requests the home cannot carry out: say what cannot be done and why, not "I could not understand".

Part of the offline model (:mod:`lares_kit.models.offline`). "Make me a
coffee" in a home with no coffee machine, "call the fire brigade" with no
phone, "bring my keys to the office" with a robot that has no hands: each is
a clear request, and a cautious assistant answers it with a refusal that
says what cannot be done, why, and what the home does have -- not with "I
could not understand", which is no answer at all. This module recognises
such requests from their shape:

* **an imperative verb** at the start, after any politeness ("please",
  "could you", "I'd like you to"), in one of three kinds: *making* food or
  drink (make, brew, cook, bake...), a *service* outside the home (call,
  phone, text, order, book...), and a *job for hands* (fetch, carry, clean,
  water, feed...); "I want a coffee" counts as asking to make one;
* **what it needs**: a small table from what is asked for to the appliance
  that would do it (coffee -> a coffee machine, the dishes -> a dishwasher);
  the home's devices are read from the WORLD KNOWLEDGE in the request, so the
  refusal names the closest device the home has, or says it has none;
* **what the tools do**: a sentence built from the tools the request offers
  (:func:`what_my_tools_do`), limited to what the home's knowledge shows.

It is tried only when the other rules found no goal (the planner's
"unknown"), so it never overrides a command they understood. Text that asks
for nothing -- no verb, or gibberish -- still gets "I could not understand".
These are rules, not understanding: a request phrased in a way no pattern
knows still falls through to the stand-in's "could not understand".
"""

from __future__ import annotations

import re

from ....sentences.wording import is_plural
from ..reading import Beliefs, Dev
from ..understanding import Goal
from ..vocabulary import describe, words_of

__all__ = ["recognise_infeasible", "what_my_tools_do"]

# Politeness in front of the verb: "please", "could you please", "I'd like you to", "go and".
_POLITE = re.compile(r"^(?:(?:please|kindly|ok|okay|hey|now|just|quickly|right|go and|go|can you|could you|would you|"
                     r"will you|i (?:want|need|would like|'d like|d like) you to|you (?:need|have) to)\s+)+")
# "I want a coffee", "can I have some toast": a wish for something to eat or drink is a request to make it.
_WISH = re.compile(r"^(?:i(?: want| need| fancy| would like|'d like| d like| would love|'d love)|(?:can|could|may) i "
                   r"(?:have|get)|get me|fetch me|bring me)\s+(.+)")
_SERVICE = (r"call|phone|ring|dial|text|email|e mail|message|contact|notify|alert|order|buy|purchase|book|reserve|"
            r"pay|send|post|tweet|summon|hire|invite")
_COOK = r"brew|cook|bake|fry|roast|microwave|whip up|boil|toast|grill|heat up|make|prepare|pour|serve|fix"
_HANDS = (r"fetch|bring|carry|pick up|put away|tidy(?: up)?|clean(?: up)?|wash(?: up)?|wipe|scrub|vacuum|hoover|mop|"
          r"sweep|dust|iron|fold|water|feed|walk|mow|empty|load|unload|hang up|hand|pass|throw(?: out| away)?|"
          r"repair|paint|polish|dig|weed|pack|unpack|grab|take|get|move|put|do|change")
_VERB = re.compile(rf"^(?:({_SERVICE})|({_COOK})|({_HANDS}))\b\s*(.*)")
# Verbs that also name ordinary commands ("make it warmer", "change the channel", "boil the kettle") count only
# with an object of the right kind: food for cooking; a chore, or a thing moved from or to somewhere, for hands.
_ONLY_COOKING = {"brew", "cook", "bake", "fry", "roast", "microwave", "whip up"}
_ELSE_HANDS = {"pour", "serve", "fix", "make"}
_CHORES = (r"dishes|washing up|washing|laundry|ironing|hoovering|vacuuming|cleaning|dusting|shopping|cooking|"
           r"gardening|housework|chores|beds?|sheets|(?:light )?bulbs?|batteries|battery|fuses?|nappy|diaper|filter|"
           r"bins?|rubbish|trash|recycling|bath|shower")
_CHORE_ONLY = {"do", "change", "make"}
_MOVED = {"take", "get", "move"}  # these need a chore or a place: "take the bins out", "get my bag from the car"
_PLACE = r"from|to|into|out|away|upstairs|downstairs|over here|here|back|off the|off of"
# Where "put" puts a thing ("on the shelf", "back", "away"); not "to max" or "out": those are settings.
_PUT_PLACE = (r"\b(?:on|in|into|onto|under|inside|behind|next to|beside|from)\s+(?:the|a|an|my|your|our)\b|"
              r"\b(?:back|away|upstairs|downstairs)\b")
_EMERGENCY = re.compile(r"\b(fire brigade|fire department|fire service|firemen|fire fighters|ambulance|paramedics|"
                        r"police|cops|emergency services|coastguard|999|911|112)\b")

# (verbs, what is asked for) -> the appliance that would do it, and words naming such a device in a home.
_APPLIANCES = [
    (None, r"coffee|espresso|latte|cappuccino|americano|flat white|mocha|macchiato", "coffee machine",
     ("coffee", "espresso")),
    (None, r"tea|cuppa|hot chocolate|cocoa|hot water|hot drink", "kettle", ("kettle",)),
    (None, r"toast|toastie", "toaster", ("toaster",)),
    (None, r"popcorn", "microwave", ("microwave",)),
    (None, r"smoothie|milkshake|juice", "blender", ("blender", "juicer")),
    (None, (r"dinner|lunch|breakfast|supper|brunch|meal|food|pasta|spaghetti|rice|soup|eggs?|omelett?e|pancakes?|"
            r"pizza|cake|bread|cookies|biscuits|chips|fries|stew|curry|roast|burger|steak|chicken|porridge|noodles"),
     "oven or hob", ("oven", "stove", "hob", "cooker", "microwave")),
    # Food and drink that need no appliance, only hands ("" below): still a request to make something.
    (None, (r"sandwich(?:es)?|salad|snack|something to eat|bite to eat|drink|cocktail|beer|wine|glass of \w+|"
            r"cup of water|fruit|cereal"), "", ()),
    (r"wash|clean|do|load|wash up", r"dishes|washing up|plates|cups|mugs|pans|pots|cutlery|glasses", "dishwasher",
     ("dishwasher",)),
    (r"wash|clean|do|load|dry", r"laundry|clothes|washing|shirts?|towels|sheets|socks|jeans", "washing machine",
     ("washing machine", "washer", "dryer")),
    (r"clean|clean up|tidy|tidy up|vacuum|hoover|mop|sweep|dust", (r"floors?|carpets?|rugs?|house|flat|home|rooms?|"
     r"mess|crumbs|dust|stairs|\w+ room|kitchen|hall|hallway|lounge|bedroom|office"), "robot vacuum",
     ("vacuum", "hoover")),
    (r"water", r".*", "sprinkler", ("sprinkler", "irrigation", "watering")),
    (r"mow", r".*", "robot mower", ("mower",)),
    (r"feed", r".*", "pet feeder", ("feeder",)),
]
# Tools this model knows: none of them can cook, carry or call out. Any *other* offered tool whose name has one
# of the stems below might do the job, so the model does not claim it cannot.
_KNOWN_TOOLS = {"togglelight", "setlight", "moverobot", "lookwithrobot", "setdevice", "readdevice", "askuser", "halt",
                "recall", "rememberpreference", "decidebestfunction", "getlivecontext"}
_STEMS = {"service": ("call", "phone", "sms", "text", "mail", "message", "notify", "order", "buy", "book", "send",
                      "contact", "dial", "alert"),
          "cook": ("cook", "brew", "coffee", "bake", "kettle", "make"),
          "hands": ("fetch", "bring", "pick", "grab", "carry", "clean", "vacuum", "arm", "gripper", "hand")}


def _plural(kind: str) -> str:
    # "thermostat" -> "thermostats", "smoke-alarm" -> "smoke alarms", "blinds" -> "blinds", "hvac" -> ...
    name = {"hvac": "air conditioner", "tv": "TV"}.get(kind, kind.replace("-", " ").replace("_", " "))
    return name if is_plural(name) else name + ("es" if name.endswith(("sh", "ch", "x")) else "s")


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) < 2 else ", ".join(parts[:-1]) + " and " + parts[-1]


def what_my_tools_do(b: Beliefs, can: set[str]) -> str:
    """A sentence saying what the offered tools can do in this home, or "" if they do nothing useful.

    Only what the knowledge shows is claimed: "set_device" in a home of lights
    alone sets nothing, so it is not mentioned.

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        can: the offered tools' names, normalised (``setdevice``, ``moverobot``).

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("", "latest", {"hall": Room("hall", "Hall")}, {"l": Dev("l", "Light", "light", "hall"),
        ...             "t": Dev("t", "Thermostat", "thermostat", "hall")}, "hall", {}, [])
        >>> import textwrap
        >>> print(textwrap.fill(what_my_tools_do(b, {"setlight", "setdevice", "moverobot", "lookwithrobot", "halt"})))
        My tools only switch lights on and off, change the settings of
        thermostats, and move the robot from room to room and look around with
        it.
        >>> what_my_tools_do(b, {"halt"})
        ''
    """
    if b.mode == "none" and not b.devices:
        return ""  # no map and no ids in the schemas: too little is known to say what the tools do here
    types = {d.type for d in b.devices.values()}
    parts = []
    if types & {"light", ""} and can & {"setlight", "togglelight", "setdevice"}:
        parts.append("switch lights on and off")
    others = sorted(t for t in types - {"light", "", "sensor"})
    if others and "setdevice" in can:
        named = [_plural(t) for t in others[:5]] + ([f"{len(others) - 5} more kinds of device"] if others[5:] else [])
        parts.append(f"change the settings of {_listed(named)}")
    if "sensor" in types and "readdevice" in can:
        parts.append("read the sensors")
    if "moverobot" in can and (b.robot or b.mode == "none"):
        parts.append("move the robot from room to room" + (" and look around with it" if "lookwithrobot" in can
                                                           else ""))
    if not parts:
        return ""
    return "My tools only " + (", ".join(parts[:-1]) + ", and " + parts[-1] if len(parts) > 1 else parts[0]) + "."


# Home Assistant's intent tools (lares_kit.ha.tools), normalised, and what each lets the assistant do here
_HA_CAN = {"hasslightset": "set the brightness of lights", "hassclimatesettemperature": "set the temperature",
           "hasssetposition": "open and close blinds and covers", "hasssetvolume": "set the volume",
           "getlivecontext": "read the state of the devices"}


def what_i_can_do(b: Beliefs, can: set[str]) -> str:
    """What the assistant can do here, from the tools offered and the devices the home has (never a fixed list).

    Args:
        b: what the model read from the request: the map and its devices.
        can: the offered tools' names, normalised (``setdevice``, ``rememberpreference``).

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("", "latest", {"hall": Room("hall", "Hall")}, {"l": Dev("l", "Light", "light", "hall")},
        ...             "hall", {}, [])
        >>> what_i_can_do(b, {"setlight", "setdevice", "halt"})
        'Here I can switch lights on and off. I can also answer questions about the home.'
        >>> what_i_can_do(b, {"halt"})
        'Here I can only answer questions about the home: none of my tools changes anything in it.'
    """
    tools = what_my_tools_do(b, can)
    parts = [tools[len("My tools only "):-1]] if tools else []
    kinds = sorted({_plural(d.type) for d in b.devices.values() if d.type not in ("", "sensor")})
    if can & {"hassturnon", "hassturnoff"} and kinds:  # Home Assistant's intent tools: what they do to what is here
        parts.append(f"switch the {_listed(kinds)} on and off")
    parts += [said for tool, said in _HA_CAN.items() if tool in can]
    if "rememberpreference" in can:
        parts.append("remember your preferences")
    if not parts:
        return "Here I can only answer questions about the home: none of my tools changes anything in it."
    listed = parts[0] if len(parts) < 2 else "; ".join(parts[:-1]) + "; and " + parts[-1]
    return f"Here I can {listed}. I can also answer questions about the home."


def _yours(phrase: str) -> str:
    # The user's words said back to them: "make me a coffee" -> "make you a coffee".
    swaps = {"me": "you", "my": "your", "us": "you", "our": "your", "i": "you", "mine": "yours", "myself": "yourself",
             "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd", "we": "you", "we're": "you're"}
    return " ".join(swaps.get(w, w) for w in phrase.split())


def _request(text: str) -> tuple[str, str, str] | None:
    """(kind, verb, object) of an imperative request, kind "service" | "cook" | "hands"; None if it is not one.

    Examples:
        >>> _request("could you please order me a pizza"), _request("i'd like a cup of tea")
        (('service', 'order', 'me a pizza'), ('cook', 'make', 'a cup of tea'))
        >>> _request("blue seventeen"), _request("make it warmer"), _request("turn on the light")
        (None, None, None)
    """
    text = re.sub(r"\s+(?:please|thanks|thank you|right now|now|asap)$", "", _POLITE.sub("", text))
    if wish := _WISH.match(text):
        thing = wish.group(1)
        if _appliance("make", thing):
            return "cook", "make", thing
        # "get me my book", "I need my glasses from the bedroom": something brought; "I need the light on": no
        return ("hands", "bring", thing) if text.startswith(("get me", "fetch me", "bring me")) or re.search(
            r"\bfrom\b", thing) else None
    if phone := re.match(r"^(?:get (.+?) on the (?:phone|line)|put me through to (.+))", text):
        return "service", "get", f"{phone.group(1)} on the phone" if phone.group(1) else f"through to {phone.group(2)}"
    m = _VERB.match(text)
    if not m:
        return None
    verb = next(g for g in m.groups()[:3] if g)
    thing = re.split(r"\s+(?:so|because|before|while|when|then|and then|as|since)\s+", m.group(4))[0].strip()
    kind = "service" if m.group(1) else "cook" if m.group(2) else "hands"
    if not thing or re.search(r"\brobot\b|\b(lift|elevator)\b", thing):
        return None  # "send the robot to the hall", "call the lift": commands for the home, not out of it
    if kind == "cook" and verb not in _ONLY_COOKING and not _appliance("make", thing):
        if verb not in _ELSE_HANDS:
            return None  # "boil the kettle", "heat up the lounge": a device, for the other rules
        kind = "hands"  # "pour me a glass of wine", "make the bed"
    chore = re.search(rf"\b(?:{_CHORES})\b", thing) or _appliance(verb, thing)
    if verb == "put" and not chore and not re.search(_PUT_PLACE, thing):
        return None
    if verb in _CHORE_ONLY and not chore or verb in _MOVED and not (
            chore or re.search(rf"\b(?:{_PLACE})\b", thing) and not re.search(r"\d", thing)):
        return None  # "make it warmer", "change the channel", "get the lights", "move the blinds to 50"
    return kind, verb, thing


def _appliance(verb: str, thing: str) -> tuple[str, tuple[str, ...]] | None:
    for verbs, things, appliance, words in _APPLIANCES:
        if (verbs is None or re.fullmatch(verbs, verb)) and re.search(rf"\b(?:{things})\b", thing):
            return appliance, words
    return None


def _closest(b: Beliefs, words: tuple[str, ...]) -> Dev | None:
    # The home's device that does most nearly what was asked: its type, name or aliases say so.
    for dev in b.devices.values():
        said = words_of(" ".join([dev.type, dev.name, dev.id, *dev.aliases]))
        if any(re.search(rf"\b{re.escape(w)}", said) for w in words):
            return dev
    return None


def _settings(dev: Dev) -> str:
    keys = [k for k in dev.state if k != "on"]
    if not keys:
        return "switch it on and off"
    return "change its settings (" + ", ".join(k.replace("_", " ") for k in dev.state) + ")"


def _hands(b: Beliefs, can: set[str] | None) -> str:
    if b.robot or can and "moverobot" in can:
        return "the robot has no arms or hands to do it"
    return "nothing in this home can do it by hand"


def _offered_tool_might(kind: str, can: set[str] | None) -> bool:
    # A tool this model does not know, whose name says it might do the job ("send_sms", "order_groceries").
    return any(name not in _KNOWN_TOOLS and any(stem in name for stem in _STEMS[kind]) for name in can or ())


def recognise_infeasible(b: Beliefs, can: set[str] | None = None) -> Goal | None:
    """A ``refuse`` goal for a clear request the home has no device or tool for; None otherwise.

    ``can`` holds the offered tool names, normalised; None leaves out the
    sentence about the tools (a clause inside a longer instruction).

    Args:
        b: what the model read from the request: the instruction, the map, and this task's calls and answers so far.
        can: the offered tools' names, normalised; None leaves out the sentence about the tools (a clause inside a
            longer instruction).

    Examples:
        >>> from lares_kit.models.offline.reading import Room
        >>> b = Beliefs("Brew me an espresso, please", "latest", {"hall": Room("hall", "Hall")},
        ...             {"l": Dev("l", "Light", "light", "hall", state={"on": False})}, "hall", {}, [])
        >>> import textwrap
        >>> print(textwrap.fill(recognise_infeasible(b, {"setlight", "moverobot", "halt"}).message))
        I can't brew you an espresso: this home has no coffee machine, and the
        robot has no arms or hands to do it. My tools only switch lights on
        and off, and move the robot from room to room.
        >>> b.instruction = "Could you phone my sister and tell her I'm late?"
        >>> recognise_infeasible(b, {"setlight", "halt"}).message.split(":")[0]
        "I can't phone your sister and tell her you're late"
        >>> recognise_infeasible(Beliefs("flibbet wozzle gronk", "latest", {}, {}, None, {}, [])) is None
        True
    """
    text = words_of(b.instruction)
    request = _request(text)
    if request is None:
        return None
    kind, verb, thing = request
    if _offered_tool_might(kind, can):
        return None
    act = _yours(f"{verb} {thing}")
    tools = what_my_tools_do(b, can) if can is not None else ""
    known = "this home has no" if b.mode != "none" else "I was told of no"
    if kind == "service":
        why = "I have no way to reach anyone outside this home (no phone, message, email or ordering tool)"
        urgent = ""
        if m := _EMERGENCY.search(thing):
            who = f"the {m.group(1)}" if not m.group(1).isdigit() else m.group(1)
            fire = ", and get everyone out" if re.search(r"\b(fire|smoke|burning|flames?)\b", text) else ""
            urgent = (f" If this is an emergency, call {who} yourself now (your local emergency number, such as 112, "
                      f"911 or 999){fire}.")
        return Goal("refuse", message=f"I can't {act}: {why}. {tools}".strip() + urgent)
    need = _appliance(verb, thing)
    hands = _hands(b, can)
    if need is None or not need[0]:
        return Goal("refuse", message=f"I can't {act}: {hands}. {tools}".strip())
    appliance, words = need
    dev = _closest(b, words)
    if dev is None:
        return Goal("refuse", message=f"I can't {act}: {known} {appliance}, and {hands}. {tools}".strip())
    return Goal("refuse", message=f"I can't {act} myself: the closest thing here is {describe(b, dev.id)}, and I can "
                                  f"only {_settings(dev)} -- {hands}. {tools}".strip())
