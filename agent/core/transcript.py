"""One JSONL transcript per session: every frame in and out, every LLM exchange, every error.

Records are queued without blocking and written by one task in a worker thread, so the event
loop never waits on the disk and records keep their order. Image payloads never reach the file
(the session replaces them with size and hash) and known secrets are masked in every line.
The file is created readable by its owner only (and a folder it creates, too): transcripts hold
what participants typed. Whatever a record holds (lone surrogates from a hostile frame, a full
disk), writing it never raises into the session and never stops the records after it.

Records an analyst joins: :func:`record_scope` adds fields (a turn id, a chat request id) to every
record made inside it, in that task and the tasks it starts, so a player deep inside a turn
records its LLM calls under the turn without knowing it. Texts sent over and over (a system
prompt) are written once per session by :meth:`Transcript.text_once` and named by hash after.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TextIO

from agent.core.redact import Secrets

if TYPE_CHECKING:
    from agent.core.config import GameConfig

log = logging.getLogger(__name__)

_LINE_BREAKERS = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"), ("\x85", "\\u0085"))

_SCOPE: ContextVar[Mapping[str, Any]] = ContextVar("transcript_scope", default=MappingProxyType({}))
"""Fields every record made in this context carries; each task sees its own (contextvars)."""
MAX_NAMED_TEXTS = 1024
"""Distinct long texts remembered per session; past that a text is written in full again."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._=+-]+")
MAX_TAGS_IN_NAME = 80
"""Characters of tags in a transcript's file name (file names are limited to 255 bytes)."""


@contextlib.contextmanager
def record_scope(**fields: Any) -> Iterator[None]:
    """Every record made inside (in this task, and in tasks and threads started from it) carries
    ``fields``; fields a record names itself win. Scopes nest."""
    token = _SCOPE.set({**_SCOPE.get(), **fields})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current_scope() -> Mapping[str, Any]:
    """The fields :func:`record_scope` adds here (e.g. to tell which turn a call belongs to)."""
    return _SCOPE.get()


def text_hash(text: str) -> str:
    """Short stable name of a text (16 hex digits of its SHA-256)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def tags_in_name(tags: Mapping[str, str]) -> str:
    """``condition=explain_participant=P07``: tags as a file-name-safe fragment, sorted by key."""
    parts = [f"{_UNSAFE_NAME.sub('-', k)}={_UNSAFE_NAME.sub('-', str(v))}" for k, v in sorted(tags.items())]
    return "_".join(parts)[:MAX_TAGS_IN_NAME].strip("_-")


MAX_RECORDS_BEFORE_OPEN = 1000
"""Records kept for a transcript not opened yet; more are dropped."""
MAX_LINE_CHARS = 1_000_000
"""A record longer than this (whatever a caller put in it) keeps its head and its length only."""


MAX_FILES = 2000
"""Files kept next to one transcript (``keep_file``); past that a file is named but not written."""
MAX_FILE_BYTES = 8 * 1024 * 1024


class Transcript:
    def __init__(self, directory: Path | None, session_id: str | None = None,
                 secrets: Secrets | Iterable[str] = (), tags: Mapping[str, str] | None = None,
                 keep_files: bool = False) -> None:
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self._secrets = secrets if isinstance(secrets, Secrets) else Secrets(secrets)
        self._queue: asyncio.Queue[str | tuple[Path, bytes] | None] = asyncio.Queue()
        self.keep_files = keep_files
        """Whether :meth:`keep_file` writes (``transcripts.images``): pictures sent to an LLM, say."""
        self._kept: set[str] = set()
        self._file: TextIO | None = None
        self._task: asyncio.Task[None] | None = None
        self._named: set[str] = set()
        self._closed = False
        self._listeners: list[Callable[[str, dict[str, Any]], None]] = []
        self.path: Path | None = None
        if directory is not None:
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            # Tags in the name let a study's files be sorted by condition without opening them.
            label = tags_in_name(tags or {})
            name = f"{stamp}-{label}-{self.session_id}" if label else f"{stamp}-{self.session_id}"
            self.path = Path(directory) / f"{name}.jsonl"

    @classmethod
    def unwritten(cls) -> Transcript:
        """A transcript written nowhere (a connection waiting for a study's participant)."""
        return cls(None)

    async def open(self) -> None:
        """Create the file and start writing, records made before included (a server opens the
        transcript at a connection's first frame, so idle sockets hold no file). If it cannot be
        created, the OSError is raised and the transcript records nothing from then on."""
        if self.path is None or self._task is not None or self._closed:
            return
        try:
            self._file = await asyncio.to_thread(self._open_file, self.path)
        except OSError:
            self.path = None
            self._queue = asyncio.Queue()
            raise
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

    def listen(self, listener: Callable[[str, dict[str, Any]], None]) -> None:
        """``listener(kind, data)`` for every record from now on, whether or not the transcript is
        written (a study's spend meter, the experimenter console). A listener that fails is logged
        and costs nothing else."""
        self._listeners.append(listener)

    def record(self, kind: str, **data: Any) -> None:
        """Queue one record, and tell the listeners. Never raises: a transcript problem must not
        break a turn."""
        self._queue_record(kind, data)
        for listener in self._listeners:
            try:
                listener(kind, data)
            except Exception:
                log.exception("transcript %s: a listener failed on a %s record", self.session_id, kind)

    def _queue_record(self, kind: str, data: dict[str, Any]) -> None:
        if self.path is None or self._closed:
            return
        if self._file is None and self._queue.qsize() >= MAX_RECORDS_BEFORE_OPEN:
            return  # never opened: keep a bounded start, not everything
        entry = {"t": round(time.time(), 3), "session": self.session_id, "kind": kind, **_SCOPE.get(), **data}
        try:
            line = json.dumps(entry, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError) as exc:
            line = json.dumps({"t": entry["t"], "session": self.session_id, "kind": kind,
                               "unserialisable": str(exc)[:200]})
        line = self.mask(line)
        if len(line) > MAX_LINE_CHARS:  # masked first: a cut must not leave half a secret readable
            line = json.dumps({"t": entry["t"], "session": self.session_id, "kind": kind, "clipped_chars": len(line),
                               "head": line[: MAX_LINE_CHARS // 100]}, ensure_ascii=False)
        # Characters str.splitlines() (and JavaScript) take for line ends; they can only occur
        # inside JSON strings here, where their escapes mean the same.
        for char, escape in _LINE_BREAKERS:
            if char in line:
                line = line.replace(char, escape)
        self._queue.put_nowait(line)

    def text_once(self, kind: str, text: str) -> str:
        """The hash naming ``text``; the first time in this session, also a ``kind`` record holding it.

        For texts repeated in every call (a system prompt): later records carry only the hash.
        """
        digest = text_hash(text)
        if digest not in self._named:
            if len(self._named) < MAX_NAMED_TEXTS:
                self._named.add(digest)
            self.record(kind, sha256=digest, text=text)
        return digest

    def record_once(self, kind: str, key: str, **data: Any) -> bool:
        """``record(kind, **data)`` the first time this session sees ``key`` (an endpoint's dialect,
        say); later calls with the same key write nothing. True when it was written."""
        digest = text_hash(f"{kind}\x00{key}")
        if digest in self._named or len(self._named) >= MAX_NAMED_TEXTS:
            return False
        self._named.add(digest)
        self.record(kind, **data)
        return True

    def keep_file(self, data: bytes, suffix: str) -> str | None:
        """Write ``data`` once per session into the folder next to the transcript (``<name>.files/``),
        named by its hash, and return that name relative to the transcript's folder; None when files
        are not kept. Never raises; the write happens in the writer's thread, in record order."""
        if self.path is None or self._closed or not self.keep_files or len(data) > MAX_FILE_BYTES:
            return None
        name = f"{self.path.stem}.files/{hashlib.sha256(data).hexdigest()[:16]}.{suffix.strip('.')[:8]}"
        if name not in self._kept and len(self._kept) < MAX_FILES:
            self._kept.add(name)
            self._queue.put_nowait((self.path.parent / name, data))
        return name

    async def _drain(self) -> None:
        assert self._file is not None
        while True:
            line = await self._queue.get()
            batch = [line]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            done = None in batch
            text = "".join(f"{x}\n" for x in batch if isinstance(x, str))
            files = [x for x in batch if isinstance(x, tuple)]
            try:
                await asyncio.to_thread(self._write, text, files)
            except Exception as exc:  # disk full or removed: keep playing, say it once per batch
                log.error("transcript %s: write failed: %s", self.path, exc)
            if done:
                return

    def _write(self, text: str, files: Sequence[tuple[Path, bytes]] = ()) -> None:
        assert self._file is not None
        for path, data in files:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        if text:
            self._file.write(text)
            self._file.flush()

    async def close(self) -> None:
        """Write everything still queued, then close. Safe to call more than once."""
        self._closed = True
        if self._task is None:
            self._queue = asyncio.Queue()  # never opened: no file, nothing to write
            return
        self._queue.put_nowait(None)
        task, self._task = self._task, None
        try:
            await asyncio.shield(task)
        finally:
            if self._file is not None:
                await asyncio.to_thread(self._file.close)
                self._file = None


def transcript_for(config: GameConfig, secrets: Secrets, *, folder: Path | None = None,
                   tags: Mapping[str, str] | None = None, session_id: str | None = None) -> Transcript:
    """The one way a game's session gets its transcript: in ``folder`` (a study's, beside its
    database) or else the config's ``transcripts.dir``, tagged ``tags`` (default: the config's),
    keeping the pictures when ``transcripts.images`` says so; written nowhere when the config turns
    transcripts off."""
    settings = config.transcripts
    where = (folder if folder is not None else config.resolve_dir(settings.dir)) if settings.enabled else None
    return Transcript(where, session_id, secrets=secrets, tags=config.tags if tags is None else tags,
                      keep_files=settings.images)
