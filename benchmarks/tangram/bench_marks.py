"""What the marks and the candidates cost per turn (issue 24, item 5): the candidate search, and
drawing the marked board and drawer pictures, each timed on the boards of figures being built.

    .venv/bin/python -m benchmarks.tangram.bench_marks [--rounds 5]
    .venv/bin/python -m benchmarks.tangram.bench_marks --contrast [--captures DIR]

``--contrast`` measures instead how legible the marks are (issue 49): the WCAG contrast of every
mark on the same boards in the real game's look (:mod:`agent.games.tangram.pictures.legibility`: line pixels
against the pixels they cover, text against the pixels right around its glyphs), and with
``--captures`` on real captures too (the formats of ``bench_look``), prepared as the agent prepares
them (``--source``: ``images.source``, its default unless told); goals: lines at least 3:1
everywhere, text at least 4.5:1 for 95 % of the pixels around it.

Boards: every objective at every stage of its build (0 to 6 pieces placed by the planner's own
candidate A), each also with a stray piece dropped in a random free spot; pictures rendered as the
game would send them and prepared as the agent does (downscaled to images.max_side) before timing.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, get_args

from agent.core.images import prepare_image
from agent.games.tangram.config import ImageSource, TangramImageConfig
from agent.games.tangram.contract import board_of, drawer_of
from agent.games.tangram.geometry.collide import is_valid
from agent.games.tangram.geometry.frames import Pose, start_pose
from agent.games.tangram.geometry.pieces import PIECE_NAMES
from agent.games.tangram.pictures.annotate import Encoding, annotate_board, annotate_drawer
from agent.games.tangram.pictures.legibility import LINE_MIN, Contrast, board_contrast, drawer_contrast
from agent.games.tangram.pictures.repaint import prepare_picture
from agent.games.tangram.planner.candidates import propose_candidates
from agent.games.tangram.planner.library import load_library
from agent.games.tangram.protocol import GameState
from agent.games.tangram.replica.crops import render_board, render_drawer
from agent.games.tangram.sim.simgame import OBJECTIVES

LAYERS = ["grid", "labels", "candidates"]


def boards(seed: int) -> list[tuple[str, dict[str, Pose]]]:
    rng = random.Random(seed)
    out: list[tuple[str, dict[str, Pose]]] = []
    for objective in OBJECTIVES:
        board: dict[str, Pose] = {}
        for _ in range(7):
            out.append((objective, dict(board)))
            stray = [n for n in PIECE_NAMES if n not in board]
            for _ in range(50):
                pose = Pose(rng.choice(stray), rng.uniform(8, 92), rng.uniform(8, 92), rng.choice(range(0, 360, 45)))
                if is_valid(pose, board):
                    out.append((objective, {**board, pose.piece: pose}))
                    break
            offer = propose_candidates(objective, board, 1)
            if not offer.candidates:
                break
            board[offer.candidates[0].piece] = offer.candidates[0].pose
    return out


def timed(rounds: int, fn: Callable[..., object], *args: Any) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - start) * 1000)
    return times


def line(label: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"{label:<44} n={len(ms):<5} median {statistics.median(ms):6.2f} ms  p95 {p95:6.2f} ms  max {ms[-1]:6.2f} ms"


def contrast(cases: list[tuple[str, dict[str, Pose]]], captures: Path | None, source: ImageSource = "redrawn") -> None:
    from PIL import Image

    from benchmarks.tangram.bench_look import load_captures

    cfg = TangramImageConfig(max_side=512, source=source)
    results: dict[str, list[Contrast]] = {}

    def measure(label: str, board_b64: str, drawer_b64: str | None, state: GameState | None,
                board: dict[str, Pose], drawer: dict[str, Pose], objective: str) -> None:
        # As the session prepares it (the default source, redrawn), or as the simulator drew it when there is no state.
        board_img = prepare_picture(board_b64, state, "board", cfg) if state else prepare_image(board_b64, cfg)
        base = Image.open(io.BytesIO(board_img.data)).convert("RGB")
        offer = propose_candidates(objective, board, 3)
        for c in board_contrast(base, board, offer.candidates):
            results.setdefault(f"{label}: {c.kind}", []).append(c)
        if drawer_b64 is not None:
            drawer_img = prepare_picture(drawer_b64, state, "drawer", cfg) if state else prepare_image(drawer_b64, cfg)
            for c in drawer_contrast(Image.open(io.BytesIO(drawer_img.data)).convert("RGB"), drawer):
                results.setdefault(f"{label}: {c.kind}", []).append(c)

    for objective, board in cases:
        drawer = {n: start_pose(n) for n in PIECE_NAMES if n not in board}
        measure("simulator", base64.b64encode(render_board(board.values())).decode(),
                base64.b64encode(render_drawer(drawer.values())).decode(), None, board, drawer, objective)
    shots = load_captures(captures) if captures else []
    def b64(img: Any) -> str:
        buf = io.BytesIO()
        img.save(buf, "PNG")
        return base64.b64encode(buf.getvalue()).decode()

    for cap in shots:
        if cap.board is None:
            continue
        measure("real", b64(cap.board), b64(cap.drawer) if cap.drawer is not None else None, cap.state,
                board_of(cap.state), drawer_of(cap.state), "A house")
    real = f" and {len(shots)} real captures (images.source: {source})" if shots else " (no real capture given)"
    print(f"mark contrast (WCAG) on {len(cases)} simulator boards in the real game's look{real}, pictures at 512 px")
    print(f"{'marks':<40} {'pixels':>8} {'>= goal':>8} {'p5':>6} {'min':>6}  goal")
    for label, rows in results.items():
        pixels = sum(r.pixels for r in rows)
        share = sum(r.share_ok * r.pixels for r in rows if r.pixels) / max(pixels, 1)
        p5 = min(r.p5 for r in rows if r.pixels)
        low = min(r.minimum for r in rows if r.pixels)
        goal = f"min >= {rows[0].threshold:g}" if rows[0].threshold == LINE_MIN else f"p5 >= {rows[0].threshold:g}"
        print(f"{label:<40} {pixels:8d} {share:8.1%} {p5:6.2f} {low:6.2f}  {goal}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="timings per board")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--contrast", action="store_true", help="measure the marks' contrast instead of their cost")
    ap.add_argument("--captures", type=Path, help="with --contrast: real captures to measure too")
    ap.add_argument("--source", choices=get_args(ImageSource), default=TangramImageConfig().source,
                    help="with --captures: the pictures the marks go on, as images.source makes them")
    args = ap.parse_args()
    if args.contrast:
        contrast(boards(args.seed), args.captures, args.source)
        return
    library = load_library()
    cases = boards(args.seed)
    search: dict[int, list[float]] = {3: [], 6: []}
    drawing: dict[str, list[float]] = {}
    sizes: list[int] = []
    for objective, board in cases:
        for count in search:
            search[count] += timed(args.rounds, partial(propose_candidates, library=library), objective, board, count)
        offer = propose_candidates(objective, board, 3, library=library)
        drawer = {n: start_pose(n) for n in PIECE_NAMES if n not in board}
        board_b64 = base64.b64encode(render_board(board.values())).decode()
        drawer_b64 = base64.b64encode(render_drawer(drawer.values())).decode()
        for label, cfg in (("png 512", TangramImageConfig(max_side=512)),
                           ("jpeg 448", TangramImageConfig(max_side=448, format="jpeg"))):
            board_img = prepare_image(board_b64, cfg).data
            drawer_img = prepare_image(drawer_b64, cfg).data
            enc = Encoding(cfg.format, cfg.jpeg_quality)
            drawing.setdefault(f"board, all three layers, {label}", []).extend(timed(
                args.rounds, annotate_board, board_img, board, LAYERS, offer.candidates, enc))
            drawing.setdefault(f"drawer, labels, {label}", []).extend(timed(
                args.rounds, annotate_drawer, drawer_img, drawer, LAYERS, enc))
            if label == "png 512":
                sizes.append(len(annotate_board(board_img, board, LAYERS, offer.candidates, enc)) - len(board_img))
    print(f"{len(cases)} boards (6 objectives x build stages, with and without a stray piece), "
          f"{args.rounds} timings each, one thread")
    for count, ms in search.items():
        print(line(f"candidate search, llm.candidates: {count}", ms))
    for label, ms in drawing.items():
        print(line(f"drawing: {label}", ms))
    print(f"marked board PNG is {statistics.median(sizes) / 1024:.1f} KiB larger than the unmarked one (median)")


if __name__ == "__main__":
    main()
