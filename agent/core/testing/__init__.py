"""Test doubles shipped with the package, so tests, benchmarks and end-to-end runs share them.

Names are imported lazily so ``python -m agent.core.testing.fake_openai`` runs without a double import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent.core.testing.fake_openai import FakeOpenAI, FakeReply, RecordedRequest

__all__ = ["FakeOpenAI", "FakeReply", "RecordedRequest"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agent.core.testing import fake_openai

        return getattr(fake_openai, name)
    raise AttributeError(f"module 'agent.core.testing' has no attribute {name!r}")
