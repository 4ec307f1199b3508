"""How close the simulator's pictures are to the real game's (issue 48, item 3): the same state drawn
by the simulator, compared with the picture the real game made of it.

    .venv/bin/python -m benchmarks.tangram.bench_look --captures DIR [--json]

A capture is either a game frame (any ``*.json``/``*.jsonl`` in DIR holding objects with ``state``
and ``board_img``/``drawer_img``, as the real-game runner records them) or a screenshot of the game
at 1920 x 1080 (``NAME.png``) with the state at that moment beside it (``NAME.state.json``: the
frame's ``state`` object, or ``{"state": ..., "lit": piece}``); the board and drawer crops are cut
from the screenshot where the game cuts them. For each capture the state is drawn twice, in the
simulator's look before its calibration (light board, outlined pieces) and after (the real game's),
with the human-turn highlight and the overlap tint as the capture shows them (read off the capture:
which piece is at full colour, which are tinted), and compared with the real picture:

- ``piece``: per piece, the RGB distance (L2, 0-441) between the mean colour of the piece's inside
  (its outline from the state, 3 px in) in the real picture and in ours; the mean over pieces.
- ``background``: the RGB distance between the median colours of everything at least 3 px away from
  any piece, and the per-pixel mean RGB distance there (a texture of our own never matches pixel for
  pixel: about 4-5 levels is the floor for two textures of the same statistics).
- ``pixels``: the mean per-pixel RGB distance over the whole crop, and the share of pixels within 16
  levels of the real one.

Without captures, ``--gaips DIR`` (a GAIPS checkout) measures the empty board and drawer against the
crops composed from the game's own textures (read, never copied), which checks the background alone.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from agent.games.tangram import look as looks
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP
from agent.games.tangram.players.base import board_of
from agent.games.tangram.protocol import GameState
from agent.games.tangram.repaint import drawer_of, outlines
from agent.games.tangram.sim.render import board_image, drawer_image

INSET_PX = 3
MATCH_LEVELS = 16
MAX_CAPTURES = 500


@dataclass(frozen=True, slots=True)
class Capture:
    name: str
    state: GameState
    board: Image.Image | None
    drawer: Image.Image | None
    no_pieces: bool = False
    """The picture has no piece at all (the game's textures alone)."""


def _frames(obj: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside ``obj`` that looks like a game frame with a picture."""
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            if isinstance(cur.get("state"), dict) and (cur.get("board_img") or cur.get("drawer_img")):
                yield cur
            else:
                stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


def _png(b64: Any) -> Image.Image | None:
    if not isinstance(b64, str) or not b64:
        return None
    text = b64.partition(",")[2] if b64.startswith("data:") else b64
    return Image.open(io.BytesIO(base64.b64decode(text))).convert("RGB")


def load_captures(folder: Path) -> list[Capture]:
    out: list[Capture] = []
    for path in sorted(folder.rglob("*")):
        if len(out) >= MAX_CAPTURES:
            break
        if path.suffix == ".png" and (state_file := path.with_suffix(".state.json")).exists():
            raw = json.loads(state_file.read_text())
            state = GameState.from_raw(raw.get("state", raw))
            shot = Image.open(path).convert("RGB")
            if shot.size != (1920, 1080):
                shot = shot.resize((1920, 1080), Image.Resampling.BILINEAR)
            crops = [shot.crop((c[0], c[1], c[0] + c[2], c[1] + c[3])) for c in (BOARD_CROP, DRAWER_CROP)]
            out.append(Capture(path.stem, state, crops[0], crops[1]))
        elif path.suffix in (".json", ".jsonl") and not path.name.endswith(".state.json"):
            text = path.read_text(errors="replace")
            docs = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")] \
                if path.suffix == ".jsonl" else [json.loads(text)]
            for i, frame in enumerate(f for doc in docs for f in _frames(doc)):
                out.append(Capture(f"{path.stem}#{i}", GameState.from_raw(frame["state"]),
                                   _png(frame.get("board_img")), _png(frame.get("drawer_img"))))
    return out[:MAX_CAPTURES]


def _mask(size: tuple[int, int], polygons: list[list[tuple[float, float]]]) -> Image.Image:
    m = Image.new("L", size, 0)
    draw = ImageDraw.Draw(m)
    for poly in polygons:
        draw.polygon(poly, fill=255)
    return m


def _shrink(m: Image.Image, px: int) -> np.ndarray:
    return np.asarray(m.filter(ImageFilter.MinFilter(2 * px + 1))) > 0


def _grow(m: Image.Image, px: int) -> np.ndarray:
    return np.asarray(m.filter(ImageFilter.MaxFilter(2 * px + 1))) > 0


def _l2(a: Any, b: Any) -> float:
    return float(np.sqrt(((np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) ** 2).sum()))


def read_look(real: Image.Image, poses: dict[str, Pose], which: str) -> tuple[str | None, tuple[str, ...]]:
    """(lit piece, tinted pieces) as the real picture shows them: the piece at full colour when the
    others are dimmed; the pieces nearer their tinted colour than their own."""
    px = np.asarray(real).astype(float)
    shown: dict[str, np.ndarray] = {}
    for name, outline in outlines(poses, which, real.size).items():  # type: ignore[arg-type]
        inside = _shrink(_mask(real.size, [outline]), INSET_PX)
        if inside.sum() > 20:
            shown[name] = px[inside].mean(axis=0)
    panel = (looks.BOARD_TEXTURE if which == "board" else looks.DRAWER_TEXTURE).median
    tinted = tuple(n for n, c in shown.items()
                   if _l2(c, looks.piece_color(n, tint=True, under=panel)) < _l2(c, looks.PIECE_COLORS[n])
                   and _l2(c, looks.piece_color(n, tint=True, under=panel)) < _l2(c, looks.piece_color(n, dim=True)))
    dimmed = [n for n, c in shown.items() if n not in tinted
              and _l2(c, looks.piece_color(n, dim=True)) < _l2(c, looks.PIECE_COLORS[n])]
    full = [n for n in shown if n not in tinted and n not in dimmed]
    return (full[0] if dimmed and len(full) == 1 else None), tinted


def compare(real: Image.Image, ours: Image.Image, poses: dict[str, Pose], which: str) -> dict[str, float]:
    size = real.size
    if ours.size != size:
        ours = ours.resize(size, Image.Resampling.BILINEAR)
    a, b = np.asarray(real).astype(float), np.asarray(ours).astype(float)
    polys = outlines(poses, which, size)  # type: ignore[arg-type]
    errors = []
    for outline in polys.values():
        inside = _shrink(_mask(size, [outline]), INSET_PX)
        if inside.sum() > 20:
            errors.append(_l2(a[inside].mean(axis=0), b[inside].mean(axis=0)))
    background = ~_grow(_mask(size, list(polys.values())), INSET_PX)
    dist = np.sqrt(((a - b) ** 2).sum(axis=2))
    lum_a, lum_b = a[background].mean(axis=1), b[background].mean(axis=1)
    return {
        "piece": statistics.fmean(errors) if errors else float("nan"),
        "piece_max": max(errors) if errors else float("nan"),
        "pieces": len(errors),
        "background": _l2(np.median(a[background], axis=0), np.median(b[background], axis=0)),
        "background_pixel": float(dist[background].mean()),
        "background_std": float(lum_b.std() - lum_a.std()),
        "pixels": float(dist.mean()),
        "within16": float((np.abs(a - b).max(axis=2) <= MATCH_LEVELS).mean()),
    }


def measure(captures: list[Capture]) -> dict[str, dict[str, dict[str, float]]]:
    """{look: {crop: metric means}} over every capture."""
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    for cap in captures:
        for which, real in (("board", cap.board), ("drawer", cap.drawer)):
            if real is None:
                continue
            poses = {} if cap.no_pieces else board_of(cap.state) if which == "board" else drawer_of(cap.state)
            lit, tinted = read_look(real, poses, which)
            for look in (looks.LIGHT_LOOK, looks.GAME_LOOK):
                draw = board_image if which == "board" else drawer_image
                calibrated = look is looks.GAME_LOOK
                ours = draw(poses.values(), lit=lit if calibrated else None, tinted=tinted if calibrated else (),
                            look=look)
                rows.setdefault(look.name, {}).setdefault(which, []).append(compare(real, ours, poses, which))
    return {name: {which: {k: statistics.fmean(r[k] for r in runs) for k in runs[0]} for which, runs in crops.items()}
            for name, crops in rows.items()}


def texture_captures(gaips: Path) -> list[Capture]:
    """The empty board and drawer composed from the game's own textures (its window background, the
    board sprite, the drawer sprite, placed and scaled as Main_scene.tscn says), pieces left out."""
    png = gaips / "PNG"
    window = Image.open(png / "4853433.jpg").convert("RGBA")

    def crop(sprite: Path, centre: tuple[float, float], scale: tuple[float, float],
             box: tuple[int, ...]) -> Image.Image:
        top = Image.open(sprite).convert("RGBA")
        ox = 960 - box[0] - 573 * 1.67
        oy = 540 - box[1] - 327 * 1.67
        xs = (np.arange(box[2]) + 0.5 - ox) / 1.67
        ys = (np.arange(box[3]) + 0.5 - oy) / 1.67

        def sample(img: Image.Image, c: tuple[float, float], s: tuple[float, float]) -> np.ndarray:
            w, h = img.size
            tx = np.clip(((xs - c[0]) / s[0] + w / 2).astype(int), 0, w - 1)
            ty = np.clip(((ys - c[1]) / s[1] + h / 2).astype(int), 0, h - 1)
            return np.asarray(img).astype(float)[ty][:, tx]

        base = sample(window, (576, 324), (0.384, 0.324))[..., :3]
        over = sample(top, centre, scale)
        alpha = over[..., 3:4] / 255
        return Image.fromarray(np.clip(base * (1 - alpha) + over[..., :3] * alpha + 0.5, 0, 255).astype(np.uint8))

    board = crop(png / "file.png", (694.5, 232.868), (0.241, 0.2), BOARD_CROP)
    drawer = crop(png / "drawer dark.png", (1017.0, 315.0), (0.297537, 0.293055), DRAWER_CROP)
    return [Capture("textures", GameState(), board, drawer, no_pieces=True)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--captures", type=Path, help="folder of captured frames or screenshots with states")
    ap.add_argument("--gaips", type=Path, help="without captures: a GAIPS checkout, to compare with its textures")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object too")
    args = ap.parse_args()
    if args.captures:
        captures = load_captures(args.captures)
        source = f"{len(captures)} captures from {args.captures}"
    elif args.gaips:
        captures = texture_captures(args.gaips)
        source = f"the game's own textures in {args.gaips} (background only)"
    else:
        ap.error("give --captures DIR or --gaips DIR")
    if not captures:
        sys.exit(f"no capture found in {args.captures}: see this script's docstring for the formats")
    result = measure(captures)
    print(f"simulator pictures against the real game's: {source}")
    print(f"{'look':<8} {'crop':<7} {'piece':>7} {'max':>7} {'bg median':>10} {'bg pixel':>9} {'bg std':>7} "
          f"{'pixels':>7} {'<=16':>6}")
    for name, crops in result.items():
        for which, m in crops.items():
            print(f"{name:<8} {which:<7} {m['piece']:7.1f} {m['piece_max']:7.1f} {m['background']:10.1f} "
                  f"{m['background_pixel']:9.1f} {m['background_std']:+7.2f} {m['pixels']:7.1f} {m['within16']:6.1%}")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
