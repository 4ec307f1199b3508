"""What a player asks before each LLM call when what its calls may cost is capped.

An online study caps the LLM spend per participant and for the whole study; its running totals
(agent/core/studies/spend.py) answer from memory, so asking before every call costs a few
dictionary look-ups. Once the guard refuses, the player stops calling the model for the rest of
its session and its offline fallback plays: the guard is a reason not to send, never an error.
"""

from __future__ import annotations

from typing import Protocol


class SpendGuard(Protocol):
    """Consulted before each LLM call of one session's player."""

    def refusal(self) -> str | None:
        """Why no more LLM calls may be sent (one line for the log and the transcript), or None
        while under every cap."""
        ...
