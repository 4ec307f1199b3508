"""Benchmark the repair step: random proposals on random valid boards.

For each trial: a board with 0-6 pieces placed validly, then a proposal a careless model might send
(any piece, anywhere on the board or up to 10 units beyond it, mostly multiples of 45 degrees,
sometimes any angle). Reports how often repair returns a valid pose, how far it moves the piece,
and how long one repair takes. Also times relation resolving and the board description.

    .venv/bin/python -m benchmarks.tangram.bench_repair [--trials 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.describe import describe_board
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.geometry.relations import RELATIONS, resolve_relation
from agent.games.tangram.geometry.repair import repair
from agent.games.tangram.geometry.sampling import random_board, random_proposal


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    times_ms: list[float] = []
    moved_units: list[float] = []
    moved_on_board: list[float] = []  # proposals whose origin was inside 0..100
    already_valid = repaired = passed = invalid = rotated = 0
    for _ in range(args.trials):
        board = random_board(rng, rng.randint(0, 6))
        proposal = random_proposal(rng)
        others = {n: p for n, p in board.items() if n != proposal.piece}
        t0 = time.perf_counter()
        result = repair(proposal, others, clearance_px=CLEARANCE_PX)
        times_ms.append((time.perf_counter() - t0) * 1000)
        if result.pose is None:
            passed += 1
            continue
        if not is_valid(result.pose, others, CLEARANCE_PX):
            invalid += 1
            continue
        if not result.changed:
            already_valid += 1
        else:
            repaired += 1
            moved_units.append(result.displacement)
            if 0 <= proposal.x <= 100 and 0 <= proposal.y <= 100:
                moved_on_board.append(result.displacement)
            rotated += result.rotation_changed

    rel_ms: list[float] = []
    rel_found = rel_total = 0
    for _ in range(max(1, args.trials // 4)):
        board = random_board(rng, rng.randint(1, 6))
        anchor = rng.choice(sorted(board))
        piece = rng.choice([p for p in PIECE_NAMES if p != anchor])
        relation = rng.choice(RELATIONS)
        rotation = rng.choice([None, 0.0, 45.0, 90.0, 180.0])
        others = {n: p for n, p in board.items() if n != piece}
        t0 = time.perf_counter()
        pose = resolve_relation(piece, relation, anchor, others, rotation=rotation)
        rel_ms.append((time.perf_counter() - t0) * 1000)
        if relation not in ("square_with", "triangle_with"):
            rel_total += 1
            rel_found += pose is not None
        if pose is not None:
            assert is_valid(pose, others, CLEARANCE_PX)

    desc_ms: list[float] = []
    for _ in range(100):
        board = random_board(rng, rng.randint(0, 7))
        t0 = time.perf_counter()
        describe_board(board)
        desc_ms.append((time.perf_counter() - t0) * 1000)

    n = args.trials
    print(f"repair: {n} random proposals on random valid boards with 0-6 pieces (seed {args.seed})")
    print(f"  valid after repair:       {(already_valid + repaired) / n:7.2%}  "
          f"(already valid {already_valid / n:.1%}, moved {repaired / n:.1%}, "
          f"of which turned {rotated / max(repaired, 1):.1%})")
    print(f"  no valid pose (pass):     {passed / n:7.2%}")
    print(f"  returned but invalid:     {invalid / n:7.2%}")
    if moved_units:
        print(f"  displacement when moved:  median {statistics.median(moved_units):.2f} units, "
              f"p90 {percentile(moved_units, 0.9):.2f}, max {max(moved_units):.2f}")
    if moved_on_board:
        print(f"    proposals on the board: median {statistics.median(moved_on_board):.2f} units, "
              f"p90 {percentile(moved_on_board, 0.9):.2f} ({len(moved_on_board)} moved)")
    print(f"  time per repair:          median {statistics.median(times_ms):.2f} ms, "
          f"p99 {percentile(times_ms, 0.99):.2f} ms, max {max(times_ms):.2f} ms")
    print(f"relations: {len(rel_ms)} random requests, directional/touching resolved "
          f"{rel_found / max(rel_total, 1):.1%}; time median {statistics.median(rel_ms):.2f} ms, "
          f"p99 {percentile(rel_ms, 0.99):.2f} ms")
    print(f"describe_board: median {statistics.median(desc_ms):.2f} ms, p99 {percentile(desc_ms, 0.99):.2f} ms")


if __name__ == "__main__":
    main()
