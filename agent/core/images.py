"""Board and drawer images: decode, verify, downscale, re-encode for the LLM.

The game sends full-size PNG crops as base64 (several MB at large windows). The LLM needs far
less, and every byte costs latency and tokens, so images are shrunk to ``max_side`` and
re-encoded. A broken image is reported and left out; it never ends a turn.

Bounds: an image over ``max_pixels`` is refused from its header, before any pixel is decoded
(a 36-megapixel PNG of one colour is 160 KB of base64 but 144 MB decoded), and decoding runs in
an :class:`ImagePool` of a few threads of its own, so images from a hostile connection can
neither take the shared default thread pool from other games nor hold more than
``workers`` decoded images in memory at once.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import io
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
from PIL import Image, UnidentifiedImageError
from zlib_ng import zlib_ng

from agent.core.config import ImageConfig

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_PIXELS = 40_000_000
"""The most ``images.max_pixels`` may be set to; its default is far lower (see ImageConfig)."""


T = TypeVar("T")


class ImageError(ValueError):
    """The image cannot be used; the message says why in a few words."""


@dataclass(frozen=True, slots=True)
class PreparedImage:
    data: bytes
    """The encoded picture; empty when it was prepared with ``encode=False`` and had to be re-encoded."""
    mime: str
    width: int
    height: int
    original_bytes: int
    original_size: tuple[int, int]
    pixels: Image.Image | None = None
    """With ``encode=False``: the checked, downscaled picture, left for the caller to draw on and
    encode once (:func:`encode_image`) instead of encoding it twice."""

    def data_url(self) -> str:
        return data_url(self.data, self.mime)


def data_url(data: bytes, mime: str) -> str:
    """The image as an inline URL, the form OpenAI-compatible chat APIs take images in."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def payload_summary(b64: str) -> dict[str, object]:
    """What a transcript keeps of an image payload: its size and a hash, never the bytes."""
    raw = b64.encode("ascii", "ignore")
    return {"b64_chars": len(b64), "sha256": hashlib.sha256(raw).hexdigest()[:16]}


def decode_png(b64: str) -> bytes:
    text = b64.strip()
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"not base64 ({exc})") from exc
    if not raw.startswith(PNG_SIGNATURE):
        raise ImageError("not a PNG (bad signature)")
    return raw


def png_size(b64: str) -> tuple[int, int]:
    """A base64 PNG's (width, height) from its header alone (the first 33 bytes), no pixel decoded:
    for a caller that draws the picture itself and needs only its size. Raises ImageError when the
    start is not base64, not a PNG, or its first chunk not the image header."""
    text = b64.lstrip()
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        head = base64.b64decode(text[:44], validate=True)  # 44 characters: 33 bytes, whole quanta
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"not base64 ({exc})") from exc
    if not head.startswith(PNG_SIGNATURE):
        raise ImageError("not a PNG (bad signature)")
    if len(head) < 24 or head[12:16] != b"IHDR":
        raise ImageError("not a PNG (no image header)")
    width, height = struct.unpack(">II", head[16:24])
    if width == 0 or height == 0:
        raise ImageError(f"broken PNG (an empty {width}x{height} picture)")
    return width, height


def check_pixels(size: tuple[int, int], cfg: ImageConfig) -> None:
    """Refuse a picture over ``cfg.max_pixels`` (ImageError), before any of it is decoded or drawn."""
    limit = min(cfg.max_pixels, MAX_PIXELS)
    if size[0] * size[1] > limit:
        raise ImageError(f"image too large ({size[0]}x{size[1]} is over {limit:,} pixels)")


def fitted_size(size: tuple[int, int], max_side: int) -> tuple[int, int]:
    """``size`` shrunk to fit ``max_side`` with its proportions (unchanged when it already fits)."""
    if max(size) <= max_side:
        return size
    scale = max_side / max(size)
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


Repaint = Callable[[Image.Image], "Image.Image | None"]
"""A game's correction of a decoded picture at its full size (None: nothing to change)."""


def prepare_image(b64: str, cfg: ImageConfig, encode: bool = True, repaint: Repaint | None = None) -> PreparedImage:
    """Decode, check and shrink one image. CPU-bound: call it via ``asyncio.to_thread``.

    ``encode=False`` leaves a picture that needs re-encoding as ``pixels`` (``data`` empty), for a
    caller that draws on it first; one that can go out as it came still comes back as ``data``.
    ``repaint``: the game's correction, applied to the checked picture before it is shrunk."""
    raw = decode_png(b64)
    try:
        with Image.open(io.BytesIO(raw)) as img:
            check_pixels(img.size, cfg)
            img.load()
            original_size = (img.width, img.height)
            fits = max(img.size) <= cfg.max_side
            repainted = repaint(img) if repaint is not None else None
            pic: Image.Image = img if repainted is None else repainted
            if repainted is None and fits and cfg.format == "png":
                # Already small enough and verified: re-encoding would only cost time.
                return PreparedImage(raw, "image/png", img.width, img.height, len(raw), original_size)
            mode = "RGBA" if cfg.format == "png" and "A" in pic.getbands() else "RGB"
            # A picture already in the mode wanted is resized as it is: converting it first would
            # only copy every full-size pixel once more (resize makes a new picture anyway).
            out = pic if pic.mode == mode else pic.convert(mode)
            if not fits:
                # Bilinear, not bicubic: the game's crops are shrunk by little (562 to 512 px), where
                # the two differ by 46 dB PSNR (0.1 % of pixels more than 16 levels apart, all on
                # piece edges) and bilinear takes two thirds of the time (3 ms against 4.6 a board).
                out = out.resize(fitted_size(out.size, cfg.max_side), Image.Resampling.BILINEAR, reducing_gap=2.0)
            elif out is img:
                out = img.copy()  # the file's picture is closed with it; JPEG still has to be encoded
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ImageError(f"broken PNG ({type(exc).__name__})") from exc
    mime = "image/jpeg" if cfg.format == "jpeg" else "image/png"
    if not encode:
        return PreparedImage(b"", mime, out.width, out.height, len(raw), original_size, pixels=out)
    return PreparedImage(encode_image(out, cfg), mime, out.width, out.height, len(raw), original_size)


class Encoding(Protocol):
    """How a picture is written: the images config, or a game's own copy of its two fields."""

    @property
    def format(self) -> str: ...

    @property
    def jpeg_quality(self) -> int: ...


def encode_image(out: Image.Image, cfg: Encoding) -> bytes:
    """A prepared picture as the LLM gets it: JPEG, or lossless PNG (:func:`encode_png`)."""
    if cfg.format == "jpeg":
        buf = io.BytesIO()
        (out if out.mode == "RGB" else out.convert("RGB")).save(buf, "JPEG", quality=cfg.jpeg_quality)
        return buf.getvalue()
    return encode_png(out)


PNG_COLOUR_TYPES = {"L": 0, "RGB": 2, "LA": 4, "RGBA": 6}
"""The PNG colour type of each 8-bit Pillow mode :func:`encode_png` writes itself."""
PNG_DEFLATE_LEVEL = 2
"""zlib-ng's level 2: at level 1 (its quick mode) a board is half as large again for 1.5 ms less."""


def encode_png(pic: Image.Image) -> bytes:
    """``pic`` as a PNG, every pixel kept: rows unfiltered, deflated by zlib-ng at level 2.

    Pillow's PNG writer tries all five row filters on every row and keeps the best; that choice,
    not the compression, takes most of its time, and it cannot be turned off. For a 512 px board
    (CPU time, one thread): Pillow at zlib's level 1 10.4 ms and 140 kB, this 3.3 ms and 120 kB;
    the provider counts an image's pixels, not its bytes. Modes other than 8-bit grey/RGB(A), rare
    here, go to Pillow's writer."""
    colour_type = PNG_COLOUR_TYPES.get(pic.mode)
    if colour_type is None:
        buf = io.BytesIO()
        pic.save(buf, "PNG", compress_level=1)
        return buf.getvalue()
    pixels = np.asarray(pic).reshape(pic.height, -1)
    rows = np.zeros((pic.height, pixels.shape[1] + 1), np.uint8)  # each row led by its filter: 0, none
    rows[:, 1:] = pixels
    header = struct.pack(">IIBBBBB", pic.width, pic.height, 8, colour_type, 0, 0, 0)
    return b"".join((PNG_SIGNATURE, _png_chunk(b"IHDR", header),
                     _png_chunk(b"IDAT", zlib_ng.compress(rows, PNG_DEFLATE_LEVEL)), _png_chunk(b"IEND", b"")))


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib_ng.crc32(data, zlib_ng.crc32(kind)))


class ImagePool:
    """A few threads that decode images for every session of a process, and nothing else.

    Share one per process (the server makes it): jobs beyond ``workers`` wait in its queue, so at
    most ``workers`` images are decoded at once whatever the number of games, and a flood of
    images waits here instead of in the default pool that transcripts and other games use.
    A queued job whose caller gave up (turn deadline, disconnect) is dropped unstarted.
    """

    def __init__(self, workers: int = 2) -> None:
        self.workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="image-decode")

    async def prepare(self, b64: str, cfg: ImageConfig, encode: bool = True,
                      repaint: Repaint | None = None) -> PreparedImage:
        """:func:`prepare_image` in the pool; raises ImageError (or what Pillow raises) as it does."""
        return await self.run(prepare_image, b64, cfg, encode, repaint)

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        """Any other picture job (a game drawing its own picture, say) in the pool's threads."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, job, *args)

    def close(self) -> None:
        """Drop queued jobs; running ones finish in the background (a decode cannot be interrupted)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
