"""A completion asked for as a stream (server-sent events) and collected into the answer a request
not streamed gets: the text, the finish reason, the model, and the usage and ``timings`` where the
server sends them in the stream.

Why: llama-cpp-python's server goes on computing a request not streamed after its client left, so a
one-at-a-time server stays busy with a decision the agent gave up. A streamed request there stops at
the next token once the connection is closed (its ``get_event_publisher`` checks
``request.is_disconnected()`` after each chunk, 0.3.36), so closing the stream when the caller gives
up (its deadline, a cancel) frees the server for the next call.

The SSE parsing is the SDK's (``openai.AsyncStream``); what is collected here is bounded: reading
stops (and the stream is closed, which stops a server that stops on it) once the text is longer than
``max_chars``, and the client bounds the body's bytes and the request's time as for any answer.
The SDK's ``ChatCompletionStreamState`` would collect too, but it rebuilds the whole message for
every chunk and drops the server's ``timings``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

WIRE_EXTRAS = ("extra_headers", "extra_body")
"""Keys of a request (``build_request``) that are not body fields: headers, and fields merged into the body."""


class StreamCut(Exception):
    """The stream ended without the answer's finish reason: the answer is not whole."""

    def __init__(self, chars: int) -> None:
        super().__init__(f"the server ended the stream after {chars} characters without a finish reason (the "
                         "answer is cut; llama-cpp-python stops a stream when another request arrives: give it "
                         "one client, or set llm.stream: false)")


def wire_body(request: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """The request's JSON body (encoded once) and its headers."""
    body = {k: v for k, v in request.items() if k not in WIRE_EXTRAS}
    body.update(request.get("extra_body") or {})
    headers = {"Content-Type": "application/json", **(request.get("extra_headers") or {})}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(), headers


def streamed(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` asking for a stream, with the usage in its last event where the server sends it
    (OpenAI's ``stream_options``; llama-cpp-python ignores the field and sends no usage)."""
    extra = {**(request.get("extra_body") or {}), "stream": True, "stream_options": {"include_usage": True}}
    return {**request, "extra_body": extra}


@dataclass
class Collected:
    """The chunks of one streamed answer, as far as read (pure)."""

    max_chars: int
    parts: list[str] = field(default_factory=list)
    chars: int = 0
    finish_reason: str | None = None
    model: str = ""
    id: str = ""
    created: int = 0
    usage: dict[str, Any] | None = None
    timings: Any = None

    @property
    def full(self) -> bool:
        """More text than any answer of max_tokens: nothing more is read."""
        return self.chars > self.max_chars

    def add(self, chunk: ChatCompletionChunk) -> None:
        self.id = self.id or str(chunk.id or "")
        self.model = self.model or str(chunk.model or "")
        self.created = self.created or int(chunk.created or 0)
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue
            text = choice.delta.content if choice.delta is not None else None
            if text:
                self.parts.append(text)
                self.chars += len(text)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        if chunk.usage is not None:
            self.usage = chunk.usage.model_dump()
        timings = getattr(chunk, "timings", None)  # llama-server's own numbers, in its last event
        if timings is not None:
            self.timings = timings

    def completion(self) -> ChatCompletion:
        """The answer as a request not streamed gets it (built leniently, as the SDK builds answers)."""
        values: dict[str, Any] = {
            "id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
            "choices": [{"index": 0, "finish_reason": self.finish_reason,
                         "message": {"role": "assistant", "content": "".join(self.parts)}}],
            "usage": self.usage}
        if self.timings is not None:
            values["timings"] = self.timings
        return ChatCompletion.construct(**values)


async def post_streamed(sdk: openai.AsyncOpenAI, request: dict[str, Any], timeout: float,
                        max_chars: int, gave_up: asyncio.Event | None = None) -> ChatCompletion:
    """Send ``request`` streamed and collect its answer. Cancelled (its caller gave up), it leaves
    through ``async with``, which closes the connection: the server sees it gone. Run apart from its
    caller (a one-at-a-time server's request), it stops at the first event after ``gave_up`` is set:
    the server is done reading the prompt then, so the slot is freed when the server really is."""
    content, headers = wire_body(streamed(request))
    stream = await sdk.post("/chat/completions", cast_to=ChatCompletionChunk, content=content,
                            options={"headers": headers, "timeout": timeout},
                            stream=True, stream_cls=openai.AsyncStream[ChatCompletionChunk])
    collected = Collected(max_chars)
    async with stream:
        async for chunk in stream:
            collected.add(chunk)
            if collected.full:
                break  # closing the stream stops the server; the client refuses the reply as too long
            if gave_up is not None and gave_up.is_set():
                return collected.completion()  # nobody reads it: the stream is closed, the server stops
    if collected.finish_reason is None and not collected.full:
        raise StreamCut(collected.chars)
    return collected.completion()
