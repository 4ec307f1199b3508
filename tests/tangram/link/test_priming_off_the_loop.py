"""The start-up priming's sample prompt (a rendered board, prepared as a turn's) is made off the event
loop, so games that connect as the agent starts are not held up by it; the priming still goes out."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from agent.core.llm.probe import PROBE_HEADER
from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.tangram.config import Config
from agent.games.tangram.link.server import serve_agent
from agent.games.tangram.llm_player import sample as llm_sample_module


async def test_the_priming_sample_is_made_in_a_thread_and_the_priming_goes_out(monkeypatch: Any) -> None:
    threads: list[threading.Thread] = []
    real = llm_sample_module.llm_sample

    def watched(config: Config) -> Any:
        threads.append(threading.current_thread())
        return real(config)

    monkeypatch.setattr(llm_sample_module, "llm_sample", watched)
    async with FakeOpenAI() as fake:
        config = Config.model_validate({"player": "llm", "transcripts": {"enabled": False},
                                        "llm": {"base_url": fake.base_url, "api_key_required": False}})
        async with serve_agent(config, host="127.0.0.1", port=0):
            for _ in range(500):
                if any(r.headers.get(PROBE_HEADER.lower()) == "prime" for r in fake.probe_requests):
                    break
                await asyncio.sleep(0.02)
    assert threads and threads[0] is not threading.main_thread()
    assert any(r.headers.get(PROBE_HEADER.lower()) == "prime" for r in fake.probe_requests)
