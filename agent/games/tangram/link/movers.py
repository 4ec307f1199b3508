"""Who moved each piece on the board last: the agent or its partner.

The game never says who moved what. The session knows which plays it sent, and every frame brings the
board as the game holds it; so a piece that shows up somewhere new was moved by the agent when it
stands where the agent's last play of that piece put it, and by the partner otherwise. A planner's
own memory of its plays cannot tell this (a play the session repaired, a play another player made
for the same session, the LLM's moves when the planner only answers the chat): it once called the
agent's own piece the partner's ("Your Red was where ...").

One ledger per session, bounded by the seven pieces; pure bookkeeping, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from agent.games.tangram.geometry.frames import Pose, normalize_rotation, pose_from_marker
from agent.games.tangram.protocol import GameState

Mover = Literal["agent", "partner"]

MOVED_UNITS = 0.5
"""A piece whose node origin moved more than this (board units) was moved by someone."""
TURNED_DEG = 1.0
SENT_UNITS = 1.0
"""How close to the agent's last play a piece must land to count as the agent's (board units)."""


def _turn(a: float, b: float) -> float:
    d = abs(normalize_rotation(a) - normalize_rotation(b)) % 360.0
    return min(d, 360.0 - d)


@dataclass
class Movers:
    """The last mover of every piece on the board, newest move last."""

    last: dict[str, Mover] = field(default_factory=dict)
    """Piece -> who moved it last, ordered from the oldest move to the newest."""
    _seen: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    _sent: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    _landing: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """Plays sent that no board has shown yet: a chat answered meanwhile must not call them undone."""

    def sent(self, piece: str, x: float, y: float, rotation: float) -> None:
        """The agent sent a play: ``piece``'s node origin to (x, y), turned to ``rotation``."""
        self._sent[piece] = (x, y, rotation)
        self._landing[piece] = (x, y, rotation)

    def landing(self) -> dict[str, Pose]:
        """The agent's plays on their way: sent, not yet on a board the game reported."""
        return {name: Pose(name, x, y, r) for name, (x, y, r) in self._landing.items()}

    def observe(self, state: GameState, *, new_turn: bool = False) -> None:
        """A frame's board: every piece seen somewhere new gets its mover. ``new_turn`` (a
        playRequest): the plays of earlier turns have landed or never will."""
        if new_turn:
            self._landing.clear()
        for name in list(self._seen):
            if name not in state.on_board:  # back in the drawer (the game snaps it there)
                del self._seen[name]
                self.last.pop(name, None)
        for name, piece in state.on_board.items():
            try:
                pose = pose_from_marker(name, piece.position[0], piece.position[1], piece.rotation)
            except (KeyError, ValueError):  # an unknown piece name: nothing to track
                continue
            here = (pose.x, pose.y, piece.rotation)
            if name in self._landing and _close(self._landing[name], here, SENT_UNITS, TURNED_DEG):
                del self._landing[name]
            before = self._seen.get(name)
            if before is not None and _close(before, here, MOVED_UNITS, TURNED_DEG):
                continue
            self._seen[name] = here
            sent = self._sent.get(name)
            mover: Mover = "agent" if sent is not None and _close(sent, here, SENT_UNITS, TURNED_DEG) else "partner"
            self.last.pop(name, None)
            self.last[name] = mover

    def snapshot(self) -> dict[str, Mover]:
        """A copy for one view (newest move last)."""
        return dict(self.last)


def _close(a: tuple[float, float, float], b: tuple[float, float, float], units: float, degrees: float) -> bool:
    return abs(a[0] - b[0]) <= units and abs(a[1] - b[1]) <= units and _turn(a[2], b[2]) <= degrees


def pieces_of(movers: Mapping[str, Mover], who: Mover) -> list[str]:
    """The pieces ``who`` moved last, oldest first."""
    return [name for name, m in movers.items() if m == who]
