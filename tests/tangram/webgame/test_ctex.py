"""CompressedTexture2D files of ours: header fields Godot reads, and the lossless picture inside."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from agent.games.tangram.webgame.ctex import TextureError, ctex_bytes, decode_picture, read_ctex
from tests.tangram.webgame.support import picture_bytes


@pytest.mark.parametrize(("mode", "image_format"), [("RGBA", 5), ("RGB", 4), ("L", 0)])
def test_round_trip_is_lossless(mode, image_format):
    source = decode_picture(picture_bytes((23, 17), mode), "t.png")
    data = ctex_bytes(source)
    texture = read_ctex(data)
    assert (texture.width, texture.height, texture.image_format) == (23, 17, image_format)
    back = Image.open(io.BytesIO(texture.png))
    assert back.mode == mode and back.tobytes() == source.tobytes()


def test_header_is_what_godot_reads():
    data = ctex_bytes(Image.new("RGBA", (300, 2)))
    assert data[:4] == b"GST2"
    version, width, height, flags, mipmap_limit = struct.unpack_from("<IIIIi", data, 4)
    assert (version, width, height, flags, mipmap_limit) == (1, 300, 2, 0, -1)
    assert struct.unpack_from("<III", data, 24) == (0, 0, 0)  # reserved
    data_format, w16, h16, mipmaps, image_format = struct.unpack_from("<IHHII", data, 36)
    assert (data_format, w16, h16, mipmaps, image_format) == (1, 300, 2, 0, 5)
    (size,) = struct.unpack_from("<I", data, 52)
    assert data[56:60] == b"PNG " and size == len(data) - 56  # Godot's PNG unpacker wants the tag
    assert data[60:64] == b"\x89PNG"


def test_palette_and_jpeg_pictures_become_plain_modes():
    palette = Image.new("P", (4, 4))
    palette.putpalette([0, 0, 0, 255, 0, 0] * 128)
    assert read_ctex(ctex_bytes(palette)).image_format == 4
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 200, 30)).save(out, format="JPEG")
    jpeg = decode_picture(out.getvalue(), "p.jpg")
    texture = read_ctex(ctex_bytes(jpeg))
    assert texture.image_format == 4 and Image.open(io.BytesIO(texture.png)).tobytes() == jpeg.tobytes()


def test_bad_input_is_one_clear_error():
    with pytest.raises(TextureError, match="not a picture"):
        decode_picture(b"<svg/>", "icon.svg")
    with pytest.raises(TextureError, match="GST2"):
        read_ctex(b"RIFF" + bytes(60))
    data = bytearray(ctex_bytes(Image.new("L", (2, 2))))
    with pytest.raises(TextureError, match="truncated"):
        read_ctex(bytes(data[:-3]))
