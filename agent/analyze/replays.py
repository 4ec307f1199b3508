"""One replay page per session, for the games that offer one; the summary links them.

A game offers replays of its transcripts with a function ``transcript_replay(records, path) -> str``
(the page's HTML) in its module ``agent.games.<game>.replay``; it raises ValueError with one line
when a transcript is not one it can show. The analysis knows no game: it reads the game's name from
the transcript's ``session_start`` and looks the function up by that name.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.analyze.tables import Transcript
from agent.games import available_games

ReplayFunction = Callable[[Sequence[Mapping[str, Any]], Path], str]
FOLDER = "replays"
MAX_NAME_CHARS = 120


@dataclass(frozen=True)
class ReplayLink:
    session: str
    label: str
    """The session named by its tags (then its id), as the page names it."""
    href: str
    """Relative to the summary page."""
    turns: int


@dataclass
class ReplayWriter:
    """Writes each transcript's replay into ``out/replays/`` as the transcripts are read."""

    out: Path
    links: list[ReplayLink] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    _hooks: dict[str, ReplayFunction | None] = field(default_factory=dict)
    _names: set[str] = field(default_factory=set)

    def hook(self, game: str) -> ReplayFunction | None:
        """The game's replay function, or None when the game offers none (looked up once per game)."""
        if game not in self._hooks:
            found: ReplayFunction | None = None
            if game in available_games():
                try:
                    module = importlib.import_module(f"agent.games.{game}.replay")
                except ImportError:
                    module = None
                candidate = getattr(module, "transcript_replay", None)
                found = candidate if callable(candidate) else None
            self._hooks[game] = found
        return self._hooks[game]

    def add(self, transcript: Transcript) -> ReplayLink | None:
        records = transcript.records
        start = next((r for r in records if r.get("kind") == "session_start"), None)
        game = start.get("game") if start is not None else None
        if start is None or not isinstance(game, str):
            return None  # not a session this analysis can name a game for: the tables say so already
        replay = self.hook(game)
        if replay is None:
            return None
        try:
            page = replay(records, transcript.path)
        except ValueError as exc:
            self.skipped.append(f"{transcript.path.name}: no replay: {exc}")
            return None
        folder = self.out / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        name = self._unique(transcript.path.stem)
        (folder / name).write_text(page, encoding="utf-8")
        raw_tags = start.get("tags")
        tags: dict[str, Any] = raw_tags if isinstance(raw_tags, dict) else {}
        session = str(start.get("session") or transcript.path.stem)[:64]
        label = " · ".join(f"{k}={v}" for k, v in sorted(tags.items()))
        link = ReplayLink(session, f"{label} · {session}" if label else session, f"{FOLDER}/{name}",
                          sum(1 for r in records if r.get("kind") == "turn_start"))
        self.links.append(link)
        return link

    def _unique(self, stem: str) -> str:
        """A file name for the page: the transcript's, made safe, numbered if two folders share it."""
        base = re.sub(r"[^A-Za-z0-9=._-]", "_", stem)[:MAX_NAME_CHARS] or "session"
        name, n = f"{base}.html", 1
        while name in self._names:
            n += 1
            name = f"{base}-{n}.html"
        self._names.add(name)
        return name
