"""Helpers for the link tests that speak raw WebSocket frames (issue 10). No tests live here.

A freeze of the agent's event loop is measured as another game sees it: a bystander WebSocket,
run on its own thread with its own event loop (so the freeze it measures is not its own), pings
the agent every few milliseconds and records the worst round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect


@dataclass
class Bystander:
    url: str
    every: float = 0.01
    rtts: list[float] = field(default_factory=list)
    error: BaseException | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _ready: threading.Event = field(default_factory=threading.Event)

    @property
    def worst(self) -> float:
        """The longest round trip seen, including one still waiting for its pong at the end."""
        return max(self.rtts, default=0.0)

    def run(self) -> None:
        try:
            asyncio.run(self._pings())
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc
        finally:
            self._ready.set()

    async def _pings(self) -> None:
        async with connect(self.url, ping_interval=None, compression=None, open_timeout=30) as ws:
            while not self._stop.is_set():
                started = time.monotonic()
                pong = await ws.ping()
                while True:
                    try:
                        await asyncio.wait_for(asyncio.shield(pong), 0.05)
                        break
                    except TimeoutError:
                        if self._stop.is_set():  # the block ended during a freeze: count it so far
                            break
                self.rtts.append(time.monotonic() - started)
                self._ready.set()
                await asyncio.sleep(self.every)


@contextlib.asynccontextmanager
async def bystander(url: str) -> AsyncIterator[Bystander]:
    """Ping the agent from another thread for the duration of the block."""
    watcher = Bystander(url)
    thread = threading.Thread(target=watcher.run, name="bystander", daemon=True)
    thread.start()
    await asyncio.to_thread(watcher._ready.wait, 30)
    try:
        yield watcher
    finally:
        watcher._stop.set()
        await asyncio.to_thread(thread.join, 30)
    if watcher.error is not None:
        raise watcher.error


# ---- a raw game: frames exactly as a test wants them, over a real socket -----------------------------

def play_request(on_board: dict[str, Any] | None = None, objective: str = "A house") -> dict[str, Any]:
    """A playRequest in the real game's dialect (no images: the planner and the tests need none)."""
    return {"type": "playRequest", "objective": objective, "timestamp": 1,
            "state": {"on_board": on_board or {}, "off_board": {}}}


def feedback(piece: str, x: float, y: float, rotation: float = 0.0, collisions: list[str] | None = None,
             others: dict[str, Any] | None = None) -> dict[str, Any]:
    """The game's answer to a play: the piece where it landed, with its collisions."""
    entry = {"position": {"position": f"({x}, {y})", "vertices": []}, "rotation": rotation,
             "collisions": collisions or []}
    return {"type": "playFeedback", "objective": "A house", "timestamp": 2,
            "state": {"on_board": {**(others or {}), piece: entry}, "off_board": {}}}


async def frames_until(ws: Any, kind: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Frames from the agent up to and including the first of type ``kind``."""
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while True:
            frame = json.loads(await ws.recv())
            seen.append(frame)
            if frame.get("type") == kind:
                return seen


async def play_one_turn(ws: Any, request: dict[str, Any], timeout: float = 10.0) -> list[dict[str, Any]]:
    """Send the request, answer each play as the game would (standing, no collision), up to finish."""
    await ws.send(json.dumps(request))
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(timeout):
        while True:
            frame = json.loads(await ws.recv())
            seen.append(frame)
            if frame.get("type") == "play":
                x, y = frame["position"]
                await ws.send(json.dumps(feedback(frame["shape"], x, y, frame["rotation"])))
            elif frame.get("type") in ("finish", "error"):
                return seen


def records(paths: list[Path], kind: str | None = None) -> list[dict[str, Any]]:
    out = [json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines()]
    return out if kind is None else [r for r in out if r.get("kind") == kind]
