"""Reading a completion into an :class:`LLMResult`: its text, its JSON, its token counts."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.core.llm.errors import Describer
from agent.core.llm.jsonfind import extract_json
from agent.core.llm.result import LLMResult
from agent.core.llm.server_times import from_timings

OFF_LOOP_CHARS = 4_096
"""Replies longer than this are searched for JSON in a worker thread."""


def prompt_tokens_of(completion: Any) -> int | None:
    usage = getattr(completion, "usage", None)
    value = getattr(usage, "prompt_tokens", None)
    return int(value) if isinstance(value, int | float) else None


async def read_reply(completion: Any, result: LLMResult, *, parse_json: bool, limit: int, max_chars: int,
                     errors: Describer, default_model: str) -> None:
    """Fill ``result`` from ``completion``; a reply over ``max_chars`` is refused unparsed."""
    try:
        choice = completion.choices[0]
        message = choice.message
        text = message.content or ""
        result.finish_reason = choice.finish_reason
        result.model = str(completion.model or default_model)
        result.prompt_tokens = prompt_tokens_of(completion) or 0
        usage = completion.usage
        if usage is not None:
            result.completion_tokens = int(usage.completion_tokens or 0)
            details = getattr(usage, "prompt_tokens_details", None)
            result.cached_tokens = int(getattr(details, "cached_tokens", 0) or 0)
        result.server = from_timings(getattr(completion, "timings", None))  # llama-server's own numbers
        if result.server is not None and not result.cached_tokens:
            result.cached_tokens = result.server.cached_tokens
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        result.error = f"malformed response from provider ({type(exc).__name__})"
        return
    result.error = None
    result.data = None
    if len(text) > max_chars:
        # Far more than max_tokens allows: not a move, and parsing it would only cost time.
        result.text = text[:max_chars]
        result.error = f"reply of {len(text)} characters is far over max_tokens={limit}; not used"
        return
    result.text = text
    if not text.strip():
        refusal = getattr(message, "refusal", None)
        result.error = f"model refused: {errors.clean(refusal, 120)}" if refusal else "empty reply from model"
        return
    if not parse_json:
        return
    result.data = await asyncio.to_thread(extract_json, text) if len(text) > OFF_LOOP_CHARS else extract_json(text)
    if result.data is None:
        if result.finish_reason == "length":
            result.error = f"reply cut off at max_tokens={limit} before the JSON ended"
        else:
            result.error = f"reply is not a JSON object: {errors.clean(text, 80)!r}"
