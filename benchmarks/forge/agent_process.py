"""Start `python -m agent --game forge` as its own process, as Forge would find it running."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from benchmarks.agent_process import agent_server, percentile

__all__ = ["deciders", "forge_agent", "llm_section", "percentile"]


@contextlib.asynccontextmanager
async def forge_agent(config: dict[str, Any]) -> AsyncIterator[tuple[str, Path, list[str]]]:
    """Run the agent with ``config`` on a free loopback port; yields its URL, its transcript folder
    and the log lines it writes."""
    async with agent_server({"game": "forge", **config}) as agent:
        yield f"http://127.0.0.1:{agent.port}/decide", agent.transcripts, agent.lines


def llm_section(base_url: str) -> dict[str, Any]:
    return {"player": "llm", "llm": {"base_url": base_url, "model": "fake-model", "api_key_required": False,
                                     "request_timeout": 20, "retry": {"max_attempts": 1}}}


def deciders(transcripts: Path) -> tuple[Counter[str], Counter[str]]:
    """Who decided (each ``decision`` record's source) and the guard's overrides by rule, over every
    transcript the agent wrote."""
    sources: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for path in transcripts.glob("*.jsonl"):
        for text in path.read_text().splitlines():
            record = json.loads(text)
            if record["kind"] == "decision":
                sources[record["source"]] += 1
            elif record["kind"] == "guard":
                rules[record["rule"]] += 1
    return sources, rules
