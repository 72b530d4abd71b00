"""``lares course hub``: the role folders, and the hub snippet that sends each user's server to its role's folder."""

from __future__ import annotations

import json
from types import SimpleNamespace

from lares_kit.cli.commands import main


def _hook(folder):
    config = SimpleNamespace(Spawner=SimpleNamespace())
    exec((folder / "jupyterhub_lares.py").read_text(encoding="utf-8"), {"c": config})  # as load_subconfig does
    return config.Spawner.pre_spawn_hook


def test_teachers_servers_read_the_teacher_folder_and_everyone_else_the_student_one(tmp_path, capsys):
    assert main(["course", "hub", str(tmp_path / "hub"), "--teacher", "tess", "--teacher", "ted"]) == 0
    assert "load_subconfig(" in capsys.readouterr().out
    hook = _hook(tmp_path / "hub")
    for name, role in (("tess", "teacher"), ("ted", "teacher"), ("sam", "student"), ("tess2", "student")):
        spawner = SimpleNamespace(user=SimpleNamespace(name=name), environment={})
        hook(spawner)
        folder = spawner.environment["JUPYTER_CONFIG_PATH"]
        assert folder == str((tmp_path / "hub" / role).resolve())
        extensions = json.loads((tmp_path / "hub" / role / "jupyter_server_config.json").read_text())
        assert extensions["ServerApp"]["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is (
            role == "teacher")


def test_a_bad_teacher_name_or_folder_is_one_sentence(tmp_path, capsys):
    assert main(["course", "hub", str(tmp_path / "hub"), "--teacher", "tess; rm -rf /"]) == 2
    assert capsys.readouterr().err.strip() == "lares: 'tess; rm -rf /' is not a hub user name (letters, digits, " \
                                              "'.', '_' and '-')"
    (tmp_path / "a-file").write_text("x")
    assert main(["course", "hub", str(tmp_path / "a-file" / "hub"), "--teacher", "tess"]) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot write the hub's configuration there" in err and "\n" not in err
