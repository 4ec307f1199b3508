"""A tiny scripted agent server, for tests and for trying the runner's ``--connect`` mode.

It speaks the protocol with fixed behaviours, good and bad::

    async with serve_scripted_agent("good") as url:
        ...  # GameClient(url) / run_games(url, options)

    python -m agent.games.tangram.sim.scripted_agent --behaviour good --port 5000

Behaviours:

* ``good``: puts the next drawer piece in the first free spot of a grid, says so, finishes after
  the feedback; answers every chat.
* ``collide``: plays a piece onto one already on the board (or across the edge), then finishes.
* ``switch``: plays one piece, then another (one piece per turn), then finishes.
* ``rush``: sends ``play`` and ``finish`` together without waiting for the feedback.
* ``never_finish``: plays and never ends the turn.
* ``unknown_piece``, ``no_type``, ``huge_chat``, ``bad_json``, ``error``: one bad frame each turn,
  then ``finish`` (``error`` ends the turn with an error frame instead).
* ``silent``: never answers anything.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from agent.games.tangram.geometry.collide import BOARD_PX, is_valid, polygon_px
from agent.games.tangram.geometry.frames import Pose, pose_from_marker, rotation_to_send
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.protocol import GameState

BEHAVIOURS = ("good", "collide", "switch", "rush", "never_finish", "unknown_piece", "no_type",
              "huge_chat", "bad_json", "error", "silent")


def _board(state: Any) -> dict[str, Pose]:
    parsed = GameState.from_raw(state)
    return {n: pose_from_marker(n, p.position[0], p.position[1], p.rotation) for n, p in parsed.on_board.items()}


def free_spot(board: dict[str, Pose]) -> Pose | None:
    """The first drawer piece, at the first grid point where it fits with a pixel to spare."""
    for name in PIECE_NAMES:
        if name in board:
            continue
        for rotation in (0.0, 90.0, 180.0, 270.0):
            for y in range(85, 10, -8):
                for x in range(15, 90, 8):
                    pose = Pose(name, float(x), float(y), rotation)
                    if BOARD_PX.contains(polygon_px(pose)) and is_valid(pose, board):
                        return pose
    return None


def _rotations(state: Any) -> dict[str, float]:
    """Each piece's reported (unnormalised) rotation, so plays turn the short way as the game needs."""
    parsed = GameState.from_raw(state)
    out = {n: p.rotation for n, p in parsed.off_board.items()}
    out.update({n: p.rotation for n, p in parsed.on_board.items()})
    return out


FINISH = json.dumps({"type": "finish"})


class ScriptedAgent:
    def __init__(self, behaviour: str = "good") -> None:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        self.behaviour = behaviour
        self.received: list[dict[str, Any]] = []
        self._turned: dict[str, float] = {}

    async def handle(self, ws: ServerConnection) -> None:
        plays = 0
        with contextlib.suppress(Exception):
            async for raw in ws:
                try:
                    data = json.loads(raw)
                except ValueError:
                    continue
                self.received.append({k: v for k, v in data.items() if k not in ("board_img", "drawer_img")})
                ftype = data.get("type")
                with contextlib.suppress(Exception):
                    self._turned = _rotations(data.get("state"))
                if self.behaviour == "silent":
                    continue
                if ftype == "chatRequest":
                    await ws.send(json.dumps({"type": "chat", "message": f"You said: {data.get('message', '')[:100]}"}))
                elif ftype == "playRequest":
                    plays = 1
                    for out in self._on_request(_board(data.get("state"))):
                        await ws.send(out)
                elif ftype == "playFeedback":
                    plays += 1
                    for out in self._on_feedback(_board(data.get("state")), plays):
                        await ws.send(out)

    def _play(self, pose: Pose) -> str:
        current = self._turned.get(pose.piece)
        rotation = pose.rotation if current is None else rotation_to_send(current, pose.rotation)
        return json.dumps({"type": "play", "shape": pose.piece, "position": [pose.x, pose.y], "rotation": rotation})

    def _on_request(self, board: dict[str, Pose]) -> list[str]:
        b = self.behaviour
        pose = free_spot(board) or Pose("Green", 50.0, 50.0, 0.0)
        if b == "good":
            return [json.dumps({"type": "chat", "message": f"I'll place {pose.piece}."}), self._play(pose)]
        if b == "collide":
            target = next(iter(board.values()), None)
            if target is None:
                return [self._play(Pose(pose.piece, 1.0, 1.0, 0.0))]  # across the corner: BOUNDARY
            mover = next(n for n in PIECE_NAMES if n != target.piece)
            return [self._play(Pose(mover, target.x, target.y, target.rotation))]
        if b in ("switch", "never_finish"):
            return [self._play(pose)]
        if b == "rush":
            return [self._play(pose), FINISH]
        if b == "unknown_piece":
            return [json.dumps({"type": "play", "shape": "Orange", "position": [50, 50], "rotation": 0}), FINISH]
        if b == "no_type":
            return [json.dumps({"shape": "Red"}), FINISH]
        if b == "huge_chat":
            return [json.dumps({"type": "chat", "message": "x" * 70_000}), FINISH]
        if b == "bad_json":
            return ["{not json", FINISH]
        if b == "error":
            return [json.dumps({"type": "error", "message": "planner exploded"})]
        return [FINISH]

    def _on_feedback(self, board: dict[str, Pose], plays: int) -> list[str]:
        b = self.behaviour
        if b == "never_finish":
            return []
        if b == "switch" and plays == 2:
            others = [n for n in PIECE_NAMES if n not in board]
            if others:
                spot = free_spot(dict(board.items()))
                if spot is not None:
                    return [self._play(spot)]
        if b == "rush":
            return []
        return [FINISH]


@contextlib.asynccontextmanager
async def serve_scripted_agent(behaviour: str = "good", host: str = "127.0.0.1",
                               port: int = 0) -> AsyncIterator[str]:
    """Run a scripted agent; yields its ws:// URL."""
    agent = ScriptedAgent(behaviour)
    async with serve(agent.handle, host, port, max_size=16 * 1024 * 1024, compression=None) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://{host}:{bound}"


async def _main(behaviour: str, host: str, port: int) -> None:
    async with serve_scripted_agent(behaviour, host, port) as url:
        print(f"scripted agent ({behaviour}) on {url}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m agent.games.tangram.sim.scripted_agent",
                                     description="A scripted Tangram agent server.")
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="good")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    ns = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(ns.behaviour, ns.host, ns.port))
