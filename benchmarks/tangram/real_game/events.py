"""The run's log: both directions' frames, the game's console and the scripted human's actions, one
JSON object a line (``events.jsonl``), pictures kept as files within a byte budget or dropped."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Source = Literal["game", "agent", "console", "human", "runner"]
"""``game``: a frame the game sent the agent; ``agent``: a frame the agent sent the game."""
IMAGE_FIELDS = ("board_img", "drawer_img")
MAX_TEXT = 2000
"""A console line or a non-JSON frame is cut to this many characters in the log."""


@dataclass
class Event:
    t: float
    """Seconds since the run started."""
    src: Source
    type: str = ""
    """The frame's ``type`` (``play``, ``playFeedback``...), the human's action, or empty."""
    msg: dict[str, Any] = field(default_factory=dict)
    """The frame without its pictures, or details of an action."""
    text: str = ""
    """A console line, or a frame that was not JSON."""
    ws: int = 0
    """Which of the page's sockets carried the frame (a reload opens a new one)."""
    size: int = 0
    """The frame's length in bytes."""
    images: dict[str, str] = field(default_factory=dict)
    """Picture field -> file (relative to the log), or "dropped"."""

    def to_json(self) -> str:
        data = {k: v for k, v in asdict(self).items() if v not in ("", {}, 0) or k in ("t", "src")}
        return json.dumps(data, separators=(",", ":"))

    @staticmethod
    def from_json(line: str) -> Event:
        data = json.loads(line)
        return Event(**data)


@dataclass
class ImageStore:
    """Keeps frames' pictures as PNG files under ``folder`` until ``budget`` bytes are used; then (or
    with no folder) records them as dropped."""

    folder: Path | None
    budget: int
    used: int = 0
    count: int = 0

    def keep(self, name: str, b64: str) -> str:
        if self.folder is None:
            return "dropped"
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            return "not base64"
        if self.used + len(data) > self.budget:
            return "dropped"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count += 1
        path = self.folder / f"{self.count:04d}-{name}.png"
        path.write_bytes(data)
        self.used += len(data)
        return f"{self.folder.name}/{path.name}"


def frame_event(t: float, src: Source, payload: str | bytes, ws: int, store: ImageStore) -> Event:
    """One WebSocket frame as an event: JSON parsed, pictures moved out to ``store``."""
    text = payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else payload
    size = len(payload) if isinstance(payload, bytes) else len(text.encode("utf-8"))
    try:
        data = json.loads(text)
    except ValueError:
        return Event(t, src, "", text=text[:MAX_TEXT], ws=ws, size=size)
    if not isinstance(data, dict):
        return Event(t, src, "", text=text[:MAX_TEXT], ws=ws, size=size)
    images = {}
    for key in IMAGE_FIELDS:
        value = data.pop(key, None)
        if isinstance(value, str):
            images[key] = store.keep(f"{data.get('type', 'frame')}-{key.split('_')[0]}", value)
    kind = data.get("type")
    return Event(t, src, kind if isinstance(kind, str) else "", msg=data, ws=ws, size=size, images=images)


class EventLog:
    """Appends events to ``path`` as they happen (a crash keeps what was seen) and holds them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self.events: list[Event] = []

    def add(self, event: Event) -> Event:
        self.events.append(event)
        self._file.write(event.to_json() + "\n")
        self._file.flush()
        return event

    def close(self) -> None:
        self._file.close()


def read_events(path: Path) -> list[Event]:
    return [Event.from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
