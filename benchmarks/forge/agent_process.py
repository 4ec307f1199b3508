"""Start `python -m agent --game forge` as its own process, as Forge would find it running."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml


@contextlib.asynccontextmanager
async def forge_agent(config: dict[str, Any]) -> AsyncIterator[tuple[str, Path, list[str]]]:
    """Run the agent with ``config`` on a free loopback port; yields its URL, its transcript folder
    and the log lines it writes (read all along, so a chatty agent never blocks on a full pipe)."""
    with tempfile.TemporaryDirectory() as tmp:
        transcripts = Path(tmp) / "transcripts"
        path = Path(tmp) / "forge-bench.yaml"
        path.write_text(yaml.safe_dump({"game": "forge", "transcripts": {"dir": str(transcripts)}, **config}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(path), "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "WARNING", stderr=asyncio.subprocess.PIPE)
        assert proc.stderr is not None
        first = await asyncio.wait_for(proc.stderr.readline(), 30)
        if b"listening" not in first:
            raise SystemExit(f"agent did not start: {first.decode(errors='replace').strip()}")
        lines: list[str] = []

        async def drain() -> None:
            assert proc.stderr is not None
            lines.extend([line.decode(errors="replace").rstrip() async for line in proc.stderr])

        reader = asyncio.create_task(drain())
        try:
            yield f"http://127.0.0.1:{port}/decide", transcripts, lines
        finally:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
            await reader


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def llm_section(base_url: str) -> dict[str, Any]:
    return {"player": "llm", "llm": {"base_url": base_url, "model": "fake-model", "api_key_required": False,
                                     "request_timeout": 20, "retry": {"max_attempts": 1}}}
