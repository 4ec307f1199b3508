"""The "thinking" chat line: said once in an AI turn when no play has gone out ``turn.thinking_after_s``
into it, so the partner knows a slow model is at work (the game shows nothing else meanwhile).

The text comes from ``thinking.j2`` in the config's prompt folder, or the shipped one when that
folder has none (a folder written before the line existed). It is rendered once, when the server
is made, and checked like every template (StrictUndefined): a broken one stops the start.
"""

from __future__ import annotations

from agent.core.prompts import load_prompts
from agent.core.resources import prompts_dir as shipped_prompts
from agent.games.tangram.config import Config

THINKING_TEMPLATE = "thinking"
MAX_THINKING_CHARS = 200
"""The line is clipped to this: the game's chat box, not a paragraph."""


def thinking_context(config: Config) -> dict[str, int]:
    """The template's variables."""
    return {"after_s": round(config.turn.thinking_after_s)}


def thinking_line(config: Config) -> str | None:
    """The line to say, or None when ``turn.thinking_line`` is off (or the template renders empty)."""
    if not config.turn.thinking_line:
        return None
    folder = config.prompts_dir
    if not (folder / f"{THINKING_TEMPLATE}.j2").is_file():
        folder = shipped_prompts("tangram")
    context = thinking_context(config)
    text = load_prompts(folder, context, [THINKING_TEMPLATE]).render(THINKING_TEMPLATE, context)
    return " ".join(text.split())[:MAX_THINKING_CHARS] or None
