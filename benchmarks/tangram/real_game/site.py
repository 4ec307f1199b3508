"""The game's web build, made and served by agent.games.tangram.webgame (its pack builder and its
loopback server with the headers the engine needs): the runner only asks for a URL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from benchmarks.tangram.real_game.agent_run import RunnerError


@contextlib.asynccontextmanager
async def served_game(gaips: Path, template: Path, out: Path) -> AsyncIterator[str]:
    """The game built from ``gaips`` on ``template`` (cached between runs), served on a free loopback
    port until the block ends; its URL. What the build said goes to ``out/build.txt``."""
    from agent.games.tangram.webgame.build import BuildError, build_game
    from agent.games.tangram.webgame.serve import GameServer, ServeError

    try:
        built = await asyncio.to_thread(build_game, gaips, template)
    except BuildError as exc:
        raise RunnerError(f"cannot build the game: {exc}") from exc
    (out / "build.txt").write_text("\n".join([f"folder: {built.folder}", f"kind: {built.kind}",
                                              f"engine: {built.engine}", *(f"warning: {w}" for w in built.warnings),
                                              *(f"note: {n}" for n in built.notes)]) + "\n", encoding="utf-8")
    server = GameServer(built.folder, port=0)
    try:
        await server.start()
    except ServeError as exc:
        raise RunnerError(f"cannot serve the game: {exc}") from exc
    try:
        yield server.url
    finally:
        await server.stop()
