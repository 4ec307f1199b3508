"""Idle time-outs: how long an online participant may show no sign of life on a questionnaire page (or
the consent page) or in a game, judged by the server from the study's database.

A sign of life is their page loaded, answered or saved as they fill it in (``/api/visit``,
``/api/answers``, ``/api/draft``, ``/api/consent``, ``/api/game``), and in a game an AI turn ending
(their move or chat asked for it). The page's own timer only warns them (``warn_s`` before the
limit, with a button that is itself a sign of life); the judgement is :func:`idle_for`'s, made by the
server's sweep (online/public.py) with the clock it is given.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Where = Literal["page", "game"]


@dataclass(frozen=True)
class IdleLimits:
    """The study file's limits (``online.page_timeout_s``, ``game_timeout_s``, ``timeout_warning_s``)."""

    page_s: float | None = None
    game_s: float | None = None
    warn_s: float = 60.0

    def limit(self, where: Where) -> float | None:
        return self.page_s if where == "page" else self.game_s

    @property
    def any(self) -> bool:
        return self.page_s is not None or self.game_s is not None


def parse_stamp(stamp: str) -> datetime:
    """A stored time (``2026-11-29T09:23:10.722512Z``) as an aware datetime."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def idle_for(limits: IdleLimits, where: Where, since: str, now: datetime) -> str | None:
    """Why a participant whose last sign of life was at ``since`` (a stored time), ``where`` they are
    now, is timed out at ``now``; None while within the limit (or there is no limit there)."""
    limit = limits.limit(where)
    if limit is None:
        return None
    idle = (now - parse_stamp(since)).total_seconds()
    if idle <= limit:
        return None
    what = "a questionnaire page" if where == "page" else "a game"
    return f"idle {idle:.0f} s on {what} (the study allows {limit:g} s)"
