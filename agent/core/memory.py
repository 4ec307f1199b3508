"""The conversation memory a session keeps: chat lines and the plays, shared by chat and play.

What the player asks for in chat shapes the next play, and what the agent played is remembered,
so both paths read and write this one object. It is bounded in both directions: only the last N
entries stay, and each is clipped to ``max_chars``, because every entry goes into every later
prompt (one 20 MB reply kept whole made every later request on its connection 31 MB).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

Speaker = Literal["player", "agent", "event"]

MAX_ENTRY_CHARS = 1000
"""Longest text one entry keeps: a long chat line or a move's explanation fits, a flood does not."""


@dataclass(frozen=True, slots=True)
class Entry:
    speaker: Speaker
    text: str


@dataclass
class Memory:
    max_entries: int = 20
    max_chars: int = MAX_ENTRY_CHARS
    entries: deque[Entry] = field(init=False)

    def __post_init__(self) -> None:
        self.entries = deque(maxlen=max(1, self.max_entries))

    def add(self, speaker: Speaker, text: str) -> None:
        self.entries.append(Entry(speaker, clip_text(text, self.max_chars)))

    def recent(self, n: int | None = None) -> list[Entry]:
        items = list(self.entries)
        return items if n is None else items[-n:]


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + "…"
