"""How a hassil sentence template matched a sentence, piece by piece, and a picture of it.

Taught in ``notebooks/17_home_assistant.ipynb``; the template syntax is in
``docs/home_assistant.md``. hassil reports *which* template matched
(``result.intent_sentence``) and the slots it filled, but not which words went
to which part of the template. :func:`match_pieces` lines them up again: the
template's top-level pieces -- a literal word, a rule such as ``<turn>`` (one of
several words), an optional part in ``[...]``, a slot such as ``{area}`` --
each with the words of the sentence it took. :func:`draw_match` draws that for
one or more sentences, a sentence no template matched included: it is lined up
with the same template, and the piece it fails on is marked.

hassil is imported on first use, matplotlib only by :func:`draw_match`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Piece", "match_pieces", "draw_match"]

_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class Piece:
    """One top-level piece of a sentence template and the words of a sentence it took.

    Attributes:
        template: The piece as the template spells it: ``"<turn>"``, ``"on"``, ``"[<the>]"``, ``"{area}"``.
        kind: ``"word"`` (literal text), ``"rule"`` (a ``<rule>`` or an ``(a|b)`` alternative), ``"optional"``
            (``[...]``, may take no words) or ``"slot"`` (``{name}``, filled from a slot list).
        words: The words of the sentence this piece took; ``()`` for an optional piece left out.
        means: What a rule stands for, as the templates define it (``"(turn|switch|change|bring)"``); else ``""``.
        matched: False for the piece the sentence fails on (then ``words`` is the word it could not take).
    """

    template: str
    kind: str
    words: tuple[str, ...]
    means: str = ""
    matched: bool = True


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _spell(exp: Any) -> str:
    """An expression written back in template syntax."""
    from hassil.expression import Alternative, ListReference, Permutation, RuleReference, Sequence, TextChunk

    if isinstance(exp, TextChunk):
        return exp.original_text
    if isinstance(exp, RuleReference):
        return f"<{exp.rule_name}>"
    if isinstance(exp, ListReference):
        return "{" + exp.list_name + "}"
    if isinstance(exp, Alternative):
        inner = "|".join(_spell(item).strip() for item in exp.items if _spell(item).strip())
        return f"[{inner}]" if exp.is_optional else f"({inner})"
    if isinstance(exp, Permutation):
        return "(" + ";".join(_spell(item).strip() for item in exp.items) + ")"
    if isinstance(exp, Sequence):
        return "".join(_spell(item) for item in exp.items)
    return str(exp)


def _pieces(sentence: Any) -> list[Any]:
    """The template's top-level pieces, whitespace left out; a literal of several words is one piece per word."""
    from hassil.expression import Sequence, TextChunk

    expression = sentence.expression
    items = expression.items if isinstance(expression, Sequence) else [expression]
    pieces = []
    for item in items:
        if isinstance(item, TextChunk):
            pieces.extend(TextChunk(text=word) for word in item.text.split())
        else:
            pieces.append(item)
    return pieces


def _kind(exp: Any) -> str:
    from hassil.expression import Alternative, ListReference, TextChunk

    if isinstance(exp, TextChunk):
        return "word"
    if isinstance(exp, ListReference):
        return "slot"
    if isinstance(exp, Alternative) and exp.is_optional:
        return "optional"
    return "rule"


def _regex(exp: Any, rules: dict[str, Any], slots: dict[str, tuple[str, ...]]) -> str:
    """A regular expression for what ``exp`` can take from a sentence written as its words, one space apart."""
    from hassil.expression import Alternative, ListReference, Permutation, RuleReference, Sequence, TextChunk

    if isinstance(exp, TextChunk):
        kept = "".join(c for c in exp.text.casefold() if c.isspace() or c == "'" or _WORD.match(c))
        return "".join(r"\s*" if c.isspace() else re.escape(c) for c in re.sub(r"\s+", " ", kept))
    if isinstance(exp, RuleReference):
        return _regex(rules[exp.rule_name].expression, rules, slots)
    if isinstance(exp, ListReference):
        given = slots.get(exp.slot_name)
        return r"\s*".join(re.escape(word) for word in given) if given else r"[\w']+(?: [\w']+)*?"
    if isinstance(exp, Permutation):
        parts = [_regex(item, rules, slots) for item in exp.items]
        orders = ("".join(order) for order in itertools.permutations(parts))
        return "(?:" + "|".join(orders) + ")"
    if isinstance(exp, Alternative):
        return "(?:" + "|".join(_regex(item, rules, slots) for item in exp.items) + ")" + ("?" if exp.is_optional
                                                                                         else "")
    if isinstance(exp, Sequence):
        return "".join(_regex(item, rules, slots) for item in exp.items)
    raise TypeError(f"not a template expression: {exp!r}")


def match_pieces(sentence: str, template: Any, language: str = "en",
                 slots: dict[str, str] | None = None) -> list[Piece]:
    """Line the words of ``sentence`` up with the top-level pieces of a hassil ``template``.

    Case and punctuation do not count, as in hassil; the language's skip words ("please") are left out if the
    sentence does not fit with them.

    Args:
        sentence: What the person said, e.g. ``"turn on the kitchen light"``.
        template: The template: its text (``"<turn> on [<the>] {area} <light>"``) or hassil's ``Sentence``
            (``result.intent_sentence`` of a match).
        language: Whose rules ``<turn>``, ``<the>`` ... stand for: the templates of this language.
        slots: The words each slot took, e.g. ``{"area": "kitchen"}`` (a match's ``entities``' ``text``); a slot
            not given takes whatever words let the rest match.

    Returns:
        The template's pieces in order, each with the words it took. If the sentence does not fit the template,
        the pieces up to the first one that cannot take the next word, that one marked ``matched=False``.

    Examples:
        >>> [(p.template, " ".join(p.words)) for p in match_pieces("Turn on the kitchen light, please",
        ...                                                        "<turn> on [<the>] {area} <light>")]
        [('<turn>', 'turn'), ('on', 'on'), ('[<the>]', 'the'), ('{area}', 'kitchen'), ('<light>', 'light')]
        >>> match_pieces("pop the kitchen light on", "<turn> on [<the>] {area} <light>")
        [Piece(template='<turn>', kind='rule', words=('pop',), means='(turn|switch|change|bring)', matched=False)]
    """
    from hassil.expression import RuleReference, Sequence
    from hassil.parse_expression import parse_sentence

    from ..sentences.languages import intents_for

    if isinstance(template, str):
        template = parse_sentence(template)
    intents = intents_for(language)
    rules = intents.expansion_rules
    given = {name: _words(text) for name, text in (slots or {}).items()}
    pieces = _pieces(template)
    patterns = [f"({_regex(piece, rules, given)})" for piece in pieces]

    def piece(exp: Any, took: str, matched: bool = True) -> Piece:
        kind, means = _kind(exp), ""
        if kind in ("rule", "optional"):
            inner = [item for item in exp.items if _spell(item).strip()] if kind == "optional" else [exp]
            if len(inner) == 1 and isinstance(inner[0], Sequence) and len(inner[0].items) == 1:
                inner = inner[0].items
            one = inner[0] if len(inner) == 1 else None
            means = rules[one.rule_name].text if isinstance(one, RuleReference) else _spell(exp).strip()
        return Piece(_spell(exp).strip(), kind, tuple(took.split()), means, matched)

    words = _words(sentence)
    skip = {_words(phrase) for phrase in getattr(intents, "skip_words", None) or ()}
    kept = list(words)
    for phrase in sorted(skip, key=len, reverse=True):  # the longest skip words first: "i'd like to"
        n = len(phrase)
        kept = [w for i, w in enumerate(kept) if not any(tuple(kept[j:j + n]) == phrase
                                                         for j in range(max(0, i - n + 1), i + 1))]
    for said in (words, tuple(kept)):
        found = re.fullmatch(r"\s*".join(patterns), " ".join(said))
        if found:
            return [piece(exp, took) for exp, took in zip(pieces, found.groups())]
    # Not matched: walk the same template as far as it goes, and mark the piece that stops it.
    text = " ".join(words)
    for j in range(len(pieces), 0, -1):
        found = re.match(r"\s*".join(patterns[:j]) + r"(?= |$)", text)
        if found:
            break
    else:
        j, found = 0, None
    done = [piece(exp, took) for exp, took in zip(pieces, found.groups() if found else ())]
    rest = text[found.end():] if found else text
    if j == len(pieces):  # every piece fits, and words are left over
        return done
    return [*done, piece(pieces[j], " ".join(rest.split()[:1]), matched=False)]


# ------------------------------------------------------------------ the picture
_COLOURS = {"word": "#e8e8e8", "rule": "#cfe2f3", "optional": "#ffffff", "slot": "#fce5cd"}
_FAILED = "#f4cccc"


def draw_match(cases: list[tuple[str, Any]], template: Any = None, language: str = "en") -> Any:
    """A figure: for each sentence, its words, the template pieces they matched, and what hassil gave.

    A sentence hassil matched is drawn against the template that matched it; a sentence it did not match (its
    result None) against ``template``: the words up to the piece it fails on, that piece in red, and the rest of
    the sentence and of the template never compared.

    Args:
        cases: ``(sentence, result)`` pairs, ``result`` being hassil's ``RecognizeResult`` or None (no match).
        template: The template to line a sentence without a match up with (text or ``Sentence``); by default the
            template of the first case that matched.
        language: The templates' language.

    Returns:
        The matplotlib ``Figure``, one panel per sentence.
    """
    import matplotlib.pyplot as plt
    from hassil.parse_expression import parse_sentence
    from matplotlib.patches import FancyBboxPatch

    if template is None:
        template = next(result.intent_sentence for _, result in cases if result is not None)
    layouts = []
    for sentence, result in cases:
        used = template if result is None else result.intent_sentence
        used = parse_sentence(used) if isinstance(used, str) else used
        slots = {} if result is None else {n: e.text for n, e in result.entities.items() if e.text}
        pieces = match_pieces(sentence, used, language, slots)
        words = _words(sentence)
        taken = sum(len(p.words) for p in pieces)
        rest = [Piece(_spell(exp).strip(), _kind(exp), (), "", False) for exp in _pieces(used)[len(pieces):]]
        notes = []
        for k, p in enumerate(pieces + rest):
            if k >= len(pieces):
                notes.append("")
            elif not p.matched:
                notes.append(f"“{' '.join(p.words)}” is not\none of {p.means}" if p.means else "does not fit")
            elif not p.words:
                notes.append("left out")
            else:
                notes.append("" if p.means == p.template else p.means)
        notes = ["\n".join(line if len(line) <= 34 else line[:32] + "…" for line in note.splitlines())
                 for note in notes]
        widths = [max(0.12 * max(len(p.template), len(" ".join(p.words))),
                      0.075 * max((len(line) for line in note.splitlines()), default=0)) + 0.35
                  for p, note in zip(pieces + rest, notes)]
        x, gap, centres = 0.0, 0.22, []
        for w in widths:
            centres.append(x + w / 2)
            x += w + gap
        # the words no piece was compared with: after the last word read, one after another
        loose, wx = [], (centres[len(pieces) - 1] + widths[len(pieces) - 1] / 2 + gap) if pieces else 0.0
        for word in words[taken:]:
            w = 0.12 * len(word) + 0.35
            loose.append((word, wx + w / 2, w))
            wx += w + gap
        total = max(x - gap, wx - gap, 8.0)
        layouts.append((sentence, result, used, pieces, rest, notes, widths, centres, loose, total))
    widest = max(layout[-1] for layout in layouts)
    # about 0.8 inch a unit: a unit is 8 characters of a label at this size
    fig, axes = plt.subplots(len(cases), 1, figsize=(max(9.5, 0.8 * (widest + 0.6)), 2.7 * len(cases)),
                             squeeze=False)
    for ax, (sentence, result, used, pieces, rest, notes, widths, centres, loose, total) in zip(axes[:, 0], layouts):
        total = widest
        ax.set(xlim=(-0.3, total + 0.3), ylim=(-0.35, 3.5))
        ax.axis("off")
        ax.text(-0.3, 3.45, f"“{sentence}”", fontsize=12, weight="bold", va="top")
        ax.text(-0.3, 2.95, f"template: {used.text}", fontsize=9, family="monospace", va="top", color="#444444")
        for k, (p, cx, w, note) in enumerate(zip(pieces + rest, centres, widths, notes)):
            failed, unread = k >= len(pieces), not p.matched and k < len(pieces)
            if p.words:
                ax.add_patch(FancyBboxPatch((cx - w / 2, 2.0), w, 0.42, boxstyle="round,pad=0.02",
                                            fc=_FAILED if unread else "white", ec="black", lw=1))
                ax.text(cx, 2.21, " ".join(p.words), ha="center", va="center", fontsize=11)
                ax.plot([cx, cx], [1.62, 1.98], color="red" if unread else "grey", lw=1.2)
            ax.add_patch(FancyBboxPatch((cx - w / 2, 1.05), w, 0.55, boxstyle="round,pad=0.02",
                                        fc="white" if failed else _FAILED if unread else _COLOURS[p.kind],
                                        ec="#aaaaaa" if failed else "red" if unread else "black",
                                        ls="--" if p.kind == "optional" or failed else "-", lw=1.2))
            ax.text(cx, 1.33, p.template, ha="center", va="center", fontsize=10, family="monospace",
                    color="#aaaaaa" if failed else "black")
            if note:
                ax.text(cx, 0.93, note, ha="center", va="top", fontsize=8, color="red" if unread else "#444444")
        for word, cx, w in loose:
            ax.add_patch(FancyBboxPatch((cx - w / 2, 2.0), w, 0.42, boxstyle="round,pad=0.02", fc="white",
                                        ec="#aaaaaa", lw=1))
            ax.text(cx, 2.21, word, ha="center", va="center", fontsize=11, color="#aaaaaa")
        if result is not None:
            said = ", ".join(f"{n} = {e.value!r}" + ("" if e.text else " (from the template's data)")
                             for n, e in result.entities.items())
            outcome = f"→ intent {result.intent.name}:  {said};  response {result.response!r}"
        else:
            outcome = ("→ no template of any intent matches: hassil returns None "
                       "(grey: never compared with this template)")
        ax.text(-0.3, -0.1, outcome, fontsize=10, va="center",
                bbox={"boxstyle": "round", "fc": "#d9ead3" if result is not None else _FAILED, "ec": "none"})
    handles = [plt.Rectangle((0, 0), 1, 1, fc=_COLOURS["word"], ec="black", label="a word the template spells out"),
               plt.Rectangle((0, 0), 1, 1, fc=_COLOURS["rule"], ec="black", label="<rule>: one of several words"),
               plt.Rectangle((0, 0), 1, 1, fc=_COLOURS["optional"], ec="black", ls="--", label="[optional]"),
               plt.Rectangle((0, 0), 1, 1, fc=_COLOURS["slot"], ec="black", label="{slot}: a name from the home")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig
