"""Import tangram solutions drawn as SVG: ``python -m agent.games.tangram.planner.tools.import_svg SVG_DIR OUT_DIR``.

Each ``*.svg`` in SVG_DIR holds one figure as seven ``<polygon>`` pieces. ``--names names.yaml``
maps a file's stem to the figure's name, or to ``{name, aliases, related, description}``; without
it the stem is the name. Every figure is fitted with the game's pieces, checked by the collision
engine and written to OUT_DIR as a library file; point ``planner.figures_dir`` at OUT_DIR to play
them. A figure whose silhouette IoU against its drawing is below ``--min-iou`` is refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from agent.games.tangram.planner.library import FigureError, normalize_text
from agent.games.tangram.planner.svgimport import FigureNames, figure_yaml, import_svg


def _names(path: Path | None) -> dict[str, FigureNames]:
    if path is None:
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(stem): FigureNames(name=v) if isinstance(v, str) else FigureNames.model_validate(v)
            for stem, v in raw.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("svg_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--names", type=Path, default=None, help="YAML: file stem -> name or {name, aliases, ...}")
    ap.add_argument("--min-iou", type=float, default=0.9)
    args = ap.parse_args(argv)
    try:
        names = _names(args.names)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        print(f"{args.names}: {exc}", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for svg in sorted(args.svg_dir.glob("*.svg")):
        entry = names.get(svg.stem) or FigureNames(name=normalize_text(svg.stem.replace("_", " ").replace("-", " ")))
        try:
            imported = import_svg(svg.read_text(encoding="utf-8"), entry)
            if imported.iou < args.min_iou:
                raise FigureError(f"silhouette IoU {imported.iou:.3f} is below {args.min_iou}")
        except (FigureError, ValidationError, ValueError) as exc:
            print(f"{svg.name}: refused: {exc}", file=sys.stderr)
            failed += 1
            continue
        out = args.out_dir / f"{imported.spec.name.replace(' ', '_')}.yaml"
        out.write_text(figure_yaml(imported, svg), encoding="utf-8")
        note = ", parallelogram mirrored in the drawing" if imported.mirrored_parallelogram else ""
        print(f"{svg.name}: {imported.spec.name} -> {out} (IoU {imported.iou:.3f}{note})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
