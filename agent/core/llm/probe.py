"""The dialect probe: a few one-token requests that show what an endpoint drops, before play.

A server that drops the system message or a list of content parts says nothing about it; only its
count of prompt tokens shows it. The probe sends the same short text four ways (a user message
alone, after a system message, as text parts, as a string) with ``max_tokens`` 1 and compares the
counts, then, for a call with images, one tiny picture. Differences of counts cancel each server's
own template overhead, so the rule needs no per-server numbers.
"""

from __future__ import annotations

import base64
import io
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from agent.core.llm.dialect import Dialect, ProbeCounts, estimate_tokens, judge_image_probe, judge_probes
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


async def probe_messages(dialect: Dialect, prompts: PromptSet, send: Send) -> Dialect:
    """The dialect with its content and system rules found (``probed`` says how it went)."""
    system, user = probe_texts(prompts)
    base = await send([{"role": "user", "content": user}])
    if base is None:
        return replace(dialect, probed="probe failed: the endpoint did not answer the probe")
    with_system = await send([{"role": "system", "content": system}, {"role": "user", "content": user}])
    joined = f"{system}\n\n{user}"
    as_parts = await send([{"role": "user", "content": [{"type": "text", "text": joined}]}])
    as_string = await send([{"role": "user", "content": joined}])
    counts = ProbeCounts(base=base, with_system=with_system, as_parts=as_parts, as_string=as_string,
                         probe_tokens=estimate_tokens([{"role": "system", "content": system}]))
    found = judge_probes(dialect, counts)
    log.debug("dialect probe counts %s -> %s", counts, found.describe())
    return found


async def probe_images(dialect: Dialect, prompts: PromptSet, send: SendImage) -> Dialect:
    """The dialect with whether a picture is taken and seen; only asked where parts arrive."""
    _, user = probe_texts(prompts)
    base, _ = await send([{"role": "user", "content": [{"type": "text", "text": user}]}])
    with_image, refused = await send([{"role": "user", "content": [
        {"type": "text", "text": user},
        {"type": "image_url", "image_url": {"url": tiny_png_url(), "detail": "low"}}]}])
    return judge_image_probe(dialect, base, with_image, refused)


def tiny_png_url() -> str:
    """A small, plain picture as a data URL (made here: nothing is shipped or fetched)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (IMAGE_SIDE, IMAGE_SIDE), (200, 30, 30)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
