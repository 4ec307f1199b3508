"""Process limits a server lives within: open files, and logging that stays bounded under floods.

A flood (hundreds of idle sockets, a client re-dialling in a loop) must cost a few log lines, not
one per event: at the file-descriptor limit asyncio logs a full traceback for every failed
accept(), which wrote 116 MB of log in 50 s. :class:`Throttle` lets one line through per interval
and counts the rest; :class:`ResourceErrorFilter` applies it to every record about running out of
files, sockets or memory, whoever logs it.
"""

from __future__ import annotations

import errno
import logging
import time
from dataclasses import dataclass

RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
RESOURCE_WORDS = ("Too many open files", "out of system resource", "No buffer space", "Cannot allocate memory")


@dataclass
class Throttle:
    """Say something at most once per ``interval`` seconds; :meth:`ready` tells the caller whether
    to log now and how many occasions were held back since the last time."""

    interval: float = 10.0
    _last: float | None = None
    _held: int = 0

    def ready(self, now: float | None = None) -> tuple[bool, int]:
        now = time.monotonic() if now is None else now
        if self._last is not None and now - self._last < self.interval:
            self._held += 1
            return False, 0
        held, self._held, self._last = self._held, 0, now
        return True, held


class ResourceErrorFilter(logging.Filter):
    """Pass one record about a resource error (EMFILE, ENFILE, ENOBUFS, ENOMEM) per interval and
    per logger; the one passed says how many were dropped. Other records pass untouched."""

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self.interval = interval
        self._throttles: dict[str, Throttle] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if not is_resource_error(record):
            return True
        throttle = self._throttles.setdefault(record.name, Throttle(self.interval))
        now, held = throttle.ready()
        if not now:
            return False
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {self.interval:.0f} s were not logged)"
        return True


def is_resource_error(record: logging.LogRecord) -> bool:
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
        return True
    try:
        text = record.getMessage()
    except Exception:
        return False
    return any(word in text for word in RESOURCE_WORDS)


def open_files_limit() -> int | None:
    """The soft limit on open files of this process, or None when unlimited or unknown (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise this process's soft limit on open files to its hard limit (a server needs a socket per
    client; the soft default of 1,024 is a historical accident, the hard one the real bound).
    Returns (before, after), or None where there is no such limit (Windows). A limit the system
    refuses (macOS caps an unlimited hard limit lower) is left as it was."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft == hard:
        return soft, soft
    target = hard if hard != resource.RLIM_INFINITY else max(soft, UNLIMITED_TARGET)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError):
        return soft, soft
    return soft, target


UNLIMITED_TARGET = 65_536
"""The soft limit asked for when the hard limit is unlimited."""
