"""Render the figure library to PNGs: ``python -m agent.games.tangram.planner.tools.gallery OUT_DIR [names...]``.

Writes ``<name>.png`` for each figure (the whole board, pieces in their colours) and
``gallery.png``, a contact sheet of all of them. Use it to look at a figure after editing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image, ImageDraw

from agent.games.tangram.planner.library import load_library
from agent.games.tangram.planner.sketch import render


def crop_to_figure(img: Image.Image, margin: int = 24) -> Image.Image:
    """The image cut down to the pieces plus a margin (the board background is near-white)."""
    gray = img.convert("L").point(lambda v: 255 if v < 235 else 0)
    box = gray.getbbox()
    if box is None:
        return img
    x0, y0, x1, y1 = box
    return img.crop((max(0, x0 - margin), max(0, y0 - margin), min(img.width, x1 + margin),
                     min(img.height, y1 + margin)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--scale", type=float, default=2.0)
    args = ap.parse_args(argv)
    library = load_library()
    names = args.names or list(library.names)
    args.out.mkdir(parents=True, exist_ok=True)
    tiles = []
    for name in names:
        fig = library[name]
        img = render(fig.slots, scale=args.scale)
        img.save(args.out / f"{name}.png")
        tile = crop_to_figure(img)
        tile.thumbnail((260, 260))
        labelled = Image.new("RGB", (270, 290), (250, 250, 246))
        labelled.paste(tile, ((270 - tile.width) // 2, 5 + (260 - tile.height) // 2))
        ImageDraw.Draw(labelled).text((8, 272), name, fill=(30, 30, 30))
        tiles.append(labelled)
    cols = min(6, len(tiles))
    rows = (len(tiles) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * 270, rows * 290), (250, 250, 246))
    for i, tile in enumerate(tiles):
        sheet.paste(tile, ((i % cols) * 270, (i // cols) * 290))
    sheet.save(args.out / "gallery.png")
    print(f"wrote {len(tiles)} figures and gallery.png to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
