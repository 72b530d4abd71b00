"""Exercise 19, hearing the home: names as they are said, the word error rate, and what the home can mean.

Notebook: ``exercises/19_hearing_the_home.ipynb`` (for ``notebooks/19_talk_to_the_home``).
Nothing here needs a microphone, espeak-ng or pocketsphinx: the student
works on the words. q1 writes a name the way people say it (the
recognizer's pronunciations are of words, not of "3"); q2 measures hearing
with the word error rate (edit distance over words, divided by the words
said); q3 decides whether a transcript is a command the home can mean, and
writes it the home's way. The checks compare with the toolkit's own
:func:`~lares_kit.voice.grammar.spoken`, :func:`~lares_kit.voice.grammar.is_whole`
and :func:`~lares_kit.voice.grammar.written` on many cases, so a hard-coded
answer fails.
"""

from __future__ import annotations

from functools import lru_cache

from ....home.worlds import load_world
from ....voice.grammar import HomeGrammar, home_grammar, is_whole, number_words, spoken, written
from ...checking import PLACEHOLDER, Exercise, Incorrect, Problem, ____, call

__all__ = ["PLACEHOLDER", "____", "bind", "grammar_of", "number_words", "q1", "q2", "q3"]


# ------------------------------------------------------------------ q1
NAMES = ["Meeting room 3", "Kitchen", "Office 12", "Bedroom 2 lamp", "living-room lamp", "Room 40", "Floor 21",
         "CO2 sensor", "Kühlschrank", "Hall  light", "Studio 100"]


def _test_spoken(spoken_name) -> str:
    for name in NAMES:
        want = spoken(name)
        got = call(spoken_name, name, case=repr(name))
        if not isinstance(got, str):
            raise Incorrect(f"For {name!r}, return the spoken words as one string, like {want!r}; got {got!r}.")
        if got != want:
            raise Incorrect(f"For {name!r}, people say {want!r}, but you wrote {got!r}: lower case, plain letters "
                            "(no accents), every run of letters or digits a word, a number as its words "
                            "(number_words), and a short code such as CO2 spelled letter by letter.")
    return (f"All {len(NAMES)} names are said as people say them: numbers as words, codes spelled out, accents and "
            "punctuation gone. These are the words the recognizer has sounds for.")


# ------------------------------------------------------------------ q2
# (what was said, as written; what was heard, as decoded)
PAIRS = [
    ("Switch on the light in the office.", "switch on the light in the office"),
    ("Set the thermostat in Meeting room 3 to 19", "set the thermostat in meeting room three to nineteen"),
    ("turn on the light in the kitchen", "they're not like the kitten"),
    ("turn on the light in the kitchen", "turn on light in the kitchen"),
    ("find my dog", "please find my dog now"),
    ("switch the hallway light off", "switch off the hallway light"),
    ("dim the lamp", ""),
    ("open the blinds", "oh and i'm like the blinds in the lounge"),
    ("is the light in Office 2 on", "is the light in office to on"),
]


def _errors(a: list[str], b: list[str]) -> int:
    @lru_cache(maxsize=None)
    def d(i: int, j: int) -> int:
        if i == 0 or j == 0:
            return i + j
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
    return d(len(a), len(b))


def _rate(said: str, heard: str) -> float:
    a, b = spoken(said).split(), spoken(heard).split()
    return _errors(a, b) / len(a)


def _test_rate(word_error_rate) -> str:
    for said, heard in PAIRS:
        want = _rate(said, heard)
        case = f"said {said!r}, heard {heard!r}"
        got = call(word_error_rate, said, heard, case=case)
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise Incorrect(f"For {case}, return a number (errors / words said), like 0.25; got {got!r}.")
        if abs(got - want) > 1e-9:
            a, b = spoken(said).split(), spoken(heard).split()
            raise Incorrect(f"For {case}, the rate is {_errors(a, b)} / {len(a)} = {want:.3f}, but you gave "
                            f"{got:.3f}. Compare the spoken words ({' '.join(a)!r} against {' '.join(b)!r}), "
                            "count the fewest substitutions, insertions and deletions (words in order, not a set, "
                            "not position by position), and divide by the number of words said.")
    return (f"Right on all {len(PAIRS)} pairs: the edit distance over spoken words, divided by the words said -- "
            "a missing word, an extra one and a wrong one each count once, and the rate can pass 100%.")


# ------------------------------------------------------------------ q3
@lru_cache(maxsize=None)
def grammar_of(world: str) -> HomeGrammar:
    """The home's grammar of a world (``home_grammar(load_world(world))``), built once.

    Args:
        world: The world's id, such as ``lares-home``.
    """
    return home_grammar(load_world(world))


TRANSCRIPTS = [
    ("lares-home", "dim the light in the office to forty percent"),
    ("lares-home", "turn on the light in the"),
    ("smart-building", "set the thermostat in meeting room three to nineteen"),
    ("smart-building", "set the"),
    ("lares-home", "is the light in the hallway on"),
    ("lares-home", "open the blinds"),
    ("townhouse", "open the blinds"),
    ("lares-home", "where is"),
    ("smart-building", "turn on the ceiling light in ben s office"),
    ("lares-home", "turn on the light in the cellar"),
    ("townhouse", "set the heating to twenty two degrees"),
    ("lares-home", "find bruno"),
    ("lares-home", ""),
]


def _test_command(command_or_none) -> str:
    for world, transcript in TRANSCRIPTS:
        grammar = grammar_of(world)
        whole = bool(transcript) and is_whole(transcript, grammar)
        want = written(transcript, grammar) if whole else None
        case = f"{transcript!r} in {world}"
        got = call(command_or_none, transcript, grammar, case=case)
        if got == want:
            continue
        if want is None:
            raise Incorrect(f"For {case}, return None: those words are no whole sentence of that home's grammar "
                            "(is_whole says False) -- the start of a command, or a thing the home lacks -- so the "
                            f"home must do nothing; you returned {got!r}.")
        if got is None:
            raise Incorrect(f"For {case}, the words are a whole sentence of that home's grammar, so return the "
                            f"command as the home writes it, {want!r}; you returned None.")
        raise Incorrect(f"For {case}, the home writes the command {want!r} (its names and a number after 'to' "
                        f"written its way: written(transcript, grammar)); you returned {got!r}.")
    return (f"Right on all {len(TRANSCRIPTS)} transcripts: a whole sentence of the grammar is a command, written the "
            "home's way; a cut-short one, an empty one or one naming a thing the home lacks is None.")


q1 = Problem("A name as people say it", ("spoken_name",), _test_spoken, hints=[
    "Lower-case the name, drop accents (unicodedata.normalize('NFKD', name).encode('ascii', 'ignore').decode()), "
    "then split it into runs of letters and runs of digits: re.findall(r'[a-z]+|\\d+', ...).",
    "A run of digits is a number: number_words(int(token)) gives 'twenty one' for 21 and 'one hundred' for 100.",
    "A code is letters glued to digits ('co2'): find those with re.findall(r'[a-z]+\\d+|\\d+|[a-z]+', ...); "
    "when the letters are at most three, say them one by one ('c o'), then the number.",
])
q2 = Problem("The word error rate", ("word_error_rate",), _test_rate, hints=[
    "Make both sides words the same way first: spoken(text).split() (or your spoken_name from q1) makes "
    "'Meeting room 3' and 'meeting room three' the same words, and drops the full stop.",
    "The edit distance over words: d[i][j] = the fewest edits that turn the first i words said into the first j "
    "words heard = min(d[i-1][j] + 1, d[i][j-1] + 1, d[i-1][j-1] + (said[i-1] != heard[j-1])), with d[i][0] = i "
    "and d[0][j] = j. The rate is d[len(said)][len(heard)] / len(said).",
])
q3 = Problem("A command the home can mean", ("command_or_none",), _test_command, hints=[
    "is_whole(transcript, grammar) says whether the words are a whole sentence of the grammar; "
    "written(transcript, grammar) writes it the home's way ('meeting room three' -> 'Meeting room 3').",
    "Return written(transcript, grammar) when the transcript is whole, else None. An empty transcript "
    "(silence) is no command either.",
])
EXERCISE = Exercise("19_hearing_the_home", [q1, q2, q3])
bind = EXERCISE.bind
