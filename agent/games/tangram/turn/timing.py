"""The turn's clock arithmetic: pure functions of times the caller passes in (no clock is read here).

Every time is a float in the session's clock (the event loop's ``time()`` in a running agent, a
fake clock in tests); only differences matter.

Two promises meet here. The game must never get a ``finish`` (or another ``play``) while a play's
``playFeedback`` is outstanding: it would check the half-moved piece and land it unchecked
(GAME_FACTS). And the partner must not be left waiting past ``turn.deadline``. The first always
wins; the second is kept by *planning*: the time the game takes to land a play is learnt from this
connection's own plays (:class:`LandingTimes`) and reserved before a play is started
(:meth:`TurnTimes.time_for_a_play`), so a play that could not land before the deadline is never
started. Only a game that turns slower than it has been can make a turn end late, and then by how
much slower it is, bounded by :data:`FEEDBACK_LOST_S`.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

ANIMATION_S = 0.5
"""The game tweens every play for this long before it reports (GAME_FACTS)."""
ANIMATION_MARGIN_S = 0.1
"""Added to the animation when it is waited out without its feedback: the game's frame timing."""
FINISH_MARGIN_S = 0.3
"""Kept free at the very end of the turn to send the last chat line and ``finish``."""
MIN_WORK_S = 0.2

SLOW_LANDING_S = 6.0
"""What a play is assumed to take from ``play`` to its ``playFeedback`` before this connection has
shown its own times: the slow case of the real game (2.3–4.8 s a play on a 2-core machine rendering
in software, 4–6 s under load; the simulator answers in about 0.5 s)."""
FIRST_LANDING_SHARE = 0.5
"""While the slow-case assumption stands in for measurements, it takes at most this share of
``turn.deadline``: a short deadline (a test, an impatient study) still gets a first play, without
which the connection would never measure anything. Learnt times are reserved in full."""
LANDING_QUANTILE = 0.9
"""The learnt landing time is this quantile of the observed times (nearest rank)..."""
LANDING_HEADROOM = 1.25
"""...times this, so a play a little slower than most still lands before the deadline."""
LANDING_SAMPLES = 20
"""The newest observed times kept per connection (a game that slows down is followed)."""
MIN_LANDING_SAMPLES = 3
"""Until this many plays were observed, the reserve never drops below :data:`SLOW_LANDING_S`."""
MIN_LANDING_S = ANIMATION_S + ANIMATION_MARGIN_S
"""The reserve is never shorter than the animation and a frame."""
MAX_LANDING_S = 20.0
"""Nor longer than this: one freak observation must not stop every later play of the session."""
FEEDBACK_LOST_S = 30.0
"""The hard cap. A play's feedback is waited for this long after the play went out (five times the
slowest seen), whatever the deadline says; only then is it taken as lost (the game dropped it, or
stopped answering with its socket still up) and the turn finishes, so that the partner is released
(a closed connection ends the wait at once: nothing can be sent then)."""

FALLBACK_RESERVE_S = 3.0
"""A player's first decision must be ready this long before the turn's work ends, leaving time for
a fallback decision (the planner) and the repair."""
FALLBACK_RESERVE_SHARE = 0.4
"""With short deadlines the reserve is this share of the work time instead (tests, impatient studies)."""


def quantile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``values`` (not empty): an observed value, never an
    interpolation, so two slow plays in ten are not averaged away."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


@dataclass(slots=True)
class LandingTimes:
    """How long this connection's game takes to land a play (``play`` → ``playFeedback``), learnt
    from its own plays. One per session; pure arithmetic on the times it is given."""

    samples: deque[float] = field(default_factory=lambda: deque(maxlen=LANDING_SAMPLES))

    def observe(self, seconds: float) -> None:
        """One play's time from being sent to its feedback (a lost feedback: the time waited)."""
        if math.isfinite(seconds) and seconds >= 0:
            self.samples.append(seconds)

    def reserve(self, deadline: float) -> float:
        """Seconds to keep free after a play is started, for it to land, for a turn of ``deadline``."""
        seen = list(self.samples)
        learnt = LANDING_HEADROOM * quantile(seen, LANDING_QUANTILE) if seen else 0.0
        if len(seen) < MIN_LANDING_SAMPLES:  # too few to trust: the slow case stands
            learnt = max(learnt, min(SLOW_LANDING_S, FIRST_LANDING_SHARE * deadline))
        return min(MAX_LANDING_S, max(MIN_LANDING_S, learnt))


@dataclass(frozen=True, slots=True)
class TurnTimes:
    """The fixed instants of one turn, from the arrival of its ``playRequest``."""

    started: float
    ends_at: float
    """``finish`` should be out by then: the arrival plus ``turn.deadline``."""
    work_until: float
    """Deciding stops here: the end less the landing reserve and the finish margin."""
    decide_by: float
    """A player's decision should be ready by then (the view's ``decide_by``)."""

    @classmethod
    def of(cls, started: float, deadline: float, landing: float) -> TurnTimes:
        """The turn's instants when a play takes ``landing`` seconds to land (:meth:`LandingTimes.reserve`)."""
        work_until = started + max(MIN_WORK_S, deadline - landing - FINISH_MARGIN_S)
        reserve = min(FALLBACK_RESERVE_S, FALLBACK_RESERVE_SHARE * (work_until - started))
        return cls(started, started + deadline, work_until, work_until - reserve)

    def time_for_a_play(self, now: float, landing: float) -> bool:
        """A play started now lands (``landing``: the reserve learnt so far) and the finish goes out
        before the deadline. Every play counts: the move, a correction, a re-send, the move back."""
        return now + landing + FINISH_MARGIN_S <= self.ends_at + 1e-9  # the work time's own end counts
