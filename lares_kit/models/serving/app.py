"""What ``lares serve-model`` does with each request: a Starlette app around :func:`.wire.handle`.

Part of the server (:mod:`.server`). Every request, whatever its method and
path, goes to :func:`.wire.handle` -- the same function the in-process
transport calls, so the bytes are the same -- after:

* the server's guard (:class:`lares_kit.models.serving.guard.AccessGuard`) has
  checked who asks and read the body within its limits (size, time, depth);
* the ``intercept`` may answer first (a plain callable runs in a worker
  thread; :class:`.faults.Faults` waits on the event loop instead) or raise
  :class:`.faults.DropConnection` to hang up;
* ``latency`` seconds pass.

The model's work runs in a worker thread, so a long request does not stop
the server reading others. Every wait -- for a body, a stall, the model, an
intercept -- ends when the server stops (503, ``server_shutting_down``),
which is why stopping takes well under 2 s.
Errors are JSON in OpenAI's shape. This module does not parse HTTP
(:mod:`~lares_kit.models.serving.protocol`) or start anything (:mod:`.server`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response as HTTPResponse
from starlette.routing import Route

from ..faults.endpoint import DropConnection, Faults, Intercept, Response, json_error
from .wire import handle

__all__ = ["ModelApp"]

T = TypeVar("T")


def _in_thread(work: Callable[..., T], *args: Any) -> Awaitable[T]:
    # In a worker thread, so the server keeps reading other requests. When the server stops, the wait is
    # abandoned (the caller gets a 503) and the thread, a daemon, is left to finish or to end with the process.
    return anyio.to_thread.run_sync(work, *args, abandon_on_cancel=True)


class _Answer(Exception):
    # Raised inside the app to reply at once with this response (and close the connection).
    def __init__(self, reply: Response) -> None:
        super().__init__(reply[0])
        self.reply = reply


class ModelApp:
    """The ASGI app: ``ModelApp(...).asgi`` is what the server's guard passes requests to; settings may change.

    ``intercept``: ``(method, path, body) -> (status, headers, body) | None``,
    called before the model; ``latency``: seconds to wait before the model
    answers. The body comes already read and bounded by the guard.
    """

    def __init__(self, *, intercept: Intercept | None = None, latency: float = 0.0) -> None:
        self.intercept, self.latency = intercept, latency
        self.stopping: asyncio.Event | None = None  # made on the server's event loop by starting()
        # Every method and path comes here (an instance, not a function, is routed as a plain ASGI app);
        # wire.handle answers unknown paths and methods with OpenAI's 404 and 405.
        self.asgi = Starlette(routes=[Route("/{path:path}", self)], exception_handlers={Exception: self._crashed})
        self.asgi.router.default = self  # a request target that is not a path ('*', 'http://...') too

    def starting(self) -> None:
        """Called on the server's event loop before it serves."""
        self.stopping = asyncio.Event()

    def stop(self) -> None:
        """Called on the server's event loop when it stops: every wait ends now."""
        if self.stopping is not None:
            self.stopping.set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
        try:
            raw = await self._body(request)
            reply = await self._intercepted(scope["method"], target, raw)
            if reply is None:
                if self.latency:
                    await self._within(asyncio.sleep(self.latency), None)
                reply = await self._within(_in_thread(handle, scope["method"], target, raw), None)
        except _Answer as answer:
            reply = answer.reply
            reply[1]["connection"] = "close"  # the rest of the body, if any, is never read
        except DropConnection:  # hang up without a word, as a crashed proxy or a flaky network does
            scope["extensions"]["lares.hang_up"]()
            with contextlib.suppress(_Answer):
                while (await self._within(receive(), 5.0))["type"] != "http.disconnect":
                    pass
            return
        except ClientDisconnect:  # the client went away while sending: nobody to answer
            return
        status, headers, body = reply
        await HTTPResponse(body, status, headers)(scope, receive, send)

    async def _body(self, request: Request) -> bytes:
        # Already read, within the server's limits, by its guard (lares_kit.models.serving.guard): this is that copy.
        return await request.body()

    async def _intercepted(self, method: str, target: str, raw: bytes) -> Response | None:
        intercept = self.intercept
        if intercept is None:
            return None
        if isinstance(intercept, Faults):  # its stalls wait here, on the loop, so they end when the server stops
            kind = intercept.pick(method, target)
            reply = intercept.reply(kind)
            if reply is None and intercept.delay(kind):
                await self._within(asyncio.sleep(intercept.delay(kind)), None)
            return reply
        return await self._within(_in_thread(intercept, method, target, raw), None)  # any callable; it may block

    async def _within(self, work: Awaitable[T], seconds: float | None) -> T:
        # The result of ``work``, unless ``seconds`` pass first (408) or the server stops (503).
        task = asyncio.ensure_future(work)
        assert self.stopping is not None, "ModelApp.starting() was not called"
        stop = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({task, stop}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.wait({task})  # let it finish cancelling (a thread's wait is abandoned at once)
        if not task.cancelled():
            task.exception()  # it ended some other way as it was cancelled: seen, so asyncio does not log it
        if self.stopping.is_set():
            raise _Answer(json_error(503, "The server is shutting down; try again later.", "server_shutting_down",
                                     "server_error"))
        raise _Answer(json_error(408, f"The request did not finish within {seconds:g} seconds.",
                                 "request_timeout"))

    async def _crashed(self, request: Request, exc: Exception) -> HTTPResponse:
        # A bug here, not in the model (wire.handle turns those into 500s itself): JSON too; uvicorn logs it.
        status, headers, body = json_error(500, f"The server failed on this request ({type(exc).__name__}).",
                                           "server_error", "server_error")
        return HTTPResponse(body, status, headers)
