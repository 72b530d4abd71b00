"""A class on one machine, as two Unix users: the teacher grades; the student reaches neither answers nor formgrader.

The shared environment is a classroom install: a venv that anyone can read, holding the lares_kit wheel alone
(its other packages borrowed from the test environment by a path line, as in ``test_notebooks.py``). The venv is
made from Debian's Python, because this machine's own interpreter lives under ``/root``, which other users cannot
enter. The teacher (uid 61001) has the reference answers (the ``[solutions]`` extra) in a folder of their own
and builds the nbgrader course in their home (mode 0700); the student (uid 61002) has a home of their own.
``lares course hub`` writes the role configuration a hub's ``pre_spawn_hook`` gives each user's server; here
each user starts a Jupyter server with it, as the hub's spawner would, and asks for the formgrader.

Needs root (to run as other users) and Debian's ``/usr/bin/python3`` of the test's Python version; skipped, with
the reason, otherwise.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from installs import build_wheel, stop, venv_with_wheel  # tests/installs.py

ROOT = Path(__file__).resolve().parents[2]
TEACHER, STUDENT = 61001, 61002
SYSTEM_PYTHON = Path("/usr/bin/python3")

pytestmark = pytest.mark.slow


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root, to run the teacher and the student as two other Unix users"
    if not SYSTEM_PYTHON.exists():
        return "needs Debian's /usr/bin/python3 (this interpreter lives where other users cannot enter)"
    version = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, check=False).stdout.strip()
    if version != str(tuple(sys.version_info[:2])):
        return f"/usr/bin/python3 is {version}, not this test's Python {tuple(sys.version_info[:2])}"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def classroom():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    base = Path(tempfile.mkdtemp(prefix="lares-class-", dir="/tmp"))
    base.chmod(0o755)
    try:
        # the shared environment: the wheel alone, readable by everyone...
        wheel, source = build_wheel(base)
        venv = base / "venv"
        # ...with the environment's Jupyter files: its data (templates) and its configuration, which enables every
        # nbgrader extension for everyone, as a shared install does: the roles' folders must win over it
        clean = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "LARES_WORLDS")},
                 "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter")}
        python, _ = venv_with_wheel(SYSTEM_PYTHON, venv, wheel, clean)
        shutil.copytree(Path(sys.prefix) / "etc" / "jupyter", venv / "etc" / "jupyter", dirs_exist_ok=True)
        hub = base / "hub"
        subprocess.run([str(venv / "bin" / "lares"), "course", "hub", str(hub), "--teacher", "tess"], check=True,
                       capture_output=True, env=clean, cwd=base, timeout=120)
        homes = {}
        for name, uid in (("tess", TEACHER), ("sam", STUDENT)):
            home = base / "home" / name
            home.mkdir(parents=True)
            homes[name] = home
        # the teacher's own copy of the reference answers: installed for them, never in the shared venv
        shutil.copytree(source / "solutions" / "lares_kit_solutions", homes["tess"] / "lib" / "lares_kit_solutions")
        for name, uid in (("tess", TEACHER), ("sam", STUDENT)):
            for path in [homes[name], *homes[name].rglob("*")]:
                os.chown(path, uid, uid)
            homes[name].chmod(0o700)
        users = {"tess": {"uid": TEACHER, "home": homes["tess"], "role": "teacher",
                          "env": {**clean, "HOME": str(homes["tess"]), "USER": "tess",
                                  "PYTHONPATH": str(homes["tess"] / "lib")}},
                 "sam": {"uid": STUDENT, "home": homes["sam"], "role": "student",
                         "env": {**clean, "HOME": str(homes["sam"]), "USER": "sam"}}}
        yield {"python": python, "venv": venv, "hub": hub, "users": users}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def as_user(classroom, name: str, args: list[str], **kw) -> subprocess.CompletedProcess:
    user = classroom["users"][name]
    return subprocess.run(args, user=user["uid"], group=user["uid"], extra_groups=[], env=user["env"],
                          cwd=user["home"], capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


ANSWERS = ("import importlib.util; from lares_kit.learn.exercises.loop import ex01; ex01.bind({}); "
           "print(importlib.util.find_spec('lares_kit_solutions') is not None); "
           "print(ex01.q1.solution_message().text)")


def test_the_teacher_builds_the_course_and_the_student_can_read_no_answer(classroom):
    teacher = as_user(classroom, "tess", [str(classroom["venv"] / "bin" / "lares"), "course", "build", "course",
                                          "--only", "01"])
    assert teacher.returncode == 0, teacher.stderr
    source = classroom["users"]["tess"]["home"] / "course" / "source" / "01_shortest_route" / "01_shortest_route.ipynb"
    assert "### BEGIN SOLUTION" in source.read_text(encoding="utf-8")  # the course's source holds the answers
    sees = as_user(classroom, "tess", [str(classroom["python"]), "-c", ANSWERS]).stdout.splitlines()
    assert sees[0] == "True" and sees[1].startswith("One way to do it")
    # the student: no answers in the shared environment, and the teacher's home is closed
    student = as_user(classroom, "sam", [str(classroom["python"]), "-c", ANSWERS])
    assert student.returncode == 0, student.stderr
    said = student.stdout.splitlines()
    assert said[0] == "False" and said[1].startswith("The reference solutions are not installed here")
    peek = as_user(classroom, "sam", [str(classroom["python"]), "-c", f"open({str(source)!r}).read()"])
    assert peek.returncode != 0 and "PermissionError" in peek.stderr


def _formgrader_status(classroom, name: str) -> int:
    user = classroom["users"][name]
    port, token = free_port(), secrets.token_hex(16)
    env = {**user["env"], "JUPYTER_CONFIG_PATH": str(classroom["hub"] / user["role"])}
    cmd = [str(classroom["python"]), "-m", "jupyter_server", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0"]
    server = subprocess.Popen(cmd, user=user["uid"], group=user["uid"], extra_groups=[], env=env, cwd=user["home"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:  # polled with sleep: a timed Event.wait never ends under faketime
            assert server.poll() is None, f"{name}'s server exited: {server.stderr.read().decode()[-2000:]}"
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, f"{name}'s server did not answer within 120 s"
                time.sleep(0.5)
        try:
            return urllib.request.urlopen(f"http://127.0.0.1:{port}/formgrader?token={token}", timeout=60).status
        except urllib.error.HTTPError as exc:
            return exc.code
    finally:
        stop(server)


def test_only_the_teachers_server_offers_the_formgrader(classroom):
    config = json.loads((classroom["hub"] / "student" / "jupyter_server_config.json").read_text(encoding="utf-8"))
    assert config["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is False
    shared = classroom["venv"] / "etc" / "jupyter" / "jupyter_server_config.d"
    assert any("formgrader" in p.read_text() for p in shared.glob("*.json")), "the environment enables it for all"
    assert _formgrader_status(classroom, "tess") == 200  # the teacher's page (so a 404 below is the role's doing)
    assert _formgrader_status(classroom, "sam") == 404
