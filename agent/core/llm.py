"""The LLM client: one Chat Completions call with retries, structured output and its fallback.

Any OpenAI-compatible server works, since only ``POST {base_url}/chat/completions`` is used.
Provider failures never raise: they come back as :attr:`LLMResult.error`, a short line that is
safe to log and show (the API key is never in it). Cancellation does raise, at once, because the
session cancels calls whose game went away or whose turn deadline passed.

Retries (tenacity, the SDK's own retries off): timeouts, connection errors, 408/409/429 and 5xx,
waiting ``initial_backoff * 2**n`` (with a little jitter) or the server's Retry-After, never more
than ``max_backoff``; at most ``max_attempts`` tries. Other 4xx are final, except that a 400/422
aimed at a request parameter (``response_format``, ``temperature``, ``max_tokens``) makes the
client drop or change that parameter, ask again, and remember the change for later calls.

Bounds: every HTTP request waits for a slot of the client's :class:`LLMGate` (``llm.max_in_flight``
requests at once for the whole process, waiting plays served before waiting chats), and a reply
far longer than ``max_tokens`` could produce is refused unparsed. Finding the JSON in a reply is
linear in its length, and a long reply is searched in a worker thread, so no reply stalls the
event loop the other games share.
"""

from __future__ import annotations

import asyncio
import email.utils
import heapq
import itertools
import json
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from agent.core.config import LLMConfig

log = logging.getLogger(__name__)

Mode = Literal["json_schema", "json_object", "text"]
Priority = Literal["play", "chat"]
"""Who is waiting: a turn the game is waiting on goes before a chat answer."""

CHARS_PER_TOKEN_LIMIT = 32
"""A reply longer than ``max_tokens`` times this cannot be a reply cut at ``max_tokens`` (a token
is about 4 characters of English; the longest tokens, runs of spaces, are about 30)."""
MIN_REPLY_CHARS = 16_384
OFF_LOOP_CHARS = 4_096
"""Replies longer than this are searched for JSON in a worker thread."""
MAX_JSON_CANDIDATES = 32
"""Objects tried with json.loads per text block: bounds the work whatever the reply holds."""
_PRIORITY_RANK: dict[Priority, int] = {"play": 0, "chat": 1}
MIN_BODY_BYTES = 1_048_576
BODY_BYTES_PER_CHAR = 8
"""Room for JSON escapes (six bytes for a \\uXXXX) and the response's envelope."""


class ReplyTooLarge(Exception):
    """The provider announced a response body far larger than any reply we asked for."""

    def __init__(self, size: int) -> None:
        super().__init__(f"response body of {size} bytes")
        self.size = size

# Sent when the server takes no key: the SDK insists on one, and an explicit placeholder keeps it
# from picking up an unrelated OPENAI_API_KEY from the environment.
PLACEHOLDER_KEY = "no-key-required"

_STATUS_WORDS = {
    400: "bad request",
    401: "invalid API key",
    403: "permission denied",
    404: "not found (check base_url and model)",
    408: "request timeout",
    409: "conflict",
    413: "request too large",
    422: "unprocessable request",
    429: "rate limited",
}


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
    latency_s: float = 0.0
    """Wall time of the whole call, retries and fallbacks included."""
    attempts: list[LLMAttempt] = field(default_factory=list)
    model: str = ""
    """The model that answered (as the server names it), else the configured one."""
    fell_back_to_text: bool = False
    """JSON was wanted through response_format but this reply was asked for as plain text."""
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class LLMGate:
    """At most ``limit`` LLM requests in flight; waiting plays are served before waiting chats.

    One gate per process (the client owns one; pass the same gate to several clients to share
    it), so a game flooded with chat cannot use up the provider's rate limit for the others, and
    a turn the game is waiting on is never queued behind chat answers. FIFO within a priority.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("an LLM gate needs at least one slot")
        self.limit = limit
        self._in_flight = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self.max_seen = 0
        """The most requests that were in flight at once (for tests and benchmarks)."""

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def waiting(self) -> int:
        return sum(1 for *_, fut in self._waiters if not fut.done())

    @asynccontextmanager
    async def slot(self, priority: Priority = "play") -> AsyncIterator[None]:
        """Hold one slot for the block; cancellation while waiting leaves the gate as it was."""
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, priority: Priority) -> None:
        if self._in_flight < self.limit and not self.waiting:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (_PRIORITY_RANK[priority], next(self._order), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # the slot was handed over just as the caller gave up: pass it on
            else:
                fut.cancel()  # dropped from the heap when it reaches the top
            raise

    def _take(self) -> None:
        self._in_flight += 1
        self.max_seen = max(self.max_seen, self._in_flight)

    def _release(self) -> None:
        self._in_flight -= 1
        while self._waiters and self._in_flight < self.limit:
            *_, fut = heapq.heappop(self._waiters)
            if not fut.done():
                self._take()
                fut.set_result(None)


class LLMClient:
    """A client for one OpenAI-compatible endpoint; share it between sessions or make one each.

    ``gate`` bounds the requests in flight; by default the client makes its own from
    ``config.max_in_flight``, which is process-wide when the process has one client (each game
    makes one and shares it between its sessions).
    """

    def __init__(self, config: LLMConfig, api_key: str | None, gate: LLMGate | None = None) -> None:
        self._config = config
        self.gate = gate or LLMGate(config.max_in_flight)
        self.max_reply_chars = max(MIN_REPLY_CHARS, config.max_tokens * CHARS_PER_TOKEN_LIMIT)
        self._secret = api_key or ""
        self._mode: Mode = config.structured_output
        self._send_temperature = True
        self._use_max_completion_tokens = False
        self._rng = random.Random()
        # A body far larger than any reply of max_tokens is refused from its Content-Length,
        # before the SDK reads and parses it on the event loop the other games share.
        self.max_body_bytes = max(MIN_BODY_BYTES, self.max_reply_chars * BODY_BYTES_PER_CHAR)
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=config.base_url,  # None lets the SDK use OPENAI_BASE_URL or its default
            max_retries=0,
            timeout=config.request_timeout,
            http_client=openai.DefaultAsyncHttpxClient(event_hooks={"response": [self._check_body_size]}),
        )

    def warm_up(self) -> None:
        """Load what the SDK loads lazily on the first call (its chat resource, the response
        types), so the first turn of the first game does not wait for it. Sync: call at start-up."""
        try:
            from openai.types.chat import ChatCompletion

            _ = self._sdk.chat.completions
            ChatCompletion.model_validate({
                "id": "warm-up", "object": "chat.completion", "created": 0, "model": self._config.model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "{}"}}]})
        except Exception as exc:  # an SDK that changed shape: only the first call pays
            log.debug("LLM client warm-up skipped: %s", type(exc).__name__)

    async def _check_body_size(self, response: Any) -> None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body_bytes:
            raise ReplyTooLarge(int(length))

    def __repr__(self) -> str:  # never show the key
        return f"LLMClient(model={self._config.model!r}, base_url={self.base_url!r}, mode={self._mode!r})"

    @property
    def model(self) -> str:
        """The model every call asks for."""
        return self._config.model

    @property
    def base_url(self) -> str:
        """The endpoint in use, with any user:password@ part masked."""
        return re.sub(r"//[^/@]*@", "//***@", str(self._sdk.base_url))

    @property
    def structured_output(self) -> Mode:
        """How JSON is asked for now: the configured mode until the server rejected it."""
        return self._mode

    async def aclose(self) -> None:
        await self._sdk.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete_json(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any],
                            schema_name: str = "reply", *, priority: Priority = "play") -> LLMResult:
        """Ask for a JSON object matching ``schema``; ``result.data`` holds it when ``result.ok``.

        With json_schema mode the schema must follow OpenAI's strict rules (every property
        required, ``additionalProperties: false``). Nothing here checks the reply against the
        schema beyond parsing: the caller validates (pydantic) and may ask again with feedback.
        """
        return await self._complete(list(messages), schema, schema_name, priority)

    async def complete_text(self, messages: Sequence[dict[str, Any]], *, priority: Priority = "play") -> LLMResult:
        """Ask for free text (e.g. a chat line); ``result.text`` holds it when ``result.ok``.

        ``priority="chat"`` for anything nobody's turn waits on: it waits behind plays for a slot.
        """
        return await self._complete(list(messages), None, "", priority)

    # ---- one call -------------------------------------------------------------------------------

    async def _complete(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
                        schema_name: str, priority: Priority = "play") -> LLMResult:
        started = time.monotonic()
        result = LLMResult(model=self._config.model)
        mode: Mode = self._mode if schema is not None else "text"
        remember_text_on_success = False
        # Each parameter can be changed once, so a server that keeps saying 400 ends the call.
        for _ in range(4):
            request = self._request(messages, schema, schema_name, mode)
            tries_before = len(result.attempts)
            try:
                completion = await self._with_retries(request, mode, result.attempts, priority)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                change = self._adapt(exc, mode)
                if change is None:
                    result.error = self._describe(exc, len(result.attempts) - tries_before)
                    break
                log.warning("provider rejected the request (HTTP %s: %s); %s",
                            exc.status_code, self._provider_message(exc), _CHANGES[change])
                if change in ("text", "text_once"):
                    mode = "text"
                    remember_text_on_success = change == "text_once"
                continue
            except Exception as exc:
                result.error = self._describe(exc, len(result.attempts) - tries_before)
                break
            if remember_text_on_success:
                self._mode = "text"
            await self._read(completion, result, parse_json=schema is not None)
            break
        else:
            result.error = "provider kept rejecting the request parameters"
        result.fell_back_to_text = schema is not None and mode == "text" and self._config.structured_output != "text"
        result.latency_s = time.monotonic() - started
        if result.error:
            log.warning("LLM call failed: %s", result.error)
        return result

    def _request(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                 mode: Mode) -> dict[str, Any]:
        cfg = self._config
        request: dict[str, Any] = {"model": cfg.model}
        limit_key = "max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"
        request[limit_key] = cfg.max_tokens
        if self._send_temperature:
            request["temperature"] = cfg.temperature
        if schema is not None and mode == "json_schema":
            request["response_format"] = {"type": "json_schema", "json_schema": {
                "name": _schema_name(schema_name), "schema": schema, "strict": True}}
        elif schema is not None:
            # Without a server-enforced schema the model must be told the shape in words.
            messages = _with_schema_instruction(messages, schema)
            if mode == "json_object":
                request["response_format"] = {"type": "json_object"}
        request["messages"] = messages
        return request

    def _adapt(self, exc: openai.APIStatusError, mode: Mode) -> str | None:
        """Change what later requests send after a 400/422; the key of _CHANGES, or None."""
        said = f"{exc.param or ''} {self._provider_message(exc)}".lower()
        if mode != "text" and any(w in said for w in ("response_format", "json_schema", "json_object",
                                                      "structured", "schema")):
            self._mode = "text"
            return "text"
        if self._send_temperature and "temperature" in said:
            self._send_temperature = False
            return "temperature"
        if not self._use_max_completion_tokens and "max_tokens" in said:
            self._use_max_completion_tokens = True
            return "max_completion_tokens"
        if mode != "text":
            # A bare 400 may still be about response_format (servers word it many ways): try once
            # without it, and keep plain text only if that then works.
            return "text_once"
        return None

    async def _with_retries(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                            priority: Priority) -> Any:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._config.retry.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(_retryable),
            before_sleep=self._log_retry,
            reraise=True,
        )
        return await retrying(self._attempt, request, mode, attempts, priority)

    async def _attempt(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                       priority: Priority) -> Any:
        timeout = self._config.request_timeout
        # A slot per request, not per call: a call sleeping before its retry holds none. The wait
        # for a slot is not the request's time; the caller's deadline bounds both.
        async with self.gate.slot(priority):
            started = time.monotonic()
            try:
                # The SDK's timeout bounds each read; asyncio.timeout bounds the whole request, so
                # a server that trickles bytes cannot hold a turn past request_timeout.
                async with asyncio.timeout(timeout):
                    completion = await self._sdk.chat.completions.create(**request, timeout=timeout)
            except Exception as exc:
                attempts.append(LLMAttempt(mode, _status(exc), type(exc).__name__, time.monotonic() - started))
                raise
            attempts.append(LLMAttempt(mode, 200, None, time.monotonic() - started))
            return completion

    def _wait(self, state: RetryCallState) -> float:
        retry = self._config.retry
        exc = state.outcome.exception() if state.outcome else None
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, retry.max_backoff)
        backoff = retry.initial_backoff * 2 ** (state.attempt_number - 1)
        # Jitter spreads out sessions that failed together (8 games hitting one rate limit).
        return min(retry.max_backoff, backoff * self._rng.uniform(0.8, 1.2))

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning("LLM attempt %d/%d failed (%s); retrying in %.2fs", state.attempt_number,
                    self._config.retry.max_attempts, self._describe(exc, None), wait)

    # ---- reading replies and describing failures ------------------------------------------------

    async def _read(self, completion: Any, result: LLMResult, *, parse_json: bool) -> None:
        try:
            choice = completion.choices[0]
            message = choice.message
            text = message.content or ""
            result.finish_reason = choice.finish_reason
            result.model = str(completion.model or self._config.model)
            usage = completion.usage
            if usage is not None:
                result.prompt_tokens = int(usage.prompt_tokens or 0)
                result.completion_tokens = int(usage.completion_tokens or 0)
        except (AttributeError, IndexError, TypeError, ValueError) as exc:
            result.error = f"malformed response from provider ({type(exc).__name__})"
            return
        if len(text) > self.max_reply_chars:
            # Far more than max_tokens allows: not a move, and parsing it would only cost time.
            result.text = text[: self.max_reply_chars]
            result.error = (f"reply of {len(text)} characters is far over max_tokens={self._config.max_tokens}; "
                            "not used")
            return
        result.text = text
        if not text.strip():
            refusal = getattr(message, "refusal", None)
            result.error = f"model refused: {self._clean(refusal, 120)}" if refusal else "empty reply from model"
            return
        if not parse_json:
            return
        if len(text) > OFF_LOOP_CHARS:
            result.data = await asyncio.to_thread(extract_json, text)
        else:
            result.data = extract_json(text)
        if result.data is None:
            if result.finish_reason == "length":
                result.error = f"reply cut off at max_tokens={self._config.max_tokens} before the JSON ended"
            else:
                result.error = f"reply is not a JSON object: {self._clean(text, 80)!r}"

    def _describe(self, exc: BaseException | None, tries: int | None) -> str:
        """A short, specific, key-free line for an exception."""
        n = f" ({tries} attempt{'s' if tries != 1 else ''})" if tries else ""
        if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
            return f"timed out after {self._config.request_timeout:g}s{n}"
        too_large = exc if isinstance(exc, ReplyTooLarge) else getattr(exc, "__cause__", None)
        if isinstance(too_large, ReplyTooLarge):  # raw or wrapped, depending on the SDK's version
            return f"reply of {too_large.size} bytes is far over max_tokens={self._config.max_tokens}; not read{n}"
        if isinstance(exc, openai.APIConnectionError):
            cause = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
            return f"cannot reach {self.base_url}{n}: {cause}"
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            words = _STATUS_WORDS.get(status, "server error" if status >= 500 else "error")
            return f"HTTP {status} from provider: {words}{n}: {self._provider_message(exc)}"
        if isinstance(exc, UnicodeEncodeError):  # our request, not their answer
            return f"request could not be encoded{n}: {exc.reason}"
        if isinstance(exc, ValueError):  # the SDK could not decode the body
            return f"malformed response from provider{n}: {type(exc).__name__}"
        return f"{type(exc).__name__}{n}: {self._clean(str(exc), 120)}"

    def _provider_message(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        if isinstance(body, dict):
            text = body.get("message") or body.get("error") or json.dumps(body)
        else:
            text = body if isinstance(body, str) and body else exc.message
        return self._clean(str(text), 160)

    def _clean(self, text: object, limit: int) -> str:
        """One line, bounded, with anything key-like removed (some servers echo the key back)."""
        line = " ".join(str(text)[: 4 * limit].split())
        if self._secret:
            line = line.replace(self._secret, "***")
        line = _KEYLIKE.sub(r"\1***", line)
        return line if len(line) <= limit else line[: limit - 1] + "…"


_CHANGES = {
    "text": "asking in plain text from now on",
    "text_once": "asking in plain text this once",
    "temperature": "leaving out temperature from now on",
    "max_completion_tokens": "sending max_completion_tokens instead of max_tokens from now on",
}

_KEYLIKE = re.compile(r"\b(sk-|Bearer\s+)[\w\-*.]{4,}", re.IGNORECASE)


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, ReplyTooLarge) or isinstance(exc.__cause__, ReplyTooLarge):
        return False  # asking again would bring the same flood
    if isinstance(exc, (openai.APIConnectionError, TimeoutError)):  # APITimeoutError included
        return True
    if isinstance(exc, openai.APIStatusError):
        if exc.code == "insufficient_quota":  # a 429 that waiting will not fix
            return False
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def _status(exc: BaseException) -> int | None:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def _retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, Retry-After seconds or date)."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def _schema_name(name: str) -> str:
    # OpenAI accepts [a-zA-Z0-9_-]{1,64} only.
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "reply"


def _with_schema_instruction(messages: list[dict[str, Any]], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Add the schema to the first system message (some chat templates allow only one, first)."""
    note = ("Answer with one JSON object and nothing else (no prose, no code fences). "
            "It must match this JSON Schema:\n" + json.dumps(schema, separators=(",", ":")))
    out = [dict(m) for m in messages]
    for message in out:
        if message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": note}]
            else:
                message["content"] = f"{content or ''}\n\n{note}".strip()
            return out
    return [{"role": "system", "content": note}, *out]


# ---- JSON extraction ------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\n?(.*?)```", re.DOTALL)


def extract_json(text: str | None) -> dict[str, Any] | None:
    """The first complete JSON object in a model's reply, or None.

    Copes with code fences, prose before and after, braces inside strings and trailing commas.
    A reply cut off mid-object gives None rather than one of its inner objects. Linear in the
    length of the text: the braces are matched in one pass, and at most MAX_JSON_CANDIDATES
    spans that can start an object (``{`` then ``"`` or ``}``) are handed to json.loads.
    """
    if not text:
        return None
    for block in _FENCE.findall(text):
        found, _ = _first_object(block)
        if found is not None:
            return found
    found, cut = _first_object(text)
    if found is None and not cut:
        # A lone double quote in the prose before the object ("a 5" side") makes the one pass take
        # the object for the inside of a string: look again from the first few places an object
        # could start. A bounded number of passes keeps this linear.
        for match in itertools.islice(_OBJECT_START.finditer(text), MAX_RESCANS):
            found, cut = _first_object(text, match.start())
            if found is not None or cut:
                break
    return found


_OBJECT_START = re.compile(r'\{\s*["}]')
MAX_RESCANS = 4


def _first_object(text: str, begin: int = 0) -> tuple[dict[str, Any] | None, bool]:
    """The first object from ``begin``, and whether the search stopped at an unterminated one."""
    tried = 0
    for start, end in _object_spans(text, begin):
        if end is None:
            return None, True  # unterminated: whatever follows is a fragment of it
        if tried >= MAX_JSON_CANDIDATES:
            return None, False
        tried += 1
        span = text[start:end]
        for candidate in (span, _drop_trailing_commas(span)):
            try:
                value = json.loads(candidate)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                return value, False
        # Not JSON as a whole; an object may still sit inside (prose in braces): the next span.
    return None, False


def _object_spans(text: str, begin: int = 0) -> Iterator[tuple[int, int | None]]:
    """(start, end) of every ``{`` that can open a JSON object, in text order; end is None when
    the brace is never closed. One pass with a stack: brackets of either kind nest together."""
    closes: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in _scan(text, begin):
        if ch in "{[":
            stack.append(i)
        elif ch in "}]" and stack:
            closes[stack.pop()] = i + 1
    for i, ch in _scan(text, begin):
        if ch != "{":
            continue
        j = i + 1
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j < len(text) and text[j] not in '"}':
            continue  # "{{", "{x": prose or a broken key, never the start of an object
        yield i, closes.get(i)
        if i not in closes:
            return


def _scan(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(index, char) for every character outside JSON strings, string contents skipped."""
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        yield i, ch


_TRAILING_COMMA = re.compile(r",\s*[}\]]")


def _drop_trailing_commas(text: str) -> str:
    if not _TRAILING_COMMA.search(text):
        return text  # the common case, found at C speed
    drop = set()
    for i, ch in _scan(text):
        if ch == ",":
            j = i + 1
            while j < len(text) and text[j].isspace():
                j += 1
            if j < len(text) and text[j] in "}]":
                drop.add(i)
    if not drop:
        return text
    return "".join(ch for i, ch in enumerate(text) if i not in drop)
