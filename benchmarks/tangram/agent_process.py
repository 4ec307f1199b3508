"""Start `python -m agent` as its own process for a benchmark, as it runs against the real game."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from benchmarks.agent_process import agent_server


@contextlib.asynccontextmanager
async def agent_process(config: dict[str, Any]) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """Run the agent with ``config`` (transcripts go to a temporary folder) on a free loopback
    port; yields its ws:// URL and the process, and stops it afterwards."""
    async with agent_server(config) as agent:
        yield f"ws://127.0.0.1:{agent.port}", agent.process
