"""How a task's text patterns match what an agent said: whole words, numbers as digits or words.

Taught in ``notebooks/08_evaluation.ipynb``; the rules are in
``worlds/tasks/README.md``. Task authors write the patterns of ``mentions``,
``not_claims``, ``must_ask``, ``must_not_ask``, ``remembers`` and the argument
patterns of ``forbidden`` as Python regular expressions, matched ignoring
case. Read raw, a regex finds letters anywhere: ``hi`` matched inside
"Nothing", ``no`` inside "now", ``2`` inside "12", so a wrong answer could
pass a check. :func:`text_regex` rewrites a pattern with two rules:

1. **Whole words.** A match may not begin or end inside a word: ``hi`` finds
   "Hi!" but not "Nothing", ``light`` not "lighter". To match the start of a
   word, say so: ``injur\\w*`` finds "injury" and "injured".
2. **Numbers as digits or words.** A whole number in a pattern also matches
   its words, and a number word (zero to ninety) its digits: ``2`` finds
   "two", ``21`` "twenty-one", ``1650`` "1,650", ``nine`` "9". A number never
   matches part of a bigger one: ``2`` does not find "12", "2.5",
   "thirty-two" or "two hundred". Numbers written next to a digit pattern
   (``1[0-5]``, ``21\\.5``) or inside an id (``office-3``) stay as written.

A pattern that is only ``.`` (what ``must_ask: true`` means) matches any
non-empty text. This module only rewrites patterns; the checks that use them
are :mod:`lares_kit.bench.judging.checks`.
"""

from __future__ import annotations

import re

__all__ = ["ANY", "number_regex", "spoken", "text_regex", "widen_numbers"]

ANY = "."  # "any text at all": must_ask: true / must_not_ask: true

_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# number word -> value, for words in a pattern ("two" also finds "2")
_WORD_VALUE = {w: n for n, w in enumerate(_UNITS)} | {w: 10 * n for n, w in enumerate(_TENS) if w}
_ANY_NUMBER_WORD = "(?:" + "|".join(sorted(_WORD_VALUE, key=lambda w: (-len(w), w))) + "|hundred|thousand)"
_DIGIT_WORD = "(?:one|two|three|four|five|six|seven|eight|nine)"
# A number's words must not be the tail of a bigger number ("two" in "thirty-two", "one hundred and two").
_NOT_A_TAIL = "".join(f"(?<!{w}[- ])" for w in (*_TENS[2:], "hundred", "thousand")) + "(?<!hundred and )"
_NOT_A_HEAD = r"(?![- ](?:hundred|thousand)\b)"  # nor its head ("two" in "two hundred")

# A match may not begin or end inside a word (rule 1): at each end, either
# the text beside it is not a word character, or the match's own end is not.
_START = r"(?:(?<!\w)|(?!\w))"
_END = r"(?:(?!\w)|(?<!\w))"

# The pieces of a pattern, so numbers are rewritten only where they are literal text.
_TOKEN = re.compile(r"""
    (?P<placeholder>\{[a-z][a-z0-9_-]*(?:\.room)?\})           # {bruno.room}, {user}: filled later
  | (?P<quantifier>(?:\{\d*(?:,\d*)?\}|[?*+])[?+]?)
  | (?P<group>\(\?(?:P?<\w+>|P=\w+\)|\#[^)]*\)|<?[=!]|[aiLmsux-]*[:)])|\()
  | (?P<cls>\[\^?\]?(?:\\.|[^\]\\])*\])                          # [.,] and [0-9] are opaque
  | (?P<escape>\\.)
  | (?P<word>[A-Za-z]+|[0-9]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)
# Neighbours that make a number part of something bigger: a decimal, an id, a digit pattern.
_GLUED_ESCAPES = {r"\d", r"\D", r"\w", r"\W", r"\S", r"\.", r"\,", r"\-", r"\_"}
_GLUED_TEXT = {".", ",", "-", "_"}


def spoken(n: int) -> str | None:
    """A regex for a whole number in words, from 0 to 999 (None beyond).

    Args:
        n: A whole number.

    Examples:
        >>> spoken(2), spoken(21), spoken(40)
        ('two', 'twenty[- ]?one', 'forty')
        >>> bool(re.fullmatch(spoken(105), "one hundred and five")), spoken(1650)
        (True, None)
    """
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens] + (f"[- ]?{_UNITS[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        head = ("(?:one|a)" if hundreds == 1 else _UNITS[hundreds]) + "[- ]hundred"
        return head + (rf"(?:[- ]|\s+and\s+){spoken(rest)}" if rest else "")
    return None


def number_regex(n: int) -> str:
    """A regex for a whole number, in digits or words, that never matches part of a bigger number.

    Args:
        n: A whole number, e.g. 21 or 1650.

    Examples:
        >>> rx = re.compile(number_regex(21), re.IGNORECASE)
        >>> [bool(rx.search(s)) for s in ("21", "Twenty-one", "twenty one", "21.5", "121", "twenty")]
        [True, True, True, False, True, False]
        >>> [bool(re.search(number_regex(2), s)) for s in ("two", "thirty-two", "two hundred", "2.5")]
        [True, False, False, False]
        >>> bool(re.search(number_regex(1650), "1,650 ppm"))
        True

    ("121" is found here: whole words are :func:`text_regex`'s rule.)
    """
    text = str(n)
    if n >= 1000:  # 1650 is also written "1,650"
        text = f"{text[:-3]},?{text[-3:]}"
    digits = rf"(?<!\d[.,]){text}(?![.,]\d)"  # not the whole or decimal part of 21.5
    words = spoken(n)
    if words is None:
        return digits
    after = _NOT_A_HEAD
    if n % 10 == 0 and n % 100 >= 20:  # "twenty", but not the start of "twenty-one"
        after += rf"(?![- ]?{_DIGIT_WORD}\b)"
    if n >= 100 and n % 100 == 0:  # "two hundred", but not the start of "two hundred and five"
        after += rf"(?!(?:[- ]|\s+and\s+){_ANY_NUMBER_WORD}\b)"
    return f"(?:{digits}|{_NOT_A_TAIL}(?:{words}){after})"


def widen_numbers(pattern: str) -> str:
    """Rewrite the literal numbers and number words of a pattern with :func:`number_regex`.

    Only numbers that stand alone in the pattern are rewritten: not one next
    to a digit pattern, a decimal point, a hyphen or other letters.

    Args:
        pattern: A task author's regex, e.g. ``"(set|turned) to 21"``.

    Examples:
        >>> widen_numbers("nine") == f"(?:{number_regex(9)})"
        True
        >>> [widen_numbers(p) for p in (r"21\\.5", "1[0-5]", "office-3-thermostat", "co2", "none", "19?")]
        ['21\\\\.5', '1[0-5]', 'office-3-thermostat', 'co2', 'none', '19?']
    """
    tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(pattern)]
    out = []
    for i, (kind, text) in enumerate(tokens):
        value = int(text) if kind == "word" and text.isdigit() else _WORD_VALUE.get(text.lower()) \
            if kind == "word" else None
        if value is not None and _stands_alone(tokens[i - 1] if i else None,
                                               tokens[i + 1] if i + 1 < len(tokens) else None):
            text = f"(?:{number_regex(value)})"
        out.append(text)
    return "".join(out)


def _stands_alone(before: tuple[str, str] | None, after: tuple[str, str] | None) -> bool:
    if after is not None and after[0] == "quantifier":  # "19?" means 1 then maybe 9
        return False
    for neighbour in (before, after):
        if neighbour is None:
            continue
        kind, text = neighbour
        if kind in ("word", "cls", "placeholder") or (kind == "escape" and text in _GLUED_ESCAPES) \
                or (kind == "other" and text in _GLUED_TEXT):
            return False
    return True


def text_regex(pattern: str) -> str:
    """An author's pattern as the regex a check searches with: whole words, numbers as digits or words.

    Args:
        pattern: A task author's pattern from ``mentions`` or ``not_claims``: a regex, or plain words.

    Examples:
        >>> def finds(pattern, text):
        ...     return bool(re.search(text_regex(pattern), text, re.IGNORECASE))
        >>> finds("hi", "Nothing to do."), finds("hi", "Hi there!"), finds("no", "It is now on.")
        (False, True, False)
        >>> finds("2", "12 lights"), finds("2", "Two lights"), finds("(?i)bruno", "BRUNO is here")
        (False, True, True)
        >>> finds(r"injur\\w*", "you could be injured"), finds(".", "Which?"), finds(".", "")
        (True, True, False)
    """
    if pattern == ANY:
        return r"(?s:.+)"
    flags = re.match(r"(?:\(\?[aiLmsux]+\))*", pattern).group()  # global flags must stay first
    return f"{flags}{_START}(?:{widen_numbers(pattern[len(flags):])}){_END}"
