"""The texture importer's fix_alpha_border, against a plain transcription of Godot's loop."""

from __future__ import annotations

import random

from PIL import Image

from agent.games.tangram.webgame.importer import apply_import_options, fix_alpha_edges


def reference(image: Image.Image) -> Image.Image:
    """Godot's Image::fix_alpha_edges as a plain loop: radius 4, alpha threshold 20, first nearest wins."""
    width, height = image.size
    src = image.load()
    out = image.copy()
    dst = out.load()
    for i in range(height):
        for j in range(width):
            if src[j, i][3] >= 20:
                continue
            best, colour = None, None
            for k in range(max(0, i - 4), min(height - 1, i + 4) + 1):
                for m in range(max(0, j - 4), min(width - 1, j + 4) + 1):
                    dist = (i - k) ** 2 + (j - m) ** 2
                    if best is not None and dist >= best:
                        continue
                    if src[m, k][3] < 20:
                        continue
                    best, colour = dist, src[m, k][:3]
            if colour is not None:
                dst[j, i] = (*colour, src[j, i][3])
    return out


def random_sprite(seed: int, size=(23, 19)) -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    pixels = image.load()
    for _ in range(12):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        pixels[x, y] = (rng.randrange(256), rng.randrange(256), rng.randrange(256), rng.choice([19, 20, 128, 255]))
    for x in range(size[0]):  # faint noise that stays below the threshold
        pixels[x, size[1] - 1] = (9, 9, 9, rng.randrange(20))
    return image


def test_same_pixels_as_godots_loop():
    for seed in range(8):
        sprite = random_sprite(seed)
        assert fix_alpha_edges(sprite).tobytes() == reference(sprite).tobytes()


def test_only_transparent_pixels_near_an_edge_change():
    sprite = Image.new("RGBA", (20, 5), (0, 0, 0, 0))
    sprite.putpixel((2, 2), (200, 100, 50, 255))
    fixed = fix_alpha_edges(sprite)
    assert fixed.getpixel((6, 2)) == (200, 100, 50, 0)  # 4 away: coloured, still transparent
    assert fixed.getpixel((7, 2)) == (0, 0, 0, 0)  # 5 away: untouched
    assert fixed.getpixel((2, 2)) == (200, 100, 50, 255)


def test_import_options_decide():
    sprite = random_sprite(1)
    assert apply_import_options(sprite, {"process/fix_alpha_border": "false"}) is sprite
    assert apply_import_options(sprite, {}).tobytes() == reference(sprite).tobytes()
    grey = Image.new("LA", (4, 4))
    assert apply_import_options(grey, {}) is grey  # Godot leaves LA8 alone
