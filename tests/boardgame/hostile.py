"""A hostile engine for the client's hardening tests: the reference engine behind a proxy that
misbehaves on cue (refuses actions, sends a deeply nested frame, reports impossible boards), then
lets the match go on normally. Loopback only; no tests live here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from tests.boardgame.support import running_engine

DEEP_FRAME = "[" * 100_000 + "]" * 100_000
"""200 KB, under the 256 KB frame limit: 100,000 nested arrays."""
FULL_DRAWN_BOARD = ["XOX", "XOO", "OXX"]
WON_BOARD = ["XXX", "OO.", "..."]


@dataclass
class Misbehaviour:
    refuse: int = 0
    """Refuse this many perform_action requests (without forwarding them); -1: all of them."""
    deep_frames: int = 0
    """Send DEEP_FRAME before this many get_state responses."""
    junk_frames: int = 0
    """Send this many frames that are not JSON before the first get_state response."""
    impossible: int = 0
    """Answer this many get_state requests with ``board`` (our turn, status started)."""
    board: list[str] = field(default_factory=lambda: list(FULL_DRAWN_BOARD))
    frames_in: int = 0
    """Frames the client sent."""
    refused: int = 0
    log: list[str] = field(default_factory=list)
    """Request types in the order the client sent them."""


def _refusal(request: dict[str, Any]) -> dict[str, Any]:
    return {"version": "1.0.0", "type": "perform_action_response", "game": request.get("game", ""),
            "match_id": request.get("match_id", ""), "agent_id": request.get("agent_id", ""),
            "action_response": {"version": "1.0.0", "status": "error", "message": "not now", "data": {}}}


@asynccontextmanager
async def hostile_engine(plan: Misbehaviour, **engine: Any) -> AsyncIterator[str]:
    """The URL of a reference engine (``engine`` settings) seen through ``plan``."""
    async with running_engine(**engine) as (_engine, upstream):

        async def handle(client: ServerConnection) -> None:
            async with connect(upstream, max_size=None) as server:
                async def down() -> None:
                    async for frame in server:
                        text = frame if isinstance(frame, str) else frame.decode()
                        reply = json.loads(text)
                        if reply.get("type") == "get_state_response":
                            for _ in range(plan.junk_frames):
                                await client.send("not json at all")
                            plan.junk_frames = 0
                            if plan.deep_frames:
                                plan.deep_frames -= 1
                                await client.send(DEEP_FRAME)
                            if plan.impossible and reply.get("status") == "started":
                                plan.impossible -= 1
                                reply["active_agent_id"] = "A"
                                reply["state"]["data"]["board"] = list(plan.board)
                                text = json.dumps(reply)
                        await client.send(text)

                pump = asyncio.create_task(down())
                try:
                    async for frame in client:
                        plan.frames_in += 1
                        request = json.loads(frame)
                        plan.log.append(str(request.get("type")))
                        if request.get("type") == "perform_action" and plan.refuse:
                            plan.refuse -= 1
                            plan.refused += 1
                            await client.send(json.dumps(_refusal(request)))
                            continue
                        await server.send(frame)
                except ConnectionClosed:
                    pass
                finally:
                    pump.cancel()

        async with serve(handle, "127.0.0.1", 0, max_size=None) as proxy:
            port = next(iter(proxy.sockets)).getsockname()[1]
            yield f"ws://127.0.0.1:{port}"

