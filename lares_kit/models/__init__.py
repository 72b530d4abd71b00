"""Models behind the ``openai`` client: the offline model, or any OpenAI-compatible endpoint.

Taught in ``notebooks/00_start_here.ipynb`` and
``03_function_calling_loop.ipynb``; the long version of this page is
``docs/models.md``.

``make_client(model)`` returns an ``openai.OpenAI`` client; agents receive
it and call ``client.chat.completions.create(model=resolve_model(model),
...)``. The name ``"offline"`` (the default, also ``LARES_MODEL``) is the
built-in rule-based model (:mod:`.offline`), served in process through the
SDK's real HTTP machinery. Any other name goes to ``OPENAI_BASE_URL``
(default: OpenAI) with ``OPENAI_API_KEY``.

Recipes (any server with the OpenAI Chat Completions API and tool calling)::

    # OpenAI
    export OPENAI_API_KEY=sk-...
    lares run "turn on the light in the kitchen" --model gpt-4o-mini

    # Ollama (ollama pull llama3.2; it serves on port 11434)
    export OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=ollama
    lares run "turn on the light in the kitchen" --model llama3.2

    # vLLM (tool calling needs both flags)
    vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
    export OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_API_KEY=vllm
    lares run "..." --model Qwen/Qwen2.5-7B-Instruct

    # llama.cpp server (--jinja enables tool calls from the model's chat template)
    llama-server -m model.gguf --jinja --port 8080
    export OPENAI_BASE_URL=http://localhost:8080/v1 OPENAI_API_KEY=llamacpp

    # LM Studio (Developer tab -> Start server, port 1234)
    export OPENAI_BASE_URL=http://localhost:1234/v1 OPENAI_API_KEY=lm-studio

    # the offline model over HTTP, for other OpenAI-compatible tools
    lares serve-model --port 8000
    export OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=unused

Local servers ignore the key, but the SDK needs one: any value works.

What is where: the rule-based model is the subpackage :mod:`.offline` (its
rules, nothing else). Around it, the parts any model uses: :mod:`.client`
(``make_client``) and :mod:`.endpoints` (which names are offline, a remote
model's key), :mod:`.transport` (the SDK's HTTP answered in process),
:mod:`.serving.wire` and :mod:`.serving.wire_checks` (the Chat Completions protocol),
:mod:`.serving.server` (``lares serve-model``), :mod:`.faults.chaos` (broken
replies on purpose) and :mod:`.local` (a real small model). The agent loops,
the bench and the notebooks use the client side: ``make_client``,
``resolve_model``, the token counts (:mod:`lares_kit.knowledge.tokens`).

This package does not import the home, the worlds, the tools or the safety
policy: the offline model knows only what a request tells it.
"""

from ..lazy_exports import lazy_exports

__all__ = ["OFFLINE_BASE_URL", "MissingAPIKey", "count_request", "count_tokens", "load_api_key", "make_async_client",
           "make_client", "resolve_model", "FAULTS", "chaos_client", "Faults", "gguf_path", "CONSTRAINED",
           "LocalStats", "UNCONSTRAINED", "default_threads", "get_local_model", "local_available", "call_schema",
           "recognise_intent", "recognize", "read_request", "understand", "ModelServer"]

# Public names, each imported from its module when first asked for (lares_kit.lazy_exports)
_LAZY = {
    "load_api_key": "lares_kit.models.client",
    "make_async_client": "lares_kit.models.client",
    "make_client": "lares_kit.models.client",
    "resolve_model": "lares_kit.models.client",
    "OFFLINE_BASE_URL": "lares_kit.models.endpoints",
    "MissingAPIKey": "lares_kit.models.endpoints",
    "count_request": "lares_kit.knowledge.tokens",
    "count_tokens": "lares_kit.knowledge.tokens",
    "FAULTS": "lares_kit.models.faults.chaos",
    "chaos_client": "lares_kit.models.faults.chaos",
    "Faults": "lares_kit.models.faults.endpoint",
    "gguf_path": "lares_kit.models.local.catalog",
    "CONSTRAINED": "lares_kit.models.local.llama",
    "LocalStats": "lares_kit.models.local.llama",
    "UNCONSTRAINED": "lares_kit.models.local.llama",
    "default_threads": "lares_kit.models.local.llama",
    "get_local_model": "lares_kit.models.local.llama",
    "local_available": "lares_kit.models.local.llama",
    "call_schema": "lares_kit.models.local.prompt",
    "recognise_intent": "lares_kit.models.offline.ha.recognizer",
    "recognize": "lares_kit.models.offline.ha.recognizer",
    "read_request": "lares_kit.models.offline.reading",
    "understand": "lares_kit.models.offline.understanding",
    "ModelServer": "lares_kit.models.serving.server",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
