"""The faulty endpoint: a seeded share of chat completions answered with 429s, 500s, stalls or hang-ups.

Taught in ``notebooks/15_safety_and_failure.ipynb``; served by
``lares serve-model --fault-rate 0.3 --faults 429,500,timeout,drop`` and by
:class:`~lares_kit.models.serving.server.ModelServer` (``intercept=Faults(...)``).
The ``openai`` client retries 429, 5xx, timeouts and dropped connections
(``max_retries`` in :func:`lares_kit.models.make_client`) and then gives up;
the agent ends with the status ``model_error`` and the error's text.

A :class:`Faults` is an *intercept*: a ``(method, path, body) -> (status,
headers, body) | None`` callable that may answer a request before the model
does (None: let the model answer). Called directly it blocks for its stalls;
the server instead asks :meth:`Faults.pick` which fault to play and waits
without blocking, so a stalled reply ends at once when the server stops.
This module does not serve anything.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable

__all__ = ["FAULT_KINDS", "DropConnection", "Faults", "Intercept", "Response", "json_error"]

Response = tuple[int, dict[str, str], bytes]  # (status, headers, body)
Intercept = Callable[[str, str, bytes], "Response | None"]
FAULT_KINDS = ("429", "500", "timeout", "drop", "latency")


class DropConnection(Exception):
    """Raised by an intercept: close the connection without sending any reply."""


def json_error(status: int, message: str, code: str | None, kind: str = "invalid_request_error",
               headers: dict[str, str] | None = None) -> Response:
    """An error reply in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``.

    Args:
        status: the HTTP status, e.g. 400, 429 or 500.
        message: the sentence a reader sees in ``error.message``.
        code: the machine-readable ``error.code``, e.g. ``"rate_limit_exceeded"``; None for no code.
        kind: the ``error.type``, e.g. ``"invalid_request_error"`` or ``"server_error"``.
        headers: extra response headers (e.g. ``retry-after``); None for none.

    Examples:
        >>> status, headers, body = json_error(429, "Slow down.", "rate_limit_exceeded", "requests")
        >>> status, headers["content-type"], json.loads(body)["error"]["code"]
        (429, 'application/json', 'rate_limit_exceeded')
    """
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode()


class Faults:
    """An intercept that breaks a seeded share of chat completions: the faulty endpoint.

    ``kinds`` from :data:`FAULT_KINDS`: ``429`` (rate limited, with
    ``Retry-After: retry_after`` seconds), ``500`` (server error),
    ``timeout`` (the reply stalls ``hang`` seconds -- longer than the
    client's timeout -- then comes), ``drop`` (the connection is closed with
    no reply), ``latency`` (``latency`` seconds more, then the real reply).
    ``limit`` stops after that many faults (None: no limit). ``log`` lists
    ``(request number, kind)``; ``requests`` counts chat completions seen.

    Examples:
        >>> faults = Faults(rate=1.0, kinds=("500",), seed=1, limit=1)
        >>> faults("POST", "/v1/chat/completions", b"{}")[0], faults("POST", "/v1/chat/completions", b"{}")
        (500, None)
        >>> faults.log
        [(1, '500')]
    """

    def __init__(self, rate: float = 0.2, kinds: tuple[str, ...] = FAULT_KINDS, seed: int = 0, *,
                 retry_after: float = 1.0, hang: float = 30.0, latency: float = 1.0, limit: int | None = None) -> None:
        unknown = [k for k in kinds if k not in FAULT_KINDS]
        if unknown or not kinds:
            raise ValueError(f"unknown faults {', '.join(unknown) or '(none given)'}; "
                             f"faults are: {', '.join(FAULT_KINDS)}")
        if not 0 <= rate <= 1:
            raise ValueError(f"the fault rate is a share between 0 and 1, got {rate}")
        self.rate, self.kinds, self.retry_after, self.hang, self.latency, self.limit = \
            rate, tuple(kinds), retry_after, hang, latency, limit
        self.rng = random.Random(seed)
        self.log: list[tuple[int, str]] = []
        self.requests = 0
        self._lock = threading.Lock()  # requests may be decided from several threads at once

    def pick(self, method: str, path: str) -> str | None:
        """The fault this request gets (a kind from :data:`FAULT_KINDS`), or None; counts and logs it.

        Examples:
            >>> Faults(rate=1.0, kinds=("drop",)).pick("POST", "/v1/chat/completions")
            'drop'
            >>> Faults(rate=1.0, kinds=("drop",)).pick("GET", "/v1/models") is None
            True
        """
        if method != "POST" or not path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            return None
        with self._lock:
            self.requests += 1
            spent = self.limit is not None and len(self.log) >= self.limit
            kind = self.rng.choice(self.kinds) if self.rng.random() < self.rate and not spent else None
            if kind is not None:
                self.log.append((self.requests, kind))
        return kind

    def reply(self, kind: str | None) -> Response | None:
        """The error reply for ``kind`` (429, 500), or None when the model answers (maybe late).

        Raises :class:`DropConnection` for ``drop``; :meth:`delay` says how late.
        """
        if kind == "429":
            # Both headers: the openai SDK reads retry-after-ms first, then retry-after (whole seconds).
            headers = {"retry-after": str(math.ceil(self.retry_after)),
                       "retry-after-ms": str(int(self.retry_after * 1000))}
            return json_error(429, "Rate limit reached: too many requests. Retry after the time in Retry-After.",
                              "rate_limit_exceeded", "requests", headers)
        if kind == "500":
            return json_error(500, "The server had an error while processing your request (injected fault).",
                              "server_error", "server_error")
        if kind == "drop":
            raise DropConnection
        return None

    def delay(self, kind: str | None) -> float:
        """Seconds the reply waits for ``kind``: ``hang`` for a timeout, ``latency`` for latency, else 0."""
        return self.hang if kind == "timeout" else self.latency if kind == "latency" else 0.0

    def __call__(self, method: str, path: str, body: bytes) -> Response | None:
        kind = self.pick(method, path)
        reply = self.reply(kind)
        if reply is None and self.delay(kind):
            time.sleep(self.delay(kind))
        return reply  # None: the model answers (late, for timeout and latency)
