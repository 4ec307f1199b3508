"""The console's study panel: the participants, their order of conditions and progress, and the
experimenter's controls (next participant, pause, resume, drop).

The study's database is the truth (``python -m agent study next P07`` writes it from another
process too), so the panel reads :meth:`StudyRun.status` again after every change it makes, when
the agent binds or ends a game, and every ``REFRESH_S`` while a page is open; it sends the pages a
``study`` message only when the status changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from agent.core.studies.lab import lab_link
from agent.core.studies.run import StoreError, StudyRun
from agent.games.tangram.console.messages import StudyAction

log = logging.getLogger(__name__)

REFRESH_S = 2.0
"""How often an open page sees changes made outside the agent (the command line)."""


class StudyPanel:
    def __init__(self, run: StudyRun, broadcast: Callable[[dict[str, Any]], None], online: bool = False) -> None:
        self.run = run
        self.online = online
        """An online study: participants start from their links, not from the panel's Next participant."""
        self._broadcast = broadcast
        self.last: dict[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()

    async def snapshot(self) -> dict[str, Any] | None:
        """The status as the page draws it (None when the database cannot be read: logged)."""
        try:
            status = await self.run.status()
        except StoreError as exc:
            log.warning("console: the study's status cannot be read: %s", exc)
            return None
        return status.model_dump(mode="json")

    async def refresh(self) -> None:
        """Read the status and send it to the pages if it changed."""
        async with self._lock:
            data = await self.snapshot()
            if data is not None and data != self.last:
                self.last = data
                self._broadcast({"type": "study", "study": data})

    def changed(self) -> None:
        """A game of the study started or ended: refresh soon (from the event loop)."""
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._refresher(), name="console-study")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _refresher(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), REFRESH_S)
            self._wake.clear()
            try:
                await self.refresh()
            except Exception:  # a page must never stop the refreshing
                log.exception("console: the study panel failed to refresh")

    async def act(self, message: StudyAction) -> str:
        """Carry out a control; the line for the experimenter (what changed, or why not)."""
        if self.online and message.action == "next":
            return ("refused: in an online study participants start from their links "
                    "(python -m agent study invite), not from the console")
        do = {"next": self.run.next_participant, "pause": self.run.pause, "resume": self.run.resume,
              "drop": self.run.drop}[message.action]
        try:
            p = await do(message.participant)
        except StoreError as exc:
            return f"refused: {exc}"
        log.info("console: %s %s %s (recorded as %s)", message.action, p.id, p.state, message.who)
        await self.refresh()
        following = f"; next game: {p.next_condition}" if p.next_condition else ""
        line = f"{p.id} is {p.state}: {', '.join(p.order)} ({p.completed} of {p.games} games done){following}"
        if message.action == "next" and self.run.pages_url is not None:
            # With questionnaires in the lab: the participant's pages, to open on the lab machine's browser.
            line += f"; their pages (open on this machine): {self.run.pages_url}/p/{await lab_link(self.run, p.id)}"
        return line
