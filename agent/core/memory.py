"""The conversation memory a session keeps: chat lines and the plays, shared by chat and play.

What the player asks for in chat shapes the next play, and what the agent played is remembered,
so both paths read and write this one object. It is bounded: only the last N exchanges stay.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

Speaker = Literal["player", "agent", "event"]


@dataclass(frozen=True, slots=True)
class Entry:
    speaker: Speaker
    text: str


@dataclass
class Memory:
    max_entries: int = 20
    entries: deque[Entry] = field(init=False)

    def __post_init__(self) -> None:
        self.entries = deque(maxlen=max(1, self.max_entries))

    def add(self, speaker: Speaker, text: str) -> None:
        self.entries.append(Entry(speaker, text))

    def recent(self, n: int | None = None) -> list[Entry]:
        items = list(self.entries)
        return items if n is None else items[-n:]
