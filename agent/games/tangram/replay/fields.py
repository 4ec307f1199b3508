"""Reading a transcript record's fields for the replay: a value of the wrong type is left out, never
trusted; texts are clipped. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MAX_TEXT = 4000
"""Free texts (chat lines, reasoning, model replies, prompts) are clipped to this on the page."""


def num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def clip(value: Any, limit: int = MAX_TEXT) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= limit else value[: limit - 1] + "…"


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def point(value: Any) -> tuple[float, float] | None:
    """A position as the transcript stores it: ``[x, y]`` (the normalised state)."""
    if isinstance(value, list | tuple) and len(value) == 2:
        x, y = num(value[0]), num(value[1])
        if x is not None and y is not None:
            return (x, y)
    return None


def prompt_text(messages: Any) -> str | None:
    """The last user text sent (the turn's prompt), clipped; the system prompt is not repeated."""
    if not isinstance(messages, list):
        return None
    users = [m.get("text") for m in messages if isinstance(m, dict) and m.get("role") == "user"
             and isinstance(m.get("text"), str)]
    return clip(users[-1]) if users else None


def fmt_pose(value: Any) -> str:
    if not isinstance(value, dict):
        return "?"
    x, y, rot = num(value.get("x")), num(value.get("y")), num(value.get("rotation"))
    name = str(value.get("piece"))[:20]
    if x is None or y is None or rot is None:
        return name
    return f"{name} at ({x:.1f}, {y:.1f}) turned {rot:.0f}°"


def event_line(kind: Any, r: Mapping[str, Any]) -> str | None:
    """One readable line for the other records a step shows; None for those it does not."""
    match kind:
        case "thinking":
            after = num(r.get("after_s"))
            return f"said the thinking line {after:.1f} s into the turn" if after is not None else "thinking line"
        case "repair":
            if r.get("proposed") == r.get("repaired"):
                return None  # checked and left as it was: nothing to tell
            return (f"repaired {fmt_pose(r.get('proposed'))} to {fmt_pose(r.get('repaired'))}"
                    f" ({clip(r.get('reason'), 200) or 'no reason'})")
        case "salvage":
            return (f"salvaged the model's {clip(r.get('purpose'), 20)} answer ({clip(r.get('salvage'), 40)}): "
                    f"said {clip(r.get('said'), 200)}; played {clip(r.get('played'), 200)}")
        case "reask":
            sent = "re-asked" if r.get("sent") else "could not re-ask in time"
            return f"{sent}: {clip(r.get('problem'), 40)} ({clip(r.get('detail'), 200)})"
        case "stale_feedback":
            return f"the game reported collisions our geometry does not see for {clip(r.get('piece'), 20)}: sent again"
        case "late_feedback":
            return "feedback of the last play arrived while the turn was ending"
        case "landing":
            seconds, reserve = num(r.get("seconds")), num(r.get("reserve_s"))
            if seconds is None:
                return None
            return f"the game answered the play after {seconds:.1f} s" + (
                f" (now {reserve:.1f} s reserved for a play to land)" if reserve is not None else "")
        case "feedback_lost":
            waited = num(r.get("waited_s"))
            return "no feedback for the last play" + (f" after {waited:.0f} s" if waited is not None else "") + \
                ": taken as lost, turn finished"
        case "unreadable_request":
            return f"unreadable playRequest ({clip(r.get('reason'), 200)}), answered with finish"
        case "game_error":
            return f"the game reported an error: {clip(r.get('message'), 300)}"
        case "error":
            return f"agent error in {clip(r.get('where'), 20)}: {clip(r.get('error'), 300)}"
        case "bad_frame":
            return f"unreadable frame from the game: {clip(r.get('reason'), 200)}"
        case "build_mismatch":
            return f"the game's pieces differ from the agent's table: {clip(r.get('detail'), 300)}"
        case "image_error":
            return f"{clip(r.get('image'), 20)} picture left out of the prompt: {clip(r.get('reason'), 200)}"
        case "guard":
            return f"guard replaced {clip(r.get('model_choice'), 200)} by {clip(r.get('replacement'), 200)}"
        case "console_mode":
            return f"console: {clip(r.get('who'), 40)} switched to {clip(r.get('mode'), 40)}"
        case "intervention":
            return (f"console: {clip(r.get('who'), 40)} {clip(r.get('action'), 40)}"
                    + (f" ({clip(r.get('final'), 300)})" if isinstance(r.get("final"), str) else ""))
    return None

