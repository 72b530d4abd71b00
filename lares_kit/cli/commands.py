"""The ``lares`` command: worlds (list, check, generate), run, demo, bench, import-ha, serve-model, serve-home,
course, lessons, say, listen.

Each subcommand is a thin wrapper over the library; the work happens in the module named beside it. Mistakes a
learner can fix (a bad world file, a missing API key) are one sentence and exit with status 2 -- no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from ..errors import LaresError, plain_warnings
from ..knowledge.formats import KNOWLEDGE_FORMATS
from .voice import add_voice_commands, cli_listen, cli_say

__all__ = ["bench_epilog", "build_parser", "main"]

PROMPT_STYLE_NAMES = ("lean", "lares")  # lares_kit.agents.prompts.PROMPT_STYLES, named here to keep start-up light
GENERATE_AT_MOST = 25_000  # rooms or devices for `lares worlds generate`: about the most a world file may hold


def build_parser() -> argparse.ArgumentParser:
    """The ``lares`` argument parser, with one subparser per command.

    Examples:
        >>> args = build_parser().parse_args(["run", "turn on the light in the kitchen", "--answer", "yes"])
        >>> args.command, args.agent, args.answer
        ('run', 'intent-action', ['yes'])
    """
    parser = argparse.ArgumentParser(prog="lares",
                                     description="Build, run and measure LLM agents in a simulated home.")
    sub = parser.add_subparsers(dest="command", required=True)

    worlds = sub.add_parser("worlds", help="list the worlds (or check a world file, or generate one)")
    worlds.add_argument("action", nargs="?", choices=["list", "check", "generate"], default="list")
    worlds.add_argument("paths", nargs="*", help="check: world ids or files (default: every world found)")
    # `lares worlds generate`: a seeded house or building (lares_kit.home.generator)
    worlds.add_argument("--rooms", type=int, default=None, help="generate: rooms (default: devices / 5)")
    worlds.add_argument("--devices", type=int, default=None, help="generate: devices (default: 4 a room)")
    worlds.add_argument("--floors", type=int, default=None, help="generate: floors (default: one per 100 rooms)")
    worlds.add_argument("--seed", type=int, default=0, help="generate: the same seed gives the same world")
    worlds.add_argument("--out", default=None, help="generate: write the world file here (default: print it)")

    lessons = sub.add_parser("lessons", help="copy the notebooks and exercises into a folder of yours, to run there")
    lessons.add_argument("folder", help="where to put them (made if missing; files already there are kept)")

    run = sub.add_parser("run", help="run one instruction with an agent")
    run.add_argument("instruction")
    run.add_argument("--world", default="lares-home")
    run.add_argument("--agent", default="intent-action")
    run.add_argument("--model", default=None, help="offline (default, also LARES_MODEL), a model name, or replay:DIR "
                     "(the replies recorded in DIR with --record: no model, no key)")
    run.add_argument("--record", default=None, metavar="DIR",
                     help="keep every request and reply in the folder DIR (made if missing; a new file each time), "
                          "for --model replay:DIR")
    run.add_argument("--executor-model", default=None, help="the light model that writes actions (react)")
    run.add_argument("--server", default=None, metavar="NAME",
                     help="what the model's server accepts: openai, ollama, vllm, llamacpp or lmstudio (also "
                          "LARES_SERVER; default: learned from its refusals, auto)")
    run.add_argument("--temperature", default=None, metavar="T",
                     help="sampling temperature sent with every request, 0 to 2 (default: 0, so runs repeat)")
    run.add_argument("--action-format", default=None, metavar="FORMAT",
                     help="how react's executor writes Actions: json_schema (default), text or parallel")
    run.add_argument("--memory", nargs="?", const="default", default=None, metavar="PATH",
                     help="long-term memory file (default: <world>.sqlite3 in "
                          "~/.local/share/lares_kit/memory, or "
                          "$LARES_DATA/memory)")
    run.add_argument("--person", default=None,
                     help="who is talking: a resident of the world (sage-home: amal, dmitriy); sage and react "
                          "read it, other agents with --memory")
    run.add_argument("--source", default=None, metavar="NAME",
                     help="who gives the instruction: owner (default), guest, letterbox... -- the world's safety "
                          "policy trusts only the sources it lists as trusted (shared-house, townhouse)")
    run.add_argument("--time-of-day", default=None, metavar="TIME",
                     help="when it is said, for the safety policy and the poller's clock: "
                          "04:00, 4am, 23:30:00, night...")
    run.add_argument("--knowledge", choices=["latest", "initial", "none"], default=None,
                     help="what the agent knows of the home's state (default: the agent's own: latest; sage: none)")
    run.add_argument("--knowledge-format", choices=KNOWLEDGE_FORMATS, default=None,
                     help="how the home is written into the prompt (default auto: the whole home as an outline "
                          "while it is small, else only the rooms that matter; notebook 16)")
    run.add_argument("--prompt-style", choices=PROMPT_STYLE_NAMES, default=None,
                     help="how the prompts are written: lean (default) or lares (the Lares write-up's; notebook 16)")
    run.add_argument("--tools", choices=["lares", "ha"], default=None,
                     help="the tool dialect: lares (default) or ha, Home Assistant's intent tools "
                          "(docs/home_assistant.md)")
    run.add_argument("--answer", action="append", default=None, help="a reply for the simulated user (repeatable)")
    run.add_argument("--max-steps", type=int, default=None, metavar="N",
                     help="the step limit (default: the design's own, 20; react 10)")
    run.add_argument("--seed", type=int, default=None,
                     help="hide the movable things at random (same seed, same places)")
    run.add_argument("--event", action="append", default=None, metavar="EVENT",
                     help="what happens after the episode, on the poller's simulated clock: 'TIME DEVICE "
                          "ATTRIBUTE=VALUE ...', e.g. '30s fridge door=open' (TIME: 30, 30s or 2m; repeatable); "
                          "shows persistent commands firing (--agent sage)")
    run.add_argument("--at", action="append", default=None, metavar="TIME",
                     help="after the episode, play the simulated clock on to TIME: '19:00', '7pm' or 'saturday "
                          "09:00', within a week (repeatable); shows persistent commands for a time firing")
    run.add_argument("--json", action="store_true",
                     help="print one JSON object instead of a transcript (always one, even for an error)")

    sub.add_parser("demo", help="the three Lares scenarios with the offline model")

    bench = sub.add_parser("bench", help="run benchmark suites", add_help=False,
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           description="Run task suites with agents and models; print a table by category.")
    bench.add_argument("-h", "--help", action=_BenchHelp, help="show this help, with the suites and agents, and exit")
    bench.add_argument("--suite", action="append", default=None, metavar="ID|PATH",
                       help="a suite listed below, or a suite file; repeatable (default: every suite)")
    bench.add_argument("--agent", action="append", default=None, metavar="NAME",
                       help="an agent listed below; repeatable (default: intent-action and function-calling)")
    bench.add_argument("--model", action="append", default=None,
                       help="offline (default, also LARES_MODEL), a model name, or replay:DIR (every model recorded "
                            "in DIR); repeatable")
    bench.add_argument("--record", default=None, metavar="DIR",
                       help="keep every request and reply in the folder DIR, for --model replay:DIR (the episodes "
                            "then run in threads)")
    bench.add_argument("--seeds", type=int, default=1, help="runs of each task, hiding things by seeds 0..N-1")
    bench.add_argument("--trials", type=int, default=1, metavar="K",
                       help="run every episode K times and report pass^1..pass^K (a real model gets a seed per trial)")
    bench.add_argument("--temperature", default=None, help="sampling temperature sent to the model (default 0)")
    bench.add_argument("--concurrency", type=int, default=1,
                       help="episodes run at once (processes for offline and local models, threads for remote ones)")
    bench.add_argument("--executor", choices=["threads", "processes", "dask"], default=None,
                       help="where episodes run (default: processes for an in-process model, else threads)")
    bench.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="a Dask scheduler (tcp://host:8786) for --executor dask; default: a local cluster")
    bench.add_argument("--max-steps", type=int, default=None, metavar="N",
                       help="a step limit for every episode (a task's own lower one still holds; default: each "
                            "task's own, else the design's): bounds a slow real model's failing episodes")
    bench.add_argument("--json", dest="json_path", default=None, metavar="PATH",
                       help="write every result and the summary to this JSON file")
    bench.add_argument("--plot", default=None, metavar="PATH", help="draw the summary into this image file")
    bench.add_argument("--runs", default=None, help="folder for the episode journal, episodes.jsonl (resumable)")
    bench.add_argument("--tasks", action="append", default=None,
                       help="only tasks whose id or category matches (shell-style, e.g. 'lh-*'; repeatable)")
    bench.add_argument("--limit", type=int, default=None,
                       help="at most N tasks, spread over the categories (local model: 20 unless given; 0: all)")
    # What the agents are compared with (lares_kit.bench.configs): every value given is a configuration of its
    # own, every combination is run with every agent, and a design that does not take a setting runs with its own.
    bench.add_argument("--knowledge", action="append", default=None, metavar="MODE",
                       help="what the agents know of the home: latest (default), initial or none; repeatable, to "
                            "compare modes side by side (sage has none to choose: it reads the home with its tools)")
    bench.add_argument("--knowledge-format", action="append", default=None, metavar="FORMAT",
                       help=f"how the home is written into the prompt: {', '.join(KNOWLEDGE_FORMATS)} (default auto: "
                            "the whole home as an outline while it is small, else only the rooms that matter); "
                            "repeatable")
    bench.add_argument("--prompt-style", action="append", default=None, metavar="STYLE",
                       help="how the prompts are written: lean (default) or lares (the Lares write-up's); repeatable")
    bench.add_argument("--executor-model", action="append", default=None, metavar="NAME",
                       help="react's light model that writes the Actions (default: the model itself, or "
                            "LARES_EXECUTOR_MODEL); repeatable")
    bench.add_argument("--action-format", action="append", default=None, metavar="FORMAT",
                       help="how react's executor writes Actions: json_schema (default), text or parallel; repeatable")
    bench.add_argument("--parser", action="append", default=None, metavar="POLICY",
                       help="how react reads a text reply with several Actions: one (default), naive or all; "
                            "repeatable")
    bench.add_argument("--option", action="append", default=None, metavar="KEY=VALUE",
                       help="any option of a design's options (react: action_format, parser, max_iterations; "
                            "function-calling and sage: parallel_tool_calls), e.g. parser=naive; repeatable, a key "
                            "given twice compares its values")
    bench.add_argument("--tools", choices=["lares", "ha"], default="lares",
                       help="the tools the agents are offered: lares (default), or ha (Home Assistant's LLM API)")
    bench.add_argument("--ha-dataset", action="append", default=None, metavar="DIR",
                       help="a Home Assistant 'assist' home or dataset folder, run as a suite; repeatable "
                            "(docs/ha_datasets.md)")

    course = sub.add_parser("course", help="teachers: the exercises as an nbgrader course (docs/teaching.md)")
    course_sub = course.add_subparsers(dest="course_command", required=True)
    build = course_sub.add_parser("build", help="write DIR/nbgrader_config.py and DIR/source/<exercise>/ from "
                                                "exercises/ and the reference solutions")
    build.add_argument("directory", metavar="DIR", help="the course folder (created; nbgrader's own files are kept)")
    build.add_argument("--exercises", default=None, metavar="DIR",
                       help="the exercise notebooks (default: exercises/ of this checkout)")
    build.add_argument("--only", nargs="+", default=None, metavar="NAME",
                       help="just these exercises: 01_shortest_route, or just 01")
    build.add_argument("--questions", action="store_true",
                       help="also each lesson's conceptual questions, graded by hand (questions_NN, with rubrics)")

    hub = course_sub.add_parser("hub", help="write a class hub's configuration: the formgrader for teachers only")
    hub.add_argument("directory", metavar="DIR", help="where the role folders and the hub snippet go")
    hub.add_argument("--teacher", action="append", required=True, metavar="NAME",
                     help="a hub user who grades (repeat for each)")

    progress = course_sub.add_parser("progress", help="who has run which check: the students' saved exercises")
    progress.add_argument("directory", metavar="DIR", help="the class: one folder per student (a hub's /home)")
    progress.add_argument("--only", nargs="+", default=None, metavar="NAME",
                          help="just these exercises: 01_shortest_route, or just 01")

    import_ha = sub.add_parser("import-ha", help="write a Home Assistant dataset as world files and a suite file")
    import_ha.add_argument("path", metavar="DIR", help="a home (a folder with _fixtures.yaml) or a dataset folder")
    import_ha.add_argument("--out", default=None, metavar="DIR",
                           help="the folder to write the worlds and tasks/<dataset>.yaml into (default: the "
                                "dataset's name in ~/.local/share/lares_kit/worlds, or $LARES_DATA/worlds)")

    serve = sub.add_parser("serve-model", help="serve the offline model as an OpenAI-compatible HTTP API")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    serve.add_argument("--port", type=_port, default=0, help="the port (default: a free one, printed)")
    serve.add_argument("--token", default=None, metavar="TOKEN",
                       help="the API key clients must send (OPENAI_API_KEY); required beyond loopback")
    _door_arguments(serve)
    serve.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each reply")
    # a faulty endpoint, for testing retries and failure handling (lares_kit.models.serving.server.Faults)
    serve.add_argument("--fault-rate", type=float, default=0.0, help="share of chat completions to break (0-1)")
    serve.add_argument("--faults", default=None, help="which faults, comma-separated: 429,500,timeout,drop,latency "
                       "(default: all)")
    serve.add_argument("--retry-after", type=float, default=1.0, help="seconds a 429 asks the client to wait")
    serve.add_argument("--hang", type=float, default=30.0, help="seconds a 'timeout' fault stalls the reply")
    serve.add_argument("--fault-seed", type=int, default=0, help="the same seed breaks the same requests")

    home = sub.add_parser("serve-home", help="serve a world to outside clients: MCP, the simulator API, MQTT")
    home.add_argument("world", metavar="WORLD", help="a world id (lares worlds) or a world file")
    home.add_argument("--mcp", choices=["http", "stdio"], default="http",
                      help="http (default): MCP at /mcp beside the simulator API; stdio: MCP on standard "
                           "input/output, for a client that starts the server (HTTP too only with --port)")
    home.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    home.add_argument("--port", type=_port, default=None, help="the HTTP port (default: a free one, printed)")
    home.add_argument("--token", default=None, metavar="TOKEN",
                      help="the token clients send, speaking as --source (default: $LARES_HOME_TOKEN, else a new "
                           "one, printed)")
    home.add_argument("--token-for", action="append", default=None, metavar="SOURCE=TOKEN",
                      help="another token, that speaks as SOURCE (guest, letterbox...); repeatable")
    _door_arguments(home)
    home.add_argument("--clock", choices=["fixed", "simulated", "local"], default=None,
                      help="the home's clock, which the night rule reads: fixed (--time-of-day), simulated, or "
                           "local (this machine's; the default with --mqtt or a device bound through mqtt:)")
    home.add_argument("--time-of-day", default=None, metavar="TIME",
                      help="the time of day: alone, a fixed clock (04:00, 4am, night); with --clock simulated, "
                           "where it starts")
    home.add_argument("--debug", action="store_true", help="also serve GET /debug: the hidden truth")
    home.add_argument("--seed", type=int, default=None, help="hide the movable things with this seed")
    home.add_argument("--tools", choices=["lares", "ha"], default="lares",
                      help="the tools served: lares (default), or ha (Home Assistant's LLM API)")
    home.add_argument("--source", default="owner",
                      help="who the clients speak for, for the home's safety policy (owner, guest, letterbox...)")
    home.add_argument("--mqtt", default=None, metavar="HOST:PORT",
                      help="also put the home on this MQTT broker, with Home Assistant discovery")
    from ..serve.mqtt_connection import add_mqtt_arguments
    from ..serve.wyoming_door import add_wyoming_arguments

    add_mqtt_arguments(home)  # --mqtt-username, --mqtt-password-file, --mqtt-tls, --mqtt-ca... (docs/serve_home.md)
    add_wyoming_arguments(home)  # --wyoming PORT, --wyoming-source, --wyoming-agent... (docs/voice.md)
    add_voice_commands(sub)  # lares say, lares listen (lares_kit.cli.voice)
    return parser


def _port(text: str) -> int:
    # argparse shows an ArgumentTypeError as one line, with the usage
    from ..models.serving.guard import check_port

    try:
        return check_port(text)
    except LaresError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _door_arguments(parser: argparse.ArgumentParser) -> None:
    # Who may reach a served door besides loopback's own names (lares_kit.models.serving.guard; docs/security.md).
    parser.add_argument("--allow-host", action="append", default=None, metavar="NAME",
                        help="a Host name clients use to reach it (repeatable); required to listen beyond loopback")
    parser.add_argument("--allow-origin", action="append", default=None, metavar="URL",
                        help="a web page origin allowed to call it, e.g. http://127.0.0.1:8888 (repeatable)")


class _BenchHelp(argparse.Action):
    """``lares bench -h``: the help ends with the suites in worlds/tasks/ and the agents, read when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser.epilog = bench_epilog()  # here, not at start-up: listing agents imports them
        parser.print_help()
        parser.exit()


def bench_epilog() -> str:
    """The suites (id, tasks, description) and agents that ``lares bench --help`` lists.

    Examples:
        >>> text = bench_epilog()
        >>> "lares-home" in text and "function-calling" in text
        True
    """
    from ..agents import AGENTS
    from ..bench.runner import DEFAULT_AGENTS
    from ..bench.suites.tasks import suite_paths
    from ..files.reading import read_data_file

    lines = ["suites (--suite ID, from worlds/tasks/):"]
    for suite, path in sorted(suite_paths().items()):
        try:  # only counted here; a broken file is reported when a run loads it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a key written twice is for the run to say
                data = read_data_file(path)  # within the readers' limits: a huge or hostile file cannot hang -h
            count, about = len(data["tasks"]), str(data.get("description", ""))[:200]
        except Exception:  # noqa: BLE001 (help must print whatever a suite file holds)
            count, about = "?", "(cannot be read; lares bench --suite " + suite + " says why)"
        lines.append(f"  {suite:<16} {count:>4} tasks  {about}")
    lines += ["", f"agents (--agent NAME): {', '.join(AGENTS)} (default: {' and '.join(DEFAULT_AGENTS)})"]
    return "\n".join(lines)


def _worlds(args: argparse.Namespace) -> int:
    from ..home.worlds import check_home, load_world, world_paths

    if args.action == "generate":
        return _generate(args)
    if args.action == "check":
        # A file that does not load: its one-sentence error on stderr, exit 2 (as every command's bad input).
        # A Home that loads but check_home faults: the problems on stdout, exit 1.
        status = 0
        for target in args.paths or list(world_paths()):
            try:
                home = load_world(target)
            except LaresError as exc:
                print(f"lares: {exc}", file=sys.stderr)
                status = 2
                continue
            problems = check_home(home)
            print(f"{target}: " + ("ok" if not problems else "; ".join(problems)))
            status = max(status, 1 if problems else 0)
        return status
    print(f"{'world':<20} {'rooms':>5} {'devices':>7} {'items':>5}  name")
    for world_id, path in world_paths().items():
        try:
            home = load_world(path)
        except LaresError as exc:
            print(f"{world_id:<20} invalid: {exc}")
            continue
        print(f"{world_id:<20} {home.graph.number_of_nodes():>5} {len(home.devices):>7} "
              f"{len(home.items):>5}  {home.name}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    import json

    from ..files.reading import MAX_BYTES
    from ..home.generator import generate_world
    from ..home.worlds import check_home, parse_world

    if args.rooms is None and args.devices is None:
        raise LaresError("lares worlds generate needs --rooms N and/or --devices M")
    if max(args.rooms or 0, args.devices or 0) > GENERATE_AT_MOST:
        raise LaresError(f"lares worlds generate makes at most {GENERATE_AT_MOST:,} rooms or devices "
                         "(a bigger world would be more than a world file may hold)")
    try:
        data = generate_world(args.rooms, args.devices, args.seed, floors=args.floors)
    except ValueError as exc:
        raise LaresError(str(exc)) from None
    # Written as JSON, which is YAML too: a 5,000-device world then loads in a fraction of a second.
    text = json.dumps(data, indent=1) + "\n"
    if len(text) > MAX_BYTES:
        raise LaresError(f"this world would be a {len(text) / 2**20:.0f} MB file, over the {MAX_BYTES // 2**20} MB a "
                         "world file may be; ask for fewer rooms or devices")
    if args.out is None:
        print(text, end="")
        return 0
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise LaresError(f"cannot write {args.out} ({exc.strerror or type(exc).__name__})") from None
    home = parse_world(data, source=args.out)
    problems = check_home(home)
    floors = len({a.get("floor") for _, a in home.graph.nodes(data=True)})
    print(f"wrote {args.out}: {data['name']}; {home.graph.number_of_nodes()} rooms, {len(home.devices)} devices, "
          f"{floors} floor(s), {len(home.items)} hidden items; check: {'ok' if not problems else '; '.join(problems)}")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    """Run one ``lares`` command; return its exit status (a mistake is one sentence on stderr and status 2).

    Args:
        argv: The command line after ``lares``, e.g. ``["worlds", "check", "lares-home"]``; None reads ``sys.argv``.

    Examples:
        >>> main(["worlds", "check", "lares-home"])
        lares-home: ok
        0
        >>> main(["run", "hello", "--agent", "telepathy"])  # "lares: unknown agent 'telepathy'; ..." on stderr
        2
    """
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what --record writes in its manifest
    with plain_warnings():  # "lares: warning: home.yaml: rooms: the key 'id' is written twice", not Python's format
        return _main(args)


def _main(args: argparse.Namespace) -> int:
    try:
        if args.command == "worlds":
            return _worlds(args)
        if args.command == "run":
            from .run import cli_run
            return cli_run(args)
        if args.command == "demo":
            from .run import cli_demo
            return cli_demo(args)
        if args.command == "bench":
            from .bench import cli_bench
            return cli_bench(args)
        if args.command == "import-ha":
            from ..bench.suites.ha_dataset import import_ha
            from ..files.paths import user_dir

            written = import_ha(args.path, args.out or user_dir("worlds") / Path(args.path).resolve().name)
            print(f"wrote {len(written) - 1} world file(s) and the suite {written[-1]}; run it with:\n"
                  f"  lares bench --suite {written[-1]}")
            return 0
        if args.command == "serve-model":
            from ..models.serving.server import cli_serve
            return cli_serve(args)
        if args.command == "serve-home":
            from ..serve.app import cli_serve_home
            return cli_serve_home(args)
        if args.command in ("say", "listen"):
            return (cli_say if args.command == "say" else cli_listen)(args)
        if args.command == "lessons":
            from ..learn.lessons import cli_lessons
            return cli_lessons(args)
        if args.command == "course" and args.course_command == "progress":
            from ..learn.progress import cli_progress
            return cli_progress(args)
        if args.command == "course" and args.course_command == "hub":
            from ..learn.hub import cli_hub
            return cli_hub(args)
        if args.command == "course":
            from ..learn.course import cli_course
            return cli_course(args)
    except LaresError as exc:
        print(f"lares: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lares: stopped", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `lares worlds | head`: the reader has what it wanted; no traceback at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
