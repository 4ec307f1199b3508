"""The LLM client: one Chat Completions call, with retries, in the endpoint's own dialect.

Any OpenAI-compatible server works, since only ``POST {base_url}/chat/completions`` is used.
Provider failures never raise: they come back as :attr:`LLMResult.error`, a short line that is
safe to log and show (the API key is never in it). Cancellation does raise, at once, because the
session cancels calls whose game went away or whose turn deadline passed.

Each request goes out with its retries and time limit through :mod:`agent.core.llm.send`. A
refusal of a request parameter (a 400/422,
or a 5xx whose words name it, as llama-cpp-python answers ``json_schema``) changes the endpoint's
:class:`~agent.core.llm.dialect.Dialect` for this and every later call, and the call asks again.

Beside its first calls the client probes the endpoint (:mod:`agent.core.llm.probe`): a few one-token
requests, all at once, show whether it drops the system message or a list of content parts; a first
call sent in a dialect they disprove is sent again in the one found. After every call it
compares the server's count of prompt tokens with its own estimate of what it sent; a prompt that
did not arrive whole is one clear warning and a change of dialect, never silent play.

Bounds: every HTTP request waits for a slot of the client's :class:`LLMGate`, and a reply far
longer than ``max_tokens`` could produce is refused unparsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import openai

from agent.core.config import LLMConfig
from agent.core.llm.body import BoundedBody
from agent.core.llm.bounds import bound_request, salvage
from agent.core.llm.dialect import (
    CHANGES,
    Dialect,
    estimate_tokens,
    has_images,
    prompt_arrived,
    prompt_text,
    shape_messages,
    shared_prefix_share,
)
from agent.core.llm.endpoint import PLACEHOLDER_KEY, Endpoint
from agent.core.llm.errors import Describer, ReplyTooLarge
from agent.core.llm.gate import LLMGate
from agent.core.llm.outage import PROBE_TIMEOUT_S, Outage
from agent.core.llm.pace import PaceVerdict
from agent.core.llm.probe import PROBE_HEADER
from agent.core.llm.reply import read_reply
from agent.core.llm.request import build_request, with_schema_note
from agent.core.llm.result import LLMResult, Mode, Priority
from agent.core.llm.sample import LLMSample
from agent.core.llm.send import Reservation, Sender
from agent.core.llm.server_times import ServerLog
from agent.core.llm.window import TOO_LONG_FIX, fits
from agent.core.prompts import PromptSet, load_prompts
from agent.core.resources import prompts_dir

log = logging.getLogger(__name__)

CHARS_PER_TOKEN_LIMIT = 32
"""A reply longer than ``max_tokens`` times this cannot be a reply cut at ``max_tokens`` (a token
is about 4 characters of English; the longest tokens, runs of spaces, are about 30)."""
MIN_REPLY_CHARS = 16_384
MIN_BODY_BYTES = 1_048_576
BODY_BYTES_PER_CHAR = 8
"""Room for JSON escapes (six bytes for a \\uXXXX) and the response's envelope."""
MAX_REQUESTS_CHANGED = 6
"""Requests a call may re-shape (a refused parameter or a prompt that did not arrive); each change
is a step down a finite ladder, so this is only a backstop."""
MAX_RESENT = 2
"""A call whose prompt did not arrive is sent again at most this often (parts, then the system role)."""
NOTE_TEMPLATES = ("schema", "no_images", "probe_system", "probe_user", "field_bound")
_NOTE_SAMPLE = {"schema_json": "{}", "nonce": "0", "n": 1}
REMEASURE_FIRST_S = 10.0
REMEASURE_MAX_S = 120.0
"""A benched endpoint (:mod:`agent.core.llm.pace`) is measured again in the background at most this
often: first after REMEASURE_FIRST_S, then twice as long after each measurement that was still too slow."""
MISS_SLACK_S = 0.5
"""A decision given up this close to its deadline (or later) missed its time."""
REASK_SCALE = 0.5
FIRST_CALL_SHARE = 0.5
"""With no decision measured yet, a decision waits for a one-at-a-time server's slot (the priming, a
request given up) at most until this share of its time is left for the call itself."""
"""A re-ask after an answer cut off at max_tokens halves every free-text bound."""

Compact = Callable[[], Sequence[dict[str, Any]]]
"""Makes the game's compact prompt (shorter rules, fewer history lines), sent when the full one does
not fit the model's context window."""


def load_notes() -> PromptSet:
    """The client's own texts (the schema in words, the no-pictures note, the probe)."""
    return load_prompts(prompts_dir("llm"), _NOTE_SAMPLE, NOTE_TEMPLATES)


class LLMClient:
    """A client for one OpenAI-compatible endpoint (base_url + model); share it between sessions.

    The endpoint's dialect lives here, so what one call learns every later call uses. ``gate``
    bounds the requests in flight; by default the client makes its own from
    ``config.max_in_flight``, which is process-wide when the process has one client (each game
    makes one and shares it between its sessions).
    """

    def __init__(self, config: LLMConfig, api_key: str | None, gate: LLMGate | None = None) -> None:
        self._config = config
        self.gate = gate or LLMGate(config.max_in_flight)
        self.max_reply_chars = max(MIN_REPLY_CHARS, config.max_tokens * CHARS_PER_TOKEN_LIMIT)
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
        self._errors = Describer(api_key or "", self.base_url, config.request_timeout, config.max_tokens)
        self._notes = load_notes()
        self.endpoint = Endpoint(config, self._sdk, self.gate, self._errors, self._notes, self.base_url)
        """The endpoint's dialect, context window and pace, as far as found."""
        self._sender = Sender(config, self._sdk, self.gate, self.endpoint, self._errors, self.max_reply_chars)
        self.outage = Outage(self.base_url, self._server_answers, config.server_status)
        """Whether the server answers at all: while it does not, calls are not sent (one line each way)."""
        self._server_log = ServerLog(config.server_status)
        """A local llama-cpp-python server's log, where it times each answer (server_times.py)."""
        self._prime_task: asyncio.Task[LLMResult] | None = None
        self._remeasure_task: asyncio.Task[None] | None = None
        self._remeasure_wait = REMEASURE_FIRST_S
        self._remeasure_at = 0.0

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
        # A body without a length (a stream, a chunked answer) is read no further than the bound either.
        response.stream = BoundedBody(response.stream, self.max_body_bytes)

    def __repr__(self) -> str:  # never show the key
        return f"LLMClient(model={self._config.model!r}, base_url={self.base_url!r}, mode={self.structured_output!r})"

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
        """How JSON is asked for now: the configured mode until the server refused it."""
        return self.dialect.structured

    @property
    def dialect(self) -> Dialect:
        """What requests to this endpoint look like now."""
        return self.endpoint.dialect

    @property
    def refused_requests(self) -> int:
        """Requests the endpoint refused for a parameter (the price of finding its dialect)."""
        return self.endpoint.refused_requests

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens as far as known (None: unknown)."""
        return self.endpoint.context_window

    @property
    def server_window(self) -> int | None:
        """The context window the server told when asked, if it did."""
        return self.endpoint.server_window

    async def ensure_dialect(self, *, images: bool = False, priority: Priority = "play") -> Dialect:
        """Probe the endpoint once (and its pictures, the first time ``images``); the dialect."""
        return await self.endpoint.ensure(images=images, priority=priority)

    async def _server_answers(self) -> bool:
        """The outage probe: any HTTP answer to the model list means the server is back."""
        try:
            await self._sdk.with_options(timeout=PROBE_TIMEOUT_S, max_retries=0).models.list()
        except openai.APIStatusError:
            return True
        except (openai.APIConnectionError, ReplyTooLarge):
            return False
        return True

    def _not_sent(self) -> LLMResult:
        return LLMResult(model=self._config.model, skipped=True, error=f"not asked: {self.outage.reason}",
                         endpoint=self.endpoint.record())

    def answers_within(self, seconds: float) -> bool:
        """Whether this endpoint can be expected to answer a call nobody paces (a chat reply) in
        ``seconds``: not while it is down or benched, nor when its recent decisions took longer, nor
        while a server that answers one request at a time still reads the start-up prompt."""
        if self.endpoint.finishes_abandoned and self._prime_task is not None and not self._prime_task.done():
            return False  # a one-at-a-time server still reading the start-up prompt: a chat would queue behind it
        return self.outage.answering and self.endpoint.pace.answers_within(seconds)

    async def aclose(self) -> None:
        await self.outage.aclose()
        if self._remeasure_task is not None and not self._remeasure_task.done():
            self._remeasure_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._remeasure_task
        if self._prime_task is not None and not self._prime_task.done():
            self._prime_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._prime_task
        await self._sender.aclose()
        await self._sdk.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete_json(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any],
                            schema_name: str = "reply", *, priority: Priority = "play",
                            max_tokens: int | None = None, deadline: float | None = None,
                            compact: Compact | None = None) -> LLMResult:
        """Ask for a JSON object matching ``schema``; ``result.data`` holds it when ``result.ok``.

        With json_schema mode the schema must follow OpenAI's strict rules (every property
        required, ``additionalProperties: false``). Nothing here checks the reply against the
        schema beyond parsing: the caller validates (pydantic) and may ask again with feedback.

        ``deadline`` (the event loop's time, as ``asyncio.timeout_at`` takes it): when this
        endpoint's recent decisions took longer than what is left, nothing is sent and the result
        says so at once (``skipped``), so the caller's fallback answers early, not late. The
        caller still bounds the call itself.

        ``compact`` makes a shorter form of ``messages``, sent instead when the full one does not
        fit the model's context window (:attr:`context_window`, or a refusal that names it); a
        prompt that fits in no form is not sent (an error that says so), never cut.
        """
        return await self._paced(list(messages), schema, schema_name, priority, max_tokens, deadline, compact)

    async def complete_text(self, messages: Sequence[dict[str, Any]], *, priority: Priority = "play",
                            max_tokens: int | None = None, deadline: float | None = None,
                            compact: Compact | None = None) -> LLMResult:
        """Ask for free text (e.g. a chat line); ``result.text`` holds it when ``result.ok``.

        ``priority="chat"`` for anything nobody's turn waits on: it waits behind plays for a slot.
        """
        return await self._paced(list(messages), None, "", priority, max_tokens, deadline, compact)

    async def _paced(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                     priority: Priority, max_tokens: int | None, deadline: float | None,
                     compact: Compact | None) -> LLMResult:
        """One call, unless the endpoint's pace says it cannot end before ``deadline``; its time
        (answered, or given up) goes into the pace of the endpoint's decisions. Only calls with a
        deadline are paced or measured: a call nobody waits on (a chat, a bee coach's plan) is often
        longer than the decisions one client also makes (the same coach's direct moves) and would
        make them look slow.

        On a server that answers one request at a time and finishes every request it began
        (llama-cpp-python) the call first waits for the server's slot (plays before chats): while
        the server still answers the start-up priming, a request given up or another game's turn.
        When that outlasts the deadline nothing is sent: sent, the call would wait in the server's
        queue and, given up at its deadline, hold the server for the next decision as well."""
        if not self.outage.answering:
            return self._not_sent()
        if priority == "chat":
            return await self._chat(messages, schema, schema_name, max_tokens, compact)
        if priority != "play" or deadline is None:
            return await self._complete(messages, schema, schema_name, priority, max_tokens, compact=compact)
        await self.endpoint.read_server_once()  # which server it is
        # The pace first: a benched or too slow endpoint costs the turn no wait, not even for the
        # server's slot (a request given up may still hold it: issue 69's turn that waited 84 s for it).
        loop = asyncio.get_running_loop()
        left = deadline - loop.time()
        verdict = self.endpoint.pace.verdict(left)
        skipped = self._skip(verdict, left, messages, schema, schema_name, max_tokens, compact)
        if skipped is not None:
            return skipped
        reservation = None
        if self.endpoint.finishes_abandoned:
            # The probes first: they take the server's slot too, and this call is about to hold it.
            await self.ensure_dialect(images=has_images(messages), priority=priority)
            # The slot is waited for only while a call of the recent length could still end in time;
            # with nothing measured yet (the first turn, behind the start-up priming), half the time left.
            needs = verdict.expected_s if verdict.expected_s is not None else left * FIRST_CALL_SHARE
            reservation = await self._sender.reserve(priority, deadline - needs)
            if reservation is None:
                busy = "the start-up prompt (priming)" if self._prime_task is not None \
                    and not self._prime_task.done() else "an earlier request"
                log.warning("LLM call not sent: the model server was still answering %s at the decision's deadline "
                            "(it answers one request at a time); the fallback answers now", busy)
                return LLMResult(model=self._config.model, skipped=True,
                                 error=f"not asked: the server was still answering {busy} at the deadline",
                                 endpoint=self.endpoint.record())
        try:
            return await self._measured(messages, schema, schema_name, priority, max_tokens, deadline, compact,
                                        reservation, verdict)
        finally:
            if reservation is not None:
                self._sender.release(reservation)  # unless its request took it over

    def _skip(self, verdict: PaceVerdict, left: float, messages: list[dict[str, Any]],
              schema: dict[str, Any] | None, schema_name: str, max_tokens: int | None,
              compact: Compact | None) -> LLMResult | None:
        """The result of a decision the pace says not to send (benched: measured again in the
        background), or None to send it."""
        pace = self.endpoint.pace
        if verdict.benched:
            self._remeasure_soon(messages, schema, schema_name, max_tokens, compact)
            return LLMResult(model=self._config.model, skipped=True, expected_s=verdict.expected_s,
                             error=f"not asked: the model missed its time on {pace.missed_in_a_row} decisions in a "
                                   "row; it is asked again once a request in the background shows it answers in time",
                             endpoint=self.endpoint.record())
        if not verdict.send:
            assert verdict.expected_s is not None
            log.warning("LLM call not sent: this endpoint's recent decisions took %.1f s (median), %.1f s were "
                        "left; the fallback answers now", verdict.expected_s, left)
            return LLMResult(model=self._config.model, skipped=True, expected_s=verdict.expected_s,
                             error=f"not asked: recent answers took {verdict.expected_s:.1f} s, "
                                   f"{max(left, 0.0):.1f} s were left",
                             endpoint=self.endpoint.record())
        return None

    async def _measured(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                        priority: Priority, max_tokens: int | None, deadline: float, compact: Compact | None,
                        reservation: Reservation | None, verdict: PaceVerdict) -> LLMResult:
        loop = asyncio.get_running_loop()
        pace = self.endpoint.pace
        started = time.monotonic()
        try:
            result = await self._complete(messages, schema, schema_name, priority, max_tokens, compact=compact,
                                          deadline=deadline, reservation=reservation)
        except asyncio.CancelledError:
            self._unfinished(time.monotonic() - started, missed=loop.time() >= deadline - MISS_SLACK_S)
            raise
        result.expected_s = verdict.expected_s
        last = result.attempts[-1] if result.attempts else None
        if last is not None and last.status == 200:
            pace.answered(last.latency_s)
        elif last is not None and last.status is None:  # the request timed out or the connection broke
            self._unfinished(last.latency_s, missed=loop.time() >= deadline - MISS_SLACK_S)
        return result

    async def _chat(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                    max_tokens: int | None, compact: Compact | None) -> LLMResult:
        """A chat reply, never skipped; its time (the request's own, not its wait for the server) goes
        into the endpoint's chat pace, which :meth:`answers_within` reads."""
        pace = self.endpoint.pace
        started = time.monotonic()
        try:
            result = await self._complete(messages, schema, schema_name, "chat", max_tokens, compact=compact)
        except asyncio.CancelledError:  # the game's wait for the reply ran out (or the game went away)
            pace.chat_unfinished(time.monotonic() - started)
            raise
        last = result.attempts[-1] if result.attempts else None
        if last is not None and last.status == 200:
            pace.chat_answered(last.latency_s)
        elif last is not None and last.status is None:
            pace.chat_unfinished(last.latency_s)
        return result

    def _unfinished(self, seconds: float, *, missed: bool) -> None:
        pace = self.endpoint.pace
        was_benched = pace.benched
        pace.unfinished(seconds, missed=missed)
        if pace.benched and not was_benched:
            log.warning("the model missed its time on %d decisions in a row (%.0f s each): decisions go to the "
                        "fallback at once until a request in the background shows it answers in time",
                        pace.missed_in_a_row, seconds)

    def _remeasure_soon(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                        max_tokens: int | None, compact: Compact | None) -> None:
        """Measure a benched endpoint once more in the background with this decision's request, unless
        a measurement is under way or the last one was too recent."""
        if self._remeasure_task is not None and not self._remeasure_task.done():
            return
        now = time.monotonic()
        if now < self._remeasure_at:
            return
        self._remeasure_task = asyncio.get_running_loop().create_task(
            self._remeasure(messages, schema, schema_name, max_tokens, compact))

    async def _remeasure(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                         max_tokens: int | None, compact: Compact | None) -> None:
        pace = self.endpoint.pace
        budget = pace.budget_s
        if budget is None:
            return
        started = time.monotonic()
        answered = False
        try:
            async with asyncio.timeout(budget):
                result = await self._complete(messages, schema, schema_name, "background", max_tokens,
                                              compact=compact)
            answered = any(a.status == 200 for a in result.attempts)
        except TimeoutError:
            pass
        took = time.monotonic() - started
        if answered and pace.remeasured(took):
            self._remeasure_wait = REMEASURE_FIRST_S
            log.warning("the model answered a request in the background in %.1f s (a decision had %.0f s): it "
                        "decides again", took, budget)
            return
        self._remeasure_at = time.monotonic() + self._remeasure_wait
        log.info("the model is still too slow (%s in the background, a decision has %.0f s): measured again in %.0f s",
                 f"{took:.1f} s" if answered else "no answer", budget, self._remeasure_wait)
        self._remeasure_wait = min(REMEASURE_MAX_S, self._remeasure_wait * 2)

    async def prime(self, sample: LLMSample) -> LLMResult:
        """Find the endpoint's dialect and send ``messages`` once with max_tokens 1, before play: a
        server that reuses the longest shared prefix of the last prompt (llama.cpp's family) then
        reads only what changed when the first decision comes, and a refused request form or a
        prompt that does not arrive is found now, not with a player waiting. The compact form goes
        where the full one does not fit the window, as in play."""
        compact = sample.compact
        return await self._complete(list(sample.messages), sample.schema, sample.schema_name, "background", 1,
                                    priming=True, compact=None if compact is None else lambda: compact)

    def prime_soon(self, sample: LLMSample) -> None:
        """:meth:`prime` as a task of the running loop, unless the config says no or the endpoint is
        OpenAI itself (it caches prompts by itself and bills the request). ``aclose`` cancels it."""
        if not self._config.prime or self.dialect.probed == "known" or self._prime_task is not None:
            return
        self._prime_task = asyncio.get_running_loop().create_task(self.prime(sample))

    # ---- one call -------------------------------------------------------------------------------

    async def _complete(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
                        schema_name: str, priority: Priority, max_tokens: int | None,
                        priming: bool = False, compact: Compact | None = None,
                        deadline: float | None = None, reservation: Reservation | None = None) -> LLMResult:
        if not self.outage.answering:
            return self._not_sent()
        started = time.monotonic()
        result = LLMResult(model=self._config.model)

        def compacted() -> bool:
            """Switch to the compact prompt, once; False when there is none (or it is in use)."""
            nonlocal messages, compact
            if compact is None:
                return False
            make, compact = compact, None
            try:
                shorter = list(make())
            except Exception as exc:  # a game's compact template that fails: the call goes on without it
                log.error("the compact prompt could not be made: %s: %s", type(exc).__name__, exc)
                return False
            messages, result.prompt_form = shorter, "compact"
            result.compact_messages = messages
            return True

        if self._config.prompt_form == "compact":
            compacted()
        wants_images = has_images(messages)
        # The first calls do not wait for the probe round: they go out with it, in the dialect assumed
        # so far, and are sent again only when the probes show that dialect was wrong. Not on a server
        # that answers one request at a time: there a call sent now would only queue behind the probes.
        probing = await self.endpoint.probing(images=wants_images, priority="play")
        if probing is not None and self.endpoint.finishes_abandoned:
            await self.ensure_dialect(images=wants_images, priority="play")
            probing = None
        text_once = False
        resent = 0
        scale = 1.0
        for _ in range(MAX_REQUESTS_CHANGED):
            mode: Mode = "text" if schema is None or text_once else self.dialect.structured
            wire_schema, limit, grammar = self._bounded(schema, mode, scale, max_tokens)
            sent = shape_messages(self._with_schema(messages, wire_schema, mode), self.dialect,
                                  self._notes.render("no_images", {}))
            if not fits(estimate_tokens(sent), limit, self.context_window):
                if compacted():
                    continue
                result.error = self._too_long(sent, limit)
                break
            request = self._request(sent, wire_schema, schema_name, mode, limit, grammar)
            text, before = prompt_text(sent), self.endpoint.last_prompt
            result.reusable_share, self.endpoint.last_prompt = shared_prefix_share(before, text), text
            if priming:  # marked like the probes: a test server answers it apart from its script
                request["extra_headers"] = {PROBE_HEADER: "prime"}
            tries_before = len(result.attempts)
            try:
                completion = await self._sender.send(request, mode, result.attempts, priority,
                                                     self._sender.timeout(deadline, priming), reservation)
            except openai.APIStatusError as exc:
                self.outage.answered()
                if self.endpoint.context_refused(exc, sent, limit):
                    if compacted():
                        continue
                    result.error = self._too_long(sent, limit)
                    break
                refusal = self.endpoint.refusal(exc, mode, sent)
                if refusal is None or (refusal == "unexplained" and (text_once or mode == "text")):
                    result.error = self._errors.describe(exc, len(result.attempts) - tries_before)
                    break
                self.endpoint.refused_requests += 1
                if grammar is not None and refusal in ("structured", "unexplained"):
                    self.endpoint.grammar_refused = True  # the server's own schema form from now on
                    log.warning("provider refused our grammar (HTTP %s: %s); the schema goes as the server's "
                                "response_format from now on", exc.status_code, self._errors.provider_message(exc))
                    continue
                log.warning("provider refused the request (HTTP %s: %s); %s", exc.status_code,
                            self._errors.provider_message(exc), CHANGES[refusal])
                if not self.endpoint.change(refusal, mode):
                    text_once = True
                continue
            except Exception as exc:
                result.error = self._errors.describe(exc, len(result.attempts) - tries_before)
                if isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError):
                    await self.outage.unreachable(result.error)
                break
            self.outage.answered()
            if probing is not None:
                probing = None
                await self.ensure_dialect(images=wants_images, priority="play")
                again = shape_messages(self._with_schema(messages, wire_schema, mode), self.dialect,
                                       self._notes.render("no_images", {}))
                if again != sent:
                    log.info("the endpoint's dialect (%s) was found after this call went out in the one assumed "
                             "before: sent again", self.dialect.describe())
                    continue
            if text_once and self.dialect.structured != "text":
                self.endpoint.adopt(replace(self.dialect, structured="text"), "plain text worked")
            await self._read(completion, result, parse_json=schema is not None, limit=limit)
            if result.server is None and self.endpoint.finishes_abandoned:
                # llama-cpp-python's answer has no timings; the server this agent started logged them.
                result.server = await self._server_log.last_call()
                if result.server is not None:
                    result.cached_tokens = result.server.cached_tokens
                    if not result.prompt_tokens:  # a streamed answer there carries no usage: the log's count
                        result.prompt_tokens = result.server.prompt_tokens
                        result.completion_tokens = result.completion_tokens or result.server.generated_tokens
            result.prompt_estimate = estimate_tokens(sent)
            if not prompt_arrived(result.prompt_tokens, result.prompt_estimate):
                if self.endpoint.short_prompt(result, sent) and resent < MAX_RESENT:
                    resent += 1
                    continue  # the same call again, now in a dialect that carries the prompt
                if self.dialect.context_tokens and compacted():
                    continue  # the window cut it: the compact form, if it fits
                break
            if priming:
                result.error = None  # one token was asked for: the reply is not the point
                break
            if self._config.bound_answers and wire_schema is not None and result.data is None \
                    and result.finish_reason == "length":
                saved = salvage(result.text, wire_schema)
                if saved is not None:
                    result.data, result.error, result.salvaged = saved, None, True
                elif not result.reasked:
                    result.reasked, scale = True, REASK_SCALE
                    log.info("answer cut off at max_tokens=%d before its decision: asking once more with "
                             "tighter bounds", limit)
                    continue
            break
        else:
            result.error = "provider kept refusing the request parameters"
        result.fell_back_to_text = schema is not None and (text_once or self.dialect.structured == "text") \
            and self._config.structured_output != "text"
        result.endpoint = self.endpoint.record()
        result.latency_s = time.monotonic() - started
        if result.error:
            log.warning("LLM call failed: %s", result.error)
        return result

    def _too_long(self, sent: list[dict[str, Any]], limit: int) -> str:
        return (f"prompt of about {estimate_tokens(sent)} tokens (+{limit} for the answer) does not fit the model's "
                f"context window of {self.context_window} tokens; not sent ({TOO_LONG_FIX})")

    def _bounded(self, schema: dict[str, Any] | None, mode: Mode, scale: float,
                 max_tokens: int | None) -> tuple[dict[str, Any] | None, int, str | None]:
        """The schema as sent (free text bounded), the reply's max_tokens, and the grammar of ours
        sent instead of the schema (llama-server), if any."""
        cfg = self._config
        limit = min(max_tokens or cfg.max_tokens, cfg.max_tokens)
        if schema is None or not cfg.bound_answers:
            return schema, limit, None
        return bound_request(schema, mode, cfg.field_chars, scale=scale, limit=limit,
                             our_grammar=self.endpoint.sends_grammar,
                             say=lambda n: self._notes.render("field_bound", {"n": n}))

    def _with_schema(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
                     mode: Mode) -> list[dict[str, Any]]:
        if schema is None or mode == "json_schema":
            return messages
        note = self._notes.render("schema", {"schema_json": json.dumps(schema, separators=(",", ":"))})
        return with_schema_note(messages, note)

    def _request(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                 mode: Mode, max_tokens: int | None, grammar: str | None = None) -> dict[str, Any]:
        cfg = self._config
        return build_request(cfg.model, messages, schema, schema_name, mode,
                             max_tokens=min(max_tokens or cfg.max_tokens, cfg.max_tokens),
                             temperature=cfg.temperature if self.endpoint.send_temperature else None,
                             limit_key=self.endpoint.limit_key, grammar=grammar)

    # ---- reading replies --------------------------------------------------------------------------

    async def _read(self, completion: Any, result: LLMResult, *, parse_json: bool, limit: int) -> None:
        await read_reply(completion, result, parse_json=parse_json, limit=limit, max_chars=self.max_reply_chars,
                         errors=self._errors, default_model=self._config.model)
