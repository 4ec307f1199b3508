"""How long the simulated game takes to answer a ``play`` with its ``playFeedback``.

The game tweens a play for 0.5 s, waits a frame, reads the overlaps, then captures and encodes two
PNGs before it sends the feedback. In the simulator that takes the tween and one physics step
(about 0.52 s). The real game, rendering in software on a 2-core machine at 2–3 frames a second,
took 2.3–4.8 s for every play (GAME_FACTS, "Seen in the real game"), 4–6 s under load. A feedback
delay makes the simulator that slow: a fixed time, a range (each play draws its own time,
uniformly, from a seeded generator), or a preset.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

MAX_FEEDBACK_DELAY_S = 120.0
"""A longer delay is refused: no game takes minutes to answer, and a run would look hung."""


@dataclass(frozen=True, slots=True)
class FeedbackDelay:
    """Seconds from a play's arrival to its feedback: ``low`` to ``high`` (equal: a fixed time)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low < 0 or self.high < self.low:
            raise ValueError(f"feedback delay {self.low}-{self.high}: need 0 <= low <= high")
        if self.high > MAX_FEEDBACK_DELAY_S:
            raise ValueError(f"feedback delay {self.high:g} s is over {MAX_FEEDBACK_DELAY_S:g} s")

    def sample(self, rng: random.Random) -> float:
        return self.low if self.high == self.low else rng.uniform(self.low, self.high)

    def describe(self) -> str:
        return f"{self.low:g} s" if self.high == self.low else f"{self.low:g}-{self.high:g} s"


PRESETS: dict[str, FeedbackDelay] = {
    # The real game's play -> playFeedback times measured on a 2-core machine (software rendering).
    "real": FeedbackDelay(2.3, 4.8),
    # The same machine under load (the game and a local model sharing the 2 cores).
    "loaded": FeedbackDelay(4.0, 6.0),
}


def parse_feedback_delay(text: str) -> FeedbackDelay:
    """``"0.5"``, ``"2.3-4.8"`` (or ``"2.3:4.8"``) or a preset name (``"real"``, ``"loaded"``)."""
    spec = text.strip().lower()
    if spec in PRESETS:
        return PRESETS[spec]
    low, sep, high = spec.replace(":", "-").partition("-")
    try:
        lo = float(low)
        hi = float(high) if sep else lo
    except ValueError:
        raise ValueError(f"feedback delay {text!r}: give seconds (0.5), a range (2.3-4.8) or a preset "
                         f"({', '.join(PRESETS)})") from None
    return FeedbackDelay(lo, hi)
