"""Draw a board (and optionally a target figure's outline) to a Pillow image, for docs and design."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from PIL import Image, ImageDraw

from agent.games.tangram.geometry.frames import BOARD_ORIGIN_PX, BOARD_SIZE_PX, Pose

COLOURS: dict[str, tuple[int, int, int]] = {
    "Red": (214, 56, 52), "Cream": (236, 222, 188), "Blue": (52, 104, 214), "Green": (64, 170, 84),
    "Yellow": (238, 204, 46), "Purple": (136, 72, 170), "Brown": (138, 92, 54),
}


def render(poses: Mapping[str, Pose] | Iterable[Pose], target: Iterable[Pose] = (), scale: float = 2.0,
           title: str = "") -> Image.Image:
    items = list(poses.values()) if isinstance(poses, Mapping) else list(poses)
    x0, y1 = BOARD_ORIGIN_PX
    y0 = y1 - BOARD_SIZE_PX[1]
    w, h = BOARD_SIZE_PX
    img = Image.new("RGB", (round(w * scale), round(h * scale)), (250, 250, 246))
    draw = ImageDraw.Draw(img)

    def to_img(p: tuple[float, float]) -> tuple[float, float]:
        return ((p[0] - x0) * scale, (p[1] - y0) * scale)

    for pose in target:
        draw.polygon([to_img(p) for p in pose.outline_px()], outline=(170, 170, 170), width=1)
    for pose in items:
        draw.polygon([to_img(p) for p in pose.outline_px()], fill=COLOURS.get(pose.piece, (90, 90, 90)),
                     outline=(40, 40, 40), width=1)
    if title:
        draw.text((6, 4), title, fill=(30, 30, 30))
    return img


def save(poses: Mapping[str, Pose] | Iterable[Pose], path: str | Path, **kwargs: object) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    render(poses, **kwargs).save(path)  # type: ignore[arg-type]
    return path
