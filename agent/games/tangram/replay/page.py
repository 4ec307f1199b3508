"""The replay page: one self-contained HTML file (SVG boards, the kept pictures inline, no network).

Rendered with Jinja2 (autoescape on, StrictUndefined) from :mod:`.model`'s steps and :mod:`.board`'s
shapes. Pictures the model got are read only when ``transcripts.images`` kept them next to the
transcript (``<name>.files/<sha>.png``), each once per page, within :data:`MAX_IMAGE_BYTES`.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template, select_autoescape

from agent.games.tangram.replay.board import board_picture, drawer_picture
from agent.games.tangram.replay.model import Replay, Step

TEMPLATE = "replay_page.html.j2"
MAX_IMAGE_BYTES = 4 * 1024 * 1024
"""One picture larger than this is named, not shown."""
MAX_IMAGES_TOTAL = 40 * 1024 * 1024
"""Pictures shown per page: past this the rest are named, not shown (a 20-turn LLM game keeps a few MB)."""
IMAGE_TYPES = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"RIFF": "image/webp"}


@cache
def _template() -> Template:
    env = Environment(loader=FileSystemLoader(str(Path(__file__).parent)), undefined=StrictUndefined,
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template(TEMPLATE)


def load_images(replay: Replay, folder: Path | None) -> dict[str, str]:
    """sha256 -> data URI of each picture the model got that is kept in ``folder`` (the transcript's)."""
    if folder is None:
        return {}
    out: dict[str, str] = {}
    total = 0
    root = folder.resolve()
    for step in replay.steps:
        for call in step.llm:
            for image in call["images"]:
                sha, name = image.get("sha256"), image.get("file")
                if not sha or not name or sha in out:
                    continue
                path = (folder / name).resolve()
                if not path.is_relative_to(root) or not path.is_file():  # a name never leads out of the folder
                    continue
                size = path.stat().st_size
                if size > MAX_IMAGE_BYTES or total + size > MAX_IMAGES_TOTAL:
                    continue
                data = path.read_bytes()
                mime = next((m for magic, m in IMAGE_TYPES.items() if data.startswith(magic)), None)
                if mime is None:
                    continue
                total += size
                out[sha] = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return out


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return ""
    m, s = divmod(max(0.0, seconds), 60)
    return f"{int(m)}:{s:04.1f}"


def human_seconds(step: Step, replay: Replay) -> float | None:
    """How long a human's move took: from the AI turn before it ending (or the session's start) to
    the playRequest that closed it."""
    if step.kind != "human" or step.turn is None or step.t is None:
        return None
    before = replay.steps[step.index - 1] if step.index >= 1 else None
    since = before.ended_t if before is not None and before.kind == "ai" else 0.0 if step.index == 1 else None
    return round(step.t - since, 3) if since is not None else None


def step_view(step: Step, replay: Replay) -> dict[str, Any]:
    dim = step.kind == "human"  # the game's human-turn highlight: the moved piece in full colour
    plays = []
    for i, play in enumerate(step.plays):
        # Plays and feedbacks come in pairs, in order: the board after each play, and what collided.
        after = step.feedback[i] if i < len(step.feedback) else None
        placed = after.on_board.get(play["piece"]) if after is not None else None
        plays.append({**play, "collisions": list(placed.collisions) if placed is not None else None,
                      "landed": after is not None,
                      "board": board_picture(after, [play["piece"]]) if after is not None and len(step.plays) > 1
                      and i < len(step.plays) - 1 else None})
    return {"index": step.index, "anchor": step.anchor, "label": step.label, "kind": step.kind, "turn": step.turn,
            "clock": _clock(step.t), "board": board_picture(step.board, step.moved, dim_others=dim),
            "drawer": drawer_picture(step.board, step.moved, dim_others=dim), "moves": step.moves,
            "moved": step.moved, "put_back": step.put_back,
            "chats": [{"who": c.who, "text": c.text, "clock": _clock(c.t), "reply_seconds": c.reply_seconds,
                       "outcome": c.outcome} for c in step.chats],
            "decisions": step.decisions, "plays": plays, "events": step.events, "llm": step.llm,
            "outcome": step.outcome, "seconds": step.seconds, "objective": step.objective,
            "state_seen": step.state_seen, "on_board": len(step.board.on_board),
            "human_seconds": human_seconds(step, replay)}


def _started(start: Mapping[str, Any]) -> str:
    t = start.get("t")
    if isinstance(t, int | float) and not isinstance(t, bool):
        try:
            return dt.datetime.fromtimestamp(float(t), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        except (OverflowError, ValueError, OSError):
            return ""
    return ""


def render_page(replay: Replay, *, source: str, images: Mapping[str, str] | None = None) -> str:
    """The HTML page of ``replay``; ``source`` names the transcript file (its name only is shown)."""
    start = replay.start
    meta = {k: str(start.get(k))[:80] for k in ("player_kind", "model", "agent_version", "revision")
            if start.get(k) is not None}
    ai = [s for s in replay.steps if s.kind == "ai"]
    return _template().render(
        title=replay.title, session=replay.session, tags=sorted(replay.tags.items()), meta=meta,
        source=Path(source).name, started=_started(start), duration=_clock(replay.last_t),
        end_reason=replay.end_reason, truncated=replay.truncated, notes=replay.notes,
        steps=[step_view(s, replay) for s in replay.steps], ai_turns=len(ai),
        images=dict(images or {}))
