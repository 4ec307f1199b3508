"""Replays of tangram sessions: one self-contained HTML page per transcript, for a study's review.

``python -m agent.analyze`` finds :func:`transcript_replay` through the game's ``replay`` module
(any game may offer one); ``python -m agent.games.tangram.replay FILE`` makes one page on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.games.tangram.replay.model import ReplayError, build_replay
from agent.games.tangram.replay.page import load_images, render_page

__all__ = ["ReplayError", "transcript_replay"]


def transcript_replay(records: Sequence[Mapping[str, Any]], path: Path) -> str:
    """The replay page of the transcript at ``path`` whose records are ``records`` (file order).

    Raises :class:`ReplayError` (a ValueError) with one line when it is not a tangram transcript
    this replay can show. Pictures kept next to the transcript are read from its folder.
    """
    replay = build_replay(records)
    return render_page(replay, source=path.name, images=load_images(replay, path.parent))
