"""Random boards and proposals, for property tests and the repair benchmark (seeded, reproducible)."""

from __future__ import annotations

import random

from agent.games.tangram.geometry.collide import CLEARANCE_PX
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.repair import repair


def random_rotation(rng: random.Random) -> float:
    """Mostly multiples of 45 (what players and models use), sometimes any angle."""
    if rng.random() < 0.8:
        return 45.0 * rng.randrange(8)
    return round(rng.uniform(-360.0, 360.0), 2)


def random_proposal(rng: random.Random, piece: str | None = None, spread: float = 10.0) -> Pose:
    """A pose a careless model might send: anywhere on the board, and up to ``spread`` units beyond."""
    name = piece or rng.choice(PIECE_NAMES)
    return Pose(name, rng.uniform(-spread, 100.0 + spread), rng.uniform(-spread, 100.0 + spread),
                random_rotation(rng))


def random_board(rng: random.Random, n_pieces: int) -> dict[str, Pose]:
    """A valid board of up to ``n_pieces`` distinct pieces, each placed by repairing a random proposal."""
    board: dict[str, Pose] = {}
    for name in rng.sample(PIECE_NAMES, n_pieces):
        fixed = repair(random_proposal(rng, name, spread=0.0), board, clearance_px=CLEARANCE_PX)
        if fixed.pose is not None:
            board[name] = fixed.pose
    return board
