"""Where a study's transcripts go, and how its database names them so that they move together.

A study's games write their transcripts into one folder beside the study's database,
``<database folder>/<database name without .db>-transcripts/`` (``study.db`` beside
``study-transcripts/``): two studies, or a study and its pilots, never share a folder, and whoever
copies or moves the study's folder takes its transcripts along. The database's ``games.transcript``
holds each path relative to the database's folder (``study-transcripts/2026...jsonl``), so the
folder may be moved anywhere; a transcript outside that folder is kept as an absolute path, and
absolute paths (databases written before this rule) stay as they are.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["resolve_transcript", "stored_transcript", "transcripts_dir"]

SUFFIX = "-transcripts"


def transcripts_dir(store: Path) -> Path:
    """The study's transcript folder: ``<store stem>-transcripts`` beside the database ``store``."""
    return Path(os.path.abspath(store)).parent / f"{store.stem}{SUFFIX}"


def stored_transcript(store: Path, transcript: Path | None) -> str | None:
    """What ``games.transcript`` holds for ``transcript``: the path relative to the database's
    folder (with ``/``) when the file is inside that folder, else the absolute path."""
    if transcript is None:
        return None
    folder = Path(os.path.abspath(store)).parent
    path = Path(os.path.abspath(transcript))
    if path.is_relative_to(folder):
        return path.relative_to(folder).as_posix()
    return str(path)


def resolve_transcript(store: Path, stored: str | None) -> Path | None:
    """The file ``games.transcript`` names, for the database at ``store`` (wherever it is now): an
    absolute path as it is; a relative one against the database's folder. A database written before
    transcripts went beside it may hold a path relative to the folder the agent ran in: when the file
    is not beside the database but is there (relative to the current folder), that one."""
    if not stored:
        return None
    path = Path(stored)
    if path.is_absolute():
        return path
    beside = Path(os.path.abspath(store)).parent / path
    if not beside.exists() and path.exists():
        return path.resolve()
    return beside
