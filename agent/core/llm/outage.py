"""Whether the endpoint answers at all: one line when it stops, one when it is back, no call sent between.

A server that refuses connections (stopped, crashed, restarting) would otherwise cost every call
its retries and put a warning in the log per call. The first call whose request cannot connect
marks the endpoint *down*: one warning says so (naming the crash and its fix when the agent started
the server itself and its watcher wrote a report: :mod:`agent.core.local_model`), and from then on
calls come back at once as not sent (``skipped``), so the game's own fallback plays. A probe asks
the server's model list every ``PROBE_FIRST_S`` seconds, backing off to ``PROBE_MAX_S``; the first
answer marks it *up* again (one line) and the model decides again. A local server whose watcher says
it died after its restart is *gone*: one line, no more probes, the fallback plays for the rest of
the run.

States and their rules, as h11 states its own:

==========  ===================================  ===========================================
state       a call                               leaves it when
==========  ===================================  ===========================================
up          is sent                              a request cannot connect: down (or gone)
down        is not sent (``reason`` says why)    the probe gets an answer: up; the status
                                                 file says dead: gone
gone        is not sent                          never
==========  ===================================  ===========================================
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from agent.core.local_model import ServerStatus, read_status

log = logging.getLogger(__name__)

State = Literal["up", "down", "gone"]
PROBE_FIRST_S = 1.0
PROBE_MAX_S = 10.0
PROBE_TIMEOUT_S = 3.0


class Outage:
    """One endpoint's reachability; ``probe`` answers True when the server answers a small request."""

    def __init__(self, base_url: str, probe: Callable[[], Awaitable[bool]], status_file: Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.base_url = base_url
        self._probe = probe
        self.status_file = status_file
        self._clock = clock
        self.state: State = "up"
        self.reason = ""
        """Why calls are not sent, for their results and the transcript ('' while up)."""
        self.since = 0.0
        self.outages = 0
        """How often the endpoint went down in this run."""
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[State, str], None]] = []

    def subscribe(self, listener: Callable[[State, str], None]) -> Callable[[], None]:
        """``listener(state, line)`` at each change (a console, a session's transcript); returns the
        function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    @property
    def answering(self) -> bool:
        return self.state == "up"

    async def unreachable(self, error: str) -> None:
        """A request could not connect: the endpoint is down from now on, until the probe says otherwise."""
        if self.state != "up":
            return
        status = await self._status()
        self.outages += 1
        self.since = self._clock()
        if status is not None and status.state == "dead":
            self._gone(status)
            return
        self.state = "down"
        if status is not None and status.report:
            self.reason = f"the LLM server stopped answering: {status.report.splitlines()[0]}"
            line = f"{self.reason}; the offline player plays until it answers again"
        else:
            self.reason = f"the LLM server at {self.base_url} stopped answering ({error})"
            line = f"{self.reason}; the offline player plays until it answers again"
        log.warning("%s", line)
        self._tell(line)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch())

    def answered(self) -> None:
        """A request got an HTTP answer (any status): the server is there."""
        if self.state == "down":
            self._up()

    async def _status(self) -> ServerStatus | None:
        if self.status_file is None:
            return None
        return await asyncio.to_thread(read_status, self.status_file)

    async def _watch(self) -> None:
        wait = PROBE_FIRST_S
        while self.state == "down":
            await asyncio.sleep(wait)
            status = await self._status()
            if status is not None and status.state == "dead":
                self._gone(status)
                return
            try:
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    alive = await self._probe()
            except Exception:  # a probe that failed in any way is a server not answering yet
                alive = False
            if alive:
                self._up()
                return
            wait = min(PROBE_MAX_S, wait * 2)

    def _up(self) -> None:
        down_for = self._clock() - self.since
        self.state, self.reason = "up", ""
        line = f"the LLM server at {self.base_url} answers again (after {down_for:.0f} s): the model decides again"
        log.warning("%s", line)
        self._tell(line)

    def _gone(self, status: ServerStatus) -> None:
        self.state = "gone"
        self.reason = "the local model server died again after its restart"
        line = (f"{status.report.splitlines()[0]} It died again after its restart: the offline player plays for "
                "the rest of this run")
        log.error("%s", line)
        self._tell(line)

    def _tell(self, line: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(self.state, line)
            except Exception:
                log.exception("an outage listener failed")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
