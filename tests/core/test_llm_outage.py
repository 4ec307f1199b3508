"""An endpoint the agent did not start stops answering mid-session: one line, no call sent while it is
down (the game's fallback plays at once), and the model decides again once it answers."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent.core.config import LLMConfig, RetryConfig
from agent.core.llm import LLMClient
from agent.core.local_model import free_port
from agent.core.testing.fake_openai import FakeOpenAI

MESSAGES = [{"role": "system", "content": "You play."}, {"role": "user", "content": "Your turn."}]


async def test_a_server_that_stops_and_comes_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    port = free_port()
    fake = FakeOpenAI(port=port)
    await fake.__aenter__()
    config = LLMConfig(base_url=fake.base_url, model="fake-model", api_key_required=False, probe_dialect=False,
                       prime=False, retry=RetryConfig(max_attempts=2, initial_backoff=0.01, max_backoff=0.02))
    client = LLMClient(config, None)
    heard: list[str] = []
    client.outage.subscribe(lambda state, line: heard.append(state))
    try:
        assert (await client.complete_text(MESSAGES)).ok
        await fake.__aexit__(None, None, None)  # the server goes away
        assert not (await client.complete_text(MESSAGES)).ok
        assert client.outage.state == "down" and heard == ["down"]
        before = len(caplog.records)
        for _ in range(5):
            result = await client.complete_text(MESSAGES, deadline=asyncio.get_running_loop().time() + 5)
            assert result.skipped and "stopped answering" in (result.error or "")
        assert len(caplog.records) == before, "a line per call while the server is down"
        fake = FakeOpenAI(port=port)
        await fake.__aenter__()  # back on the same address
        async with asyncio.timeout(30):
            while client.outage.state != "up":
                await asyncio.sleep(0.05)
        assert heard == ["down", "up"]
        assert (await client.complete_text(MESSAGES)).ok
        said = [r.getMessage() for r in caplog.records]
        assert sum("stopped answering" in line for line in said) == 1
        assert sum("answers again (after" in line for line in said) == 1
    finally:
        await client.aclose()
        await fake.__aexit__(None, None, None)
