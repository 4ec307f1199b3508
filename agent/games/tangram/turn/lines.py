"""The words of the turn's own chat lines (ran out of time, put the piece back, could not read ...).

The turn machine (:mod:`agent.games.tangram.turn`) decides *which* line a turn ends with; the words
come from ``turn_lines.j2`` in the config's prompt folder, or the shipped one when that folder has
none (a folder written before the lines were templates). The template is loaded and every line
rendered once when the server is made (StrictUndefined): a broken or empty line stops the start,
not a participant's turn. Rendering afterwards is pure (the template is cached, nothing is read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent.core.prompts import PromptError, PromptSet, load_prompts
from agent.core.resources import prompts_dir as shipped_prompts
from agent.games.tangram.config import Config
from agent.games.tangram.turn.state import LINE_NAMES, LineName

TURN_LINES_TEMPLATE = "turn_lines"
MAX_LINE_CHARS = 300
"""A line is clipped to this: the game's chat box, not a paragraph."""
SAMPLE = {"line": LINE_NAMES[0], "piece": "Green", "reason": "There was no room for Green near (50, 50).", "lang": "en"}
LANGUAGES = ("en", "pt")
"""The languages the shipped template speaks (``lang``); a folder's own template may speak only English."""


@dataclass(frozen=True)
class TemplateLines:
    """:class:`agent.games.tangram.turn.state.TurnLines` from a checked template."""

    prompts: PromptSet

    def __call__(self, line: LineName, /, *, piece: str = "", reason: str = "", lang: str = "en") -> str:
        text = self.prompts.render(TURN_LINES_TEMPLATE, {"line": line, "piece": piece, "reason": reason, "lang": lang})
        return " ".join(text.split())[:MAX_LINE_CHARS]


def load_turn_lines(folder: Path) -> TemplateLines:
    """The lines of ``folder``'s ``turn_lines.j2``; :class:`PromptError` when one renders empty."""
    lines = TemplateLines(load_prompts(folder, SAMPLE, [TURN_LINES_TEMPLATE]))
    for name in LINE_NAMES:
        for lang in LANGUAGES:
            if not lines(name, piece=SAMPLE["piece"], reason=SAMPLE["reason"], lang=lang):
                raise PromptError(f"template {folder / (TURN_LINES_TEMPLATE + '.j2')}: the line {name!r} "
                                  f"is empty ({lang})")
    return lines


def turn_lines(config: Config) -> TemplateLines:
    """The config's lines: its prompt folder's template, or the shipped one if it has none."""
    folder = config.prompts_dir
    if not (folder / f"{TURN_LINES_TEMPLATE}.j2").is_file():
        folder = shipped_prompts("tangram")
    return load_turn_lines(folder)


def shipped_turn_lines() -> TemplateLines:
    """The shipped lines (tests, tools without a config)."""
    return load_turn_lines(shipped_prompts("tangram"))
