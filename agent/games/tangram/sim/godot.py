"""Text the way the Godot game writes it: numbers, Vector2 strings and JSON.

The simulator must send what the real game sends, so these functions reproduce Godot 4's
formatting rather than Python's:

* A ``Vector2`` is single precision and prints as ``"(x, y)"``. A whole component prints bare
  (``"(30, 50)"``); otherwise it gets six decimals, minus one for every power of ten above 10
  (so about seven significant digits), with trailing zeros dropped. Tiny components print
  with an exponent (``"1e-05"``), as GAME_FACTS records.
* ``rotation`` is ``snapped(rotation_degrees, 0.01)``: a float, never normalised.
* ``JSON.stringify`` writes compact JSON with sorted keys and leaves non-ASCII text alone.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any

TINY = 1e-4
"""Below this magnitude a component is printed with an exponent."""


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
    magnitude = abs(v)
    if magnitude < TINY:
        return f"{v:.6g}"
    decimals = 6
    if magnitude > 10:
        decimals -= int(math.floor(math.log10(magnitude)))
    text = f"{v:.{max(decimals, 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


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


def stringify(data: Any) -> str:
    """``JSON.stringify(data)`` with Godot's defaults: no spaces, keys sorted, UTF-8 kept."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
