"""The model's context window: read from the server where it says, learnt from its refusals, and
whether a prompt fits it.

Servers tell their window in different places: llama.cpp's ``llama-server`` at ``GET /props``
(``default_generation_settings.n_ctx``), vLLM in its model list (``max_model_len``), LM Studio's
own list (``loaded_context_length``); llama-cpp-python and Ollama say it only when a prompt is too
long (an error naming "maximum context length", or Ollama cutting the prompt silently, which the
prompt-arrival check sees). ``llm.context_tokens`` in the config overrides them all.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp

log = logging.getLogger(__name__)

FIT_MARGIN = 1.25
"""Our estimate of a prompt's tokens errs low (four characters a token: the servers counted
106-120 % of it for our games' prompts): a prompt fits when this times the estimate, plus the
answer's max_tokens, is inside the window."""
TOO_LONG_FIX = ("give the model a larger context (Ollama: num_ctx or OLLAMA_CONTEXT_LENGTH; llama.cpp: --ctx-size / "
                "n_ctx; vLLM: --max-model-len), or lower llm.max_tokens")
READ_TIMEOUT_S = 5.0
MAX_BODY_BYTES = 1_000_000
MIN_WINDOW = 256
MAX_WINDOW = 10_000_000
MODEL_FIELDS = ("max_model_len", "loaded_context_length", "context_length", "max_context_length")

_REFUSAL_PATTERNS = (
    re.compile(r"maximum context length is (\d+)"),  # OpenAI, vLLM, llama-cpp-python
    re.compile(r"context window of (\d+)"),  # llama-cpp-python's own words
    re.compile(r'"?n_ctx"?\s*[:=]\s*(\d+)'),  # llama-server's exceed_context_size_error
    re.compile(r"context (?:length|size) (?:of |is )?(\d+)"),
)
_CONTEXT_WORDS = ("context length", "context window", "context size", "context_length_exceeded",
                  "exceed_context_size", "exceeds the available context")


def is_context_refusal(said: str) -> bool:
    """The server refused the request because the prompt (and the answer's room) is too long."""
    said = said.lower()
    return any(w in said for w in _CONTEXT_WORDS)


def window_from_refusal(said: str) -> int | None:
    """The window a too-long refusal names, or None."""
    for pattern in _REFUSAL_PATTERNS:
        match = pattern.search(said.lower())
        if match:
            return _plausible(match.group(1))
    return None


def fits(estimate: int, reply_tokens: int, window: int | None) -> bool:
    return window is None or estimate * FIT_MARGIN + reply_tokens <= window


def _plausible(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if MIN_WINDOW <= number <= MAX_WINDOW else None


def window_from_props(body: Any) -> int | None:
    """llama-server's ``GET /props``."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict) and "n_ctx" in settings:
        return _plausible(settings["n_ctx"])
    return _plausible(body.get("n_ctx"))


def window_from_models(body: Any, model: str) -> int | None:
    """A model list (``GET /v1/models``, LM Studio's ``/api/v0/models``): the named model's window,
    or the only model's when the list has one."""
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in named:
        for key in MODEL_FIELDS:
            found = _plausible(entry.get(key))
            if found:
                return found
    return None


def is_llama_server(body: Any) -> bool:
    """llama.cpp's ``llama-server`` answers ``GET /props`` with its generation settings."""
    return isinstance(body, dict) and isinstance(body.get("default_generation_settings"), dict)


def is_llama_cpp_python(body: Any) -> bool:
    """llama-cpp-python's server lists its models as owned by "me", each with a ``permissions`` list."""
    entries = body.get("data") if isinstance(body, dict) else None
    return isinstance(entries, list) and bool(entries) and all(
        isinstance(e, dict) and e.get("owned_by") == "me" and isinstance(e.get("permissions"), list)
        for e in entries)


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What a server tells of itself when asked (never required)."""

    window: int | None = None
    llama_server: bool = False
    """llama.cpp's own server: it takes a GBNF ``grammar`` (``agent/core/llm/gbnf.py``)."""
    finishes_abandoned: bool = False
    """llama-cpp-python's server: it answers one request at a time and, once it has begun one, reads
    and answers it whole even after the client gave up (it looks for a closed connection only before
    it starts). A request given up and sent again there waits for the abandoned one first."""


async def read_server(base_url: str, model: str, headers: dict[str, str]) -> ServerFacts:
    """Ask the server for its context window (llama-server's /props, the model list) and which server
    it is (llama-server, llama-cpp-python), both at once; nothing known when it does not say. Never
    raises: a server without these routes is the common case."""
    root = re.sub(r"/v\d+/?$", "", base_url.rstrip("/"))
    reads: tuple[tuple[str, Callable[[Any], int | None]], ...] = (
        (f"{root}/props", window_from_props),
        (f"{base_url.rstrip('/')}/models", lambda body: window_from_models(body, model)))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=READ_TIMEOUT_S), headers=headers) as http:
        bodies = await asyncio.gather(*(_get_json(http, url) for url, _ in reads))
    for (_, read), parsed in zip(reads, bodies, strict=True):
        if parsed is _NOTHING:
            continue
        found, llama, serial = read(parsed), is_llama_server(parsed), is_llama_cpp_python(parsed)
        if found or llama or serial:
            return ServerFacts(found, llama, serial)
    return ServerFacts()


_NOTHING = object()


async def _get_json(http: aiohttp.ClientSession, url: str) -> Any:
    """The JSON body of ``GET url`` (None when it is not JSON), or ``_NOTHING`` when it failed."""
    try:
        async with http.get(url) as response:
            if response.status != 200 or (response.content_length or 0) > MAX_BODY_BYTES:
                return _NOTHING
            body = await response.content.read(MAX_BODY_BYTES + 1)
        return json.loads(body) if len(body) <= MAX_BODY_BYTES else None
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        log.debug("context window not read from %s: %s", url, type(exc).__name__)
        return _NOTHING
