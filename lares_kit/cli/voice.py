"""``lares say`` and ``lares listen``: the spoken loop from the command line (:mod:`lares_kit.voice`).

``lares say "..." --out FILE.wav`` speaks a sentence with espeak-ng.
``lares listen FILE.wav`` hears a command in a WAV file, acts on it with an
agent in a world, prints what it heard and what the agent answered, and
speaks the answer into a WAV file. A spoken command is an untrusted source
(``voice``: anyone near a microphone may speak), so the world's safety policy
asks or refuses where it would for a guest. Hearing needs the ``[voice]``
extra; without it both commands answer with one sentence naming it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..errors import LaresError

__all__ = ["add_voice_commands", "cli_say", "cli_listen"]


def add_voice_commands(sub: argparse._SubParsersAction) -> None:
    """The ``say`` and ``listen`` subcommands.

    Args:
        sub: the ``lares`` parser's subparsers.
    """
    say = sub.add_parser("say", help="speak a sentence into a WAV file (espeak-ng)")
    say.add_argument("text")
    say.add_argument("--out", required=True, metavar="FILE.wav", help="where to write the speech")
    say.add_argument("--world", default=None, help="speak in this world's language (default: English)")
    say.add_argument("--voice", default=None, help="an espeak-ng voice, e.g. en-us+m3 (default: the language's own)")

    listen = sub.add_parser("listen", help="hear a spoken command in a WAV file, act on it, and speak the reply")
    listen.add_argument("wav", metavar="FILE.wav", help="16 kHz mono 16-bit WAV (other shapes are converted by sox)")
    listen.add_argument("--world", default="lares-home")
    listen.add_argument("--agent", default="intent-action")
    listen.add_argument("--model", default=None, help="offline (default, also LARES_MODEL) or a model name")
    listen.add_argument("--hear", choices=["home", "general"], default="home",
                        help="home: only what this home can mean (its own grammar, the default); general: any English")
    listen.add_argument("--reply", default=None, metavar="FILE.wav",
                        help="where to speak the reply (default: <FILE>.reply.wav in the current folder)")
    listen.add_argument("--source", default="voice", metavar="NAME",
                        help="who the safety policy takes the speaker for (default: voice, untrusted)")
    listen.add_argument("--json", action="store_true", help="print what was heard and done as JSON")


def _write(path: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        raise LaresError(f"cannot write {path} ({exc.strerror or type(exc).__name__})") from None


def cli_say(args: argparse.Namespace) -> int:
    """``lares say``: the sentence spoken into ``--out``.

    Args:
        args: the parsed command line (text, out, world, voice).
    """
    from ..home.worlds import load_world
    from ..voice.speech import speak

    language = load_world(args.world).language if args.world else "en"
    audio = speak(args.text, language, args.voice)
    _write(args.out, audio)
    print(f"wrote {args.out}: {len(audio) / 2 / 16_000:.1f} s of speech")
    return 0


def cli_listen(args: argparse.Namespace) -> int:
    """``lares listen``: hear, act, speak the reply; exit 0 when the agent acted or answered, 1 when nothing was
    heard that the home can mean.

    Args:
        args: the parsed command line (wav, world, agent, model, hear, reply, source, json).
    """
    from ..agents import run_agent
    from ..home.worlds import load_world
    from ..run_context import RunContext
    from ..tools.users import NoUser
    from ..voice.audio import read_wav
    from ..voice.hear import Recognizer, hearing_missing
    from ..voice.speech import speak, speaker_missing

    for missing in (hearing_missing(), speaker_missing()):
        if missing is not None:
            raise LaresError(missing)
    home = load_world(args.world)
    audio = read_wav(args.wav)
    heard = Recognizer(home, args.hear).hear(audio)
    if heard.text:
        episode = run_agent(heard.text, home, args.agent, args.model, user=NoUser(),
                            context=RunContext(source=args.source))
        reply, status = episode.final_message, episode.status
    elif heard.unsure:
        reply, status = (f'I am not sure I heard you: was it "{heard.unsure}"? I did nothing; say it again, please.',
                         "not_heard")
    elif heard.partial:
        reply, status = (f'I heard only "{heard.partial}", which is not a whole command this home knows, so I did '
                         f'nothing. Say it again, for example: turn on the light in the kitchen.'), "not_heard"
    else:
        reply, status = "I heard nothing, so I did nothing.", "not_heard"
    out = args.reply or f"{Path(args.wav).stem}.reply.wav"
    _write(out, speak(reply, home.language))
    if args.json:
        print(json.dumps({"heard": heard.text, "partial": heard.partial, "unsure": heard.unsure,
                          "confidence": heard.confidence,
                          "mode": heard.mode, "status": status, "reply": reply, "reply_wav": out,
                          "converted_from": audio.converted}))
    else:
        how = "the home's grammar" if heard.mode == "home" else "the general language model"
        print(f"heard ({how}, confidence {heard.confidence:.3f}): "
              f"{heard.text or heard.unsure or heard.partial or '(nothing)'}"
              + (" -- not a whole command" if heard.partial else " -- too unsure to act on" if heard.unsure else ""))
        print(f"reply ({status}): {reply}")
        print(f"spoken reply: {out}")
    return 0 if status != "not_heard" else 1
