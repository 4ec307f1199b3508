"""Measure the planner offline: ``python -m benchmarks.tangram.bench_planner [--seeds N] [--rounds R]``.

Plays pure-Python games (no network, no simulator) for the game's six objectives with three
scripted partners and prints the mean silhouette IoU at the end of each game and the time one
decision takes:

* ``passive``: never plays;
* ``drawer``: each turn drops a piece from the drawer somewhere random;
* ``any``: each turn drops any piece, from the drawer or the board (ours too), somewhere random
  (the simulator's ``random`` human).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from agent.games.tangram.geometry.collide import BOARD_PX, CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.offline.agent import OfflineAgent
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.library import load_library
from agent.games.tangram.planner.score import silhouette_iou

OBJECTIVES = ("A house", "A fish", "A human", "A rocket", "A cat", "A robot")
ROTATIONS = tuple(45.0 * k for k in range(8))


def _drop(board: dict[str, Pose], rng: random.Random, pieces: list[str]) -> Pose | None:
    bx0, by0, bx1, by1 = BOARD_PX.bounds
    for _ in range(200):
        if not pieces:
            return None
        pose = Pose(rng.choice(pieces), rng.uniform(6, 94), rng.uniform(6, 94), rng.choice(ROTATIONS))
        poly = shapes.polygon(pose)
        x0, y0, x1, y1 = poly.bounds
        if x0 > bx0 and y0 > by0 and x1 < bx1 and y1 < by1 and not any(
                poly.intersects(shapes.polygon(p)) for n, p in board.items() if n != pose.piece):
            return pose
    return None


def human_move(kind: str, board: dict[str, Pose], rng: random.Random) -> Pose | None:
    if kind == "passive":
        return None
    if kind == "drawer":
        return _drop(board, rng, [n for n in PIECE_NAMES if n not in board])
    return _drop(board, rng, list(PIECE_NAMES))


def play(objective: str, kind: str, seed: int, rounds: int, times: list[float]) -> tuple[float, int]:
    rng = random.Random(f"{kind}:{seed}")
    planner = OfflineAgent(load_library())
    board: dict[str, Pose] = {}
    invalid = 0
    for _ in range(rounds):
        move = human_move(kind, board, rng)
        if move is not None:
            board[move.piece] = move
        t0 = time.perf_counter()
        d = planner.play(objective, board)
        times.append(time.perf_counter() - t0)
        if d.pose is not None:
            if not is_valid(d.pose, {n: p for n, p in board.items() if n != d.pose.piece}, CLEARANCE_PX):
                invalid += 1
            board[d.pose.piece] = d.pose
    return silhouette_iou(board, planner.figure), invalid


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7, help="human turn + planner turn per round (default 7)")
    args = ap.parse_args(argv)
    load_library()  # once, outside the timings
    times: list[float] = []
    invalid = 0
    print(f"{'human':8} " + " ".join(f"{o[2:]:>7}" for o in OBJECTIVES) + "    mean")
    for kind in ("passive", "drawer", "any"):
        means = []
        for objective in OBJECTIVES:
            scores = []
            for seed in range(1 if kind == "passive" else args.seeds):
                iou, bad = play(objective, kind, seed, args.rounds if kind != "passive" else 8, times)
                scores.append(iou)
                invalid += bad
            means.append(statistics.fmean(scores))
        print(f"{kind:8} " + " ".join(f"{m:7.3f}" for m in means) + f" {statistics.fmean(means):7.3f}")
    times.sort()
    ms = [t * 1000 for t in times]
    print(f"decisions {len(ms)}: p50 {ms[len(ms) // 2]:.1f} ms, p95 {ms[int(len(ms) * 0.95)]:.1f} ms, "
          f"max {ms[-1]:.1f} ms; invalid poses {invalid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
