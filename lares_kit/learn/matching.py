"""Matching a student's sentences by words: the text matching every exercise check uses.

A check that looks for ``"one"`` with ``in`` also finds it inside "d-one",
and a check that looks for ``"2"`` rejects "two". So checks never test
``word in text``; they ask this module instead:

* :func:`has_word` -- a word or phrase, as whole words, in any case;
* :func:`has_id` -- a device or tool id such as ``front-door-lock``, not
  inside a longer id (``front-door-lock-2``);
* :func:`numbers_in` / :func:`says_number` -- the numbers a sentence says,
  in digits ("220", "1,000") or in words ("two hundred and twenty").

This module is not a language model: it knows English number words and
word boundaries, nothing about what a sentence means.
"""

from __future__ import annotations

import re

__all__ = ["has_word", "has_id", "numbers_in", "says_number"]

_UNITS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine".split())}
_TEENS = {w: n for n, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen "
                                     "nineteen".split(), 10)}
_TENS = {w: n for n, w in zip(range(20, 100, 10), "twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000}
# A digit group: "7", "220", "1,000", "21.5" -- not part of a longer token such as "v2" or "2nd".
_DIGITS = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d|,\d|st\b|nd\b|rd\b|th\b)")


def _phrase(choice: str) -> str:
    # "nothing changed" -> nothing, then any spaces or hyphens, then changed; whole words at both ends.
    return r"\b" + r"[\s-]+".join(re.escape(w) for w in choice.split()) + r"\b"


def has_word(text: str, *choices: str) -> bool:
    """Whether ``text`` says one of ``choices`` as whole words, in any case.

    A choice may be a phrase ("at a time"); its words may be joined by spaces
    or hyphens in the text.

    Args:
        text: The sentence to read, e.g. what the student's tool returned.
        *choices: Words or phrases, any one of which is enough.

    Examples:
        >>> has_word("Nothing more needs to be done.", "one")
        False
        >>> has_word("Send one Action at a time.", "one")
        True
        >>> has_word("The front door is now unlocked.", "locked")
        False
        >>> has_word("It was already locked; nothing  changed.", "unchanged", "nothing changed")
        True
    """
    return any(re.search(_phrase(c), text, re.IGNORECASE) for c in choices)


def has_id(text: str, ident: str) -> bool:
    """Whether ``text`` names the id ``ident`` exactly, not as part of a longer id.

    Ids are joined with hyphens and underscores, so a plain word boundary is
    not enough: ``front-door-lock`` is inside ``front-door-lock-2``.

    Args:
        text: The sentence to read.
        ident: The id to find, as the world file spells it (case matters).

    Examples:
        >>> has_id("Locks: front-door-lock, back-door-lock.", "front-door-lock")
        True
        >>> has_id("Locks: front-door-lock-2.", "front-door-lock")
        False
        >>> has_id("'oven' is not a lock.", "oven"), has_id("the ovens", "oven")
        (True, False)
    """
    return re.search(rf"(?<![\w-]){re.escape(ident)}(?![\w-]|-\w)", text) is not None


def _words_to_numbers(words: list[str]) -> list[int]:
    # words: lower-case tokens. A run of number words becomes one number ("two hundred and twenty" -> 220);
    # a unit after a unit starts a new one ("one two" -> 1, 2).
    found: list[int] = []
    total = current = 0
    last = None  # the kind of the last number word in this run: unit, teen, ten, hundred, thousand

    def flush() -> None:
        nonlocal total, current, last
        if last is not None:
            found.append(total + current)
        total = current = 0
        last = None

    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if word in _UNITS or word in _TEENS or word in _TENS:
            kind = "unit" if word in _UNITS else "teen" if word in _TEENS else "ten"
            fits = last in (None, "hundred", "thousand") or (kind == "unit" and last == "ten")
            if not fits or (word == "zero" and last is not None):
                flush()
            current += _UNITS.get(word, _TEENS.get(word, _TENS.get(word, 0)))
            last = kind
        elif word in _SCALES:
            if last is None and i > 0 and words[i - 1] == "a":
                current, last = 1, "unit"  # "a hundred"
            if last not in ("unit", "teen", "ten") or (word == "hundred" and last == "ten"):
                flush()
                continue
            if word == "hundred":
                current *= 100
            else:
                total, current = (total + current) * 1000, 0
            last = word
        elif word == "and" and last in ("hundred", "thousand") and (after in _UNITS or after in _TEENS
                                                                    or after in _TENS):
            continue  # "two hundred and twenty"
        else:
            flush()
    flush()
    return found


def numbers_in(text: str) -> list[int | float]:
    """Every number ``text`` says, in digits or in English words, in order (digits first, then words).

    Args:
        text: The sentence to read.

    Examples:
        >>> numbers_in("Your reply had 3 Actions; 2 were not run.")
        [3, 2]
        >>> numbers_in("You sent two Actions, so one was skipped.")
        [2, 1]
        >>> numbers_in("Not above two hundred and twenty degrees (220 °C), in 1,000 homes or 21.5 rooms.")
        [220, 1000, 21.5, 220]
        >>> numbers_in("twenty-one, a hundred, one two, the 2nd, v2, office-12")
        [12, 21, 100, 1, 2]
    """
    found: list[int | float] = []
    for m in _DIGITS.finditer(text):
        whole = int(m.group(1).replace(",", ""))
        found.append(whole + float("0" + m.group(2)) if m.group(2) else whole)
    # Punctuation and digits end a run of number words ("a hundred, one" is 100 and 1); hyphens join them.
    found += _words_to_numbers(re.findall(r"[a-z]+|[^a-z\s-]+", text.lower()))
    return found


def says_number(text: str, number: int | float) -> bool:
    """Whether ``text`` says ``number``, in digits or in words.

    Args:
        text: The sentence to read.
        number: The number it should say; ``220`` matches "220" and "two hundred and twenty".

    Examples:
        >>> says_number("The oven goes up to two hundred and twenty degrees.", 220)
        True
        >>> says_number("Not above 2200 °C.", 220), says_number("Not above 220°C.", 220)
        (False, True)
    """
    return any(n == number for n in numbers_in(text))
