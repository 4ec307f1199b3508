"""Helpers for the Boardgame tests: an engine in the test's loop, a raw protocol client, frame capture."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from agent.games.boardgame.engine.server import Engine, EngineSettings


@asynccontextmanager
async def running_engine(**settings: Any) -> AsyncIterator[tuple[Engine, str]]:
    engine = Engine(EngineSettings(**settings))
    port = await engine.start("127.0.0.1", 0)
    try:
        yield engine, f"ws://127.0.0.1:{port}"
    finally:
        await engine.close()


class Raw:
    """A bare protocol client: send dicts, read responses (pushes are kept aside)."""

    def __init__(self, ws: ClientConnection, agent_id: str) -> None:
        self.ws = ws
        self.agent_id = agent_id
        self.pushes: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def response(self, timeout: float = 5.0) -> dict[str, Any]:
        import asyncio

        async with asyncio.timeout(timeout):
            while True:
                frame = json.loads(await self.ws.recv())
                if "event" in frame:
                    self.pushes.append(frame)
                    continue
                return frame

    async def push(self, timeout: float = 5.0) -> dict[str, Any]:
        import asyncio

        if self.pushes:
            return self.pushes.pop(0)
        async with asyncio.timeout(timeout):
            frame = json.loads(await self.ws.recv())
        assert "event" in frame, frame
        return frame

    async def ask(self, frame: dict[str, Any] | str) -> dict[str, Any]:
        await self.send(frame)
        return await self.response()

    def envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"version": "1.0.0", "type": kind, "agent_id": self.agent_id, **fields}

    async def create(self, game: str = "tictactoe", **data: Any) -> dict[str, Any]:
        return await self.ask(self.envelope("create_match", game=game, settings={"version": "1.0.0", "data": data}))

    async def state(self, match_id: str, game: str = "tictactoe") -> dict[str, Any]:
        return await self.ask(self.envelope("get_state", game=game, match_id=match_id, state={"version": "1.0.0"}))

    async def act(self, match_id: str, action_type: str, data: dict[str, Any],
                  game: str = "tictactoe") -> dict[str, Any]:
        return await self.ask(self.envelope("perform_action", game=game, match_id=match_id,
                                            action={"version": "1.0.0", "type": action_type, "data": data}))


@asynccontextmanager
async def raw_client(url: str, agent_id: str) -> AsyncIterator[Raw]:
    async with connect(url) as ws:
        yield Raw(ws, agent_id)


class FrameLog:
    """Every frame our code sends, by side, captured where it is serialised."""

    def __init__(self) -> None:
        self.agent: list[dict[str, Any]] = []
        self.engine: list[dict[str, Any]] = []


@pytest.fixture
def frame_log(monkeypatch: pytest.MonkeyPatch) -> FrameLog:
    import agent.games.boardgame.engine.server as server_module
    import agent.games.boardgame.link as link_module
    from agent.games.boardgame.protocol import dump

    log = FrameLog()

    def capture(into: list[dict[str, Any]]) -> Any:
        def recorded(message: Any) -> str:
            text = dump(message)
            into.append(json.loads(text))
            return text
        return recorded

    monkeypatch.setattr(link_module, "dump", capture(log.agent))
    monkeypatch.setattr(server_module, "dump", capture(log.engine))
    return log
