import base64
import io
import random

import pytest
from PIL import Image

from agent.core.config import ImageConfig
from agent.core.images import (
    ImageError,
    check_pixels,
    encode_image,
    encode_png,
    fitted_size,
    payload_summary,
    png_size,
    prepare_image,
)


def png_b64(size=(562, 540), color=(200, 30, 30)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_large_png_is_downscaled_to_max_side():
    img = prepare_image(png_b64((1124, 1080)), ImageConfig(max_side=512))
    assert max(img.width, img.height) == 512 and img.original_size == (1124, 1080)
    assert img.mime == "image/png" and img.data.startswith(b"\x89PNG")
    assert img.data_url().startswith("data:image/png;base64,")


def test_small_png_keeps_its_size_and_jpeg_is_offered():
    img = prepare_image(png_b64((210, 210)), ImageConfig(max_side=512, format="jpeg"))
    assert (img.width, img.height) == (210, 210)
    assert img.mime == "image/jpeg" and img.data[:2] == b"\xff\xd8"


def test_data_url_prefix_is_accepted():
    assert prepare_image("data:image/png;base64," + png_b64((10, 10)), ImageConfig()).width == 10


@pytest.mark.parametrize("payload, fragment", [
    ("!!!not base64!!!", "not base64"),
    (base64.b64encode(b"GIF89a....").decode(), "not a PNG"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50).decode(), "broken PNG"),
])
def test_broken_images_raise_image_error(payload, fragment):
    with pytest.raises(ImageError, match=fragment):
        prepare_image(payload, ImageConfig())


def test_png_size_reads_the_header_alone():
    good = png_b64((562, 540))
    assert png_size(good) == (562, 540)
    assert png_size("data:image/png;base64," + good) == (562, 540)
    # Only the first 33 bytes are read: a picture whose pixels are gone still has its size.
    raw = base64.b64decode(good)
    assert png_size(base64.b64encode(raw[:40] + b"\x00" * 100).decode()) == (562, 540)


@pytest.mark.parametrize("payload, fragment", [
    ("!!!not base64!!!" * 4, "not base64"),
    (base64.b64encode(b"GIF89a" + b"\x00" * 40).decode(), "not a PNG"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIDAT" + b"\x00" * 30).decode(), "no image header"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n").decode(), "no image header"),
    (base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + b"\x00" * 20).decode(), "empty 0x0"),
])
def test_png_size_refuses_what_is_not_a_png_header(payload, fragment):
    with pytest.raises(ImageError, match=fragment):
        png_size(payload)


def test_fitted_size_and_the_pixel_limit():
    assert fitted_size((562, 540), 512) == (512, 492)
    assert fitted_size((540, 562), 512) == (492, 512)
    assert fitted_size((210, 210), 512) == (210, 210)
    assert fitted_size((10_000, 1), 512) == (512, 1)
    check_pixels((1000, 1000), ImageConfig(max_pixels=1_000_000))
    with pytest.raises(ImageError, match="too large"):
        check_pixels((1001, 1000), ImageConfig(max_pixels=1_000_000))


def test_payload_summary_hides_the_bytes():
    b64 = png_b64((20, 20))
    summary = payload_summary(b64)
    assert summary["b64_chars"] == len(b64) and len(summary["sha256"]) == 16
    assert b64 not in str(summary)


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA", "P", "1", "I;16"])
def test_encode_png_keeps_every_pixel_in_every_mode(mode):
    # A picture with every kind of neighbour (noise, flat runs, edges), odd sizes: the file must
    # decode, by Pillow's own reader (zlib, CRCs and all), to exactly the pixels it was made from.
    rng = random.Random(7)
    size = (37, 23)
    noise = bytes(rng.randrange(256) for _ in range(size[0] * size[1] * 4))
    pic = Image.frombytes("RGBA", size, noise).convert(mode) if mode not in ("P", "1", "I;16") else \
        Image.frombytes("RGB", size, noise[: size[0] * size[1] * 3]).convert("L").convert(mode)
    pic.paste(0, (5, 5, 20, 15))  # a flat block
    data = encode_png(pic)
    back = Image.open(io.BytesIO(data))
    back.verify()  # the chunks' CRCs
    back = Image.open(io.BytesIO(data))
    assert back.mode == pic.mode and back.size == pic.size
    assert back.tobytes() == pic.tobytes()


def test_prepared_board_is_a_lossless_png_of_the_downscaled_picture():
    rng = random.Random(3)
    big = Image.frombytes("RGB", (700, 650), bytes(rng.randrange(256) for _ in range(700 * 650 * 3)))
    buf = io.BytesIO()
    big.save(buf, "PNG")
    cfg = ImageConfig(max_side=512)
    b64 = base64.b64encode(buf.getvalue()).decode()
    pixels = prepare_image(b64, cfg, encode=False).pixels
    sent = prepare_image(b64, cfg)
    assert pixels is not None and Image.open(io.BytesIO(sent.data)).tobytes() == pixels.tobytes()
    assert encode_image(pixels, cfg) == sent.data
