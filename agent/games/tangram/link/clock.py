"""The session's clock: where it reads the time and sets the turn machine's timers.

The running agent uses the event loop's clock; the session's tests pass a clock they move
themselves, so no test waits on real time for a turn's timing rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """Where the session reads the time and sets the machine's timers: the event loop's clock in a
    running agent (:class:`LoopClock`), a clock the test moves in the session's tests."""

    def now(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable: ...


class LoopClock:
    def now(self) -> float:
        return asyncio.get_running_loop().time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        return asyncio.get_running_loop().call_at(when, callback)
