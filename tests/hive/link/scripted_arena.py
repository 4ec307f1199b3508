"""Scripted arenas for the client's tests: one TCP connection whose behaviour is a test's script."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from agent.games.hive.protocol import BeeView

GOOD = b"0,0,0,10,2,9000050900000090000009001000900100090710009001000\n"
GOOD_P1 = b"1,1,0,10,27,0000009000000900000090002009000200900028090002009\n"


class Recorder:
    """A decider that records what it saw and answers guard N."""

    def __init__(self) -> None:
        self.views: list[BeeView] = []
        self.bad: list[str] = []

    def decide(self, view: BeeView) -> tuple[int, int]:
        self.views.append(view)
        return 3, 0

    def bad_line(self, line: str, error: str) -> None:
        self.bad.append(error)


ArenaScript = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ScriptedArena:
    """A one-connection TCP server whose behaviour is a test's script; records each read."""

    def __init__(self, script: ArenaScript) -> None:
        self.script = script
        self.names: list[bytes] = []
        self.server: asyncio.Server | None = None
        self.done = asyncio.Event()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.names.append(await asyncio.wait_for(reader.readline(), 5))
            await self.script(reader, writer)
        finally:
            writer.close()
            self.done.set()

    async def start(self, port: int = 0) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self.server:
            self.server.close()
            await self.server.wait_closed()


async def single_read(reader: asyncio.StreamReader) -> bytes:
    return await asyncio.wait_for(reader.read(200), 2)
