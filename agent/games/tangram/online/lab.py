"""The lab's participant pages: the online pages and calls (app.py), on the lab machine's loopback.

``python -m agent --study FILE`` serves them when the study has questionnaires, on
``127.0.0.1:8090`` (``--lab-pages PORT``); ``python -m agent study next P07`` prints the participant's
link (core/studies/lab.py), which the experimenter opens in the lab machine's browser. The pages are
the online ones with no game inside: at a game the page says to play in the game window and goes on
by itself once the game is recorded completed (link/study.py binds the game only when the flow has
reached it). Only loopback is listened on, and every page needs the participant's own link.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import AsyncIterator
from dataclasses import dataclass

from aiohttp import web

from agent.core.studies.lab import LAB_PAGES_HOST
from agent.core.studies.online import OnlineRun
from agent.core.studies.run import StudyRun
from agent.games.tangram.online.app import make_app
from agent.games.tangram.online.deadlines import make_runner
from agent.games.tangram.online.guard import RateLimiter


class LabPagesError(Exception):
    """The lab's pages cannot be served; one line."""


@dataclass(frozen=True)
class LabPages:
    url: str
    """``http://127.0.0.1:PORT``: a participant's link is ``{url}/p/{code}``."""
    port: int


@contextlib.asynccontextmanager
async def lab_pages(run: StudyRun, port: int) -> AsyncIterator[LabPages]:
    """Serve ``run``'s participant pages on loopback ``port`` (0: any free port) while the block runs."""
    if not 0 <= port <= 65535:
        raise LabPagesError(f"--lab-pages {port} is not a port (0 to 65535)")
    limiter = RateLimiter()
    runner = make_runner(make_app(OnlineRun(run), None, None, limiter, None), limiter.limits)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, LAB_PAGES_HOST, port, reuse_address=True).start()
        except OSError as exc:
            in_use = exc.errno == errno.EADDRINUSE
            raise LabPagesError(f"the lab's pages cannot listen on {LAB_PAGES_HOST}:{port}"
                                f"{' (in use: --lab-pages PORT)' if in_use else f': {exc.strerror or exc}'}") from exc
        bound = int(runner.addresses[0][1])
        url = f"http://{LAB_PAGES_HOST}:{bound}"
        run.pages_url = url
        try:
            yield LabPages(url, bound)
        finally:
            run.pages_url = None
    finally:
        await runner.cleanup()
