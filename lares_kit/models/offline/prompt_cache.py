"""The offline model's prompt cache: how many prompt tokens of a request repeat the previous one.

Taught in ``notebooks/16_scaling_up.ipynb``. Real providers bill a repeated
start of a prompt at a fraction of the price: OpenAI caches prompt prefixes
of 1,024 tokens and more (in steps of 128) and reports them as
``usage.prompt_tokens_details.cached_tokens``; llama.cpp's server keeps the
previous request's KV cache and reuses the part of the new prompt that starts
the same way. The offline model reports the same field, worked out exactly
(no 1,024-token minimum, no 128-token steps): the longest common start, in
tokens, of this request and the previous request *of the same conversation*
(:func:`lares_kit.knowledge.tokens.shared_prefix`, which lays a request out as
servers do: the tools first, then the messages).

A conversation is named by the request's ``prompt_cache_key`` -- OpenAI's
own field for routing requests that share a prefix; the agents send one per
episode to the servers that take it (:mod:`lares_kit.models.servers`). A
request without one reports no cached tokens: which request came before it
is up to whoever else talks to the server, and the offline model's reply to
a request must not depend on that (the same request, the same reply). The
cache keeps the last request of the :data:`CONVERSATIONS` most recent
conversations; an older one starts cold.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ...knowledge.tokens import Segment, request_segments, shared_prefix

__all__ = ["CONVERSATIONS", "PromptCache", "PROMPT_CACHE"]

CONVERSATIONS = 64  # conversations whose last request is kept (a benchmark runs a few episodes at once)


class PromptCache:
    """The last request of each recent conversation, and how much of a new request repeats it.

    Examples:
        >>> cache = PromptCache()
        >>> first = {"messages": [{"role": "system", "content": "You control a home."},
        ...                       {"role": "user", "content": "turn on the kitchen light"}], "prompt_cache_key": "ep1"}
        >>> cache.usage(first)
        (21, 0)
        >>> later = {**first, "messages": first["messages"] + [{"role": "assistant", "content": "Done."}]}
        >>> cache.usage(later)  # everything but the new message and the reply priming repeats
        (27, 18)
        >>> cache.usage({**later, "prompt_cache_key": "ep2"})  # another conversation starts cold
        (27, 0)
        >>> cache.usage({"messages": later["messages"]})  # no conversation named: nothing cached
        (27, 0)
    """

    def __init__(self, conversations: int = CONVERSATIONS) -> None:
        self.conversations = conversations
        self._last: OrderedDict[Any, list[Segment]] = OrderedDict()
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """``(prompt tokens, cached tokens)`` of a request, which becomes its conversation's last.

        Args:
            body: a validated Chat Completions request (``messages``, ``tools``, ``prompt_cache_key``).
        """
        now = request_segments(body["messages"], body.get("tools"))
        key = body.get("prompt_cache_key")
        if key is None:  # no conversation named: nothing to compare with that does not depend on other clients
            return sum(s.tokens for s in now), 0
        with self._lock:
            before = self._last.pop(key, None)
            self._last[key] = now
            while len(self._last) > self.conversations:
                self._last.popitem(last=False)
        prompt = sum(s.tokens for s in now)
        return prompt, shared_prefix(before, now) if before is not None else 0

    def clear(self) -> None:
        """Forget every conversation (the next request of each starts cold)."""
        with self._lock:
            self._last.clear()


PROMPT_CACHE = PromptCache()  # the offline model's, in this process (in process and behind lares serve-model)
