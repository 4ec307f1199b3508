"""Start `python -m agent` as its own process for a benchmark, as it runs against the real game."""

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
async def agent_process(config: dict[str, Any]) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """Run the agent with ``config`` (transcripts go to a temporary folder) on a free loopback
    port; yields its ws:// URL and the process, and stops it afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump({"transcripts": {"dir": str(Path(tmp) / "transcripts")}, **config}))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent", "--config", str(path), "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "WARNING", stderr=asyncio.subprocess.PIPE)
        try:
            assert proc.stderr is not None
            await asyncio.wait_for(proc.stderr.readline(), 30)  # the "listening" line
            yield f"ws://127.0.0.1:{port}", proc
        finally:
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
