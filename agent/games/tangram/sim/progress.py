"""A one-line progress bar on stderr, silent when stderr is not a terminal or when disabled."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str = "sim", enabled: bool | None = None,
                 stream: TextIO | None = None, width: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.total = max(total, 1)
        self.label = label
        self.width = width
        self.done = 0
        self.note = ""
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = isatty() if enabled is None else (enabled and isatty())
        self._t0 = time.monotonic()

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done = min(self.total, self.done + n)
        if note:
            self.note = note
        self._draw()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.monotonic() - self._t0
        line = f"\r{self.label} [{bar}] {self.done}/{self.total} turns {elapsed:5.1f}s {self.note[:40]}"
        self.stream.write(line.ljust(100)[:120])
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
