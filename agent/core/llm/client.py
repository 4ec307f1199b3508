"""The LLM client: one Chat Completions call, with retries, in the endpoint's own dialect.

Any OpenAI-compatible server works, since only ``POST {base_url}/chat/completions`` is used.
Provider failures never raise: they come back as :attr:`LLMResult.error`, a short line that is
safe to log and show (the API key is never in it). Cancellation does raise, at once, because the
session cancels calls whose game went away or whose turn deadline passed.

Retries (tenacity, the SDK's own retries off): timeouts, connection errors, 408/409/429 and 5xx,
waiting ``initial_backoff * 2**n`` (with a little jitter) or the server's Retry-After, never more
than ``max_backoff``; at most ``max_attempts`` tries. A refusal of a request parameter (a 400/422,
or a 5xx whose words name it, as llama-cpp-python answers ``json_schema``) changes the endpoint's
:class:`~agent.core.llm.dialect.Dialect` for this and every later call, and the call asks again.

Before its first call the client probes the endpoint (:mod:`agent.core.llm.probe`): a few one-token
requests show whether it drops the system message or a list of content parts. After every call it
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
import random
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import openai
from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from agent.core.config import LLMConfig
from agent.core.llm.bounds import bound_schema, reply_tokens, salvage
from agent.core.llm.dialect import (
    CHANGES,
    SHORT_PROMPT_FIX,
    Dialect,
    Refusal,
    after_short_prompt,
    classify_refusal,
    estimate_tokens,
    has_images,
    known_dialect,
    prompt_arrived,
    shape_messages,
    short_kind,
)
from agent.core.llm.errors import Describer, ReplyTooLarge, retry_after, retryable, status_of
from agent.core.llm.gate import LLMGate
from agent.core.llm.probe import PROBE_HEADER, probe_images, probe_messages
from agent.core.llm.reply import prompt_tokens_of, read_reply
from agent.core.llm.request import build_request, with_schema_note
from agent.core.llm.result import LLMAttempt, LLMResult, Mode, Priority
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
PROBE_TIMEOUT_S = 15.0
MAX_PROBE_ROUNDS = 2
"""An endpoint that does not answer the probe is probed again once, then played as configured."""

# Sent when the server takes no key: the SDK insists on one, and an explicit placeholder keeps it
# from picking up an unrelated OPENAI_API_KEY from the environment.
PLACEHOLDER_KEY = "no-key-required"
NOTE_TEMPLATES = ("schema", "no_images", "probe_system", "probe_user", "field_bound")
_NOTE_SAMPLE = {"schema_json": "{}", "nonce": "0", "n": 1}
REASK_SCALE = 0.5
"""A re-ask after an answer cut off at max_tokens halves every free-text bound."""
MIN_REPLY_TOKENS = 48


def load_notes() -> PromptSet:
    """The client's own texts (the schema in words, the no-pictures note, the probe)."""
    return load_prompts(prompts_dir("llm"), _NOTE_SAMPLE, NOTE_TEMPLATES)


def first_dialect(config: LLMConfig, base_url: str) -> Dialect:
    dialect = Dialect(structured=config.structured_output)
    if config.system_role != "auto":
        dialect = replace(dialect, system="kept" if config.system_role == "keep" else "folded")
    if known_dialect(base_url):
        return replace(dialect, probed="known")
    if not config.probe_dialect:
        return replace(dialect, probed="configured")
    return dialect


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
        self._errors = Describer(api_key or "", self.base_url, config.request_timeout, config.max_tokens)
        self._notes = load_notes()
        self.dialect = first_dialect(config, str(self._sdk.base_url))
        self._probe_lock = asyncio.Lock()
        self._probe_rounds = 0
        self._images_probed = False
        self._prime_task: asyncio.Task[LLMResult] | None = None
        self.refused_requests = 0
        """Requests the endpoint refused for a parameter (the price of finding its dialect)."""

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

    async def aclose(self) -> None:
        if self._prime_task is not None and not self._prime_task.done():
            self._prime_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._prime_task
        await self._sdk.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete_json(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any],
                            schema_name: str = "reply", *, priority: Priority = "play",
                            max_tokens: int | None = None) -> LLMResult:
        """Ask for a JSON object matching ``schema``; ``result.data`` holds it when ``result.ok``.

        With json_schema mode the schema must follow OpenAI's strict rules (every property
        required, ``additionalProperties: false``). Nothing here checks the reply against the
        schema beyond parsing: the caller validates (pydantic) and may ask again with feedback.
        """
        return await self._complete(list(messages), schema, schema_name, priority, max_tokens)

    async def complete_text(self, messages: Sequence[dict[str, Any]], *, priority: Priority = "play",
                            max_tokens: int | None = None) -> LLMResult:
        """Ask for free text (e.g. a chat line); ``result.text`` holds it when ``result.ok``.

        ``priority="chat"`` for anything nobody's turn waits on: it waits behind plays for a slot.
        """
        return await self._complete(list(messages), None, "", priority, max_tokens)

    async def prime(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None,
                    schema_name: str = "reply") -> LLMResult:
        """Find the endpoint's dialect and send ``messages`` once with max_tokens 1, before play: a
        server that reuses the longest shared prefix of the last prompt (llama.cpp's family) then
        reads only what changed when the first decision comes, and a refused request form or a
        prompt that does not arrive is found now, not with a player waiting."""
        return await self._complete(list(messages), schema, schema_name, "play", 1, priming=True)

    def prime_soon(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any] | None,
                   schema_name: str = "reply") -> None:
        """:meth:`prime` as a task of the running loop, unless the config says no or the endpoint is
        OpenAI itself (it caches prompts by itself and bills the request). ``aclose`` cancels it."""
        if not self._config.prime or self.dialect.probed == "known" or self._prime_task is not None:
            return
        self._prime_task = asyncio.get_running_loop().create_task(self.prime(messages, schema, schema_name))

    # ---- the dialect ------------------------------------------------------------------------------

    async def ensure_dialect(self, *, images: bool = False, priority: Priority = "play") -> Dialect:
        """Probe the endpoint once (and its pictures, the first time ``images``); the dialect.

        Endpoints whose dialect is known or configured are not probed; one that does not answer
        the probe is probed once more on a later call, then played as configured."""
        if self._wants_probe(images):
            async with self._probe_lock:  # concurrent first calls wait for one probe
                if self.dialect.probed == "not yet":
                    self._probe_rounds += 1
                    found = await probe_messages(self.dialect, self._notes, lambda m: self._probe(m, priority))
                    if found.probed == "probed" or self._probe_rounds >= MAX_PROBE_ROUNDS:
                        self._adopt(found, "probe")
                if self._wants_probe(images) and self.dialect.probed == "probed":
                    self._images_probed = True
                    self._adopt(await probe_images(self.dialect, self._notes,
                                                   lambda m: self._probe_image(m, priority)), "image probe")
        return self.dialect

    def _wants_probe(self, images: bool) -> bool:
        if self.dialect.probed == "not yet":
            return True
        return images and self.dialect.probed == "probed" and not self._images_probed and self.dialect.sends_images

    def _adopt(self, dialect: Dialect, why: str) -> None:
        before, self.dialect = self.dialect, dialect
        if {**before.record(), "found_by": ""} != {**dialect.record(), "found_by": ""}:
            log.warning("LLM endpoint %s (model %s), after the %s: %s", self.base_url, self.model, why,
                        dialect.describe())

    async def _probe(self, messages: list[dict[str, Any]], priority: Priority) -> int | None:
        try:
            completion = await self._probe_request(messages, priority)
        except Exception as exc:
            log.debug("dialect probe request failed: %s", self._errors.describe(exc, None))
            return None
        return prompt_tokens_of(completion)

    async def _probe_image(self, messages: list[dict[str, Any]], priority: Priority) -> tuple[int | None, bool]:
        try:
            completion = await self._probe_request(messages, priority)
        except openai.APIStatusError as exc:
            log.info("LLM endpoint %s refuses image parts (HTTP %s: %s)", self.base_url, exc.status_code,
                     self._errors.provider_message(exc))
            return None, True
        except Exception as exc:
            log.debug("image probe request failed: %s", self._errors.describe(exc, None))
            return None, False
        return prompt_tokens_of(completion), False

    @property
    def _limit_key(self) -> str:
        """The reply-length parameter this endpoint takes (reasoning models want max_completion_tokens)."""
        return "max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"

    async def _probe_request(self, messages: list[dict[str, Any]], priority: Priority) -> Any:
        timeout = min(self._config.request_timeout, PROBE_TIMEOUT_S)
        request: dict[str, Any] = {"model": self._config.model, "messages": messages, self._limit_key: 1}
        async with self.gate.slot(priority), asyncio.timeout(timeout):
            return await self._sdk.chat.completions.create(**request, timeout=timeout,
                                                           extra_headers={PROBE_HEADER: "dialect"})

    # ---- one call -------------------------------------------------------------------------------

    async def _complete(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
                        schema_name: str, priority: Priority, max_tokens: int | None,
                        priming: bool = False) -> LLMResult:
        started = time.monotonic()
        result = LLMResult(model=self._config.model)
        wants_images = has_images(messages)
        await self.ensure_dialect(images=wants_images, priority=priority)
        text_once = False
        resent = 0
        scale = 1.0
        for _ in range(MAX_REQUESTS_CHANGED):
            mode: Mode = "text" if schema is None or text_once else self.dialect.structured
            wire_schema, limit = self._bounded(schema, mode, scale, max_tokens)
            sent = shape_messages(self._with_schema(messages, wire_schema, mode), self.dialect,
                                  self._notes.render("no_images", {}))
            request = self._request(sent, wire_schema, schema_name, mode, limit)
            if priming:  # marked like the probes: a test server answers it apart from its script
                request["extra_headers"] = {PROBE_HEADER: "prime"}
            tries_before = len(result.attempts)
            try:
                completion = await self._with_retries(request, mode, result.attempts, priority)
            except openai.APIStatusError as exc:
                refusal = self._refusal(exc, mode, sent)
                if refusal is None or (refusal == "unexplained" and (text_once or mode == "text")):
                    result.error = self._errors.describe(exc, len(result.attempts) - tries_before)
                    break
                self.refused_requests += 1
                log.warning("provider refused the request (HTTP %s: %s); %s", exc.status_code,
                            self._errors.provider_message(exc), CHANGES[refusal])
                if not self._change(refusal, mode):
                    text_once = True
                continue
            except Exception as exc:
                result.error = self._errors.describe(exc, len(result.attempts) - tries_before)
                break
            if text_once and self.dialect.structured != "text":
                self._adopt(replace(self.dialect, structured="text"), "plain text worked")
            await self._read(completion, result, parse_json=schema is not None, limit=limit)
            result.prompt_estimate = estimate_tokens(sent)
            if not prompt_arrived(result.prompt_tokens, result.prompt_estimate):
                if self._short_prompt(result, sent) and resent < MAX_RESENT:
                    resent += 1
                    continue  # the same call again, now in a dialect that carries the prompt
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
        result.endpoint = {**self.dialect.record(), "refused_requests": self.refused_requests}
        result.latency_s = time.monotonic() - started
        if result.error:
            log.warning("LLM call failed: %s", result.error)
        return result

    def _short_prompt(self, result: LLMResult, sent: list[dict[str, Any]]) -> bool:
        """A prompt that did not arrive whole: warn, change the dialect; True when a resend can carry it."""
        result.prompt_short = True
        changed = after_short_prompt(self.dialect, sent, result.prompt_tokens)
        fix = SHORT_PROMPT_FIX[short_kind(self.dialect, changed)]
        log.warning("the server counted %d prompt tokens for about %d sent: %s", result.prompt_tokens,
                    result.prompt_estimate, fix)
        self._adopt(changed, "short prompt")
        result.error = (f"prompt did not arrive whole: the server counted {result.prompt_tokens} of about "
                        f"{result.prompt_estimate} tokens ({fix})")
        return changed.context_tokens is None

    def _bounded(self, schema: dict[str, Any] | None, mode: Mode, scale: float,
                 max_tokens: int | None) -> tuple[dict[str, Any] | None, int]:
        """The schema as sent (free text bounded) and the reply's max_tokens."""
        cfg = self._config
        limit = min(max_tokens or cfg.max_tokens, cfg.max_tokens)
        if schema is None or not cfg.bound_answers:
            return schema, limit
        grammar = mode == "json_object_schema"
        bounded = bound_schema(schema, cfg.field_chars, grammar=grammar, scale=scale,
                               say=lambda n: self._notes.render("field_bound", {"n": n}))
        # Where a grammar holds the bounds the answer's size is known; elsewhere the model is only
        # told, so it gets twice the room before a cut.
        needed = reply_tokens(bounded, {k: int(v * scale) for k, v in cfg.field_chars.items()})
        return bounded, min(limit, max(MIN_REPLY_TOKENS, needed if grammar else 2 * needed))

    def _refusal(self, exc: openai.APIStatusError, mode: Mode, sent: list[dict[str, Any]]) -> Refusal | None:
        return classify_refusal(exc.status_code, self._errors.refusal_words(exc), mode=mode,
                                had_images=has_images(sent), sent_temperature=self._send_temperature,
                                sent_max_tokens=not self._use_max_completion_tokens)

    def _change(self, refusal: Refusal, mode: Mode) -> bool:
        """Change what later requests send; False for an unexplained refusal (plain text once)."""
        if refusal == "structured":
            lower = replace(self.dialect, structured=mode).step_down()
            self._adopt(lower or replace(self.dialect, structured="text"), "refusal")
        elif refusal == "images":
            self._adopt(replace(self.dialect, images="refused"), "refusal")
        elif refusal == "temperature":
            self._send_temperature = False
        elif refusal == "max_tokens":
            self._use_max_completion_tokens = True
        else:
            return False
        return True

    def _with_schema(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
                     mode: Mode) -> list[dict[str, Any]]:
        if schema is None or mode == "json_schema":
            return messages
        note = self._notes.render("schema", {"schema_json": json.dumps(schema, separators=(",", ":"))})
        return with_schema_note(messages, note)

    def _request(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None, schema_name: str,
                 mode: Mode, max_tokens: int | None) -> dict[str, Any]:
        cfg = self._config
        return build_request(cfg.model, messages, schema, schema_name, mode,
                             max_tokens=min(max_tokens or cfg.max_tokens, cfg.max_tokens),
                             temperature=cfg.temperature if self._send_temperature else None,
                             limit_key=self._limit_key)

    async def _with_retries(self, request: dict[str, Any], mode: Mode, attempts: list[LLMAttempt],
                            priority: Priority) -> Any:
        sent = request["messages"]

        def again(exc: BaseException) -> bool:
            if isinstance(exc, openai.APIStatusError) and self._refusal(exc, mode, sent) in ("structured", "images"):
                return False  # a refused parameter: asking the same again brings the same refusal
            return retryable(exc)

        retrying = AsyncRetrying(stop=stop_after_attempt(self._config.retry.max_attempts), wait=self._wait,
                                 retry=lambda state: bool(state.outcome and state.outcome.failed
                                                          and again(state.outcome.exception())),
                                 before_sleep=self._log_retry, reraise=True)
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
                attempts.append(LLMAttempt(mode, status_of(exc), type(exc).__name__, time.monotonic() - started))
                raise
            attempts.append(LLMAttempt(mode, 200, None, time.monotonic() - started))
            return completion

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

    # ---- reading replies --------------------------------------------------------------------------

    async def _read(self, completion: Any, result: LLMResult, *, parse_json: bool, limit: int) -> None:
        await read_reply(completion, result, parse_json=parse_json, limit=limit, max_chars=self.max_reply_chars,
                         errors=self._errors, default_model=self._config.model)
