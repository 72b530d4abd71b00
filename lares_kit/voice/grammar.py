"""The home's own grammar: what the recognizer may hear, built from the rooms, devices and items of one home.

Part of :mod:`lares_kit.voice`. A general language model hears any English;
a home means only a few hundred sentences -- "turn on the light in the
kitchen", "set the heating to twenty two", "find my dog". This module writes
those sentences down as a JSGF grammar (the W3C-style grammar format
pocketsphinx reads): a few general command shapes (switch, set, dim, open,
lock, find, ask), filled with the spoken names of *this* home's rooms,
devices and items. Nothing comes from any benchmark's sentences.

Names are spoken as people say them: "Office 1" is "office one", "CO2 sensor"
is "c o two sensor". A word the pronunciation dictionary lacks ("extractor",
"lares") gets its phones from espeak-ng: its IPA transcription, mapped sound
by sound onto the dictionary's ARPAbet phones (:func:`arpabet`). The
transcript is turned back into the home's written words (:func:`written`):
"office one" -> "Office 1", "twenty two" after "to" -> "22".
"""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from dataclasses import dataclass, field

from ..home.graph import Home

__all__ = ["HomeGrammar", "home_grammar", "spoken", "number_words", "arpabet", "pronounce", "written", "is_whole",
           "rule_bodies", "word_errors"]

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_TYPE_WORDS = {"light": ["light", "lights", "lamp"], "thermostat": ["heating", "thermostat", "temperature"],
               "hvac": ["air conditioning", "air conditioner"], "tv": ["tv", "television"], "fan": ["fan"],
               "blinds": ["blinds"], "cover": ["blinds", "shutters"], "lock": ["lock", "door"], "door": ["door"],
               "window": ["window"], "speaker": ["speaker", "music"], "vacuum": ["vacuum", "robot"]}


def number_words(n: int) -> str:
    """A whole number from 0 to 100 as English words.

    Args:
        n: the number.

    Examples:
        >>> number_words(7), number_words(22), number_words(40), number_words(100)
        ('seven', 'twenty two', 'forty', 'one hundred')
    """
    if not 0 <= n <= 100:
        raise ValueError(f"spoken numbers go from 0 to 100, not {n}")
    if n == 100:
        return "one hundred"
    if n < 20:
        return _ONES[n]
    return _TENS[n // 10] + (f" {_ONES[n % 10]}" if n % 10 else "")


def spoken(name: str) -> str:
    """A written name as it is said: lower case, plain letters, digits as words, letters of a code spelled out.

    Args:
        name: a room's, device's or item's name.

    Examples:
        >>> spoken("Office 1"), spoken("CO2 sensor"), spoken("Kühlschrank"), spoken("living-room lamp")
        ('office one', 'c o two sensor', 'kuhlschrank', 'living room lamp')
    """
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    out = []
    for token in re.findall(r"[a-z]+\d+|\d+|[a-z]+(?:'[a-z]+)?", plain):
        code = re.fullmatch(r"([a-z]+)(\d+)", token)
        if code:  # "co2": the letters one by one, then the number
            out += list(code.group(1)) if len(code.group(1)) <= 3 else [code.group(1)]
            token = code.group(2)
        out.append(number_words(int(token)) if token.isdigit() and int(token) <= 100 else
                   " ".join(_ONES[int(d)] for d in token) if token.isdigit() else token)
    return " ".join(out)


@dataclass
class HomeGrammar:
    """What the recognizer may hear in one home.

    Attributes:
        jsgf: the grammar, in JSGF.
        names: each spoken name -> the name as the home writes it ("office one" -> "Office 1").
        words: every word the grammar uses.
    """

    jsgf: str
    names: dict[str, str] = field(default_factory=dict)
    words: set[str] = field(default_factory=set)
    pattern: re.Pattern[str] | None = field(default=None, repr=False)


def _alternatives(phrases) -> str:
    unique = sorted({p for p in phrases if p})
    return "(" + " | ".join(unique) + ")" if unique else "<VOID>"  # (a rule with nothing in it matches nothing)


def home_grammar(home: Home) -> HomeGrammar:
    """The JSGF grammar of the commands and questions ``home`` can mean, with its spoken names.

    Args:
        home: the home whose rooms, devices and items fill the command shapes.

    Examples:
        >>> from lares_kit import load_world
        >>> g = home_grammar(load_world("lares-home"))
        >>> "kitchen" in g.words and "<switch>" in g.jsgf, g.names["kitchen"]
        (True, 'Kitchen')
    """
    names: dict[str, str] = {}

    def said(name: str) -> str:
        phrase = spoken(name)
        names.setdefault(phrase, name)
        return phrase

    rooms = [said(r.get("name", r_id)) for r_id, r in home.graph.nodes(data=True)]
    rooms += [said(a) for _, r in home.graph.nodes(data=True) for a in r.get("aliases", [])]
    devices = [said(d.name) for d in home.devices.values() if d.exposed]
    # a name said without its kind's last word, as people do: "the back door" for the "Back door lock"
    devices += [said(" ".join(d.name.split()[:-1])) for d in home.devices.values() if d.exposed
                and len(d.name.split()) > 1 and spoken(d.name.split()[-1]) in _TYPE_WORDS.get(d.type, [d.type])]
    devices += [said(a) for d in home.devices.values() if d.exposed for a in d.aliases]
    devices += [w for d in home.devices.values() if d.exposed for w in _TYPE_WORDS.get(d.type, [spoken(d.type)])]
    items = [said(i.name) for i in home.items.values()] + [spoken(i.type) for i in home.items.values()]
    numbers = [number_words(n) for n in range(101)]
    jsgf = "\n".join([
        "#JSGF V1.0;",
        f"grammar {re.sub(r'[^a-z0-9_]', '_', home.id.lower()) or 'home'};",
        "public <command> = [<ask>] <request> [<tail>];",
        "<ask> = please | (could | can | would | will) you [please] | now;",
        "<tail> = please | now [please] | thanks | thank you;",
        "<request> = <switch> | <set> | <change> | <dim> | <open> | <lock> | <feel> | <question>"
        + (" | <find>;" if items else ";"),
        "<switch> = (turn | switch) (on | off) <things> | (turn | switch) <things> (on | off);",
        "<set> = set <things> to <number> [degrees | percent];",
        "<change> = turn <things> (up | down) | make [it | the <room>] (warmer | cooler | brighter | darker);",
        "<dim> = (dim | brighten) <things> [to <number> percent];",
        "<open> = (open | close | shut) <things>;",
        "<lock> = (lock | unlock) <things>;",
        *(["<find> = (find | where is | where are | look for) [my | the] <item>;", f"<item> = {_alternatives(items)};"]
          if items else []),
        "<feel> = (it is | it's) too (dark | bright | cold | hot | warm) [in [the] <room> | in here];",
        "<question> = (is | are) <things> (on | off | open | closed | locked | unlocked)"
        " | what is the temperature [in [the] <room>];",
        "<things> = <thing> [and <thing>] [and <thing>];",
        "<thing> = [the | all the | all | every] <device> [in [the] <room>] | [the] <room> <device>"
        " | everything [in [the] <room>];",
        f"<device> = {_alternatives(devices)};",
        f"<room> = {_alternatives(rooms)};",
        f"<number> = {_alternatives(numbers)};",
    ])
    words = set(re.findall(r"(?<![<#\w'])[a-z]+(?:'[a-z]+)?(?![\w'>])", jsgf.split("\n", 2)[2])) - {
        "public", "grammar", "void"}
    return HomeGrammar(jsgf, names, words)


# espeak-ng's IPA, sound by sound, as the CMU dictionary's ARPAbet phones (longest symbols first)
_IPA = sorted({
    "aɪ": "AY", "aʊ": "AW", "eɪ": "EY", "oʊ": "OW", "əʊ": "OW", "ɔɪ": "OY", "tʃ": "CH", "dʒ": "JH", "ɑːɹ": "AA R",
    "ɔːɹ": "AO R", "ɜː": "ER", "ɚ": "ER", "ɝ": "ER", "iː": "IY", "uː": "UW", "ɑː": "AA", "ɔː": "AO", "ɪ": "IH",
    "ᵻ": "IH", "i": "IY", "ɛ": "EH", "e": "EY", "æ": "AE", "a": "AA", "ɑ": "AA", "ɒ": "AA", "ɔ": "AO", "o": "OW",
    "ʊ": "UH", "u": "UW", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ɜ": "ER", "ɹ": "R", "r": "R", "ɾ": "D", "ʃ": "SH",
    "ʒ": "ZH", "θ": "TH", "ð": "DH", "ŋ": "NG", "j": "Y", "h": "HH", "w": "W", "b": "B", "d": "D", "f": "F",
    "ɡ": "G", "g": "G", "k": "K", "l": "L", "ɫ": "L", "m": "M", "n": "N", "p": "P", "s": "S", "t": "T", "v": "V",
    "z": "Z", "x": "K", "ç": "HH", "y": "UW", "ø": "ER", "œ": "ER",
}.items(), key=lambda kv: -len(kv[0]))


def arpabet(ipa: str) -> list[str]:
    """An IPA transcription (as espeak-ng writes it) as ARPAbet phones; marks it has no phone for are dropped.

    Args:
        ipa: the IPA of one word.

    Examples:
        >>> arpabet("ˈɛkstɹæktɚ")
        ['EH', 'K', 'S', 'T', 'R', 'AE', 'K', 'T', 'ER']
        >>> arpabet("lˈɛɹz")
        ['L', 'EH', 'R', 'Z']
    """
    text = "".join(c for c in unicodedata.normalize("NFD", ipa) if not unicodedata.combining(c) and c not in "ˈˌ‿-")
    phones: list[str] = []
    while text:
        symbol, phone = next(((s, p) for s, p in _IPA if text.startswith(s)), (text[0], ""))
        phones += phone.split()
        text = text[len(symbol):]
    return phones


def pronounce(words: list[str]) -> dict[str, list[str]]:
    """ARPAbet phones for words, from espeak-ng's American English IPA; {} when espeak-ng is not installed.

    Args:
        words: lower-case words the dictionary lacks.
    """
    if not words or shutil.which("espeak-ng") is None:
        return {}
    done = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", "en-us", "--", "\n".join(words)], capture_output=True,
                          text=True, timeout=60, check=False)
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0:
        return {}
    said = " ".join(lines).split()
    if len(said) != len(words):  # espeak-ng joined or split some: ask word by word
        said = [subprocess.run(["espeak-ng", "-q", "--ipa", "-v", "en-us", "--", w], capture_output=True, text=True,
                               timeout=60, check=False).stdout.strip().replace(" ", "") for w in words]
    return {w: phones for w, ipa in zip(words, said) if (phones := arpabet(ipa))}


_TOKEN = re.compile(r"<\w+>|[()\[\]|]|[a-z']+")


def rule_bodies(jsgf: str) -> dict[str, str]:
    r"""Each rule of a grammar written by :func:`home_grammar` (one rule a line) -> its body.

    Args:
        jsgf: the grammar.

    Examples:
        >>> rule_bodies("#JSGF V1.0;\ngrammar g;\npublic <command> = <ask> go;\n<ask> = please | now;")
        {'<command>': '<ask> go', '<ask>': 'please | now'}
    """
    return {m.group(1): m.group(2) for m in re.finditer(r"^(?:public )?(<\w+>) = (.*);$", jsgf, re.MULTILINE)}


def _regex(jsgf: str) -> re.Pattern[str]:
    # The grammar's sentences as one regular expression over "word word ... " (each word and a space), so a
    # transcript can be told whole or cut short. Rules are expanded in place (the grammar has no recursion).
    rules = rule_bodies(jsgf)

    def expand(body: str) -> str:
        out = []
        for token in _TOKEN.findall(body):
            out.append("(?!)" if token == "<VOID>" else f"(?:{expand(rules[token])})" if token.startswith("<") else
                       {"(": "(?:", ")": ")", "[": "(?:", "]": ")?", "|": "|"}.get(token, re.escape(token) + " "))
        return "".join(out)

    return re.compile(expand(rules["<command>"]))


def is_whole(transcript: str, grammar: HomeGrammar) -> bool:
    """Whether a transcript is a whole sentence of the grammar (pocketsphinx gives its best partial path when the
    sound reaches no end of the grammar: "set the", with nothing the home can set after it).

    Args:
        transcript: the decoded words.
        grammar: the home's grammar.

    Examples:
        >>> from lares_kit import load_world
        >>> g = home_grammar(load_world("lares-home"))
        >>> is_whole("turn on the light in the kitchen", g), is_whole("set the", g)
        (True, False)
    """
    if grammar.pattern is None:
        grammar.pattern = _regex(grammar.jsgf)
    return grammar.pattern.fullmatch(" ".join(transcript.split()) + " ") is not None


def written(transcript: str, grammar: HomeGrammar | None = None) -> str:
    """A transcript in the home's written words: its names as the home writes them, a number after "to" as digits.

    Args:
        transcript: what the recognizer heard, in lower-case words.
        grammar: the home's grammar (its spoken names); None: numbers only.

    Examples:
        >>> written("set the heating to twenty two")
        'set the heating to 22'
        >>> written("turn on the light in office one", HomeGrammar("", {"office one": "Office 1"}))
        'turn on the light in Office 1'
    """
    text = transcript
    for phrase, name in sorted((grammar.names if grammar else {}).items(), key=lambda kv: -len(kv[0])):
        if phrase != name.lower():
            text = re.sub(rf"\b{re.escape(phrase)}\b", name, text)
    values = {number_words(n): n for n in range(101)}
    pattern = "|".join(sorted(map(re.escape, values), key=len, reverse=True))
    return re.sub(rf"\b(to|at|by) ({pattern})\b", lambda m: f"{m.group(1)} {values[m.group(2)]}", text)


def word_errors(said: str, heard: str) -> int:
    """Substitutions, insertions and deletions between two word sequences: the edit distance over words.

    Args:
        said: the words said (the reference).
        heard: the words decoded.

    Examples:
        >>> word_errors("turn on the light", "turn the lights on")  # "on" left out, "lights", "on" put in
        3
    """
    a, b = said.split(), heard.split()
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, 1):
        row, last = [i] + [0] * len(b), row
        for j, other in enumerate(b, 1):
            row[j] = min(last[j] + 1, row[j - 1] + 1, last[j - 1] + (word != other))
    return row[-1]
