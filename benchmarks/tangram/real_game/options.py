"""The real-game runner's options: what one run plays, and how (``args.py`` reads them from the command line)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks.tangram.real_game.chat_set import SetItem


@dataclass
class Options:
    gaips: Path
    template: Path
    out: Path
    config: Path | None = None
    local_model: bool = False
    fake_llm: bool = False
    turns: int = 4
    games: int = 1
    reload_turn: int | None = None
    turn_timeout: float = 300.0
    step_timeout: float = 60.0
    images_mb: float = 40.0
    chromium: Path = Path("/usr/bin/chromium")
    agent_port: int | None = None
    """Redirect the game's ws://localhost:5000 to this port in the page (5000 taken by something else)."""
    study: Path | None = None
    """Drive this study instead of one config (runner study.py): ``participant`` plays ``games`` of
    their games (None: all of them)."""
    participant: str = "P01"
    games_given: bool = False
    """Whether --games was given (a study's participant otherwise plays all their games)."""
    chat: str = "default"
    """The human's chat lines: plan.py's default ones, promises.py's ("requests"), or a reply set's
    lines, each in its own game ("set": set_run.py)."""
    set_items: tuple[SetItem, ...] = ()
    """With ``chat="set"``: the reply set's items to play, in order."""
