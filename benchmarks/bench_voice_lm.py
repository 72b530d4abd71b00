"""A language model of the home, tried: can room for ordinary words around the commands beat the home's grammar?

The home's grammar (``lares_kit.voice.grammar``) hears only its own sentences, so a chatty instruction ("I'm going
to bed now, so turn off the light in the kitchen") has no path in it. The usual remedy is an n-gram language model:
here a trigram model of sentences drawn at random from the grammar, whose unigrams are mixed with the most common
English words (the ``wordfreq`` package's list, with their frequencies), so any of those words may be heard around
a command. This script builds that model for each home, decodes with it, and prints its word error rate beside the
grammar's on three sets of our own sentences (none from a benchmark):

* ``fits``: ten commands in the grammar's own shapes (the voice unit test's sentences);
* ``chatty``: the same kind of command with a clause of ordinary words before it;
* ``outside``: sentences no home can mean (``bench_voice.OUTSIDE``).

Each is said by espeak-ng's two English voices. ``--weight`` is the common words' share of the unigram mass.

    .venv/bin/python benchmarks/bench_voice_lm.py [--weight 0.3] [--words 3000] [--sentences 20000]
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_voice import OUTSIDE  # noqa: E402

from lares_kit import load_world  # noqa: E402
from lares_kit.voice.audio import read_wav  # noqa: E402
from lares_kit.voice.grammar import _TOKEN, rule_bodies, word_errors  # noqa: E402
from lares_kit.voice.hear import Recognizer  # noqa: E402
from lares_kit.voice.speech import VOICES, speak  # noqa: E402

FITS = [("garden-flat", "switch on the desk lamp in the study"), ("townhouse", "set the heating to twenty one"),
        ("smart-building", "turn off the light in meeting room two"), ("lares-home", "find my dog"),
        ("garden-flat", "turn off the light in the kitchen"), ("townhouse", "lock the back door"),
        ("smart-building", "set the thermostat in office three to nineteen"),
        ("sage-home", "turn on the tv in the living room"), ("shared-house", "open the window in the lounge"),
        ("townhouse", "switch on the extractor fan in the bathroom")]
CHATTY = [("garden-flat", "i'm going to bed now so turn off the light in the kitchen"),
          ("townhouse", "it's a bit chilly in here can you set the heating to twenty one"),
          ("sage-home", "we are watching a film so turn on the tv in the living room"),
          ("garden-flat", "i need to read for a while so switch on the desk lamp in the study"),
          ("townhouse", "we are all going out now so lock the back door")]


def _rules(jsgf: str) -> dict[str, tuple]:
    # The grammar's rules as trees: ("alt", [sequence, ...]), ("opt", tree), or a word / <rule> name.
    bodies = rule_bodies(jsgf)

    def tree(tokens: list[str], i: int = 0) -> tuple[tuple, int]:
        alternatives, sequence = [], []
        while i < len(tokens):
            token = tokens[i]
            if token in "([":
                sub, i = tree(tokens, i + 1)
                sequence.append(("opt", sub) if token == "[" else sub)
            elif token in ")]":
                break
            elif token == "|":
                alternatives.append(sequence)
                sequence = []
            else:
                sequence.append(token)
            i += 1
        alternatives.append(sequence)
        return ("alt", alternatives), i

    return {name: tree(_TOKEN.findall(body))[0] for name, body in bodies.items()}


def _draw(rules: dict, node, rng: random.Random, out: list[str]) -> bool:
    # One random sentence of the grammar, word by word; False when it reaches a rule with nothing in it.
    if isinstance(node, str):
        if node == "<VOID>":
            return False
        if node.startswith("<"):
            return _draw(rules, rules[node], rng, out)
        out.append(node)
        return True
    if node[0] == "opt":
        return rng.random() >= 0.5 or _draw(rules, node[1], rng, out)
    return all(_draw(rules, part, rng, out) for part in rng.choice(node[1]))


def home_lm(jsgf: str, common: dict[str, float], sentences: int, weight: float, discount: float = 0.5) -> str:
    """The ARPA text of a trigram model of ``sentences`` random sentences of the grammar, with absolute discounting
    and exact back-off weights; its unigrams give ``weight`` of their mass to ``common`` words by frequency.

    Args:
        jsgf: the home's grammar.
        common: ordinary words the dictionary has -> their frequency.
        sentences: how many sentences to draw.
        weight: the common words' share of the unigram mass.
        discount: subtracted from every bigram and trigram count.
    """
    rules, rng = _rules(jsgf), random.Random(0)
    counts: list[Counter] = [Counter(), Counter(), Counter()]
    for _ in range(sentences):
        out: list[str] = []
        if not _draw(rules, "<command>", rng, out):
            continue
        words = ["<s>", *out, "</s>"]
        for n in range(3):
            for j in range(len(words) - n):
                counts[n][tuple(words[j:j + n + 1])] += 1
    home = {w[0]: c for w, c in counts[0].items() if w[0] != "<s>"}
    home_total, common_total = sum(home.values()), sum(common.values())
    p1 = {w: (1 - weight) * home.get(w, 0) / home_total + weight * common.get(w, 0) / common_total
          for w in set(home) | set(common)}

    def discounted(order: Counter) -> tuple[dict, dict]:
        totals, after = defaultdict(int), defaultdict(list)
        for gram, c in order.items():
            totals[gram[:-1]] += c
            after[gram[:-1]].append(gram[-1])
        return {g: (c - discount) / totals[g[:-1]] for g, c in order.items()}, after

    p2, after1 = discounted(counts[1])
    p3, after2 = discounted(counts[2])

    def backoff(history: tuple, seen: list[str], higher: dict, lower) -> float:
        left = 1 - sum(higher[history + (w,)] for w in seen)
        room = 1 - sum(lower(w) for w in seen)
        return left / room if room > 0 else 1.0

    bo1 = {h: backoff(h, seen, p2, lambda w: p1.get(w, 0)) for h, seen in after1.items()}

    def p_bigram(a: str, b: str) -> float:
        return p2[(a, b)] if (a, b) in p2 else bo1.get((a,), 1.0) * p1.get(b, 0)

    bo2 = {h: backoff(h, seen, p3, lambda w, h=h: p_bigram(h[1], w)) for h, seen in after2.items()}

    def log(p: float) -> str:
        return f"{math.log10(max(p, 1e-99)):.4f}"

    lines = ["\\data\\", f"ngram 1={len(p1) + 1}", f"ngram 2={len(p2)}", f"ngram 3={len(p3)}", "", "\\1-grams:",
             f"-99\t<s>\t{log(bo1.get(('<s>',), 1.0))}"]
    lines += [f"{log(p1[w])}\t{w}\t{log(bo1.get((w,), 1.0))}" for w in sorted(p1)]
    lines += ["", "\\2-grams:"] + [f"{log(p)}\t{' '.join(g)}\t{log(bo2.get(g, 1.0))}" for g, p in sorted(p2.items())]
    lines += ["", "\\3-grams:"] + [f"{log(p)}\t{' '.join(g)}" for g, p in sorted(p3.items())]
    return "\n".join([*lines, "", "\\end\\", ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weight", type=float, default=0.3, help="the common words' share of the unigram mass")
    parser.add_argument("--words", type=int, default=3000, help="how many of the most common English words")
    parser.add_argument("--sentences", type=int, default=20000, help="random sentences of the grammar per home")
    args = parser.parse_args()
    try:
        import wordfreq
    except ModuleNotFoundError:
        sys.exit("this experiment needs wordfreq (its list of common English words): pip install wordfreq")
    ranked = [w for w in wordfreq.top_n_list("en", args.words) if re.fullmatch(r"[a-z]+(?:'[a-z]+)?", w)]
    ears: dict[str, dict[str, Recognizer]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for world in sorted({w for w, _ in FITS + CHATTY + OUTSIDE}):
            grammar_ear = Recognizer(load_world(world), "home", min_confidence=0)
            lm_ear = Recognizer(load_world(world), "home", min_confidence=0)
            decoder = lm_ear._decoder
            common = {w: wordfreq.word_frequency(w, "en") for w in ranked if decoder.lookup_word(w) is not None}
            path = Path(folder) / f"{world}.arpa"
            path.write_text(home_lm(grammar_ear.grammar.jsgf, common, args.sentences, args.weight))
            decoder.add_lm_file("home-lm", str(path))
            decoder.activate_search("home-lm")
            ears[world] = {"grammar": grammar_ear, "home LM": lm_ear}
    print(f"home LM: trigrams of {args.sentences} sentences of each home's grammar; {len(ranked)} common English "
          f"words hold {args.weight:.0%} of the unigram mass. Voices {', '.join(VOICES['en'])}.\n")
    print(f"{'sentences':<10} {'words':>6} {'grammar':>9} {'home LM':>9}   word error rate")
    for name, group in (("fits", FITS), ("chatty", CHATTY), ("outside", OUTSIDE)):
        errors, words = defaultdict(int), 0
        for world, said in group:
            for voice in VOICES["en"]:
                audio = read_wav(speak(said, voice=voice))
                words += len(said.split())
                for how, ear in ears[world].items():
                    hyp = ear._decode(audio.samples)  # the raw best path, whole sentence or not
                    errors[how] += word_errors(said, " ".join(hyp.hypstr.split()) if hyp is not None else "")
        print(f"{name:<10} {words:>6} {errors['grammar'] / words:>9.0%} {errors['home LM'] / words:>9.0%}")


if __name__ == "__main__":
    main()
