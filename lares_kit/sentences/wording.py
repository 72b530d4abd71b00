"""English for generated sentences: articles, agreement, names inside a sentence, joined clauses.

The tools (:mod:`lares_kit.tools.toolbox`) and the offline model
(:mod:`lares_kit.models`) build sentences from world-file names: a device
called "Spotlights", an item called "Keys" of type "keys", a TV called "TV".
Pasted into a template written for "Light" and "dog", those names gave
"The spotlights ... is now on", "Keys, a keys", "the tv", and a reason
joined to a sentence gave "It is night, so The user wants me...". These
small rules are what a template needs to read as English; they are
heuristics over the words, not a grammar, and say so where they guess.

It imports nothing from the rest of the toolkit, so both the tools and the
offline model (which may not import the home) can use it.
"""

from __future__ import annotations

import re

__all__ = ["is_plural", "agree", "with_article", "in_sentence", "join_clauses", "capitalise"]

# Singular words that end in "s" (a device named "City News" is one thing).
_SINGULAR_S = {"news", "series", "species", "chassis", "lens", "gas", "bus", "canvas", "atlas", "iris", "bias",
               "this", "its", "yes", "always", "plus"}
# Plural words that do not end in "s".
_PLURAL = {"people", "children", "men", "women", "mice", "geese", "feet", "teeth"}
# singular verb -> plural verb, for the verbs the sentences use
_VERBS = {"is": "are", "was": "were", "has": "have", "reads": "read", "does": "do", "needs": "need",
          "stays": "stay", "looks": "look", "isn't": "aren't", "wasn't": "weren't", "doesn't": "don't"}
# Words that open a sentence but are lower-case inside one ("so the user wants ...").
_OPENERS = {"the", "a", "an", "it", "it's", "there", "this", "that", "these", "those", "every", "all", "no", "you",
            "your", "nothing", "some", "one", "each", "both", "everything", "here", "now", "its"}


def is_plural(noun: str) -> bool:
    """Whether a name or noun phrase reads as plural, judged by its head word (a heuristic).

    The head is the last word before "in", "of", "on", "by", "at" or a
    bracket: "the spotlights in the Kitchen (kitchen-light)" -> "spotlights".

    Args:
        noun: A world-file name or a noun phrase, e.g. "Ceiling lights" or "the door of the fridges".

    Examples:
        >>> is_plural("Spotlights"), is_plural("Ceiling lights"), is_plural("keys"), is_plural("Blinds")
        (True, True, True, True)
        >>> is_plural("Light"), is_plural("Glass"), is_plural("City News"), is_plural("Status"), is_plural("TV")
        (False, False, False, False, False)
        >>> is_plural("the spotlights in the Kitchen (kitchen-light)"), is_plural("the door of the fridges")
        (True, False)
    """
    head = re.split(r"\s(?:in|of|on|by|at|near|from|with)\s|\s*[(,;:]", noun, maxsplit=1)[0]
    words = re.findall(r"[\w'-]+", head)
    if not words or (words[-1].isupper() and len(words[-1]) > 1):  # "TV", "CDs" is rare in a home
        return False
    last = words[-1].lower()
    if last in _PLURAL:
        return True
    if last in _SINGULAR_S or len(last) < 3:
        return False
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "ous"))


def agree(noun: str, verb: str) -> str:
    """``verb`` (given in its singular form: "is", "has", "was") agreeing with ``noun``.

    Args:
        noun: The subject the verb goes with, e.g. "the blinds in the Bedroom"; judged by :func:`is_plural`.
        verb: The verb in its singular form, e.g. "is", "has", "doesn't", "looks".

    Examples:
        >>> agree("the spotlights in the Kitchen", "is"), agree("the light in the Kitchen", "is")
        ('are', 'is')
        >>> agree("the blinds", "has"), agree("Keys", "was")
        ('have', 'were')
    """
    if not is_plural(noun):
        return verb
    return _VERBS.get(verb, verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb)


def with_article(noun: str) -> str:
    """``noun`` with "a" or "an" in front, or none for a plural ("keys"): how a sentence introduces a kind.

    "an" goes before a vowel sound, judged by the first letter with the usual
    exceptions ("a unit", "an hour"); an all-capitals word is read as letters
    ("an MP3 player", "a TV").

    Args:
        noun: A kind of thing, e.g. "dog", "smoke alarm", "keys"; "" stays "".

    Examples:
        >>> with_article("dog"), with_article("oven"), with_article("keys"), with_article("smoke alarm")
        ('a dog', 'an oven', 'keys', 'a smoke alarm')
        >>> with_article("umbrella"), with_article("unicorn"), with_article("hour"), with_article("MP3 player")
        ('an umbrella', 'a unicorn', 'an hour', 'an MP3 player')
    """
    if not noun or is_plural(noun):
        return noun
    first = noun.split()[0]
    if first.isupper() and len(first) > 1:  # letters said one by one: "an MP3", "a TV", "an HDMI"
        vowel = first[0] in "AEFHILMNORSX"
    else:
        low = first.lower()
        vowel = low[:1] in "aeiou" and not low.startswith(("uni", "use", "usu", "uti", "eu", "one", "once")) \
            or low.startswith(("hour", "honest", "honour", "heir"))
    return f"{'an' if vowel else 'a'} {noun}"


def in_sentence(name: str) -> str:
    """A name as it reads inside a sentence: lower-case, except words in capitals ("TV", "CO2").

    Args:
        name: A world-file name, e.g. "Ceiling Light" or "CO2 sensor".

    Examples:
        >>> in_sentence("Spotlights"), in_sentence("TV"), in_sentence("Ceiling Light"), in_sentence("CO2 sensor")
        ('spotlights', 'TV', 'ceiling light', 'CO2 sensor')
    """
    return " ".join(w if len(w) > 1 and w.upper() == w and any(c.isalpha() for c in w) else w.lower()
                    for w in name.split(" "))


def capitalise(text: str) -> str:
    """``text`` with its first letter upper-case (the rest untouched, unlike ``str.capitalize``).

    Args:
        text: A sentence that may start with a lower-case word, e.g. "the TV in the Den is on.".

    Examples:
        >>> capitalise("the TV in the Den is on.")
        'The TV in the Den is on.'
    """
    return text[:1].upper() + text[1:]


def join_clauses(lead: str, sentence: str) -> str:
    """``lead`` followed by ``sentence``, with the capital letter where it belongs.

    After a full stop (or ``?``, ``!``, ``:``) the sentence keeps its capital;
    after a clause ("It is night, so ") its first word is lower-cased when it
    is an ordinary word that only has a capital because it opened a sentence
    ("The", "It"...), never a name or "I".

    Args:
        lead: What comes first, with its own trailing space: a clause ("It is night, so "), a whole
            sentence ("You told me. "), or "" for none.
        sentence: The sentence to add, written as if it stood alone (capital first letter).

    Examples:
        >>> join_clauses("It is night, so ", "The user wants me to switch the light on.")
        'It is night, so the user wants me to switch the light on.'
        >>> join_clauses("You told me. ", "The light is on.")
        'You told me. The light is on.'
        >>> join_clauses("You answered yes, so ", "I will do it."), join_clauses("", "The light is on.")
        ('You answered yes, so I will do it.', 'The light is on.')
    """
    if not lead:
        return sentence
    if re.search(r"[.!?:]\s*$", lead) or not sentence:
        return lead + capitalise(sentence)
    first = re.match(r"[\w']+", sentence)
    if first and first.group(0).lower() in _OPENERS and first.group(0)[:1].isupper() and \
            (len(first.group(0)) == 1 or not first.group(0)[1:].isupper()):
        sentence = sentence[:1].lower() + sentence[1:]
    return lead + sentence
