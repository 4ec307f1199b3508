"""Text the way the Godot game writes it: numbers, Vector2 strings and JSON.

The simulator must send what the real game sends, so these functions reproduce Godot 4's
formatting rather than Python's:

* A ``Vector2`` is single precision and prints as ``"(x, y)"``. A whole component prints bare
  (``"(30, 50)"``); otherwise it gets six decimals, minus one for every power of ten above 10
  (so about seven significant digits), in fixed point with trailing zeros dropped: a tiny
  component prints as ``0`` or ``-0``, never with an exponent (GAME_FACTS, Godot 4.2).
* ``rotation`` is ``snapped(rotation_degrees, 0.01)``: a float, never normalised.
* ``JSON.stringify`` writes compact JSON with sorted keys and leaves non-ASCII text alone; a float
  gets 14 significant digits in fixed point, so a whole one prints bare (``225``, ``-90``).
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any


def f32(value: float) -> float:
    """Round to single precision, which is what a Godot ``Vector2`` stores."""
    return struct.unpack("f", struct.pack("f", float(value)))[0]


def num_real(value: float) -> str:
    """One ``Vector2`` component as Godot prints it."""
    v = f32(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v):
        return str(int(v))
    decimals = 6
    if abs(v) > 10:
        decimals -= math.floor(math.log10(abs(v)))
    return fixed(v, decimals)


def fixed(value: float, decimals: int) -> str:
    """Godot's ``String::num``: fixed point, then trailing zeros (and a bare point) dropped."""
    text = f"{value:.{min(max(decimals, 0), 16)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def vector_text(x: float, y: float) -> str:
    return f"({num_real(x)}, {num_real(y)})"


def snapped_degrees(degrees: float) -> float:
    """``snapped(rotation_degrees, 0.01)``, written so JSON shows ``225.0`` and not ``225.00000000000003``.

    The node stores its rotation in single-precision radians, so the degrees go through that
    round trip first, as in the game.
    """
    stored = f32(math.radians(degrees))
    back = math.degrees(stored)
    return math.floor(back * 100.0 + 0.5) / 100.0 + 0.0  # + 0.0 turns -0.0 into 0.0


def json_float(value: float) -> str:
    """A float as ``JSON.stringify`` writes it: 14 significant digits in fixed point."""
    if not math.isfinite(value):
        raise ValueError(f"{value} is not JSON")
    if value == 0.0:
        return "0"
    return fixed(value, 14 - math.floor(math.log10(abs(value))))


def stringify(data: Any) -> str:
    """``JSON.stringify(data)`` with Godot's defaults: no spaces, keys sorted, UTF-8 kept."""
    if isinstance(data, bool) or data is None or isinstance(data, (int, str)):
        return json.dumps(data, ensure_ascii=False)
    if isinstance(data, float):
        return json_float(data)
    if isinstance(data, dict):
        items = sorted((str(k), v) for k, v in data.items())
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{stringify(v)}" for k, v in items) + "}"
    if isinstance(data, (list, tuple)):
        return "[" + ",".join(stringify(v) for v in data) + "]"
    raise TypeError(f"cannot stringify {type(data).__name__}")
