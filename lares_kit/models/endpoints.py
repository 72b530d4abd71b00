"""Where a model name points: the offline model in process, or a remote endpoint that needs a key.

The few names and rules that :mod:`.client` (``make_client``) and
:mod:`~lares_kit.models.faults.chaos` (``chaos_client``, which wraps either kind) both need, so that
neither has to import the other's internals: the names the offline model
answers to, the base URL of the in-process client, and how a remote model's
key and base URL are found. It builds no client itself.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import LaresError

__all__ = ["KEY", "OFFLINE_BASE_URL", "OFFLINE_MODELS", "MissingAPIKey", "remote_settings"]

# Names the offline model answers to in process. "offline-multi" is the same rules with a teaching
# fault switched on: several Actions after one Thought (lares_kit.models.offline.FAULTY_MODEL).
OFFLINE_MODELS = ("offline", "offline-multi")
# The offline client's base URL: never resolved, the transport answers first.
OFFLINE_BASE_URL = "http://offline.lares.invalid/v1"
KEY = "OPENAI_API_KEY"


class MissingAPIKey(LaresError):
    """A remote model was asked for and ``OPENAI_API_KEY`` is not set."""


def remote_settings(name: str, kw: dict[str, Any]) -> dict[str, Any]:
    """The ``api_key`` and ``base_url`` for a remote model, taken out of ``kw`` or the environment.

    ``kw`` are the keyword arguments meant for ``openai.OpenAI``: ``api_key``
    and ``base_url`` are popped from it (the rest still goes to the client).
    No key anywhere raises :class:`MissingAPIKey` at once, before any request.

    Args:
        name: The model's name, for the error message.
        kw: Keyword arguments for the client; ``api_key`` and ``base_url`` are removed.

    Examples:
        >>> kw = {"api_key": "ollama", "base_url": "http://localhost:11434/v1", "timeout": 5}
        >>> remote_settings("llama3.2", kw), kw
        ({'api_key': 'ollama', 'base_url': 'http://localhost:11434/v1'}, {'timeout': 5})
    """
    key = kw.pop("api_key", None) or os.environ.get(KEY)
    if not key:
        raise MissingAPIKey(f"the model {name!r} needs an API key, and {KEY} is not set. Set it (export {KEY}=...; "
                            f"any value for a local server), or use the built-in model with --model offline "
                            "(no key needed).")
    return {"api_key": key, "base_url": kw.pop("base_url", None) or os.environ.get("OPENAI_BASE_URL") or None}
