"""Claims checked against the home: what a final message says of the devices, against what changed.

An agent ends with a message ("The light in the Kitchen is now on; the TV was already off."). This module
reads the devices such a message names -- by the home's own ids, names and aliases, with or without their
room ("the spotlights in the Kitchen", "the kitchen light", ``kitchen-light``) -- and what it says of each
("is now on", "was already off", "now has target 21", "set to 50%", "locked", "eingeschaltet"), and compares
every claim with the home's state before and after the episode:

* "is now on", "turned on", "is on" claim the state *after* (the device is on at the end);
* "was already off", "is still locked" claim it was so before as well, and stayed so.

:func:`check_claims` returns a :class:`ClaimCheck`: the claims it read, the ``false_claims`` the states
contradict, and the parts it could not read (``unread``). A message with a part that says something about
the home but cannot be tied to a device and a setting ("Done.", "the other 11 were already off", a
template's "Licht eingeschaltet" in a home with no device called Licht) is ``unverifiable`` unless another
part is already false: the checker never guesses which device was meant. Sentences that refuse, ask or
hedge ("I could not change the oven", "Shall I unlock the door?") claim nothing. What the agent *did* is not
read here -- only what it *says*; the state diff is the judge.

It is not a language model: claims phrased in ways it does not know are reported unread, never guessed.
:func:`check_episode` runs it on a finished :class:`~lares_kit.episode.Episode`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...home.graph import Home

__all__ = ["Claim", "ClaimCheck", "check_claims", "check_episode", "state_diff"]

# Words that make a sentence a statement about the home (it must then be read, or it is unread).
_CLAIM_WORDS = re.compile(
    r"\b(now|already|still|turned|switched|on|off|open|opened|closed|locked|unlocked|armed|disarmed|muted|set|"
    r"done|achieved|completed|dimmed|eingeschaltet|ausgeschaltet|geöffnet|geschlossen|gestellt|verriegelt|entriegelt|erledigt)\b")
# A sentence with one of these asks, refuses or hedges: it claims nothing about the home.
_NO_CLAIM = re.compile(
    r"\b(cannot|can't|could not|couldn't|unable|did not|didn't|do not|don't|won't|will not|would|shall|should|"
    r"if|whether|want me|do you|try|not sure|i can|you can|no such|there is no|there's no|does not have|doesn't have|"
    r"when|whenever|once|i will|my tools|tools only|"
    r"nicht|kein|keine|konnte)\b")
# Said of a device: a word and the (attribute kind, value) it claims. "open" and "closed" depend on the device.
_WORDS = {"on": ("on", True), "off": ("on", False), "open": ("open", True), "opened": ("open", True),
          "closed": ("open", False), "shut": ("open", False), "locked": ("locked", True),
          "unlocked": ("locked", False), "armed": ("armed", True), "disarmed": ("armed", False),
          "muted": ("muted", True), "unmuted": ("muted", False),
          "eingeschaltet": ("on", True), "an": ("on", True), "ein": ("on", True), "ausgeschaltet": ("on", False),
          "aus": ("on", False), "geöffnet": ("open", True), "offen": ("open", True), "geschlossen": ("open", False),
          "verriegelt": ("locked", True), "abgeschlossen": ("locked", True), "entriegelt": ("locked", False),
          "aufgeschlossen": ("locked", False)}
_WORD = "|".join(sorted(_WORDS, key=len, reverse=True))
_NUMBER = r"-?\d+(?:\.\d+)?"
# After a device: "is now on", "(kitchen-light) has been switched off", "was already locked", "eingeschaltet".
_AFTER = re.compile(r"^\W*(?:(?:is|are|was|were|has been|have been|got|stays|remains|ist|sind|wurde|wurden)\s+)?"
                    r"(?:(now|already|still|jetzt|bereits|schon)\s+)?(?:been\s+)?"
                    r"(?:(?:turned|switched|set|left|kept|eingeschaltet und)\s+)?(not\s+|no longer\s+)?"
                    rf"({_WORD})\b")
# Before a device: "I turned on the", "I've locked the", "and the" (the verb before goes on).
_BEFORE = re.compile(rf"\b(?:turned|switched|put|have turned|'ve turned)\s+({_WORD})\s+(?:the\s+|your\s+|both\s+)?$"
                     r"|\b(locked|unlocked|opened|closed|armed|disarmed|muted|unmuted)\s+(?:the\s+|your\s+)?$")
_BEFORE_VERB = re.compile(r"\b(?:turned|switched|put|set|dimmed|changed|adjusted|raised|lowered)\s+(?:the\s+)?$")
_AND = re.compile(r"^\W*(?:and|&|,)?\W*(?:the\s+)?$")
_TO_NUMBER = re.compile(rf"^\W*(?:to|at|auf)\s+({_NUMBER})\s*(%|percent|per cent)?")
_THEN_WORD = re.compile(rf"^\W*({_WORD})\b")
# Which attribute a bare number sets, by device type (a percent goes to the first one the device has).
_NUMBER_DEFAULT = {"thermostat": "target", "hvac": "target", "blinds": "position", "cover": "position",
                   "oven": "temperature", "stove": "level", "fan": "speed", "light": "brightness|level"}
_PERCENT_DEFAULT = {"light": "brightness|level", "tv": "volume", "speaker": "volume", "media_player": "volume",
                    "blinds": "position", "cover": "position"}
_SYNONYMS = {"brightness": "brightness|level", "level": "level|brightness", "volume": "volume",
             "setpoint": "setpoint|target", "set point": "target|setpoint", "target": "target", "speed": "speed",
             "channel": "channel", "position": "position", "temperature": "target|temperature"}


@dataclass(frozen=True)
class Claim:
    """One thing a message says of one device: ``attribute`` is (``op``) ``value`` at the end (and before, if
    ``already``); ``op`` is ``==`` or ``>`` ("open" blinds: position above 0)."""

    device: str
    attribute: str
    value: Any
    already: bool = False  # "was already", "still": it was so before too, and did not change
    op: str = "=="
    text: str = ""  # the sentence it was read from


@dataclass
class ClaimCheck:
    """What :func:`check_claims` found in one message."""

    claims: list[Claim] = field(default_factory=list)
    false_claims: list[str] = field(default_factory=list)  # one sentence per contradicted claim
    unread: list[str] = field(default_factory=list)  # parts that say something of the home, not read

    @property
    def unverifiable(self) -> bool:
        """True when a part could not be read and nothing read was false: the message cannot be vouched for."""
        return bool(self.unread) and not self.false_claims


def state_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The settings that changed, ``{device: {attribute: (before, after)}}``.

    Args:
        before: Device states at the start, ``{device id: {attribute: value}}`` (``Home.truth()["devices"]``).
        after: Device states at the end, the same shape.

    Examples:
        >>> state_diff({"k": {"on": False}, "h": {"on": True}}, {"k": {"on": True}, "h": {"on": True}})
        {'k': {'on': (False, True)}}
    """
    out: dict[str, dict[str, Any]] = {}
    for device in sorted(set(before) | set(after)):
        old, new = before.get(device) or {}, after.get(device) or {}
        changed = {a: (old.get(a), new.get(a)) for a in sorted(set(old) | set(new)) if old.get(a) != new.get(a)}
        if changed:
            out[device] = changed
    return out


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group().lower(), m.start(), m.end()) for m in re.finditer(r"[^\W_]+(?:['’-][^\W_]+)*", text)]


_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def _key(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text.replace("’", "'").lower()))


# The phrases of the homes read lately, by what they are built from (names do not change while a home runs).
_VOCABULARIES: dict[Any, tuple[dict[tuple[str, ...], set[str]], set[tuple[str, ...]]]] = {}


def _vocabulary(home: Home) -> tuple[dict[tuple[str, ...], set[str]], set[tuple[str, ...]]]:
    """Phrases that name devices -> the device ids; and the phrases that name the robot or a movable thing."""
    names = tuple((d.id, d.name, d.type, d.room, tuple(d.aliases)) for d in home.devices.values())
    signature = (home.id, names, tuple(home.items), tuple(home.graph.nodes))
    if signature not in _VOCABULARIES:
        if len(_VOCABULARIES) > 16:  # a few homes at a time: bounded memory however many are checked
            _VOCABULARIES.clear()
        _VOCABULARIES[signature] = _build_vocabulary(home)
    return _VOCABULARIES[signature]


def _build_vocabulary(home: Home) -> tuple[dict[tuple[str, ...], set[str]], set[tuple[str, ...]]]:
    phrases: dict[tuple[str, ...], set[str]] = {}
    for dev in home.devices.values():
        room = home.graph.nodes[dev.room] if dev.room in home.graph else {}
        names = {dev.name, dev.type.replace("-", " "), *dev.aliases}
        names |= {n[:-5] for n in names if n.lower().endswith(" lock")}  # "the back door" for "Back door lock"
        names |= {n + "s" for n in list(names) if not n.endswith("s")}  # "lights": a plural names them all
        rooms = {dev.room.replace("-", " "), room.get("name", ""), *room.get("aliases", ())} - {""}
        found = [(dev.id,), _key(dev.id.replace("-", " "))]
        for name in names:
            found.append(_key(name))
            for r in rooms:
                for pattern in ("{n} in the {r}", "{n} in {r}", "{r} {n}", "{r}'s {n}", "{n} in der {r}",
                                "{n} im {r}", "{n} on the {r}", "{n} by the {r}"):
                    found.append(_key(pattern.format(n=name, r=r)))
        for near in (home.extra.get("device_extras") or {}).get(dev.id, {}).get("near", ()):
            for name in names:
                for pattern in ("{n} by the {r}", "{n} on the {r}", "{n} next to the {r}", "{n} near the {r}"):
                    found.append(_key(pattern.format(n=name, r=near)))
        for phrase in found:
            if phrase:
                phrases.setdefault(phrase, set()).add(dev.id)
    others = {_key(x) for thing in [home.robot, *home.items.values()] if thing is not None
              for x in [thing.id, thing.name, *getattr(thing, "aliases", ())]}
    return phrases, {o for o in others if o}


def _mentions(sentence: str, phrases: dict[tuple[str, ...], set[str]]) -> list[tuple[set[str], int, int, bool]]:
    """Devices named in a sentence, longest phrase first: (ids, start, end, plural), in order."""
    words, out, i = _words(sentence), [], 0
    longest = max((len(p) for p in phrases), default=0)
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            phrase = tuple(w.replace("’", "'") for w, _, _ in words[i:i + n])
            if phrase in phrases:
                plural = phrase[0].endswith("s") and len(phrases[phrase]) > 1
                out.append((phrases[phrase], words[i][1], words[i + n - 1][2], plural))
                i += n
                break
        else:
            i += 1
    merged: list[tuple[set[str], int, int, bool]] = []
    for m in out:  # "the light in the Kitchen (kitchen-light)": one mention
        if merged and re.fullmatch(r"[\s(]*", sentence[merged[-1][2]:m[1]]) and (m[0] & merged[-1][0]):
            ids = m[0] & merged[-1][0]
            merged[-1] = (ids, merged[-1][1], m[2], merged[-1][3] and len(ids) > 1)
        else:
            merged.append(m)
    return merged


def _attribute(kind: str, state: dict[str, Any], dev_type: str) -> tuple[str, str] | None:
    """The attribute and comparison a word's kind means for a device: ("open", "==") or ("position", ">")."""
    if kind in state or (kind == "on" and dev_type in ("light", "tv", "fan", "speaker")):
        return kind, "=="
    if kind == "open" and "door" in state:
        return "door", "=="
    if kind == "open" and "position" in state:
        return "position", ">"
    if kind == "muted" and "volume" in state:
        return "volume", "=="
    return None


def _first(options: str, state: dict[str, Any]) -> str | None:
    choices = options.split("|")
    return next((c for c in choices if c in state), choices[0] if len(choices) == 1 else None)


def _named_before(start: str, state: dict[str, Any]) -> str | None:
    """The setting named right before a number ("volume 20", "target is now 21", "brightness to 40"), or None."""
    tail = r"\s+(?:(?:is|are|of|at|to|now|set to|has|auf)\s+)*$"
    for key in sorted(state, key=len, reverse=True):
        if re.search(rf"\b{re.escape(key.replace('_', ' '))}{tail}", start):
            return key
    for word, options in _SYNONYMS.items():
        if re.search(rf"\b{word}{tail}", start):
            return _first(options, state)
    return None


def _read(home: Home, ids: set[str], before: str, after: str, state: dict[str, dict[str, Any]],
          sentence: str) -> list[Claim] | None:
    """The claims one mention makes; [] when it says nothing of its state; None when it cannot be read."""
    dev = home.devices[next(iter(ids))]
    st, kind_type = state.get(dev.id, {}), dev.type
    out: list[Claim] = []
    m = _AFTER.match(after.lower())
    word, already, negated = None, False, False
    if m:
        already, negated, word = bool(m.group(1) and m.group(1) in ("already", "still", "bereits", "schon")), \
            bool(m.group(2)), m.group(3)
    else:
        b = _BEFORE.search(before.lower())
        if b:
            word = b.group(1) or b.group(2)
        elif _BEFORE_VERB.search(before.lower()) and _THEN_WORD.match(after.lower()):
            word = _THEN_WORD.match(after.lower()).group(1)
    if word:
        attr = _attribute(_WORDS[word][0], st, kind_type)
        if attr is None:
            return None
        value = _WORDS[word][1] != negated
        name, op = attr
        if op == ">":  # open blinds: above 0; closed: at 0
            out.append(Claim(dev.id, name, 0, already, ">" if value else "==", sentence))
        elif name == "volume":  # muted: volume 0
            out.append(Claim(dev.id, name, 0, already, "==" if value else ">", sentence))
        else:
            out.append(Claim(dev.id, name, value, already, "==", sentence))
    region = after.lower()
    for n in re.finditer(rf"(?<![\w.:-])({_NUMBER})(?![\d:])\s*(%|percent|per cent|°c|°|degrees?|grad)?", region):
        start = region[:n.start()]
        if re.search(r"[;]|\bbut\b|\bwhile\b", start):
            break  # the number belongs to another part
        unit = n.group(2) or ""
        attr = _named_before(start, st)
        if attr is None and (re.search(r"\b(?:to|at|auf|now|is|are)\s+$", start) or
                             (not start.strip(" ,") and _BEFORE_VERB.search(before.lower()))):
            default = (_PERCENT_DEFAULT if "%" in unit or unit.startswith("per") else _NUMBER_DEFAULT).get(kind_type)
            attr = _first(default, st) if default else None
            if attr is None:
                return None  # a number said of the device, of a setting it does not say
        if attr is None or isinstance(st.get(attr), str):
            continue  # a number that is not a setting's value ("guide 21:00", "room 2")
        text = n.group(1)
        out.append(Claim(dev.id, attr, float(text) if "." in text else int(text),
                         bool(re.search(r"\b(already|still)\b", start)), "==", sentence))
    return out


def _holds(claim: Claim, value: Any) -> bool:
    if claim.op == ">":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > claim.value
    if isinstance(claim.value, bool) or isinstance(value, bool):
        return value is claim.value
    if isinstance(claim.value, (int, float)) and isinstance(value, (int, float)):
        return abs(value - claim.value) < 1e-9
    return str(value).lower() == str(claim.value).lower()


# A quotation ("...", '...' -- not an apostrophe: "I'm") or a JSON object ({"on": false}), innermost first
_QUOTED = re.compile(r"\{[^{}]*\}|\"[^\"]*\"|(?<!\w)'.*?'(?!\w)|“[^”]*”|‘.*?’(?!\w)")


_FLAG_VALUE = re.compile(r":\s*(on|open|locked) is (now |still )?(true|false)\b")
_FLAG_WORDS = {"on": ("off", "on"), "open": ("closed", "open"), "locked": ("unlocked", "locked")}


def check_claims(message: str, home: Home, before: dict[str, Any], after: dict[str, Any]) -> ClaimCheck:
    """Compare what ``message`` says of the home's devices with their states before and after.

    Args:
        message: The episode's final message.
        home: The home the episode ran in: its devices' ids, names, aliases and rooms (its states are not read).
        before: Device states at the start, ``{device id: {attribute: value}}``.
        after: Device states at the end, the same shape.

    Returns:
        A :class:`ClaimCheck`: the claims read, the false ones (one sentence each) and the unread parts.

    Examples:
        >>> from lares_kit import load_world
        >>> home = load_world("lares-home")
        >>> off, on = {"kitchen-light": {"on": False}}, {"kitchen-light": {"on": True}}
        >>> check_claims("The light in the Kitchen is now on.", home, off, on).false_claims
        []
        >>> check_claims("The kitchen light was already off.", home, off, on).false_claims
        ['"The kitchen light was already off": kitchen-light on was false and is true']
        >>> check_claims("Done!", home, off, on).unverifiable
        True
        >>> check_claims("I could not turn on the kitchen light.", home, off, off).claims
        []
        >>> check_claims("I could not tell what to change from 'Put the kitchen light on'.", home, off, off).claims
        []
        >>> check_claims('Sent 1 command(s): set_light {"light_id": "kitchen-light", "on": false}.', home, on,
        ...              off).false_claims
        []
        >>> [(c.device, c.attribute, c.value) for c in check_claims("kitchen-light: on is now true (was false).",
        ...                                                           home, off, on).claims]
        [('kitchen-light', 'on', True)]
    """
    phrases, others = _vocabulary(home)
    result = ClaimCheck()
    # What a message quotes -- the user's words, a command's JSON arguments -- is no claim about the home
    message = _QUOTED.sub("(quoted)", message or "")
    # "tv-credenza: on is now false (was true)": a setting's own words, as a sentence says them ("is now off")
    message = re.sub(r"\s*\(was [^()]*\)", "", message)
    message = _FLAG_VALUE.sub(lambda m: f" is {m.group(2) or ''}{_FLAG_WORDS[m.group(1)][m.group(3) == 'true']}",
                              message)
    for sentence in re.split(r"(?<!\d)[.!;\n]+(?!\d)|(?<=\d)[.!;]+(?=\s|$)", message or ""):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?") or _NO_CLAIM.search(sentence.lower()):
            continue
        if re.match(r"(?:no|none of|neither|nothing)\b", sentence.lower()):
            result.unread.append(sentence)  # "No lights are on": a claim of every one, read by no rule here
            continue
        mentions = _mentions(sentence, phrases)
        if not mentions:
            key = _key(sentence)
            names_other = any(key[i:i + len(o)] == o for o in others for i in range(len(key)))
            if _CLAIM_WORDS.search(sentence.lower()) and not names_other:
                result.unread.append(sentence)
            continue
        inherited: list[Claim] = []
        for n, (ids, start, end, plural) in enumerate(mentions):
            before_text = sentence[mentions[n - 1][2] if n else 0:start]
            after_text = sentence[end:mentions[n + 1][1] if n + 1 < len(mentions) else len(sentence)]
            if len(ids) > 1 and not plural:
                if _AFTER.match(after_text.lower()) or _BEFORE.search(before_text.lower()):
                    result.unread.append(sentence)  # "the TV" in a home with two: which one, it does not say
                continue
            heading = _AFTER.match(after_text.lower())
            if heading and after_text[heading.end():].lstrip().startswith(":"):
                continue  # "These lights are on: ..." introduces a list; the list is read
            claims: list[Claim] | None = []
            for device in sorted(ids):
                read = _read(home, {device}, before_text, after_text, after, sentence)
                if read is None:
                    claims = None
                    break
                claims.extend(read)
            if claims is None:
                result.unread.append(sentence)
                continue
            if not claims and inherited and _AND.match(before_text.lower()):  # "turned on the X and the Y"
                claims = [Claim(d, c.attribute, c.value, c.already, c.op, sentence)
                          for d in sorted(ids) for c in inherited[:1]]
            inherited = claims or inherited
            result.claims.extend(claims)
    for n, claim in enumerate(result.claims):
        if claim.attribute == "position" and isinstance(claim.value, (int, float)) and "position" not in (
                after.get(claim.device) or {}) and "open" in (after.get(claim.device) or {}):
            # Home Assistant's words for a window or door (a cover at position 100) of a home that says "open"
            claim = result.claims[n] = Claim(claim.device, "open", claim.value > 0, claim.already, "==", claim.text)
        old = (before.get(claim.device) or {}).get(claim.attribute)
        new = (after.get(claim.device) or {}).get(claim.attribute)
        if not _holds(claim, new) or (claim.already and not _holds(claim, old)):
            result.false_claims.append(f'"{claim.text}": {claim.device} {claim.attribute} was {_show(old)} '
                                       f'and is {_show(new)}')
    return result


def _show(value: Any) -> str:
    return "unset" if value is None else ("true" if value is True else "false" if value is False else str(value))


def check_episode(episode: Any, home: Home | None = None) -> ClaimCheck:
    """:func:`check_claims` on a finished Episode: its final message against its initial and final states.

    What a ``during:`` event set while the agent worked counts as the start ("the lamp was already on" is true
    of a lamp someone else switched on before the agent looked).

    Args:
        episode: A finished :class:`~lares_kit.episode.Episode` (``final_message``, ``initial_state``,
            ``final_state``, ``world``).
        home: The home it ran in (for names); None loads ``episode.world``.

    Examples:
        >>> from lares_kit.agents import run_agent
        >>> ep = run_agent("turn on the kitchen light", "lares-home")
        >>> check_episode(ep).false_claims, check_episode(ep).unverifiable
        ([], False)
    """
    if home is None:
        from ...home.worlds import load_world

        home = load_world(episode.world)
    before = {d: dict(s) for d, s in ((episode.initial_state or {}).get("devices") or {}).items()}
    for step in episode.steps:  # what others changed while the agent worked (a task's during: events) is not its own
        if type(step).__name__ == "Meanwhile" and step.change == "set" and isinstance(step.what, dict):
            for device, values in step.what.items():
                before.setdefault(device, {}).update(values if isinstance(values, dict) else {})
    return check_claims(episode.final_message, home, before, (episode.final_state or {}).get("devices", {}))
