"""A decision request as a game's LLM player sends it: what ``--check-llm`` sends and what primes a
model server's cache at start."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LLMSample:
    """A decision request as play sends it (its templates rendered with their sample context)."""

    messages: list[dict[str, Any]]
    """System then user message; the user content is a list of parts when it carries pictures."""
    schema: dict[str, Any]
    schema_name: str
    compact: list[dict[str, Any]] | None = None
    """The same request in the game's compact form (sent when the full one does not fit the window)."""
