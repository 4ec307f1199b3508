"""The turn's clock arithmetic: pure functions of times the caller passes in (no clock is read here).

Every time is a float in the session's clock (the event loop's ``time()`` in a running agent, a
fake clock in tests); only differences matter.
"""

from __future__ import annotations

from dataclasses import dataclass

ANIMATION_S = 0.5
"""The game tweens every play for this long before it reports (GAME_FACTS). A ``finish`` or another
``play`` sent meanwhile is applied to the half-moved piece, so neither goes out while a play's
feedback is outstanding."""
ANIMATION_MARGIN_S = 0.1
"""Added to the animation when it is waited out without its feedback: the game's frame timing."""
FEEDBACK_GRACE_S = 1.5
"""When the turn's time is up (or a bad frame ends it) while a play's feedback is outstanding, wait
this long at most for that feedback before finishing: the animation, a frame, two PNGs."""
FINISH_MARGIN_S = 0.3
"""Kept free at the very end of the turn to send the last chat line and ``finish``."""
SEND_MARGIN_S = FEEDBACK_GRACE_S + FINISH_MARGIN_S
"""The turn's work (deciding, sending plays) stops this long before the deadline. A play can only
go out before then, so its feedback (waited for up to FEEDBACK_GRACE_S) and the ``finish`` still
fit within ``turn.deadline``, worst case."""
MIN_WORK_S = 0.2
FALLBACK_RESERVE_S = 3.0
"""A player's first decision must be ready this long before the turn's end, leaving time for a
fallback decision (the planner), the repair and the game's feedback."""
FALLBACK_RESERVE_SHARE = 0.4
"""With short deadlines the reserve is this share of the work time instead (tests, impatient studies)."""


@dataclass(frozen=True, slots=True)
class TurnTimes:
    """The fixed instants of one turn, from the arrival of its ``playRequest``."""

    started: float
    ends_at: float
    """``finish`` must be out by then: the arrival plus ``turn.deadline``."""
    work_until: float
    """Deciding and sending plays stop here (SEND_MARGIN_S before the end)."""
    decide_by: float
    """A player's decision should be ready by then (the view's ``decide_by``)."""

    @classmethod
    def of(cls, started: float, deadline: float) -> TurnTimes:
        work_until = started + max(MIN_WORK_S, deadline - SEND_MARGIN_S)
        reserve = min(FALLBACK_RESERVE_S, FALLBACK_RESERVE_SHARE * (work_until - started))
        return cls(started, started + deadline, work_until, work_until - reserve)

    def time_for_a_play(self, now: float) -> bool:
        """A play sent now can be seen through before the deadline: its animation, its feedback
        (waited for up to FEEDBACK_GRACE_S) and the finish."""
        return now + FEEDBACK_GRACE_S + FINISH_MARGIN_S <= self.ends_at

    def settle_until(self, now: float, quiet_at: float) -> float:
        """How long an ending turn waits for an outstanding feedback: FEEDBACK_GRACE_S at most and
        never past the finish margin, but never less than the animation itself (``quiet_at``)."""
        return max(min(now + FEEDBACK_GRACE_S, self.ends_at - FINISH_MARGIN_S), quiet_at)
