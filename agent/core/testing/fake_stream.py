"""The fake server's streamed answers: a completion as the events of OpenAI's ``stream: true``
(server-sent events), pure."""

from __future__ import annotations

import json
from typing import Any

PIECE_CHARS = 4
"""Characters of content per streamed event (about one token)."""
DONE = b"data: [DONE]\n\n"


def pieces(content: str) -> int:
    """How many events a streamed ``content`` takes (a piece of PIECE_CHARS, about a token)."""
    return -(-len(content) // PIECE_CHARS)


def wants_stream(body: Any) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


def wants_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def stream_events(completion: dict[str, Any], *, usage: bool) -> list[dict[str, Any]]:
    """``completion`` (a chat.completion) as chunks: the role, the content a piece at a time, the
    finish reason, then the usage (with no choices) when asked for, as OpenAI sends them."""
    head = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"]}
    choice = completion["choices"][0]
    content = choice["message"]["content"] or ""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    events = [chunk({"role": "assistant"})]
    events += [chunk({"content": content[i:i + PIECE_CHARS]}) for i in range(0, len(content), PIECE_CHARS)]
    events.append(chunk({}, choice["finish_reason"]))
    if usage:
        events.append({**head, "choices": [], "usage": completion["usage"]})
    return events


def sse(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"
