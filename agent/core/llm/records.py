"""The transcript's ``llm`` record, the same in every game, however the call ended.

An analyst joins LLM calls across games and sessions, so every game writes them in one shape: the
purpose, the outcome (``ok``, ``error``, ``skipped`` (not sent: the endpoint too slow for the
deadline), ``timeout``, ``cancelled``), the model, the request's
messages (the system prompt written in full once per transcript, then named by its hash; images as
a placeholder), the reply, tokens and times.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from agent.core.llm import LLMResult
from agent.core.transcript import Transcript

MATCH_OVER = "match over"
"""The ``cause`` of a call cancelled because its match ended first (not the endpoint's failure)."""
UNFINISHED_ERRORS = {"timeout": "no answer in time", "cancelled": "cancelled before an answer"}


def message_texts(messages: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """The request as the transcript keeps it: every text part, each image as ``[image]``."""
    out = []
    for m in messages:
        content = m["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "\n".join(str(p.get("text", "")) if p.get("type") == "text" else "[image]" for p in parts)
        out.append({"role": str(m["role"]), "text": text})
    return out


def request_fields(transcript: Transcript, messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``system_sha256`` (the system prompt, written once) and the other ``messages``."""
    texts = message_texts(messages)
    system = [m["text"] for m in texts if m["role"] == "system"]
    digest = transcript.text_once("system_prompt", system[0]) if system else None
    return {"system_sha256": digest, "messages": [m for m in texts if m["role"] != "system"]}


def record_llm_result(transcript: Transcript | None, purpose: str, messages: Sequence[dict[str, Any]],
                      started: float, result: LLMResult, **extra: Any) -> None:
    """A call that came back (``ok`` or ``error``); ``started`` is its ``time.monotonic()``."""
    if transcript is None:
        return
    if result.endpoint is not None:
        # What requests to this endpoint look like, once per session and again whenever it changes.
        transcript.record_once("llm_endpoint", json.dumps(result.endpoint, sort_keys=True), model=result.model,
                               **result.endpoint)
    messages = result.compact_messages or messages  # what was sent
    transcript.record(
        "llm", purpose=purpose, outcome="skipped" if result.skipped else "ok" if result.ok else "error",
        model=result.model, expected_s=None if result.expected_s is None else round(result.expected_s, 3),
        **request_fields(transcript, messages), text=result.text, error=result.error,
        prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
        prompt_estimate=result.prompt_estimate, cached_tokens=result.cached_tokens, prompt_short=result.prompt_short,
        salvaged=result.salvaged, reasked_cut=result.reasked, prompt_form=result.prompt_form,
        reusable_share=round(result.reusable_share, 3),
        server=None if result.server is None else result.server.record(),
        finish_reason=result.finish_reason,
        latency_s=round(result.latency_s, 3), elapsed_s=round(time.monotonic() - started, 3),
        attempts=len(result.attempts), fell_back_to_text=result.fell_back_to_text, **extra)


def record_llm_unfinished(transcript: Transcript | None, purpose: str, messages: Sequence[dict[str, Any]],
                          started: float, outcome: str, model: str, error: str | None = None,
                          **extra: Any) -> None:
    """A call that never answered: ``timeout`` (a deadline) or ``cancelled`` (a disconnect, a new turn)."""
    if transcript is None:
        return
    transcript.record(
        "llm", purpose=purpose, outcome=outcome, model=model, **request_fields(transcript, messages),
        text=None, error=error or UNFINISHED_ERRORS.get(outcome, outcome), prompt_tokens=0, completion_tokens=0,
        elapsed_s=round(time.monotonic() - started, 3), **extra)
