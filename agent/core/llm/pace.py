"""How long an endpoint takes to answer a decision, and whether one still fits a deadline.

A slow endpoint (a small model on a CPU, an overloaded server) should give the game its fallback
at once rather than a late answer after the whole deadline: the player waits less, and a server
that keeps working on a request the agent gave up (llama-cpp-python does) is not handed another
one to queue behind it. Pure: the caller supplies every time.

An endpoint that *missed* its deadline on ``MISSES_TO_BENCH`` decisions in a row (each call still
unanswered when its turn's time ran out) is *benched*: no decision is sent to it any more, so no turn
waits out its deadline for it, until a measurement made in the background (the client sends the
last decision's request with nobody waiting, :meth:`LLMClient._remeasure`) shows it answers within
the time a decision had (:meth:`Pace.remeasured`).
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
MISSES_TO_BENCH = 2
"""Decisions in a row given up at their deadline before the endpoint is benched."""
UNFINISHED_FACTOR = 1.25
"""A call given up after s seconds would have taken longer: it counts as this times s, enough to
put it past the same deadline next time (an exact lower bound would tie with it)."""


@dataclass(frozen=True, slots=True)
class PaceVerdict:
    send: bool
    expected_s: float | None
    """The median of recent decision calls (None: not measured yet)."""
    left_s: float | None
    benched: bool = False
    """Not sent because the endpoint is benched (it missed MISSES_TO_BENCH deadlines in a row)."""


@dataclass
class Pace:
    """Recent decision-call times of one endpoint (calls that asked for a real answer)."""

    samples: deque[float] = field(default_factory=lambda: deque(maxlen=PACE_SAMPLES))
    chat_samples: deque[float] = field(default_factory=lambda: deque(maxlen=PACE_SAMPLES))
    """Recent chat replies' times (a chat's prompt and answer are not a decision's): kept apart, never
    used to skip a decision."""
    skipped_in_a_row: int = 0
    missed_in_a_row: int = 0
    budget_s: float | None = None
    """While benched: the time the decisions it missed had (None: not benched)."""

    @property
    def benched(self) -> bool:
        return self.budget_s is not None

    def expected(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def answered(self, seconds: float) -> None:
        self.samples.append(seconds)
        self.missed_in_a_row = 0

    def unfinished(self, seconds: float, *, missed: bool = False) -> None:
        """A call given up after ``seconds`` (a deadline, a cancel): it would have taken longer, and
        no less than expected (a call given up early shows no endpoint faster than measured).
        ``missed``: it was given up at its deadline, with its turn's time all spent on it."""
        longer = seconds * UNFINISHED_FACTOR
        expected = self.expected()
        self.samples.append(longer if expected is None else max(longer, expected))
        if missed:
            self.missed_in_a_row += 1
            if self.missed_in_a_row >= MISSES_TO_BENCH and self.budget_s is None:
                self.budget_s = seconds

    def remeasured(self, seconds: float) -> bool:
        """A measurement made with nobody waiting answered in ``seconds``: back in play when that fits
        the time the missed decisions had (its samples start again from it); True if so."""
        if self.budget_s is None:
            return True
        if seconds > self.budget_s:
            self.samples.append(seconds)
            return False
        self.samples.clear()
        self.samples.append(seconds)
        self.budget_s, self.missed_in_a_row, self.skipped_in_a_row = None, 0, 0
        return True

    def chat_answered(self, seconds: float) -> None:
        self.chat_samples.append(seconds)

    def chat_unfinished(self, seconds: float) -> None:
        """A chat reply given up after ``seconds`` (its wait ran out): it would have taken longer."""
        self.chat_samples.append(seconds * UNFINISHED_FACTOR)

    def answers_within(self, seconds: float) -> bool:
        """Whether a chat reply is worth sending with ``seconds`` to wait: never while benched; else
        when the recent chat replies, or the recent decisions, took no longer (the faster of the two:
        a model that answers chats in time answers the next one although a decision took longer, and
        one whose chats were slow is asked again once its decisions show it is fast). With no chat
        measured, one decision that took longer is reason enough (a chat has no fallback turn to
        lose, only the partner's wait)."""
        if self.benched:
            return False
        medians = [statistics.median(s) for s in (self.chat_samples, self.samples) if s]
        return not medians or min(medians) <= seconds

    def verdict(self, left_s: float | None) -> PaceVerdict:
        """Send a call with ``left_s`` seconds to its deadline? Not when recent calls took longer,
        and never while benched."""
        expected = self.expected()
        if self.benched and left_s is not None:
            self.skipped_in_a_row += 1
            return PaceVerdict(False, expected, left_s, benched=True)
        if left_s is None or expected is None or expected <= left_s or len(self.samples) < MIN_SAMPLES \
                or self.skipped_in_a_row >= REMEASURE_AFTER:
            self.skipped_in_a_row = 0
            return PaceVerdict(True, expected, left_s)
        self.skipped_in_a_row += 1
        return PaceVerdict(False, expected, left_s)
