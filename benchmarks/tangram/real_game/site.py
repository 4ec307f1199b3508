"""The game's web build, made and served by agent.games.tangram.webgame (the pack builder and the
loopback server with the headers the engine needs): the runner only asks for a URL."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from benchmarks.tangram.real_game.agent_run import RunnerError


@contextlib.asynccontextmanager
async def served_game(gaips: Path, template: Path, out: Path) -> AsyncIterator[str]:
    """The game built from ``gaips`` on ``template``, served on loopback until the block ends; its URL."""
    raise RunnerError("the web build is not available yet")
    yield ""
