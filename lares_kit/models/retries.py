"""Which failed requests the client asks again: connection errors, 429 and 5xx -- never a 4xx or a read timeout.

Taught in ``notebooks/15_safety_and_failure.ipynb``. :func:`~lares_kit.models.make_client`
builds its clients from the two classes here: the ``openai`` SDK's own
clients with a narrower retry policy. The SDK alone also retries

* a 408 or 409 -- a refusal of *this* request, which a second try does not
  change (the toolkit's requests are not racing anyone for a lock), and
* a request that timed out while waiting for the reply. A server that works
  on one request at a time (llama.cpp's, a small Ollama) is still computing
  the abandoned one: the retry queues behind it, times out too, and the next
  episode waits for both. Measured on llama.cpp's server: one runaway reply
  of 218 s, three timeouts, the next run delayed by 43 s.

So here a retry happens only for what a second try can fix: a connection
that failed before the server had the request (refused, dropped, a connect
timeout), a 429 (waiting as ``Retry-After`` asks) and a 5xx -- except a 500
that is llama-cpp-python refusing the request's schema ("N validation
errors"), which is the request's fault however often it is sent. The
SDK's backoff, ``Retry-After`` handling and ``max_retries`` are kept.

It relies on two hooks of the SDK's request loop (``_should_retry`` and
``_sleep_for_retry``, the same in openai 2.x and 3.x); ``tests/unit/models/test_api_errors.py``
counts the requests a loopback server receives, so a change in the SDK shows.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import openai

__all__ = ["AsyncLaresOpenAI", "LaresOpenAI", "should_retry"]

_SCHEMA_REFUSAL = re.compile(r'"message"\s*:\s*"\d+ validation errors?\b')


def should_retry(status: int, body: str = "") -> bool:
    """Whether a reply with this HTTP status (and body) is worth a second try.

    Args:
        status: the HTTP status of the reply.
        body: its text; a 500 whose message is a list of validation errors is a refused request, not a failure.

    Examples:
        >>> [code for code in (400, 401, 404, 408, 409, 422, 429, 500, 502, 503) if should_retry(code)]
        [429, 500, 502, 503]
        >>> should_retry(500, '{"error": {"message": "7 validation errors:"}}')
        False
    """
    if status == 429:
        return True
    return status >= 500 and not _SCHEMA_REFUSAL.search(body)


def _text(response: Any) -> str:
    try:
        return response.text
    except Exception:  # noqa: BLE001 -- a streamed body not read yet: judge by the status alone
        return ""


def _read_timeout(response: Any) -> BaseException | None:
    # The SDK calls _sleep_for_retry from inside its `except` for a timeout or a dropped connection, with no
    # response: the exception being handled says which. Only a read timeout means the server has the request.
    exc = sys.exc_info()[1]
    if response is None and exc is not None and type(exc).__name__ == "ReadTimeout":
        return exc
    return None


def _timed_out(exc: BaseException) -> openai.APITimeoutError:
    try:
        request = exc.request  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when the request was never set
        request = None
    return openai.APITimeoutError(request=request)  # type: ignore[arg-type]


class LaresOpenAI(openai.OpenAI):
    """``openai.OpenAI`` that retries connection errors, 429 and 5xx only (see the module doc).

    Examples:
        >>> client = LaresOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", max_retries=2)
        >>> isinstance(client, openai.OpenAI), client.max_retries
        (True, 2)
    """

    def _should_retry(self, response: Any) -> bool:
        # The SDK's own rule still applies (a Retry-After too long to wait, x-should-retry: false), narrowed.
        return should_retry(response.status_code, _text(response)) and super()._should_retry(response)

    def _sleep_for_retry(self, **kw: Any) -> None:
        exc = _read_timeout(kw.get("response"))
        if exc is not None:
            raise _timed_out(exc) from exc
        super()._sleep_for_retry(**kw)


class AsyncLaresOpenAI(openai.AsyncOpenAI):
    """The async twin of :class:`LaresOpenAI` (the benchmark's concurrent runs).

    Examples:
        >>> client = AsyncLaresOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1", max_retries=2)
        >>> isinstance(client, openai.AsyncOpenAI)
        True
    """

    def _should_retry(self, response: Any) -> bool:
        return should_retry(response.status_code, _text(response)) and super()._should_retry(response)

    async def _sleep_for_retry(self, **kw: Any) -> None:
        exc = _read_timeout(kw.get("response"))
        if exc is not None:
            raise _timed_out(exc) from exc
        await super()._sleep_for_retry(**kw)
