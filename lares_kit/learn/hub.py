"""A class's JupyterHub: the teacher grades with nbgrader's formgrader, students never get it (``lares course hub``).

nbgrader installs four Jupyter server extensions into the shared environment, all enabled: ``formgrader`` (the
teacher's grading pages: the course's source with its reference answers, the gradebook), ``assignment_list`` and
``course_list`` (fetch and submit), ``validate_assignment``. On a hub every user's server reads that same
environment, so without more configuration every student has the formgrader too. :func:`write_hub_config` writes
one Jupyter config folder per role and a JupyterHub snippet whose ``pre_spawn_hook`` points each user's server at
their role's folder (``JUPYTER_CONFIG_PATH``, which Jupyter reads before the environment's own configuration):

* ``student/``: the formgrader off, the rest on;
* ``teacher/``: everything on.

The configuration decides what each server offers; what a student can *read* is decided by Unix permissions,
which the teacher's guide sets: the course folder (source, gradebook) belongs to the teacher, mode 0700, and the
reference answers (the ``[solutions]`` extra) are installed for the teacher only, never in the shared environment.
``tests/system/test_class_hub.py`` runs both roles as two Unix users and checks that the student reaches neither.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import LaresError

__all__ = ["ROLES", "EXTENSIONS", "role_config", "write_hub_config", "cli_hub"]

EXTENSIONS = ("formgrader", "assignment_list", "course_list", "validate_assignment")
ROLES = {"teacher": set(EXTENSIONS), "student": {"assignment_list", "course_list", "validate_assignment"}}


def role_config(role: str) -> dict:
    """The ``jupyter_server_config.json`` of one role: which nbgrader extensions its servers load.

    Args:
        role: ``"teacher"`` or ``"student"``.

    Examples:
        >>> role_config("student")["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"]
        False
        >>> role_config("principal")
        Traceback (most recent call last):
        lares_kit.errors.LaresError: 'principal' is not a role of a class's hub; the roles are: teacher, student
    """
    if role not in ROLES:
        raise LaresError(f"{role!r} is not a role of a class's hub; the roles are: {', '.join(ROLES)}")
    return {"ServerApp": {"jpserver_extensions": {f"nbgrader.server_extensions.{name}": name in ROLES[role]
                                                  for name in EXTENSIONS}}}


HOOK = '''\
# A class's hub (written by `lares course hub`): each user's server reads its role's Jupyter config folder first.
# The teachers below get nbgrader's formgrader; everyone else gets fetch, submit and validate only.
LARES_HUB_TEACHERS = {teachers!r}
LARES_HUB_CONFIG = {folder!r}


def lares_role_config(spawner):
    role = "teacher" if spawner.user.name in LARES_HUB_TEACHERS else "student"
    spawner.environment["JUPYTER_CONFIG_PATH"] = LARES_HUB_CONFIG + "/" + role


c.Spawner.pre_spawn_hook = lares_role_config
'''


def write_hub_config(folder: str | Path, teachers: list[str]) -> list[Path]:
    """Write ``teacher/`` and ``student/`` config folders and ``jupyterhub_lares.py`` into ``folder``.

    Include the snippet from the hub's ``jupyterhub_config.py`` (``load_subconfig`` or copy it in).

    Args:
        folder: Where the files go (made if missing); the hub's users must be able to read it.
        teachers: The hub user names that grade (get the formgrader).

    Returns:
        The files written.

    Raises:
        LaresError: no teacher is named, a name is not a plain user name, or the folder cannot be written.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     [p.relative_to(tmp).as_posix() for p in write_hub_config(tmp, ["tess"])]
        ['teacher/jupyter_server_config.json', 'student/jupyter_server_config.json', 'jupyterhub_lares.py']
    """
    if not teachers:
        raise LaresError("name at least one teacher (--teacher NAME): only teachers get the formgrader")
    bad = [name for name in teachers if not name or not all(ch.isalnum() or ch in "._-" for ch in name)]
    if bad:
        raise LaresError(f"{bad[0]!r} is not a hub user name (letters, digits, '.', '_' and '-')")
    target = Path(folder).expanduser().resolve()
    written = []
    try:
        for role in ("teacher", "student"):
            path = target / role / "jupyter_server_config.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(role_config(role), indent=1) + "\n", encoding="utf-8")
            written.append(path)
        hook = target / "jupyterhub_lares.py"
        hook.write_text(HOOK.format(teachers=sorted(set(teachers)), folder=str(target)), encoding="utf-8")
        written.append(hook)
    except OSError as exc:
        raise LaresError(f"{target}: cannot write the hub's configuration there ({exc.strerror or exc})") from None
    return written


def cli_hub(args) -> int:
    """``lares course hub DIR --teacher NAME ...``: write the class hub's role configuration and say what to do next.

    Args:
        args: The parsed command line (``directory``, ``teacher``).
    """
    written = write_hub_config(args.directory, args.teacher)
    for path in written:
        print(f"wrote {path}")
    print(f"Then, in the hub's jupyterhub_config.py: load_subconfig({str(written[-1])!r})")
    return 0
