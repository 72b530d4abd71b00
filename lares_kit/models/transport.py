"""An HTTP transport that answers the ``openai`` SDK with the offline model, in process.

The SDK builds and sends a real HTTP request; this transport hands its
method, path and body to :func:`lares_kit.models.serving.wire.handle` and returns
the bytes as an HTTP response -- so serialization, parsing, error mapping
(a 400 becomes ``openai.BadRequestError``) and retries all run for real, with
no socket. It is not a server: for one, see :mod:`lares_kit.models.serving.server`.

openai 3.x speaks ``httpx2``; openai 2.x speaks ``httpx``. :data:`httpx` is
whichever the installed SDK uses.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from .serving.wire import handle


def _http_module() -> Any:
    # openai >= 3 uses httpx2; older ones httpx. Try httpx2 first only when the SDK wants it.
    if int(openai.__version__.split(".")[0]) >= 3:
        try:
            import httpx2

            return httpx2
        except ImportError:  # pragma: no cover - openai 3 depends on httpx2
            pass
    import httpx as legacy

    return legacy


httpx = _http_module()

__all__ = ["AsyncOfflineTransport", "OfflineTransport", "httpx"]


def _respond(request: Any) -> Any:
    status, headers, body = handle(request.method, request.url.path, request.content)
    return httpx.Response(status, headers=headers, content=body, request=request)


class OfflineTransport(httpx.BaseTransport):
    """Sync transport: ``httpx.Client(transport=OfflineTransport())``.

    ``latency`` (seconds) is waited before each reply, to make timing visible.

    Examples:
        >>> client = httpx.Client(transport=OfflineTransport(), base_url="http://offline.invalid/v1")
        >>> client.get("/models").json()["data"][0]["id"]
        'offline'
    """

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency

    def handle_request(self, request: Any) -> Any:
        request.read()
        if self.latency:
            time.sleep(self.latency)
        return _respond(request)


class AsyncOfflineTransport(httpx.AsyncBaseTransport):
    """Async twin of :class:`OfflineTransport`, for ``openai.AsyncOpenAI``."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency

    async def handle_async_request(self, request: Any) -> Any:
        await request.aread()
        if self.latency:
            import asyncio

            await asyncio.sleep(self.latency)
        return _respond(request)
