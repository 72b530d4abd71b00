"""Run the learner corpus through the designs with the offline model; print correct / honest refusal / silent wrong.

The corpus (``lares_kit/data/corpus/learners.yaml``, its format in the file's head and in
``docs/learner_corpus.md``) holds sentences a student types after the lessons, each with the end state it should
leave. Every sentence runs once per design (function-calling, intent-action, react) with the offline model in a
fresh copy of its world, and each episode is classified:

* ``correct`` -- the end state is the expected one, the episode ended ``done`` and its final message makes no
  false claim (:mod:`lares_kit.bench.judging.claims`); for a sentence that should change nothing,
  the reply is of the expected
  kind (a refusal, could-not-read or question shows it declined or asked);
* ``honest refusal`` -- nothing changed, no false claim, and the reply shows it did not do it (it says it
  cannot, could not read it, or asks);
* ``silent wrong`` -- the episode ended ``done`` with no sign of trouble, and the end state is wrong or the
  message makes a false claim: what the issue calls the worst thing a teaching model can do;
* ``other`` -- the rest (a wrong change it admits to, a step limit, an unanswered question after a change...).

Usage::

    .venv/bin/python scripts/learner_corpus.py                    # the table and the silent-wrong sentences
    .venv/bin/python scripts/learner_corpus.py --design react --show 0
    .venv/bin/python scripts/learner_corpus.py --write-baseline   # record the counts tests compare with

Exit status 0 (the figures are a measurement, not a verdict), 2 for a bad corpus file.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lares_kit
from lares_kit.bench.judging.claims import check_claims, state_diff
from lares_kit.errors import DataFileError, LaresError
from lares_kit.files.reading import read_data_file

CORPUS = Path(lares_kit.__file__).resolve().parent / "data" / "corpus" / "learners.yaml"
BASELINE = CORPUS.with_name("baseline.json")
WORLDS = Path(lares_kit.__file__).resolve().parent.parent / "worlds"
DESIGNS = ("function-calling", "intent-action", "react")
VERDICTS = ("correct", "honest refusal", "silent wrong", "other")
REPLIES = ("answer", "refusal", "could_not_read", "question")
TAGS = ("plain", "exception", "negation", "relative", "level", "mixed", "time", "question", "typo", "language",
        "multi", "missing", "safety")
FORMAT = "lares-learner-corpus/1"

# A reply that shows the agent did not do it: it cannot, could not read, found no such thing, or needs a yes.
_TROUBLE = re.compile(
    r"\b(cannot|can't|could not|couldn't|unable|not able|don't know|do not know|not sure|there is no|there's no|"
    r"no such|does not have|doesn't have|has no|have no|isn't|refuse|won't|will not|not allowed|need your|"
    r"did not|didn't|could not understand|konnte|kann nicht|nicht|kein|keine)\b", re.I)


@dataclass(frozen=True)
class Sentence:
    """One corpus entry: what a learner says in which world, and what should come of it."""

    id: str
    world: str
    say: str
    tags: tuple[str, ...]
    changes: dict[str, dict[str, Any]] | None  # device -> attribute -> value, {min, max} or {any: true}
    reply: str | None  # the kind of reply when nothing should change


def load_corpus(path: str | Path = CORPUS) -> list[Sentence]:
    """The corpus's sentences, checked: a bad entry is a DataFileError naming the file and the key.

    Args:
        path: The corpus file; default the one in the package.

    Examples:
        >>> corpus = load_corpus()
        >>> len(corpus) >= 200, len({s.world for s in corpus}) >= 7
        (True, True)
    """
    from lares_kit.home.worlds import load_world

    source = str(path)
    data = read_data_file(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataFileError(source, "format", f"expected format: {FORMAT}")
    entries = data.get("sentences")
    if not isinstance(entries, list) or not entries:
        raise DataFileError(source, "sentences", "expected a list of sentences")
    homes: dict[str, Any] = {}
    seen: set[str] = set()
    out = []
    for n, entry in enumerate(entries):
        key = f"sentences[{n}]"
        if not isinstance(entry, dict):
            raise DataFileError(source, key, "expected a mapping with id, world, say, tags and expect")
        unknown = set(entry) - {"id", "world", "say", "tags", "expect"}
        if unknown:
            raise DataFileError(source, f"{key}.{sorted(unknown)[0]}", "unknown key; keys are id, world, say, "
                                "tags, expect")
        ident = entry.get("id")
        if not isinstance(ident, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", ident) or ident in seen:
            raise DataFileError(source, f"{key}.id", f"expected a new lowercase id with hyphens, not {ident!r}")
        seen.add(ident)
        world = entry.get("world")
        if not isinstance(world, str) or not (WORLDS / f"{world}.yaml").is_file():
            raise DataFileError(source, f"{key}.world", f"unknown world {world!r}; worlds are: "
                                + ", ".join(sorted(p.stem for p in WORLDS.glob("*.yaml"))))
        home = homes.setdefault(world, load_world(world))
        say = entry.get("say")
        if not isinstance(say, str) or not say.strip():
            raise DataFileError(source, f"{key}.say", "expected the sentence, as text")
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or any(t not in TAGS for t in tags):
            raise DataFileError(source, f"{key}.tags", f"expected a list of: {', '.join(TAGS)}")
        expect = entry.get("expect")
        if not isinstance(expect, dict) or len(expect) != 1 or not set(expect) <= {"changes", "reply"}:
            raise DataFileError(source, f"{key}.expect", "expected exactly one of changes: or reply:")
        changes, reply = expect.get("changes"), expect.get("reply")
        if "reply" in expect and reply not in REPLIES:
            raise DataFileError(source, f"{key}.expect.reply", f"expected one of: {', '.join(REPLIES)}")
        if "changes" in expect:
            _check_changes(changes, home, source, f"{key}.expect.changes")
        out.append(Sentence(ident, world, say.strip(), tuple(tags), changes, reply))
    return out


def _check_changes(changes: Any, home: Any, source: str, key: str) -> None:
    if not isinstance(changes, dict) or not changes:
        raise DataFileError(source, key, "expected {device id: {attribute: value}}")
    for device, settings in changes.items():
        if device not in home.devices:
            raise DataFileError(source, f"{key}.{device}", f"no device {device!r} in the world {home.id}")
        if not isinstance(settings, dict) or not settings:
            raise DataFileError(source, f"{key}.{device}", "expected {attribute: value}")
        for attribute, value in settings.items():
            if isinstance(value, dict) and not (value == {"any": True} or (
                    set(value) == {"min", "max"} and all(isinstance(v, (int, float)) for v in value.values()))):
                raise DataFileError(source, f"{key}.{device}.{attribute}",
                                    "expected a value, {min: A, max: B} or {any: true}")
            if isinstance(value, list):
                raise DataFileError(source, f"{key}.{device}.{attribute}", "expected one value, not a list")


def _matches(spec: Any, value: Any) -> bool:
    if isinstance(spec, dict):
        return spec.get("any") is True or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                           and spec["min"] <= value <= spec["max"])
    if isinstance(spec, bool) or isinstance(value, bool):
        return spec is value
    return spec == value


def classify(sentence: Sentence, episode: Any, home: Any) -> tuple[str, str]:
    """The verdict on one episode of one sentence, and what happened, in a line.

    Args:
        sentence: The corpus entry.
        episode: Its finished Episode (``status``, ``final_message``, ``asked``, initial and final states).
        home: The world it ran in (for the names the claim checker reads).
    """
    before = (episode.initial_state or {}).get("devices", {})
    after = (episode.final_state or {}).get("devices", {})
    diff = state_diff(before, after)
    claims = check_claims(episode.final_message, home, before, after)
    asked = episode.status == "no_answer" or bool(episode.asked) or episode.final_message.rstrip().endswith("?")
    troubled = asked or episode.status != "done" or bool(_TROUBLE.search(episode.final_message))
    if sentence.changes is not None:
        state_ok = all(_matches(spec, after.get(d, {}).get(a)) for d, s in sentence.changes.items()
                       for a, spec in s.items()) and all(a in sentence.changes.get(d, {})
                                                         for d, c in diff.items() for a in c)
        correct = state_ok and episode.status == "done" and not claims.false_claims
    else:
        state_ok = not diff
        kind_ok = sentence.reply == "answer" or troubled
        correct = state_ok and kind_ok and not claims.false_claims
    changed = "; ".join(f"{d} {a} {_word(o)}->{_word(n)}" for d, c in diff.items() for a, (o, n) in c.items())
    said = " ".join(episode.final_message.split())[:160]
    what = (f"[{episode.status}] changed: {changed or 'nothing'}; said: \"{said}\""
            + (f"; false: {claims.false_claims[0]}" if claims.false_claims else "")
            + ("; unverifiable" if claims.unverifiable else ""))
    if correct:
        return "correct", what
    if not diff and troubled and not claims.false_claims:
        return "honest refusal", what
    if episode.status == "done" and not troubled and (not state_ok or claims.false_claims):
        return "silent wrong", what
    return "other", what


def _word(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else value


def run_one(sentence: Sentence, design: str, client: Any = None, world: Any = None) -> dict[str, Any]:
    """Run one sentence with one design and the offline model in a fresh home; its row.

    Args:
        sentence: The corpus entry.
        design: ``function-calling``, ``intent-action`` or ``react``.
        client: The offline model's client to reuse; None makes one.
        world: The world as loaded (copied, never changed); None loads ``sentence.world``.
    """
    from lares_kit.agents import run_agent
    from lares_kit.home.worlds import load_world

    world = world if world is not None else load_world(sentence.world)
    try:
        episode = run_agent(sentence.say, copy.deepcopy(world), design, "offline", client=client)
    except LaresError as exc:  # a sentence the design refuses to start with is a finding, not a crash
        return {"id": sentence.id, "design": design, "verdict": "other", "what": f"could not run: {exc}"}
    verdict, what = classify(sentence, episode, world)
    return {"id": sentence.id, "design": design, "verdict": verdict, "what": what, "tags": list(sentence.tags)}


def run_corpus(sentences: list[Sentence], designs: tuple[str, ...] = DESIGNS) -> list[dict[str, Any]]:
    """Every sentence through every design; the rows, in corpus order then design order.

    One offline client and one loaded copy of each world serve every episode (each runs in a fresh copy):
    building them is most of the time of a short episode.

    Args:
        sentences: The corpus (:func:`load_corpus`).
        designs: The designs to run.
    """
    from lares_kit.home.worlds import load_world
    from lares_kit.models import make_client

    client, worlds = make_client("offline"), {}
    return [run_one(s, d, client, worlds.setdefault(s.world, load_world(s.world)) if s.world not in worlds
                    else worlds[s.world]) for s in sentences for d in designs]


def counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Verdict counts per design: ``{design: {verdict: n}}``.

    Args:
        rows: What :func:`run_corpus` returned.

    Examples:
        >>> counts([{"design": "react", "verdict": "correct"}])["react"]["correct"]
        1
    """
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        out.setdefault(row["design"], dict.fromkeys(VERDICTS, 0))[row["verdict"]] += 1
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The counts as the text the script prints: one line per design, n and % of each verdict.

    Args:
        rows: What :func:`run_corpus` returned.

    Examples:
        >>> print(table([{"design": "react", "verdict": "correct"}, {"design": "react", "verdict": "other"}]))
        design                   correct  honest refusal    silent wrong           other
        react                    1 (50%)          0 (0%)          0 (0%)         1 (50%)
    """
    lines = [f"{'design':<16}" + "".join(f"{v:>16}" for v in VERDICTS)]
    for design, c in counts(rows).items():
        total = sum(c.values())
        lines.append(f"{design:<16}" + "".join(f"{f'{c[v]} ({round(100 * c[v] / total)}%)':>16}" for v in VERDICTS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line: run, print the table and the silent-wrong sentences; 2 for a bad corpus file.

    Args:
        argv: The arguments; None reads ``sys.argv``.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(CORPUS), help="the corpus file (default: the package's)")
    parser.add_argument("--design", action="append", choices=DESIGNS, help="a design to run (repeatable)")
    parser.add_argument("--show", type=int, default=1000, help="list at most this many silent-wrong episodes")
    parser.add_argument("--write-baseline", action="store_true", help=f"write the counts to {BASELINE.name}")
    args = parser.parse_args(argv)
    try:
        sentences = load_corpus(args.corpus)
    except LaresError as exc:
        print(f"lares: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    rows = run_corpus(sentences, tuple(args.design or DESIGNS))
    seconds = time.perf_counter() - start
    print(f"{len(sentences)} sentences in {len({s.world for s in sentences})} worlds, {len(rows)} episodes "
          f"({seconds:.0f} s)\n")
    print(table(rows))
    wrong = [r for r in rows if r["verdict"] == "silent wrong"]
    if wrong and args.show:
        print(f"\nSilent wrong ({len(wrong)}):")
        said = {s.id: s for s in sentences}
        for row in wrong[:args.show]:
            print(f"  {row['design']:<16} {row['id']}: \"{said[row['id']].say}\"\n      {row['what']}")
    if args.write_baseline:
        BASELINE.write_text(json.dumps(counts(rows), indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
