"""How long an endpoint takes to answer a decision, and whether one still fits a deadline.

A slow endpoint (a small model on a CPU, an overloaded server) should give the game its fallback
at once rather than a late answer after the whole deadline: the player waits less, and a server
that keeps working on a request the agent gave up (llama-cpp-python does) is not handed another
one to queue behind it. Pure: the caller supplies every time.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field

PACE_SAMPLES = 8
"""Recent decision calls the estimate is made of: a server that warms up (its prompt cache) or
slows down (another load) is followed within a few calls."""
REMEASURE_AFTER = 2
"""After this many calls in a row skipped, one is sent anyway: the only way to see the endpoint got faster."""
MIN_SAMPLES = 2
"""No call is skipped on one measurement: a first call reads the whole prompt (a cold cache), the
next ones only what changed."""
UNFINISHED_FACTOR = 1.25
"""A call given up after s seconds would have taken longer: it counts as this times s, enough to
put it past the same deadline next time (an exact lower bound would tie with it)."""


@dataclass(frozen=True, slots=True)
class PaceVerdict:
    send: bool
    expected_s: float | None
    """The median of recent decision calls (None: not measured yet)."""
    left_s: float | None


@dataclass
class Pace:
    """Recent decision-call times of one endpoint (calls that asked for a real answer)."""

    samples: deque[float] = field(default_factory=lambda: deque(maxlen=PACE_SAMPLES))
    skipped_in_a_row: int = 0

    def expected(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def answered(self, seconds: float) -> None:
        self.samples.append(seconds)

    def unfinished(self, seconds: float) -> None:
        """A call given up after ``seconds`` (a deadline, a cancel): it would have taken longer, and
        no less than expected (a call given up early shows no endpoint faster than measured)."""
        longer = seconds * UNFINISHED_FACTOR
        expected = self.expected()
        self.samples.append(longer if expected is None else max(longer, expected))

    def verdict(self, left_s: float | None) -> PaceVerdict:
        """Send a call with ``left_s`` seconds to its deadline? Not when recent calls took longer."""
        expected = self.expected()
        if left_s is None or expected is None or expected <= left_s or len(self.samples) < MIN_SAMPLES \
                or self.skipped_in_a_row >= REMEASURE_AFTER:
            self.skipped_in_a_row = 0
            return PaceVerdict(True, expected, left_s)
        self.skipped_in_a_row += 1
        return PaceVerdict(False, expected, left_s)
