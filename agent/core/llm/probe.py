"""The dialect probe: a few one-token requests that show what an endpoint drops, before play.

A server that drops the system message or a list of content parts says nothing about it; only its
count of prompt tokens shows it. The probe sends the same short text four ways (a user message
alone, after a system message, as text parts, as a string) with ``max_tokens`` 1 and compares the
counts, and, for a client that sends images, the text with and without one tiny picture: all of
these requests at once, so finding the dialect costs one short round trip. Differences of counts cancel each server's
own template overhead, so the rule needs no per-server numbers.
"""

from __future__ import annotations

import asyncio
import base64
import io
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from agent.core.llm.dialect import Dialect, ProbeCounts, estimate_tokens, judge_probes
from agent.core.prompts import PromptSet

log = logging.getLogger(__name__)

PROBE_HEADER = "X-Agent-Probe"
"""Marks probe requests (a test server answers them apart from its scripted replies)."""
IMAGE_SIDE = 32

Send = Callable[[list[dict[str, Any]]], Awaitable[int | None]]
"""Sends one probe request; the prompt tokens the server counted, or None when it failed."""
SendImage = Callable[[list[dict[str, Any]]], Awaitable[tuple[int | None, bool]]]
"""Likewise for the image probe: (prompt tokens, whether the server refused the image part)."""


def probe_texts(prompts: PromptSet) -> tuple[str, str]:
    """The probe's system text (with a fresh nonce, so no cache hides a drop) and its user line."""
    return (prompts.render("probe_system", {"nonce": secrets.token_hex(4)}),
            prompts.render("probe_user", {}))


async def probe_counts(prompts: PromptSet, send: Send) -> ProbeCounts | None:
    """The server's prompt-token counts for the same text sent four ways, all four requests at once
    (one round trip, not four); None when the endpoint did not answer the plain one."""
    system, user = probe_texts(prompts)
    joined = f"{system}\n\n{user}"
    base, with_system, as_parts, as_string = await asyncio.gather(
        send([{"role": "user", "content": user}]),
        send([{"role": "system", "content": system}, {"role": "user", "content": user}]),
        send([{"role": "user", "content": [{"type": "text", "text": joined}]}]),
        send([{"role": "user", "content": joined}]))
    if base is None:
        return None
    return ProbeCounts(base=base, with_system=with_system, as_parts=as_parts, as_string=as_string,
                       probe_tokens=estimate_tokens([{"role": "system", "content": system}]))


def judge_counts(dialect: Dialect, counts: ProbeCounts | None) -> Dialect:
    """The dialect with its content and system rules found (``probed`` says how it went)."""
    if counts is None:
        return replace(dialect, probed="probe failed: the endpoint did not answer the probe")
    found = judge_probes(dialect, counts)
    log.debug("dialect probe counts %s -> %s", counts, found.describe())
    return found


ImageCounts = tuple[int | None, int | None, bool]
"""The image probe's prompt tokens without and with the picture, and whether the server refused it."""


async def image_counts(prompts: PromptSet, send: SendImage) -> ImageCounts:
    """The image probe's two requests, at once."""
    _, user = probe_texts(prompts)
    (base, _), (with_image, refused) = await asyncio.gather(
        send([{"role": "user", "content": [{"type": "text", "text": user}]}]),
        send([{"role": "user", "content": [
            {"type": "text", "text": user},
            {"type": "image_url", "image_url": {"url": tiny_png_url(), "detail": "low"}}]}]))
    return base, with_image, refused


def tiny_png_url() -> str:
    """A small, plain picture as a data URL (made here: nothing is shipped or fetched)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), (200, 30, 30)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
