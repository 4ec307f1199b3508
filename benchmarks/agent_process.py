"""Start `python -m agent` as its own process for a benchmark, as it runs in a study."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


@dataclass
class AgentProcess:
    port: int
    transcripts: Path
    process: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    """What the agent logged after its start-up line, read all along so a chatty agent never blocks
    on a full pipe."""


@contextlib.asynccontextmanager
async def agent_server(config: dict[str, Any]) -> AsyncIterator[AgentProcess]:
    """Run a server-side game's agent with ``config`` on a free loopback port (transcripts in a
    temporary folder) until the block ends."""
    with tempfile.TemporaryDirectory() as tmp:
        transcripts = Path(tmp) / "transcripts"
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump({"transcripts": {"dir": str(transcripts)}, **config}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(path), "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "WARNING", stderr=asyncio.subprocess.PIPE)
        reader: asyncio.Task[None] | None = None
        try:
            assert proc.stderr is not None
            first = await asyncio.wait_for(proc.stderr.readline(), 30)
            if b"listening" not in first:
                raise SystemExit(f"agent did not start: {first.decode(errors='replace').strip()}")
            agent = AgentProcess(port, transcripts, proc)

            async def drain() -> None:
                assert proc.stderr is not None
                agent.lines.extend([line.decode(errors="replace").rstrip() async for line in proc.stderr])

            reader = asyncio.create_task(drain())
            yield agent
        finally:
            # Also when the start failed or timed out, or the benchmark was cancelled: a process left
            # running outlives the benchmark, and its transport warns "Event loop is closed" (3.13).
            if proc.returncode is None:
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
            if reader is not None:
                await reader


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0..1) of ``values``; NaN for none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
