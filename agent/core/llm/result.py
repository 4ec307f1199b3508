"""What a call returns: the reply, its tokens and times, every HTTP request made for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agent.core.llm.server_times import ServerCall

Mode = Literal["json_schema", "json_object_schema", "json_object", "text"]
"""How JSON is asked for: OpenAI's ``json_schema``; ``json_object`` with the schema inside (the
llama.cpp family's form, enforced there by a grammar); plain ``json_object``; plain text with the
schema told in words."""
Priority = Literal["play", "chat", "background"]
"""Who waits on a request: a decision, a chat reply, or nobody (the start-up priming): served in that order."""


@dataclass(frozen=True, slots=True)
class LLMAttempt:
    """One HTTP request made for a call."""

    mode: Mode
    """How JSON was asked for in this request."""
    status: int | None
    """HTTP status, or None when no response came (timeout, connection error)."""
    error: str | None
    """Exception class name, or None when the request succeeded."""
    latency_s: float


@dataclass
class LLMResult:
    """The outcome of one call; ``error`` is None on success."""

    text: str = ""
    """The raw assistant reply."""
    data: dict[str, Any] | None = None
    """The JSON object found in ``text`` (complete_json only)."""
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_estimate: int = 0
    """The agent's own estimate of the prompt's tokens (text only), to compare with ``prompt_tokens``."""
    cached_tokens: int = 0
    """Prompt tokens the server said it reused from an earlier request (0 when it does not say)."""
    latency_s: float = 0.0
    """Wall time of the whole call, retries and fallbacks included."""
    attempts: list[LLMAttempt] = field(default_factory=list)
    model: str = ""
    """The model that answered (as the server names it), else the configured one."""
    fell_back_to_text: bool = False
    """JSON was wanted through response_format but this reply was asked for as plain text."""
    finish_reason: str | None = None
    endpoint: dict[str, Any] | None = None
    """The request dialect this call ended with (:meth:`Dialect.record`), for the transcript."""
    salvaged: bool = False
    """The answer was cut off at max_tokens, after its decision fields: the object was closed and used."""
    reasked: bool = False
    """The answer was cut off before its decision, so the call asked once more with tighter bounds."""
    reusable_share: float = 0.0
    """The share of this prompt's text that began exactly as the endpoint's previous prompt did: what
    a server caching the last prompt's prefix could reuse (the prompt's unchanging part first)."""
    prompt_form: str = "full"
    """Which form of the prompt was sent: the game's full one, or its compact one (the full one did not fit)."""
    compact_messages: list[dict[str, Any]] | None = None
    """The messages sent when they were the compact form (a transcript records what was sent)."""
    skipped: bool = False
    """Not sent: the endpoint's recent decisions took longer than the time left before the deadline."""
    expected_s: float | None = None
    """What the endpoint's recent decisions took (median) when this call was asked for."""
    server: ServerCall | None = None
    """What the server itself counted and timed for the answer (llama-server's ``timings``, or a local
    llama-cpp-python server's log): :mod:`agent.core.llm.server_times`; None when it does not say."""
    prompt_short: bool = False
    """The server counted far fewer prompt tokens than were sent: parts of the prompt never arrived."""

    @property
    def ok(self) -> bool:
        return self.error is None
