"""Start `python -m agent --game forge` as its own process, as Forge would find it running."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from benchmarks.agent_process import agent_server, percentile

__all__ = ["forge_agent", "llm_section", "percentile"]


@contextlib.asynccontextmanager
async def forge_agent(config: dict[str, Any]) -> AsyncIterator[tuple[str, Path, list[str]]]:
    """Run the agent with ``config`` on a free loopback port; yields its URL, its transcript folder
    and the log lines it writes."""
    async with agent_server({"game": "forge", **config}) as agent:
        yield f"http://127.0.0.1:{agent.port}/decide", agent.transcripts, agent.lines


def llm_section(base_url: str) -> dict[str, Any]:
    return {"player": "llm", "llm": {"base_url": base_url, "model": "fake-model", "api_key_required": False,
                                     "request_timeout": 20, "retry": {"max_attempts": 1}}}
