"""One replay page per session, for the games that offer one; the summary links them.

A game offers replays of its transcripts with a function ``transcript_replay(records, path) -> str``
(the page's HTML) in its module ``agent.games.<game>.replay``; it raises ValueError with one line
when a transcript is not one it can show. The analysis knows no game: it reads the game's name from
the transcript's ``session_start`` and looks the function up by that name.

Each transcript is read once, for its table rows and its page together (:func:`analyse_file`), so a
folder can be spread over processes (``--jobs``): what comes back is rows and a link, never records.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agent.analyze.tables import Tables, TranscriptFile, read_transcript, session_rows
from agent.core.studies.pricing import Price
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


@dataclass(frozen=True)
class FileResult:
    rows: Tables
    link: ReplayLink | None
    skipped: str | None
    """One line when the game offers replays but this transcript got none, and why."""


@cache
def replay_function(game: str) -> ReplayFunction | None:
    """The game's replay function, or None when it offers none (looked up once per game and process)."""
    if game not in available_games():
        return None
    try:
        module = importlib.import_module(f"agent.games.{game}.replay")
    except ImportError:
        return None
    found = getattr(module, "transcript_replay", None)
    return found if callable(found) else None


def page_names(paths: Iterable[Path]) -> list[str]:
    """A page file name per transcript: its own name made safe, numbered when two folders share one."""
    names: list[str] = []
    taken: set[str] = set()
    for path in paths:
        base = re.sub(r"[^A-Za-z0-9=._-]", "_", path.stem)[:MAX_NAME_CHARS] or "session"
        name, n = f"{base}.html", 1
        while name in taken:
            n += 1
            name = f"{base}-{n}.html"
        taken.add(name)
        names.append(name)
    return names


def write_replay(transcript: TranscriptFile, out: Path, name: str) -> tuple[ReplayLink | None, str | None]:
    """Write ``out/replays/<name>`` when the transcript's game offers a replay: (link, None); (None, why)
    when it offers one but this transcript cannot have it; (None, None) when its game offers none."""
    records = transcript.records
    start = next((r for r in records if r.get("kind") == "session_start"), None)
    game = start.get("game") if start is not None else None
    if start is None or not isinstance(game, str):
        return None, None  # no game named: the tables say what they could use
    replay = replay_function(game)
    if replay is None:
        return None, None
    try:
        page = replay(records, transcript.path)
    except ValueError as exc:
        return None, f"{transcript.path.name}: no replay: {exc}"
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(page, encoding="utf-8")
    raw_tags = start.get("tags")
    tags: dict[str, Any] = raw_tags if isinstance(raw_tags, dict) else {}
    session = str(start.get("session") or transcript.path.stem)[:64]
    label = " · ".join(f"{k}={v}" for k, v in sorted(tags.items()))
    return ReplayLink(session, f"{label} · {session}" if label else session, f"{FOLDER}/{name}",
                      sum(1 for r in records if r.get("kind") == "turn_start")), None


def analyse_file(path: Path, name: str, out: Path, prices: Mapping[str, Price]) -> FileResult:
    """One transcript's table rows and replay page (run in a worker process or in-line)."""
    transcript = read_transcript(path)
    rows = session_rows(transcript, prices)
    link, skipped = write_replay(transcript, out, name)
    return FileResult(rows, link, skipped)
