"""Shared pytest fixtures, and the skip policy (tests/skips.py): every skip is printed with its reason,
and under CI=true a skip not on tests/allowed_skips.toml fails the run."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent.core.testing.fake_openai import FakeOpenAI
from tests.skips import SkipPolicy, in_ci, load_allow_list


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(SkipPolicy(load_allow_list(), in_ci()), "skip-policy")


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A fake OpenAI-compatible server in the test's event loop; script it with .enqueue()."""
    async with FakeOpenAI() as fake:
        yield fake
