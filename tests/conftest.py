"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.core.testing.fake_openai import FakeOpenAI


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A fake OpenAI-compatible server in the test's event loop; script it with .enqueue()."""
    async with FakeOpenAI() as fake:
        yield fake
