"""Turn figure sketches into library files: ``python -m agent.games.tangram.planner.tools.design [names...]``.

A sketch (``sketches.yaml`` beside this file) gives each piece as the corners it should cover, in
tangram grid units (a quarter of the classic square's side, 25.6 px) with y pointing down;
numbers may be expressions using ``r`` for the square root of two. The tool fits each piece's real
outline to its corners (rigid, no mirroring), pushes touching pieces apart until each clears the
others by the engine's clearance plus ``GAP_PX``, centres the figure on the board, checks it with
the collision engine and writes ``agent/planner/figures/<name>.yaml``, plus a preview PNG with
``--png-dir``. ``--dry-run`` checks and previews without writing.
"""

from __future__ import annotations

import argparse
import ast
import math
import operator
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from agent.games.tangram.geometry.collide import CLEARANCE_PX, is_valid
from agent.games.tangram.geometry.frames import Pose
from agent.games.tangram.geometry.pieces import TOTAL_AREA_PX
from agent.games.tangram.planner import shapes
from agent.games.tangram.planner.sketch import save

UNIT_PX = 25.6
GAP_PX = 0.5
"""Margin kept beyond the engine's own clearance test (a mitred buffer, wider at sharp corners)."""
MAX_FIT_RMS_PX = 1.2
HERE = Path(__file__).resolve().parent
FIGURES_DIR = HERE.parent / "figures"

_OPS: dict[type[ast.AST], Callable[..., float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.USub: operator.neg, ast.UAdd: operator.pos}


def number(value: Any) -> float:
    """A sketch coordinate: a number or a small arithmetic expression in ``r`` (sqrt 2)."""
    if isinstance(value, (int, float)):
        return float(value)

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id == "r":
            return math.sqrt(2.0)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError(f"not a sketch number: {value!r}")

    return ev(ast.parse(str(value), mode="eval"))


def fit_sketch(name: str, sketch: dict[str, Any]) -> dict[str, Pose]:
    poses: dict[str, Pose] = {}
    for piece, spec in sketch["pieces"].items():
        corners = [(number(x) * UNIT_PX, number(y) * UNIT_PX) for x, y in spec["at"]]
        pose, rms = shapes.fit_pose(piece, corners)
        if rms > MAX_FIT_RMS_PX:
            raise SystemExit(f"{name}: {piece} does not fit its corners (rms {rms:.1f} px); mirrored?")
        poses[piece] = pose
    names = list(poses)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            overlap = shapes.polygon(poses[a]).intersection(shapes.polygon(poses[b])).area
            if overlap > 12.0:  # the game's square is not quite square: a sliver is rounding
                raise SystemExit(f"{name}: {a} and {b} overlap by {overlap:.0f} px^2 in the sketch")
    return poses


def spread(poses: dict[str, Pose], gap: float = GAP_PX) -> dict[str, Pose]:
    """Push pieces apart along the line between their centres until each clears the others' grown outline by gap."""
    poses = dict(poses)
    names = list(poses)
    for _ in range(400):
        polys = {n: shapes.polygon(poses[n]) for n in names}
        grown = {n: p.buffer(CLEARANCE_PX, join_style="mitre") for n, p in polys.items()}
        worst = math.inf
        moves = {n: [0.0, 0.0] for n in names}
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                d = min(grown[a].distance(polys[b]), grown[b].distance(polys[a]))
                worst = min(worst, d)
                if d >= gap:
                    continue
                ca, cb = polys[a].centroid, polys[b].centroid
                vx, vy = cb.x - ca.x, cb.y - ca.y
                norm = math.hypot(vx, vy) or 1.0
                step = (gap - d) * 0.35 + 0.02
                moves[a][0] -= vx / norm * step
                moves[a][1] -= vy / norm * step
                moves[b][0] += vx / norm * step
                moves[b][1] += vy / norm * step
        if worst >= gap:
            return poses
        for n in names:
            poses[n] = shapes.translate(poses[n], moves[n][0], moves[n][1])
    raise SystemExit("could not spread the pieces apart")


def centre(poses: dict[str, Pose]) -> dict[str, Pose]:
    x0, y0, x1, y1 = shapes.bounds(poses.values())
    cx, cy = shapes.board_center_px()
    dx, dy = cx - (x0 + x1) / 2, cy - (y0 + y1) / 2
    return {n: shapes.translate(p, dx, dy) for n, p in poses.items()}


def rounded(poses: dict[str, Pose]) -> dict[str, Pose]:
    return {n: Pose(n, round(p.x, 3), round(p.y, 3), round(p.rotation, 2)) for n, p in poses.items()}


def check(name: str, poses: dict[str, Pose]) -> None:
    for n, p in poses.items():
        if not is_valid(p, poses, CLEARANCE_PX):
            raise SystemExit(f"{name}: {n} collides after spreading")
    area = sum(shapes.polygon(p).area for p in poses.values())
    if abs(area - TOTAL_AREA_PX) > 150:
        raise SystemExit(f"{name}: total area {area:.0f} px^2 is not a tangram's")


def to_yaml(name: str, sketch: dict[str, Any], poses: dict[str, Pose]) -> str:
    doc: dict[str, Any] = {"name": name}
    for key in ("aliases", "related", "traits", "kind_of", "description", "rotations", "mirror", "order"):
        if key in sketch:
            doc[key] = sketch[key]
    doc["pieces"] = {n: {"x": poses[n].x, "y": poses[n].y, "rotation": poses[n].rotation,
                         "part": sketch["pieces"][n]["part"]} for n in sketch["pieces"]}
    head = (f"# The {name} figure: exact poses (node origins, board units, degrees clockwise).\n"
            "# Generated by `python -m agent.games.tangram.planner.tools.design` from tools/sketches.yaml;"
            " edit the sketch.\n")
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110, default_flow_style=None)


def build(name: str, sketch: dict[str, Any]) -> dict[str, Pose]:
    poses = rounded(centre(spread(fit_sketch(name, sketch))))
    check(name, poses)
    return poses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="sketches to build (default: all)")
    ap.add_argument("--sketches", type=Path, default=HERE / "sketches.yaml")
    ap.add_argument("--out", type=Path, default=FIGURES_DIR)
    ap.add_argument("--png-dir", type=Path, default=None, help="also write <name>.png previews here")
    ap.add_argument("--dry-run", action="store_true", help="check and preview only")
    args = ap.parse_args(argv)
    sketches = yaml.safe_load(args.sketches.read_text(encoding="utf-8"))
    for name in args.names or list(sketches):
        poses = build(name, sketches[name])
        x0, y0, x1, y1 = shapes.bounds(poses.values())
        print(f"{name}: {x1 - x0:.0f} x {y1 - y0:.0f} px, min gap ok")
        if args.png_dir:
            save(poses, args.png_dir / f"{name}.png", title=name)
        if not args.dry_run:
            path = args.out / f"{name.replace(' ', '_')}.yaml"
            path.write_text(to_yaml(name, sketches[name], poses), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
