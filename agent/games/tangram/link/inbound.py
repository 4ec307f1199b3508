"""Frames from the game as the session takes them in: texts clipped, records made, a broken frame's type guessed."""

from __future__ import annotations

import logging
import math
from typing import Any

from agent.core.images import payload_summary
from agent.games.tangram.protocol import GameFrame

log = logging.getLogger(__name__)

MAX_OBJECTIVE_CHARS = 300
MAX_MESSAGE_CHARS = 2000
"""Longer objectives and chat lines are clipped: they go into every prompt and the transcript."""


def frame_record(frame: GameFrame, size: int) -> dict[str, Any]:
    """A ``frame_in`` record's fields: the frame as the game sent it, images as summaries only."""
    stamp = frame.timestamp
    if isinstance(stamp, str):
        stamp = stamp[:64]
    elif isinstance(stamp, float) and not math.isfinite(stamp):
        stamp = str(stamp)
    data: dict[str, Any] = {"type": frame.type, "bytes": size, "objective": frame.objective,
                            "timestamp": stamp,
                            "state": frame.state.model_dump(exclude={"ignored"}) if frame.state else None}
    if frame.message:
        data["message"] = frame.message
    for key in ("board_img", "drawer_img"):
        value = getattr(frame, key)
        if value is not None:
            data[key] = payload_summary(value)
    if frame.state.ignored:
        data["ignored"] = frame.state.ignored[:20]
        data["ignored_count"] = len(frame.state.ignored)
    return data


def clip(frame: GameFrame, peer: str) -> GameFrame:
    """Bound the free texts a frame carries (they go into prompts, memory and the transcript)."""
    update: dict[str, str] = {}
    for name, limit in (("objective", MAX_OBJECTIVE_CHARS), ("message", MAX_MESSAGE_CHARS)):
        value: str = getattr(frame, name)
        if len(value) > limit:
            log.warning("%s: %s of %d characters clipped to %d", peer, name, len(value), limit)
            value = value[:limit]
        if value is not getattr(frame, name):
            update[name] = value
    return frame.model_copy(update=update) if update else frame


def type_hint(raw: str | bytes) -> str | None:
    """Best guess at a broken frame's type, to know whether the game is waiting for an answer."""
    ends = (raw[:4096], raw[-4096:])
    text = "".join(e if isinstance(e, str) else e.decode("utf-8", "ignore") for e in ends)
    for kind in ("playRequest", "playFeedback", "chatRequest"):
        if f'"{kind}"' in text:
            return kind
    return None
