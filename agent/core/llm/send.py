"""One request to the endpoint, with its retries and its time limit.

Retries (tenacity, the SDK's own retries off): timeouts, connection errors, 408/409/429 and 5xx,
waiting ``initial_backoff * 2**n`` (with a little jitter) or the server's Retry-After, never more
than ``max_backoff``; at most ``max_attempts`` tries. A refused request parameter is not asked
again here: the client changes the request first.

Each request waits for a slot of the client's :class:`LLMGate` and is bounded by
``request_timeout``, except on a server that answers one request at a time and finishes every
request it began (llama-cpp-python's). There a request given up still holds the server until it is
answered, so giving up early and asking again only waits longer, and a request sent while another
runs waits unseen in the server's queue. So there: requests wait for the server's one slot here
(plays before chats); a request whose caller gave up keeps the slot until the server answered it
(the caller is not kept waiting); a decision's request may run to the decision's own deadline, the
start-up priming (nobody waits on it) to SERVER_ANSWER_LIMIT_S; and a request that timed out is not
sent again behind itself.

A request asked for as a stream (``llm.stream``, on by default for the server ``--local-model``
starts: :mod:`agent.core.llm.stream`) is stopped there: once its caller gave up, the stream is closed at its
next event (the first comes when the server has read the prompt, which it does not stop), the server
stops at its next token, and the server's slot is free for the next call.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from agent.core.config import LLMConfig
from agent.core.llm.endpoint import Endpoint
from agent.core.llm.errors import Describer, RequestTimedOut, retry_after, retryable, status_of
from agent.core.llm.gate import LLMGate
from agent.core.llm.result import LLMAttempt, Mode, Priority
from agent.core.llm.stream import post_streamed, wire_body

log = logging.getLogger(__name__)

SERVER_ANSWER_LIMIT_S = 300.0
"""On a server that finishes every request it began: how long the priming may take (nobody waits on
it, and a first read of a long prompt on a CPU takes a minute or more there), and how long a request
given up may keep the server's slot before the connection is closed on it."""

SKIP_MARGIN_S = 0.1
"""A decision that cannot have the one-at-a-time server's slot this long before its deadline is not
sent: its fallback answers inside the deadline, not at it."""

Timeout = Callable[[], float]
"""The time limit of the next request, asked when it is about to go out (after its wait for a slot)."""


@dataclass(slots=True)
class Reservation:
    """The one-at-a-time server's slot, taken for a call before it goes out (in priority order, within
    its deadline); its first request takes it over, else :meth:`Sender.release` gives it back."""

    held: bool = True


class Sender:
    """Sends one request to the endpoint (``send``); shared by the client's calls."""

    def __init__(self, config: LLMConfig, sdk: openai.AsyncOpenAI, gate: LLMGate, endpoint: Endpoint,
                 errors: Describer, max_reply_chars: int) -> None:
        self._config = config
        self._max_reply_chars = max_reply_chars
        self._sdk = sdk
        self._gate = gate
        self._endpoint = endpoint
        self._errors = errors
        self._rng = random.Random()
        self._on_server: set[asyncio.Task[Any]] = set()
        """Requests a one-at-a-time server is answering (their callers may have given up): closed with the client."""

    async def aclose(self) -> None:
        for task in list(self._on_server):
            task.cancel()
        await asyncio.gather(*self._on_server, return_exceptions=True)

    async def reserve(self, priority: Priority, deadline: float) -> Reservation | None:
        """The server's slot for a call, or None when it is not free by ``deadline`` (less a margin)."""
        try:
            async with asyncio.timeout_at(deadline - SKIP_MARGIN_S):
                await self._endpoint.server_slot.acquire(priority)
        except TimeoutError:
            return None
        return Reservation()

    def release(self, reservation: Reservation) -> None:
        if reservation.held:
            reservation.held = False
            self._endpoint.server_slot.release()

    def timeout(self, deadline: float | None, priming: bool) -> Timeout:
        """Each request's time limit for a call with this ``deadline`` (the event loop's time)."""
        configured = self._config.request_timeout

        def limit() -> float:
            if not self._endpoint.finishes_abandoned:
                return configured
            if priming:
                return max(configured, SERVER_ANSWER_LIMIT_S)
            if deadline is not None:
                return max(configured, deadline - asyncio.get_running_loop().time())
            return configured
        return limit

    async def send(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                   priority: Priority, timeout: Timeout, reservation: Reservation | None = None) -> Any:
        """The completion, after retries; each try appended to ``attempts``; the last failure raised."""
        sent = request["messages"]

        def again(exc: BaseException) -> bool:
            refused = self._endpoint.refusal(exc, mode, sent) if isinstance(exc, openai.APIStatusError) else None
            if refused in ("structured", "images"):
                return False  # a refused parameter: asking the same again brings the same refusal
            if self._endpoint.finishes_abandoned and isinstance(exc, (openai.APITimeoutError, TimeoutError)):
                return False  # the server still reads the request given up: a new one would queue behind it
            return retryable(exc)

        retrying = AsyncRetrying(stop=stop_after_attempt(self._config.retry.max_attempts), wait=self._wait,
                                 retry=lambda state: bool(state.outcome and state.outcome.failed
                                                          and again(state.outcome.exception())),
                                 before_sleep=self._log_retry, reraise=True)
        return await retrying(self._attempt, request, mode, attempts, priority, timeout, reservation)

    async def _attempt(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                       priority: Priority, request_timeout: Timeout, reservation: Reservation | None) -> Any:
        # A slot per request, not per call: a call sleeping before its retry holds none. The wait
        # for a slot is not the request's time; the caller's deadline bounds both. The server's own
        # slot (a one-at-a-time server) is taken first, always in that order.
        serial = self._endpoint.finishes_abandoned
        if serial:
            if reservation is not None and reservation.held:
                reservation.held = False  # the request's task holds it from here
            else:
                await self._endpoint.server_slot.acquire(priority)
        wait = None
        try:
            async with self._gate.slot(priority):
                if serial:
                    # Its own task, holding the server's slot until the server is done with the request:
                    # the caller may give up (its time limit, its deadline). The server goes on with a
                    # request not streamed anyway; a stream given up is closed at its next event (the
                    # prompt read, which the server does not stop, is over then), and the server stops.
                    gave_up = asyncio.Event()
                    work = asyncio.ensure_future(self._create(request, SERVER_ANSWER_LIMIT_S, gave_up))
                    work.add_done_callback(self._server_answered)
                    self._on_server.add(work)
                    wait = asyncio.shield(work)
                    try:
                        return await self._timed(request, mode, attempts, request_timeout, wait)
                    except BaseException:
                        gave_up.set()
                        raise
                return await self._timed(request, mode, attempts, request_timeout, wait)
        finally:
            if serial and wait is None:
                self._endpoint.server_slot.release()  # never sent (cancelled waiting for the process's gate)

    async def _timed(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                     request_timeout: Timeout, wait: asyncio.Future[Any] | None) -> Any:
        timeout = request_timeout()
        started = time.monotonic()
        try:
            # The SDK's timeout bounds each read; asyncio.timeout bounds the whole request, so
            # a server that trickles bytes cannot hold a turn past its time limit.
            try:
                async with asyncio.timeout(timeout):
                    completion = await (wait if wait is not None else self._create(request, timeout))
            except TimeoutError as exc:
                raise RequestTimedOut(timeout) from exc
        except Exception as exc:
            attempts.append(LLMAttempt(mode, status_of(exc), type(exc).__name__, time.monotonic() - started))
            raise
        attempts.append(LLMAttempt(mode, 200, None, time.monotonic() - started))
        return completion

    async def _create(self, request: dict[str, Any], timeout: float, gave_up: asyncio.Event | None = None) -> Any:
        if self._endpoint.streams:
            return await post_streamed(self._sdk, request, timeout, self._max_reply_chars, gave_up)
        return await post_completion(self._sdk, request, timeout)

    def _server_answered(self, work: asyncio.Task[Any]) -> None:
        """A one-at-a-time server's request ended (answered, failed, or the client closed): its slot is free."""
        self._endpoint.server_slot.release()
        self._on_server.discard(work)
        if not work.cancelled() and work.exception() is not None:
            log.debug("a request to a one-at-a-time server ended with %s", type(work.exception()).__name__)

    def _wait(self, state: RetryCallState) -> float:
        retry = self._config.retry
        exc = state.outcome.exception() if state.outcome else None
        hinted = retry_after(exc)
        if hinted is not None:
            return min(hinted, retry.max_backoff)
        backoff = retry.initial_backoff * 2 ** (state.attempt_number - 1)
        # Jitter spreads out sessions that failed together (8 games hitting one rate limit).
        return min(retry.max_backoff, backoff * self._rng.uniform(0.8, 1.2))

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning("LLM attempt %d/%d failed (%s); retrying in %.2fs", state.attempt_number,
                    self._config.retry.max_attempts, self._errors.describe(exc, None), wait)


async def post_completion(sdk: openai.AsyncOpenAI, request: dict[str, Any], timeout: float) -> ChatCompletion:
    """What ``sdk.chat.completions.create(**request)`` sends and returns, without the SDK's walk over
    every message part to transform its types: for a body of pictures that walk took milliseconds a
    call on the event loop every game shares (py-spy, 4 games at once). The body goes out encoded
    once, as JSON bytes; the SDK's own client still sends it (headers, time limit, response checks)."""
    encoded, headers = wire_body(request)
    return await sdk.post("/chat/completions", cast_to=ChatCompletion, content=encoded,
                          options={"headers": headers, "timeout": timeout})
