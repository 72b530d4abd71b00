"""make_client, the missing-key path, load_api_key, and what lares_kit.models may import."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from lares_kit.errors import LaresError
from lares_kit.models import (
    MissingAPIKey,
    load_api_key,
    make_async_client,
    make_client,
    resolve_model,
)

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "lares_kit" / "models"


def test_offline_client_is_a_real_openai_client():
    client = make_client(max_retries=0)
    assert isinstance(client, openai.OpenAI) and client.max_retries == 0
    assert isinstance(make_async_client(), openai.AsyncOpenAI)
    assert client.models.list().data[0].id == "offline"


def test_resolve_model(monkeypatch):
    monkeypatch.delenv("LARES_MODEL", raising=False)
    assert resolve_model() == "offline"
    monkeypatch.setenv("LARES_MODEL", "llama3.2")
    assert resolve_model() == "llama3.2" and resolve_model("gpt-4o") == "gpt-4o"


def test_remote_model_uses_base_url_and_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    client = make_client("llama3.2", timeout=5.0)
    assert str(client.base_url) == "http://127.0.0.1:9/v1/" and client.api_key == "sk-test"
    assert client.max_retries == 2 and client.timeout == 5.0


def test_remote_clients_carry_the_retry_policy_and_the_offline_one_stays_plain():
    from lares_kit.models.retries import AsyncLaresOpenAI, LaresOpenAI

    # A remote server may time out while still computing: its clients never ask again
    # (tests/unit/models/test_api_errors.py).
    assert isinstance(make_client("llama3.2", api_key="k", base_url="http://127.0.0.1:9/v1"), LaresOpenAI)
    assert isinstance(make_async_client("llama3.2", api_key="k", base_url="http://127.0.0.1:9/v1"), AsyncLaresOpenAI)
    # The offline client answers in process and cannot time out: the plain SDK class notebook 03 prints.
    assert type(make_client("offline")) is openai.OpenAI and type(make_async_client("offline")) is openai.AsyncOpenAI


@pytest.mark.parametrize("factory", [make_client, make_async_client])
def test_missing_key_fails_before_any_request(monkeypatch, factory):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingAPIKey) as info:
        factory("gpt-4o-mini")
    assert isinstance(info.value, LaresError)
    assert "OPENAI_API_KEY" in str(info.value) and "--model offline" in str(info.value)


def _env_without_key(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LARES_MODEL")}
    return env | extra


def test_cli_run_missing_key_exits_2_without_traceback():
    pytest.importorskip("lares_kit.cli.run")
    from lares_kit.cli import run

    if not hasattr(run, "cli_run"):
        pytest.skip("lares run is not built yet")
    proc = subprocess.run([sys.executable, "-m", "lares_kit.cli.commands", "run", "x", "--model", "gpt-4o-mini"],
                          capture_output=True, text=True, env=_env_without_key(), cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "OPENAI_API_KEY" in proc.stderr and "offline" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_load_api_key_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_api_key() == "none"
    (tmp_path / ".env").write_text("# secrets\nexport OPENAI_API_KEY=\"sk-from-file\"\n")
    nested = tmp_path / "notebooks"
    nested.mkdir()
    monkeypatch.chdir(nested)  # a notebook runs one folder down; the .env is at the root
    source = load_api_key()
    assert source.startswith(".env file") and "sk-from-file" not in source
    assert os.environ["OPENAI_API_KEY"] == "sk-from-file"
    assert load_api_key() == "environment"


def test_load_api_key_colab(tmp_path, monkeypatch):
    import types

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    colab = types.ModuleType("google.colab")
    colab.userdata = types.SimpleNamespace(get=lambda name: "sk-colab" if name == "OPENAI_API_KEY" else None)
    google = types.ModuleType("google")
    google.colab = colab
    monkeypatch.setitem(sys.modules, "google", google)
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    assert load_api_key() == "Colab secrets" and os.environ["OPENAI_API_KEY"] == "sk-colab"


def test_import_lares_kit_does_not_import_openai():
    code = "import sys, lares_kit; lares_kit.load_world('lares-home'); print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         check=False)
    assert out.stdout.strip() == "False", out.stderr
    lazy = "import sys, lares_kit; lares_kit.make_client; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         check=False)
    assert out.stdout.strip() == "True", out.stderr


# The home side: what the offline model must never read (it knows only what a request tells it).
FORBIDDEN = {"lares_kit.home.graph", "lares_kit.home.worlds", "lares_kit.home.devices", "lares_kit.tools.toolbox",
             "lares_kit.tools.users", "lares_kit.agents", "lares_kit.episode", "lares_kit.safety.gate",
             "lares_kit.safety.audit", "lares_kit.persistent.monitor", "lares_kit.persistent.sandbox",
             "lares_kit.memory.agent_memory", "lares_kit.memory.store", "lares_kit.memory.profiles",
             "lares_kit.device_apis.documents", "lares_kit.knowledge.modes", "lares_kit.bench"}
# The leaf contracts both sides share: the only lares_kit modules outside models/ that models/ may import.
LEAVES = {"lares_kit.sentences.markers", "lares_kit.safety.confirmation", "lares_kit.sentences.understood",
          "lares_kit.errors", "lares_kit.sentences.wording", "lares_kit.sentences.times",
          "lares_kit.persistent.phrases", "lares_kit.ha.domains", "lares_kit.sentences.languages",
          "lares_kit.knowledge.formats", "lares_kit.knowledge.tokens", "lares_kit.lazy_exports",
          # reading and writing files safely (a recording is a file): they know no home
          "lares_kit.files.atomic", "lares_kit.files.reading", "lares_kit.files.limits", "lares_kit.files.yamldata"}


def lares_imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every lares_kit import in a file, relative ones resolved at any depth, lazy ones too."""
    module = list(path.relative_to(ROOT).with_suffix("").parts)
    package = module if module[-1] == "__init__" else module[:-1]
    package = [p for p in package if p != "__init__"]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from ..home.graph import X, one level up per extra dot: lares_kit.home.graph
                base = ".".join(package[: len(package) - (node.level - 1)] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n == "lares_kit" or n.startswith("lares_kit.")]
    return found


def test_lares_imports_resolves_relative_imports(tmp_path):
    deep = ROOT / "lares_kit" / "models" / "offline" / "reading.py"
    names = {n for _, n in lares_imports(deep)}
    assert not names or all(n.startswith("lares_kit.") for n in names)
    planning = {n for _, n in lares_imports(ROOT / "lares_kit" / "models" / "offline" / "planning.py")}
    assert {"lares_kit.sentences.wording", "lares_kit.models.offline.reading"} <= planning
    client = {n for _, n in lares_imports(ROOT / "lares_kit" / "models" / "client.py")}
    assert "lares_kit.errors" in client and "lares_kit.models.transport" in client


def _a_leaf(name: str) -> bool:
    """Whether an imported name is one of the leaf modules, or a name inside one."""
    return any(name == leaf or name.startswith(leaf + ".") for leaf in LEAVES)


@pytest.mark.parametrize("path", sorted(MODELS.rglob("*.py")), ids=lambda p: str(p.relative_to(MODELS)))
def test_models_never_import_the_home(path):
    # The offline model may know only what a request tells it: no import of the home, worlds, tools, agents or the
    # safety policy -- in every module of lares_kit.models, the offline/ subpackage included.
    for line, name in lares_imports(path):
        assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), f"{path.name}:{line} imports {name}"
        assert _a_leaf(name) or name.startswith("lares_kit.models"), (
            f"{path.name}:{line} imports {name}: models/ may use only lares_kit.models and {sorted(LEAVES)}")


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_the_shared_contracts_are_leaves(leaf):
    # What models/ shares with the home side must not pull the home side in behind it.
    path = ROOT / (leaf.replace(".", "/") + ".py")
    for line, name in lares_imports(path):
        assert _a_leaf(name), f"{leaf} imports {name} (line {line})"


def test_yes_is_defined_once():
    # "yes" to the safety gate's question means one thing on both sides: lares_kit.safety.confirmation.is_yes.
    from lares_kit.models.offline.designs.sage import rules as sage_rules
    from lares_kit.models.offline.request_kinds import confirming
    from lares_kit.safety.confirmation import is_yes

    assert confirming.is_yes is is_yes and sage_rules.is_yes is is_yes
