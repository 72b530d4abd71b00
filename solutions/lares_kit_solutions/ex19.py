"""Reference solutions for ``exercises/19_hearing_the_home.ipynb`` (``lares_kit.learn.exercises.field.ex19``)."""

import re
import unicodedata

from lares_kit.voice.grammar import is_whole, number_words, spoken, written

__all__ = ["command_or_none", "spoken_name", "word_error_rate"]


# %% q1
def spoken_name(name):
    """A written name as people say it: "Meeting room 3" -> "meeting room three".

    Args:
        name: A room's, device's or item's name, as the home writes it.
    """
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = []
    for token in re.findall(r"[a-z]+\d+|\d+|[a-z]+", plain):
        code = re.fullmatch(r"([a-z]+)(\d+)", token)
        if code:  # "co2": short letters one by one, then the number
            letters, token = code.groups()
            words += list(letters) if len(letters) <= 3 else [letters]
        words.append(number_words(int(token)) if token.isdigit() else token)
    return " ".join(words)


# %% q2
def word_error_rate(said, heard):
    """The words to substitute, insert or delete to turn ``heard`` into ``said``, per word said.

    Args:
        said: What was said, as written.
        heard: What the recognizer heard.
    """
    a, b = spoken(said).split(), spoken(heard).split()
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, 1):
        row, last = [i] + [0] * len(b), row
        for j, other in enumerate(b, 1):
            row[j] = min(last[j] + 1, row[j - 1] + 1, last[j - 1] + (word != other))
    return row[-1] / len(a)


# %% q3
def command_or_none(transcript, grammar):
    """The command the home can mean, written its way, or None.

    Args:
        transcript: The words the recognizer decoded.
        grammar: The home's grammar (``home_grammar(home)``).
    """
    if transcript.strip() and is_whole(transcript, grammar):
        return written(transcript, grammar)
    return None
