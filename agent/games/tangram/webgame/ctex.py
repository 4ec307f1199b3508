"""Godot 4's CompressedTexture2D file (``.ctex``) holding one lossless PNG, and reading it back.

Layout (Godot's ``scene/resources/compressed_texture.cpp``, little-endian): ``GST2``, format
version (1), width, height (u32), data-format bits, mipmap limit (i32, -1: none), three reserved
u32; then the image: data format (1 = PNG), width and height (u16), mipmap count (0), the
``Image::Format`` the engine converts the decoded picture to, and per image (mipmaps + 1) its byte
size (u32) followed by ``PNG `` and the PNG itself (Godot's PNG unpacker checks that tag).
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

MAGIC = b"GST2"
FORMAT_VERSION = 1
DATA_FORMAT_PNG = 1
PNG_TAG = b"PNG "
IMAGE_AT = 36
"""The image part starts after ``GST2`` and eight u32 fields."""
MAX_SIDE = 16384
"""Godot's own limit for an Image side (Image::MAX_WIDTH is 2^24, but textures past 16384 fail on GPUs)."""
MAX_PIXELS = 64 * 1024 * 1024

# Image::Format values for the PNG modes we write.
IMAGE_FORMATS = {"L": 0, "LA": 1, "RGB": 4, "RGBA": 5}


class TextureError(ValueError):
    """A picture we cannot turn into a texture, or a .ctex we cannot read; one line."""


@dataclass(frozen=True)
class Texture:
    width: int
    height: int
    image_format: int
    png: bytes


def encode_png(image: Image.Image) -> tuple[bytes, int]:
    """The picture as a lossless PNG in a mode Godot reads, and that mode's Image::Format."""
    if image.mode not in IMAGE_FORMATS:
        has_alpha = image.mode in ("PA", "RGBa", "La") or "transparency" in image.info or image.mode.endswith("A")
        image = image.convert("RGBA" if has_alpha else "RGB")
    out = io.BytesIO()
    # Level 1: the GAIPS pictures pack in 10 s instead of 16 s, for a pack of 9.3 MB instead of 7.2 MB
    # (served on loopback, so its size hardly matters); still lossless.
    image.save(out, format="PNG", compress_level=1)
    return out.getvalue(), IMAGE_FORMATS[image.mode]


def decode_picture(data: bytes, name: str) -> Image.Image:
    """A PNG, JPEG, WebP, BMP or TGA source picture, fully decoded; TextureError with one line."""
    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height = probe.size
            if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE) or width * height > MAX_PIXELS:
                raise TextureError(f"{name}: {width} x {height} is larger than a texture we build")
            probe.load()
            return probe.copy()
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise TextureError(f"{name}: not a picture we can read ({exc})") from exc


def ctex_bytes(image: Image.Image) -> bytes:
    """A .ctex holding ``image`` as a lossless PNG, no mipmaps."""
    width, height = image.size
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise TextureError(f"a {width} x {height} texture does not fit a .ctex of ours")
    png, image_format = encode_png(image)
    header = MAGIC + struct.pack("<IIIIiIII", FORMAT_VERSION, width, height, 0, -1, 0, 0, 0)
    body = struct.pack("<IHHII", DATA_FORMAT_PNG, width, height, 0, image_format)
    return header + body + struct.pack("<I", len(PNG_TAG) + len(png)) + PNG_TAG + png


def read_ctex(data: bytes) -> Texture:
    """The PNG inside a .ctex of the kind ``ctex_bytes`` writes."""
    if len(data) < IMAGE_AT + 20 or data[:4] != MAGIC:
        raise TextureError("not a Godot compressed texture (no GST2 header)")
    version, width, height = struct.unpack_from("<III", data, 4)
    if version > FORMAT_VERSION:
        raise TextureError(f"compressed texture format {version} is newer than we read")
    data_format, w16, h16, mipmaps, image_format = struct.unpack_from("<IHHII", data, IMAGE_AT)
    if data_format != DATA_FORMAT_PNG:
        raise TextureError(f"texture data format {data_format} is not PNG")
    if mipmaps:
        raise TextureError("texture has mipmaps; we read single PNGs only")
    (size,) = struct.unpack_from("<I", data, IMAGE_AT + 16)
    tagged = data[IMAGE_AT + 20:IMAGE_AT + 20 + size]
    if len(tagged) != size:
        raise TextureError("compressed texture is truncated")
    if not tagged.startswith(PNG_TAG):
        raise TextureError("compressed texture's picture lacks its PNG tag")
    png = tagged[len(PNG_TAG):]
    if (w16, h16) != (width & 0xFFFF, height & 0xFFFF):
        raise TextureError("compressed texture's two sizes disagree")
    return Texture(width, height, image_format, png)
