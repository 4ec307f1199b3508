"""The in-flight gate: at most N LLM requests at once for the process, plays before chats."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agent.core.llm.result import Priority

_PRIORITY_RANK: dict[Priority, int] = {"play": 0, "chat": 1, "background": 2}


class LLMGate:
    """At most ``limit`` LLM requests in flight; waiting plays are served before waiting chats, and
    both before the start-up priming.

    One gate per process (the client owns one; pass the same gate to several clients to share
    it), so a game flooded with chat cannot use up the provider's rate limit for the others, and
    a turn the game is waiting on is never queued behind chat answers. FIFO within a priority.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("an LLM gate needs at least one slot")
        self.limit = limit
        self._in_flight = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.max_seen = 0
        """The most requests that were in flight at once (for tests and benchmarks)."""

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting(self) -> int:
        return sum(1 for *_, fut in self._waiters if not fut.done())

    @asynccontextmanager
    async def slot(self, priority: Priority = "play") -> AsyncIterator[None]:
        """Hold one slot for the block; cancellation while waiting leaves the gate as it was."""
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def acquire(self, priority: Priority = "play") -> None:
        """Take a slot to hand on (to a task that calls :meth:`release`); ``slot`` for a block."""
        await self._acquire(priority)

    def release(self) -> None:
        self._release()

    async def _acquire(self, priority: Priority) -> None:
        if self._in_flight < self.limit and not self.waiting:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (_PRIORITY_RANK[priority], next(self._order), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # the slot was handed over just as the caller gave up: pass it on
            else:
                fut.cancel()  # dropped from the heap when it reaches the top
            raise

    def _take(self) -> None:
        self._in_flight += 1
        self.max_seen = max(self.max_seen, self._in_flight)

    def _release(self) -> None:
        self._in_flight -= 1
        while self._waiters and self._in_flight < self.limit:
            *_, fut = heapq.heappop(self._waiters)
            if not fut.done():
                self._take()
                fut.set_result(None)
