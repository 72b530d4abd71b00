"""The spoken loop, measured: the benchmark's command tasks said by espeak-ng and heard by pocketsphinx.

Every task of the English worlds whose category is a command (``COMMANDS``: direct, multi-device, multi-task,
command-chaining, device-resolution, search -- not conversation, questions or the rest) is run three ways with the
same agent and the offline model, each from a fresh stage of the task:

* **text**: the task's instruction as written, as ``lares bench`` runs it;
* **voice**: the instruction spoken by each of espeak-ng's two English voices (``VOICES["en"]``), heard by each of
  the recognizer's two modes (``home``: the home's own grammar; ``general``: any English), and the transcript run.
  A transcript that is no whole command of the grammar, or silence, is a failed task (nothing was done).

Printed: the word error rate (words of the instruction, numbers and names as spoken, against the words decoded),
the tasks solved through voice beside those solved through text, by category, and the seconds of a spoken turn
(hear + act + speak the reply) for the direct tasks, as the median over tasks and voices. One run; the offline
model repeats itself, so the voice/text ratio is the recognizer's alone.

Then ``OUTSIDE``: ten sentences of our own that no home can mean ("remind me to buy milk"), each said in a home of
the repository by both voices and heard with the home's grammar. Printed: how many came back as nothing, as a
partial, as a whole sentence too unsure to act on, and as a whole sentence that would be acted on, with each of
those last ones.

    .venv/bin/python benchmarks/bench_voice.py [--agent intent-action] [--limit N] [--only commands|outside]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lares_kit import load_world, run_agent  # noqa: E402
from lares_kit.bench import Outcome, load_tasks, run_checks, set_stage  # noqa: E402
from lares_kit.voice.audio import read_wav  # noqa: E402
from lares_kit.voice.grammar import spoken, word_errors  # noqa: E402
from lares_kit.voice.hear import MIN_CONFIDENCE, MODES, Recognizer  # noqa: E402
from lares_kit.voice.speech import VOICES, speak  # noqa: E402

COMMANDS = ("direct", "multi-device", "multi-task", "command-chaining", "device-resolution", "search")
OUTSIDE = [("smart-building", "book the big room for friday"), ("lares-home", "remind me to buy milk"),
           ("garden-flat", "tell me a joke"), ("smart-building", "order a pizza for the team"),
           ("townhouse", "what is the capital of france"), ("sage-home", "play some jazz"),
           ("shared-house", "call my mother"), ("garden-flat", "how tall is mount everest"),
           ("townhouse", "water the plants in the garden"), ("lares-home", "wake me up at seven")]


def solved(task, instruction: str, agent: str) -> tuple[bool, str, float, bool]:
    """Whether ``instruction`` (the text, or what was heard) solves ``task``; the reply; the seconds it took; whether
    the home changed.

    Args:
        task: a benchmark task.
        instruction: what the agent is told.
        agent: the design.
    """
    scene = set_stage(task, load_world(task.world))
    start = time.perf_counter()
    episode = run_agent(instruction, scene.home, agent=agent, model="offline", user=scene.user,
                        context=scene.run_context)
    seconds = time.perf_counter() - start
    checks = run_checks(task.expect, Outcome.from_run(episode.to_run_json(), scene))
    changed = episode.initial_state.get("devices") != episode.final_state.get("devices")
    return all(c.passed for c in checks), episode.final_message, seconds, changed


def outside(min_confidence: float) -> None:
    """Print what the home's grammar made of sentences no home can mean.

    Args:
        min_confidence: the grammar's confidence floor.
    """
    kinds: dict[str, int] = defaultdict(int)
    acted = []
    for world, sentence in OUTSIDE:
        ear = Recognizer(load_world(world), "home", min_confidence=min_confidence)
        for voice in VOICES["en"]:
            heard = ear.hear(read_wav(speak(sentence, voice=voice)))
            kind = ("a whole sentence, acted on" if heard.text else "too unsure to act on" if heard.unsure else
                    "a partial" if heard.partial else "nothing")
            kinds[kind] += 1
            if heard.text:
                acted.append(f"{sentence!r} ({voice}) heard as {heard.text!r}, least sure word {heard.confidence}")
    total = len(OUTSIDE) * len(VOICES["en"])
    print(f"\n{len(OUTSIDE)} sentences no home can mean, said by {len(VOICES['en'])} voices, heard with the home's "
          f"grammar ({total} in all):")
    for kind in ("nothing", "a partial", "too unsure to act on", "a whole sentence, acted on"):
        print(f"  {kind:<28} {kinds[kind]:>3}")
    for line in acted:
        print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="intent-action")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks (for a quick look)")
    parser.add_argument("--min-confidence", type=float, default=MIN_CONFIDENCE,
                        help="the home grammar's floor: a sentence heard with less is not acted on (0: none)")
    parser.add_argument("--only", choices=("commands", "outside"), default=None,
                        help="only the benchmark's commands, or only the sentences no home can mean")
    args = parser.parse_args()
    if args.only != "outside":
        commands(args)
    if args.only != "commands":
        outside(args.min_confidence)


def commands(args: argparse.Namespace) -> None:
    """Run the benchmark's command tasks through text and voice, and print the figures.

    Args:
        args: the parsed command line.
    """
    tasks = [t for t in load_tasks() if t.category in COMMANDS and load_world(t.world).language == "en"]
    tasks = tasks[: args.limit] if args.limit else tasks
    voices = VOICES["en"]
    ears = {}
    errors, words = defaultdict(int), defaultdict(int)
    ok = defaultdict(lambda: defaultdict(int))  # way -> category -> tasks solved
    turns: list[float] = []
    wrong: dict[str, int] = defaultdict(int)
    for n, task in enumerate(tasks, 1):
        text_ok, _, _, _ = solved(task, task.instruction, args.agent)
        ok["text"][task.category] += text_ok
        said = spoken(task.instruction)
        for voice in voices:
            audio = read_wav(speak(task.instruction, voice=voice))
            for mode in MODES:
                key = (task.world, mode)
                if key not in ears:
                    ears[key] = Recognizer(load_world(task.world), mode, min_confidence=args.min_confidence)
                heard = ears[key].hear(audio)
                errors[mode, voice] += word_errors(said, heard.raw)
                words[mode, voice] += len(said.split())
                if heard.text:
                    voice_ok, reply, act, changed = solved(task, heard.text, args.agent)
                else:
                    voice_ok, reply, act, changed = False, "I heard nothing I could do.", 0.0, False
                ok[f"{mode} / {voice}"][task.category] += voice_ok
                wrong[f"{mode} / {voice}"] += (not voice_ok and changed)  # failed, and the home changed
                if mode == "home" and task.category == "direct":
                    start = time.perf_counter()
                    speak(reply)
                    turns.append(heard.seconds + act + time.perf_counter() - start)
        print(f"\r{n}/{len(tasks)} tasks", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    per_category = defaultdict(int)
    for task in tasks:
        per_category[task.category] += 1
    print(f"{len(tasks)} command tasks of the English worlds, agent {args.agent}, offline model, "
          f"voices {', '.join(voices)}, home grammar's confidence floor {args.min_confidence}\n")
    print("word error rate")
    for mode in MODES:
        cells = [f"{voice} {errors[mode, voice] / words[mode, voice]:.1%}" for voice in voices]
        total = sum(errors[mode, v] for v in voices) / sum(words[mode, v] for v in voices)
        print(f"  {mode:<8} {'   '.join(cells)}   (all: {total:.1%})")
    ways = ["text"] + [f"{mode} / {voice}" for mode in MODES for voice in voices]
    print("\ntasks solved" + "".join(f"{w:>22}" for w in ways))
    for category, count in per_category.items():
        print(f"  {category:<18} {count:>3}" + "".join(f"{ok[w][category]:>22}" for w in ways))
    totals = {w: sum(ok[w].values()) for w in ways}
    print(f"  {'all':<18} {len(tasks):>3}" + "".join(f"{totals[w]:>22}" for w in ways))
    print(f"  {'failed, home changed':<22}" + "".join(f"{wrong[w]:>22}" for w in ways))
    print("\nthrough voice, as a share of through text: " + ", ".join(
        f"{w} {totals[w] / totals['text']:.0%}" for w in ways[1:]))
    if turns:
        print(f"\na spoken turn (hear + act + speak the reply), direct tasks, home grammar: median "
              f"{statistics.median(turns):.2f} s, slowest {max(turns):.2f} s over {len(turns)} turns")


if __name__ == "__main__":
    main()
