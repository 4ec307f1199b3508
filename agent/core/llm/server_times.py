"""What the model server itself says a call cost: its prompt and generated tokens, their times, and the
prompt tokens it reused from its cache (issue 69: each turn's distance from its one-call limit).

Two sources, the same fields:

- llama.cpp's ``llama-server`` puts ``timings`` in every completion (``prompt_n``, ``prompt_ms``,
  ``predicted_n``, ``predicted_ms``, ``cache_n``): :func:`from_timings`.
- llama-cpp-python's server says nothing of it in its answers, but logs it (verbose, its default):
  ``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` and llama.cpp's
  ``llama_perf_context_print`` lines, flushed before the answer goes out: :func:`parse_log`. The agent
  that started that server (``--local-model``) names the log in the server's status file
  (:mod:`agent.core.local_model`), and :class:`ServerLog` reads what the log gained since the last call.

Pure but for :class:`ServerLog`'s file reads, which run in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_FULL = re.compile(r"Llama\.generate: full prompt already cached")
_PROMPT = re.compile(r"prompt eval time\s*=\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"(?<!prompt )eval time\s*=\s*([\d.]+) ms /\s*(\d+) runs")
_TOTAL = re.compile(r"total time\s*=\s*([\d.]+) ms")
MAX_LOG_READ = 1 << 20
"""The most of a log's new part read after one call (a server that logs far more is not followed)."""


@dataclass(frozen=True, slots=True)
class ServerCall:
    """One completion as the server counted it."""

    prompt_tokens: int
    """The whole prompt: read now plus reused from the cache."""
    cached_tokens: int
    """Prompt tokens reused from the server's cache (not read again)."""
    prompt_ms: float
    """Time reading the prompt tokens that were not cached."""
    generated_tokens: int
    generate_ms: float

    @property
    def server_ms(self) -> float:
        return self.prompt_ms + self.generate_ms

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "prompt_ms": round(self.prompt_ms, 1), "generate_ms": round(self.generate_ms, 1)}


def from_timings(timings: Any) -> ServerCall | None:
    """llama-server's ``timings`` object, or None when there is none (another server)."""
    if not isinstance(timings, dict):
        return None
    try:
        read, cached = int(timings.get("prompt_n", 0)), int(timings.get("cache_n", 0) or 0)
        return ServerCall(read + cached, cached, float(timings.get("prompt_ms", 0.0)),
                          int(timings.get("predicted_n", 0)), float(timings.get("predicted_ms", 0.0)))
    except (TypeError, ValueError):
        return None


def parse_log(text: str) -> list[ServerCall]:
    """Every completion llama-cpp-python's verbose log records in ``text``, in order (pure)."""
    calls: list[ServerCall] = []
    cached = 0
    prompt: tuple[float, int] | None = None
    generated: tuple[float, int] = (0.0, 0)
    for line in text.splitlines():
        if match := _PREFIX.search(line):
            cached = int(match.group(1))
        elif _FULL.search(line):
            cached = -1  # the whole prompt: known once its length is
        elif match := _PROMPT.search(line):
            prompt = (float(match.group(1)), int(match.group(2)))
        elif match := _EVAL.search(line):
            generated = (float(match.group(1)), int(match.group(2)))
        elif _TOTAL.search(line) and prompt is not None:
            read = prompt[1]
            reused = max(cached, 0)
            calls.append(ServerCall(read + reused, reused, prompt[0], generated[1], generated[0]))
            cached, prompt, generated = 0, None, (0.0, 0)
    return calls


def _named(status_path: Path | None, field: str) -> str:
    """One field of a watched local server's status file ("" when there is none)."""
    if status_path is None:
        return ""
    try:
        named = json.loads(status_path.read_text(encoding="utf-8")).get(field)
    except (OSError, ValueError, AttributeError):
        return ""
    return named if isinstance(named, str) else ""


def log_of(status_path: Path | None) -> Path | None:
    """The log a watched local server writes, as its status file names it (None: not named)."""
    named = _named(status_path, "log")
    return Path(named) if named else None


def kind_of(status_path: Path | None) -> str:
    """Which server a watched local server is, as its status file declares it ("llama-cpp-python",
    "llama-server"; "" when not declared: a server started by hand, or none)."""
    return _named(status_path, "kind")


class ServerLog:
    """Follows a local llama-cpp-python server's log: :meth:`last_call` is the latest completion it
    logged since the previous look (the server answers one request at a time, so after an answer the
    latest one is that answer's)."""

    def __init__(self, status_path: Path | None) -> None:
        self._status_path = status_path
        self._offset: int | None = None

    def _read(self) -> ServerCall | None:
        path = log_of(self._status_path)
        if path is None:
            return None
        try:
            with path.open("rb") as handle:
                handle.seek(0, 2)
                end = handle.tell()
                start = self._offset if self._offset is not None and self._offset <= end else 0
                handle.seek(max(start, end - MAX_LOG_READ))
                data = handle.read(end - handle.tell())
        except OSError:
            return None
        self._offset = end
        calls = parse_log(data.decode("utf-8", "replace"))
        return calls[-1] if calls else None

    async def last_call(self) -> ServerCall | None:
        if self._status_path is None:
            return None
        return await asyncio.to_thread(self._read)

    async def skip_to_end(self) -> None:
        """Forget what the log holds so far (before a call, so its lines are the only new ones)."""
        if self._status_path is not None:
            await asyncio.to_thread(self._read)
