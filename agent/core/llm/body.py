"""A response body read no further than a size: a server that sends more (a stream that does not end,
a body without a Content-Length) fails the request with :class:`ReplyTooLarge` instead of filling
memory on the event loop every game shares."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any

import openai

from agent.core.llm.errors import ReplyTooLarge


def http_library() -> Any:
    """The HTTP library the SDK's client is built on (httpx; httpx2 in newer SDKs)."""
    return importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__.split(".")[0])


_AsyncByteStream: Any = http_library().AsyncByteStream


class BoundedBody(_AsyncByteStream):
    """Wraps an HTTP client's byte stream (``response.stream``): the same bytes, up to ``limit``."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self.read += len(chunk)
            if self.read > self._limit:
                raise ReplyTooLarge(self.read)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
