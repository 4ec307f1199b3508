"""One JSONL transcript per session: every frame in and out, every LLM exchange, every error.

Records are queued without blocking and written by one task in a worker thread, so the event
loop never waits on the disk and records keep their order. Image payloads never reach the file
(the session replaces them with size and hash) and known secrets are masked in every line.
The file is created readable by its owner only (and a folder it creates, too): transcripts hold
what participants typed. Whatever a record holds (lone surrogates from a hostile frame, a full
disk), writing it never raises into the session and never stops the records after it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from agent.core.redact import Secrets

log = logging.getLogger(__name__)

_LINE_BREAKERS = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\u0085"))


class Transcript:
    def __init__(self, directory: Path | None, session_id: str | None = None,
                 secrets: Secrets | Iterable[str] = ()) -> None:
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._secrets = secrets if isinstance(secrets, Secrets) else Secrets(secrets)
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._file: TextIO | None = None
        self._task: asyncio.Task[None] | None = None
        self.path: Path | None = None
        if directory is not None:
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
            self.path = Path(directory) / f"{stamp}-{self.session_id}.jsonl"

    async def open(self) -> None:
        if self.path is None:
            return
        self._file = await asyncio.to_thread(self._open_file, self.path)
        self._task = asyncio.create_task(self._drain(), name=f"transcript-{self.session_id}")

    @staticmethod
    def _open_file(path: Path) -> TextIO:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        # backslashreplace: a lone surrogate (valid in a JSON string, not in UTF-8) is written as
        # its \udXXX escape, which json.loads reads back to the same string.
        return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")

    def mask(self, text: str) -> str:
        """``text`` with every known secret replaced (for text that leaves the agent otherwise)."""
        return self._secrets.mask(text)

    def record(self, kind: str, **data: Any) -> None:
        """Queue one record. Never raises: a transcript problem must not break a turn."""
        if self._file is None:
            return
        entry = {"t": round(time.time(), 3), "session": self.session_id, "kind": kind, **data}
        try:
            line = json.dumps(entry, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError) as exc:
            line = json.dumps({"t": entry["t"], "session": self.session_id, "kind": kind,
                               "unserialisable": str(exc)[:200]})
        line = self.mask(line)
        # Characters str.splitlines() (and JavaScript) take for line ends; they can only occur
        # inside JSON strings here, where their escapes mean the same.
        for char, escape in _LINE_BREAKERS:
            if char in line:
                line = line.replace(char, escape)
        self._queue.put_nowait(line)

    async def _drain(self) -> None:
        assert self._file is not None
        while True:
            line = await self._queue.get()
            batch = [line]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            done = None in batch
            text = "".join(f"{x}\n" for x in batch if x is not None)
            try:
                await asyncio.to_thread(self._write, text)
            except Exception as exc:  # disk full or removed: keep playing, say it once per batch
                log.error("transcript %s: write failed: %s", self.path, exc)
            if done:
                return

    def _write(self, text: str) -> None:
        assert self._file is not None
        self._file.write(text)
        self._file.flush()

    async def close(self) -> None:
        """Write everything still queued, then close. Safe to call more than once."""
        if self._task is None:
            return
        self._queue.put_nowait(None)
        task, self._task = self._task, None
        try:
            await asyncio.shield(task)
        finally:
            if self._file is not None:
                await asyncio.to_thread(self._file.close)
                self._file = None
