"""Start the Forge agent on a free loopback port, as Forge would find it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agent.core.testing.fake_openai import FakeOpenAI
from agent.games.forge.config import ForgeConfig
from agent.games.forge.factory import make_decider
from agent.games.forge.server import ForgeServer

Running = Callable[..., Any]


def forge_config(tmp_path: Path, fake: FakeOpenAI | None = None, **sections: Any) -> ForgeConfig:
    data: dict[str, Any] = {"server": {"port": 0, "host": "127.0.0.1", **sections.pop("server", {})},
                            "transcripts": {"dir": str(tmp_path / "transcripts")}}
    if fake is not None:
        data["player"] = "llm"
        data["llm"] = {"base_url": fake.base_url, "model": "fake-model", "api_key_required": False,
                       "request_timeout": 5, "retry": {"max_attempts": 1}}
    data.update(sections)
    return ForgeConfig.model_validate(data)


@asynccontextmanager
async def running(config: ForgeConfig) -> AsyncIterator[tuple[ForgeServer, str]]:
    decider = make_decider(config)
    server = ForgeServer(config, decider)
    await server.start()
    try:
        yield server, f"http://127.0.0.1:{server.port}"
    finally:
        await server.shutdown()
        if decider.client is not None:
            await decider.client.aclose()


@pytest.fixture
def agent_at(tmp_path: Path) -> Running:
    """``async with agent_at(fake=None, **config sections) as (server, url)``."""

    def start(fake: FakeOpenAI | None = None, **sections: Any) -> Any:
        return running(forge_config(tmp_path, fake, **sections))

    return start
