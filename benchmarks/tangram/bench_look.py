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

from agent.core.images import fitted_size
from agent.games.tangram.contract import board_of, drawer_of
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.screen import BOARD_CROP, DRAWER_CROP
from agent.games.tangram.pictures import look as looks
from agent.games.tangram.pictures.repaint import outlines, redraw, restore, state_outlines
from agent.games.tangram.protocol import GameState
from agent.games.tangram.replica.crops import board_image, drawer_image

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


def _saved_frame(record: Any, folder: Path) -> tuple[str, GameState, Image.Image | None, Image.Image | None] | None:
    """A real-game runner's event (``{"src": "game", "msg": frame, "images": {"board_img": file}}``):
    the frame's state with its pictures read from the files beside the event log."""
    if not isinstance(record, dict) or not isinstance(record.get("msg"), dict) \
            or not isinstance(record.get("images"), dict) or not isinstance(record["msg"].get("state"), dict):
        return None
    pictures = []
    for key in ("board_img", "drawer_img"):
        name = record["images"].get(key)
        file = (folder / name).resolve() if isinstance(name, str) else None
        pictures.append(Image.open(file).convert("RGB") if file and file.is_file() and folder.resolve() in file.parents
                        else None)
    return str(record["msg"].get("type", "")), GameState.from_raw(record["msg"]["state"]), pictures[0], pictures[1]


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
            for i, doc in enumerate(docs):
                saved = _saved_frame(doc, path.parent)
                if saved is not None:
                    out.append(Capture(f"{path.parent.name}/{path.stem}#{i}:{saved[0]}", *saved[1:]))
                    continue
                for j, frame in enumerate(_frames(doc)):
                    out.append(Capture(f"{path.stem}#{i}.{j}", GameState.from_raw(frame["state"]),
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


def read_look(real: Image.Image, poses: dict[str, Pose], which: str) -> tuple[bool, list[str], tuple[str, ...]]:
    """(some piece dimmed, the pieces at full colour, the tinted pieces) as the real picture shows
    them: each piece is taken for the nearest of its full, dimmed and tinted colours."""
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
    return bool(dimmed), full, tinted


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


def _poses(cap: Capture, which: str) -> dict[str, Pose]:
    if cap.no_pieces:
        return {}
    return board_of(cap.state) if which == "board" else drawer_of(cap.state)


def _kind(cap: Capture) -> str:
    if cap.no_pieces:
        return "textures"
    return cap.name.rpartition(":")[2] if ":" in cap.name else "screenshot"


def measure(captures: list[Capture], seen_by_kind: dict[str, list[int]] | None = None,
            ) -> dict[str, dict[str, dict[str, float]]]:
    """{look: {crop: metric means}} over every capture; ``seen_by_kind`` gets, per frame type,
    [pictures, with the human-turn dimming, with a tint, with a tint while the state says no collision]."""
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    for cap in captures:
        crops = {which: (real, _poses(cap, which))
                 for which, real in (("board", cap.board), ("drawer", cap.drawer)) if real is not None}
        seen = {which: read_look(real, poses, which) for which, (real, poses) in crops.items()}
        highlight = any(h for h, _, _ in seen.values())
        # The highlight leaves one piece at full colour, in either crop (or none when it is hidden).
        full = [name for _, names, _ in seen.values() for name in names]
        lit = (full[0] if len(full) == 1 else "(none)") if highlight else None
        if seen_by_kind is not None:
            tint = any(t for _, _, t in seen.values())
            clean = all(not p.collisions for p in cap.state.on_board.values())
            tally = seen_by_kind.setdefault(_kind(cap), [0, 0, 0, 0])
            for i, flag in enumerate((True, highlight, tint, tint and clean)):
                tally[i] += int(flag)
        for which, (real, poses) in crops.items():
            tinted = seen[which][2]
            for look in (looks.LIGHT_LOOK, looks.GAME_LOOK):
                draw = board_image if which == "board" else drawer_image
                calibrated = look is looks.GAME_LOOK
                ours = draw(poses.values(), lit=lit if calibrated else None, tinted=tinted if calibrated else (),
                            look=look)
                rows.setdefault(look.name, {}).setdefault(which, []).append(compare(real, ours, poses, which))
    return {name: {which: {k: _mean([r[k] for r in runs]) for k in runs[0]} for which, runs in by_crop.items()}
            for name, by_crop in rows.items()}


def _mean(values: list[float]) -> float:
    """The mean of the values that exist (a capture with no piece in a crop has no piece error)."""
    known = [v for v in values if v == v]
    return statistics.fmean(known) if known else float("nan")


def restored_check(captures: list[Capture]) -> dict[str, float]:
    """What the model gets from the real pictures (``images.source: restored``): pieces still shown
    dimmed or tinted, and the mean RGB distance of each piece's inside from its true colour."""
    pictures = dimmed = tinted = 0
    before: list[float] = []
    after: list[float] = []
    for cap in captures:
        for which, real in (("board", cap.board), ("drawer", cap.drawer)):
            poses = _poses(cap, which)
            if real is None or not poses:
                continue
            fixed = restore(real, outlines(poses, which, real.size), which)  # type: ignore[arg-type]
            pictures += 1
            some_dim, _, tint = read_look(fixed, poses, which)
            dimmed += int(some_dim)
            tinted += int(bool(tint))
            for picture, errors in ((real, before), (fixed, after)):
                px = np.asarray(picture).astype(float)
                for name, outline in outlines(poses, which, real.size).items():  # type: ignore[arg-type]
                    inside = _shrink(_mask(real.size, [outline]), INSET_PX)
                    if inside.sum() > 20:
                        errors.append(_l2(px[inside].mean(axis=0), looks.PIECE_COLORS[name]))
    return {"pictures": pictures, "dimmed": dimmed, "tinted": tinted,
            "error_before": _mean(before), "error_after": _mean(after)}


def redrawn_check(captures: list[Capture], max_side: int = 512) -> dict[str, float]:
    """``images.source: redrawn`` (the default) against ``restored`` on the real pictures, both as the
    model gets them (shrunk to ``max_side``): the share of pixels within 16 RGB levels of each other
    (the worst picture's), and the largest share more than 64 apart. Close to 100 % and 0 %: the two
    sources show the model the same board, the redrawn one without reading the game's pixels."""
    within: list[float] = []
    far: list[float] = []
    for cap in captures:
        for which, real in (("board", cap.board), ("drawer", cap.drawer)):
            if real is None or cap.no_pieces:
                continue
            size = fitted_size(real.size, max_side)
            fixed = restore(real, state_outlines(cap.state, which, real.size), which)  # type: ignore[arg-type]
            restored = np.asarray(fixed.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)).astype(int)
            drawn = np.asarray(redraw(cap.state, which, size)).astype(int)  # type: ignore[arg-type]
            apart = np.sqrt(((drawn - restored) ** 2).sum(axis=2))
            within.append(float((apart <= 16).mean()))
            far.append(float((apart > 64).mean()))
    return {"pictures": len(within), "within16_min": min(within, default=float("nan")),
            "within16_mean": _mean(within), "far64_max": max(far, default=float("nan"))}


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
    seen: dict[str, list[int]] = {}
    result = measure(captures, seen)
    print(f"simulator pictures against the real game's: {source}")
    for kind, (n, dim, tint, false_tint) in sorted(seen.items()):
        print(f"  {kind}: {n} pictures, {dim} with the human-turn dimming, {tint} with an overlap tint "
              f"({false_tint} of them while the state says no collision)")
    print(f"{'look':<8} {'crop':<7} {'piece':>7} {'max':>7} {'bg median':>10} {'bg pixel':>9} {'bg std':>7} "
          f"{'pixels':>7} {'<=16':>6}")
    for name, crops in result.items():
        for which, m in crops.items():
            print(f"{name:<8} {which:<7} {m['piece']:7.1f} {m['piece_max']:7.1f} {m['background']:10.1f} "
                  f"{m['background_pixel']:9.1f} {m['background_std']:+7.2f} {m['pixels']:7.1f} {m['within16']:6.1%}")
    check = restored_check(captures)
    print(f"restored as the model gets them (images.source: restored): {check['pictures']:.0f} pictures with pieces, "
          f"{check['dimmed']:.0f} still showing a dimmed piece, {check['tinted']:.0f} a tinted one; "
          f"piece colour error {check['error_before']:.1f} as sent, {check['error_after']:.1f} restored")
    drawn = redrawn_check(captures)
    print(f"redrawn (the default) against restored, as the model gets them: {drawn['pictures']:.0f} pictures, "
          f"{drawn['within16_mean']:.2%} of pixels within 16 levels (worst picture {drawn['within16_min']:.2%}), "
          f"at most {drawn['far64_max']:.2%} more than 64 apart")
    if args.json:
        print(json.dumps({"looks": result, "restored": check, "redrawn": drawn, "seen": seen}))


if __name__ == "__main__":
    main()
