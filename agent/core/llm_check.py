"""``--check-llm``: one tiny call to the configured endpoint and model before a study starts.

A wrong key, model name or URL otherwise shows up only at the first decision, with a participant
waiting. The probe is one request (no retries), a few tokens long, through the same client the
game uses, so it checks exactly what the game will use.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agent.core.config import GameConfig
from agent.core.llm import LLMClient

PROBE = [{"role": "user", "content": "ping"}]
"""Any short message will do: the check is that the endpoint answers, not what it says."""
PROBE_MAX_TOKENS = 16
PROBE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LLMCheck:
    ok: bool
    message: str
    """One line: what answered and how fast, or the exact failure."""


async def check_llm(config: GameConfig) -> LLMCheck:
    """Make one request with ``config.llm`` and say how it went; never raises on provider failures."""
    llm = config.llm.model_copy(update={
        "max_tokens": PROBE_MAX_TOKENS,
        "request_timeout": min(config.llm.request_timeout, PROBE_TIMEOUT_S),
        "retry": config.llm.retry.model_copy(update={"max_attempts": 1}),
    })
    async with LLMClient(llm, config.api_key()) as client:
        where = f"model {llm.model!r} at {client.base_url}"
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_S + 5):
                result = await client.complete_text(PROBE)
        except TimeoutError:
            return LLMCheck(False, f"LLM check failed: {where} gave no answer in {PROBE_TIMEOUT_S:.0f} s")
    if not result.ok:
        return LLMCheck(False, f"LLM check failed: {where}: {result.error}")
    answered = result.model or llm.model
    return LLMCheck(True, f"LLM check passed: {where} answered in {result.latency_s:.2f} s "
                          f"(model {answered!r}, {result.prompt_tokens}+{result.completion_tokens} tokens)")
