"""Record the real models' episodes the lessons replay (lares_kit.bench.recorded.PLAN), resumably.

Usage (from the repo root, after ``make local``)::

    .venv/bin/python scripts/record_real_models.py                 # every planned episode not yet recorded
    .venv/bin/python scripts/record_real_models.py --model local   # only SmolLM2's
    .venv/bin/python scripts/record_real_models.py --list          # the plan, and what is recorded
    .venv/bin/python scripts/record_real_models.py --again         # start over: delete and record everything

Each episode is one recording session (``session-NNNN.jsonl``) in ``lares_kit/data/recorded/<model>/`` and one
line in that folder's ``episodes.jsonl`` (what was measured: status, solved, steps, tokens, wall seconds). An
episode is written to ``episodes.jsonl`` only when it has finished, so a run that is stopped (Ctrl-C, a session
that ends) loses at most the episode it was in: run the script again and it goes on from there, after removing
the session file that episode left half-written. Small models on 2 CPU cores take 10-20 s a call and a failing
episode runs to its step limit (8): the whole plan takes about an hour and a half.

When prompts, tools or worlds change, the recordings no longer match the requests the code makes
(``tests/system/test_recorded.py`` says so and names this script): run it with ``--again`` and commit the result.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lares_kit.bench.recorded import (  # noqa: E402
    MAX_STEPS,
    PLAN,
    RECORD_SCRIPT,
    Recorded,
    episode_summary,
    recorded_folder,
    run_one,
    summary,
)
from lares_kit.models import make_client  # noqa: E402
from lares_kit.models.recording.sessions import Recorder  # noqa: E402


def folder_of(episode: Recorded, root: Path) -> Path:
    # react planned by the offline model with a real executor is the real model's recording
    model = episode.executor if episode.model == "offline" and episode.executor else episode.model
    return recorded_folder(model, root)


def forget_unfinished(folder: Path) -> None:
    """Delete the session files no finished episode names (a run stopped in the middle of one)."""
    done = {json.loads(line)["session"] for line in _lines(folder / "episodes.jsonl")}
    for path in folder.glob("session-*.jsonl"):
        if path.name not in done:
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path  # --root may be anywhere
            print(f"  removing {shown}: its episode did not finish", flush=True)
            path.unlink()


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.exists() else []


def record(episode: Recorded, root: Path, max_steps: int = MAX_STEPS) -> dict:
    """Run one planned episode live, recording the real model's requests and replies; return its summary."""
    folder = folder_of(episode, root)
    real = episode.executor if episode.model == "offline" else episode.model
    recorder = Recorder(folder, models=[real], command=f"python {RECORD_SCRIPT} ({episode.key})")
    recording = make_client(real, record=recorder, timeout=600.0)
    offline = make_client("offline")
    client, executor_client = (offline, recording) if episode.model == "offline" else (recording, None)
    if episode.executor and episode.model != "offline":
        executor_client = offline if episode.executor == "offline" else recording
    start = time.perf_counter()
    ep = run_one(episode, client, executor_client, max_steps)
    seconds = time.perf_counter() - start
    if recorder.path is None:
        raise SystemExit(f"{episode.key}: no request reached the model; nothing was recorded")
    line = episode_summary(episode, ep, seconds, recorder.path.name)
    with (folder / "episodes.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return line


def write_readme(folder: Path, model: str) -> None:
    """The folder's README: the model, its weights, when and where it was recorded, and the command."""
    from lares_kit.models.local.catalog import LOCAL_SPECS

    spec = LOCAL_SPECS.get(model)
    weights = getattr(spec, "weights", None)
    rows = [json.loads(line) for line in _lines(folder / "episodes.jsonl")]
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    text = [f"# Recorded episodes of `{model}`", "",
            f"- model: `{model}`{f' -- {weights.title}' if weights is not None else ''}",
            f"- weights: {_weights_hash(model, weights)}",
            f"- recorded: {date.today().isoformat()}, on {os.cpu_count()} cores of {cpu}",
            f"- command: `.venv/bin/python {RECORD_SCRIPT} --model {model}` (resumable; `--again` starts over)",
            f"- episodes: {len(rows)}, each at most {MAX_STEPS} steps, greedy decoding (temperature 0, fixed seed)",
            "", "Each `session-NNNN.jsonl` holds one episode's requests and replies; `episodes.jsonl` what was",
            "measured then (wall seconds on the machine above). Replay with `--model replay:<this folder>`, or",
            "`lares_kit.bench.recorded.replay(...)`. Do not edit these files: record again instead.", ""]
    (folder / "README.md").write_text("\n".join(text), encoding="utf-8")


def _weights_hash(model: str, weights) -> str:
    """The README's weights line: the SHA-256 lares_kit pins, else that of the file the episodes were recorded with."""
    sha = getattr(weights, "sha256", None)
    if sha:
        return f"SHA-256 `{sha}`"
    try:
        from lares_kit.models.local.llama import gguf_path

        digest = hashlib.sha256()
        with gguf_path(model).open("rb") as weights_file:
            for block in iter(lambda: weights_file.read(1 << 20), b""):
                digest.update(block)
    except Exception as exc:  # noqa: BLE001 -- the README says why instead
        return f"SHA-256 not known here ({exc})"
    return f"SHA-256 `{digest.hexdigest()}` (of the file recorded with; its package's version pins it)"


_LOCK: list[int] = []  # the root folder's descriptor, locked while this process records


def _only_recording(root: Path) -> bool:
    """Lock ``root`` for this process; False when another recording holds it (it would lose its session)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _LOCK.append(fd)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=None, help="only episodes of this model (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the plan and what is recorded, then stop")
    parser.add_argument("--again", action="store_true", help="delete the recordings and record everything")
    parser.add_argument("--root", default=None, help="where to record (default: inside the package)")
    args = parser.parse_args()
    root = Path(args.root) if args.root else None
    from lares_kit.bench.recorded import RECORDED_ROOT

    root = root or RECORDED_ROOT
    plan = [e for e in PLAN if not args.model or e.model in args.model or e.executor in args.model]
    folders = sorted({folder_of(e, root) for e in plan})
    if args.again:
        for folder in folders:
            for path in [*folder.glob("session-*.jsonl"), folder / "episodes.jsonl"]:
                path.unlink(missing_ok=True)
    if not args.list:  # --list only reads: a recording running meanwhile keeps its half-written session
        if not _only_recording(root):
            print(f"record_real_models: another recording into {root} is running; wait for it or stop it",
                  file=sys.stderr)
            return 2
        for folder in folders:
            if folder.exists():
                forget_unfinished(folder)
    done = summary(root)
    todo = [e for e in plan if e.key not in done]
    if args.list:
        for e in plan:
            row = done.get(e.key)
            said = (f"{row['status']:<11} {'solved' if row['solved'] else 'not solved':<11} {row['steps']} steps "
                    f"{row['seconds']:7.1f} s") if row else "to record"
            print(f"{e.key:<60} {said}")
        print(f"{len(plan) - len(todo)} of {len(plan)} recorded")
        return 0
    print(f"{len(todo)} of {len(plan)} episodes to record", flush=True)
    for number, episode in enumerate(todo, 1):
        print(f"[{number}/{len(todo)}] {episode.key} ...", end=" ", flush=True)
        line = record(episode, root)
        print(f"{line['status']}, {'solved' if line['solved'] else 'not solved'}, {line['steps']} steps, "
              f"{line['seconds']:.0f} s", flush=True)
    for folder in folders:
        if (folder / "episodes.jsonl").exists():
            write_readme(folder, folder.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
