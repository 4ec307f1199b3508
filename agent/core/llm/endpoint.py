"""What the client knows of its endpoint (base_url + model) and how it finds out.

The request dialect (probed before the first call, corrected by every refusal and by every prompt
that did not arrive whole), the request parameters the server refuses, the model's context window,
and the pace of its answers. One :class:`Endpoint` per client, kept for the process: what one call
learns, every later call uses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import replace
from typing import Any

import openai

from agent.core.config import LLMConfig
from agent.core.llm.dialect import (
    SHORT_PROMPT_FIX,
    Dialect,
    Refusal,
    after_short_prompt,
    classify_refusal,
    estimate_tokens,
    has_images,
    judge_image_probe,
    known_dialect,
    short_kind,
)
from agent.core.llm.errors import Describer
from agent.core.llm.gate import LLMGate
from agent.core.llm.pace import Pace
from agent.core.llm.probe import PROBE_HEADER, ImageCounts, image_counts, judge_counts, probe_counts
from agent.core.llm.reply import prompt_tokens_of
from agent.core.llm.result import LLMResult, Mode, Priority
from agent.core.llm.server_times import kind_of
from agent.core.llm.window import ServerFacts, is_context_refusal, read_server, window_from_refusal
from agent.core.prompts import PromptSet

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 15.0
MAX_PROBE_ROUNDS = 2
"""An endpoint that does not answer the probe is probed again once, then played as configured."""
# Sent when the server takes no key: the SDK insists on one, and an explicit placeholder keeps it
# from picking up an unrelated OPENAI_API_KEY from the environment.
PLACEHOLDER_KEY = "no-key-required"
REFUSED_WINDOW_SHARE = 0.8
"""A refusal for length that names no window: the window is taken as this share of what was sent."""


def first_dialect(config: LLMConfig, base_url: str) -> Dialect:
    dialect = Dialect(structured=config.structured_output)
    if config.system_role != "auto":
        dialect = replace(dialect, system="kept" if config.system_role == "keep" else "folded")
    if known_dialect(base_url):
        return replace(dialect, probed="known")
    if not config.probe_dialect:
        return replace(dialect, probed="configured")
    return dialect


class Endpoint:
    """One endpoint's dialect, refused parameters, context window and pace, and the probes that find them."""

    def __init__(self, config: LLMConfig, sdk: openai.AsyncOpenAI, gate: LLMGate, errors: Describer,
                 notes: PromptSet, base_url: str) -> None:
        self._config = config
        self._sdk = sdk
        self._gate = gate
        self._errors = errors
        self._notes = notes
        self.base_url = base_url
        """Masked (no user:password): for logs."""
        self.dialect = first_dialect(config, str(sdk.base_url))
        self.refused_requests = 0
        """Requests the endpoint refused for a parameter (the price of finding its dialect)."""
        self.send_temperature = True
        self.use_max_completion_tokens = False
        self.server_window: int | None = None
        """The context window the server told (llama-server's /props, vLLM's model list), if it did."""
        self.llama_server = False
        """The server showed it is llama.cpp's llama-server (its /props): its own grammars made of a
        schema allow whitespace runs, so structured answers go out with a grammar of ours (``gbnf.py``)."""
        self.finishes_abandoned = False
        """The server showed it is llama-cpp-python's (its model list): one request at a time, and every
        request it began is answered whole, even one the client gave up (see ``ServerFacts``)."""
        self.server_slot = LLMGate(1)
        """That server's one slot, kept here: requests to it wait in this client (plays before chats),
        not unseen in the server's queue, and a request given up holds it until the server answered."""
        self.grammar_refused = False
        self.pace = Pace()
        """How long this endpoint's decisions take lately: a call that would end after its
        deadline is not sent."""
        self.last_prompt = ""
        """The text of the last prompt sent, to measure how much of the next one a prefix cache holds."""
        self._server_task: asyncio.Task[None] | None = None
        self._probe_task: asyncio.Task[None] | None = None
        self._probe_rounds = 0
        self._images_probed = False

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens as far as known: the config's, else what the server
        showed (a refusal naming it, a prompt it cut), else what it told when asked; None: unknown."""
        return self._config.context_tokens or self.dialect.context_tokens or self.server_window

    @property
    def limit_key(self) -> str:
        """The reply-length parameter this endpoint takes (reasoning models want max_completion_tokens)."""
        return "max_completion_tokens" if self.use_max_completion_tokens else "max_tokens"

    def record(self) -> dict[str, Any]:
        """For the transcript's ``llm_endpoint`` record."""
        return {**self.dialect.record(), "refused_requests": self.refused_requests,
                "context_window": self.context_window, "grammar": "own" if self.sends_grammar else "server's",
                "server": self.server_kind, "stream": self.streams}

    @property
    def server_kind(self) -> str | None:
        """The server, where it showed which one it is (its /props, its model list); None: not known."""
        if self.llama_server:
            return "llama-server"
        return "llama-cpp-python" if self.finishes_abandoned else None

    @property
    def streams(self) -> bool:
        """Answers are asked for as streams, closed when the caller gives up: ``llm.stream``, unset for
        the server the agent started itself (``--local-model`` sets ``server_status``), whose kind it
        knows: a contract declared, not probed."""
        declared = self._config.stream
        return self._config.server_status is not None if declared is None else declared

    @property
    def sends_grammar(self) -> bool:
        """Structured answers go out with a grammar of ours."""
        return self.llama_server and not self.grammar_refused

    # ---- finding the dialect before play -------------------------------------------------------------

    async def ensure(self, *, images: bool = False, priority: Priority = "play") -> Dialect:
        """Probe the endpoint once (and its pictures, the first time ``images``); the dialect.

        Endpoints whose dialect is known or configured are not probed; one that does not answer
        the probe is probed once more on a later call, then played as configured. Concurrent
        callers share one probe round; a caller that gives up does not end it for the others."""
        for _ in range(2):  # the round under way, then one for what it did not ask (the pictures)
            probe_round = await self.probing(images=images, priority=priority)
            if probe_round is None:
                break
            await asyncio.shield(probe_round)
            if self.dialect.probed != "probed":
                break  # no answer: this call goes on as configured, a later one probes again
        return self.dialect

    async def probing(self, *, images: bool = False, priority: Priority = "play") -> asyncio.Future[None] | None:
        """The probe round under way (started now when one is wanted and none runs), or None when the
        dialect needs no probe; first reads which server it is (two GETs at once, no model call), so
        :attr:`finishes_abandoned` and the window are known when this returns."""
        await self.read_server_once()
        running = self._probe_task
        if running is not None and not running.done():
            return running
        if not self._wants_probe(images):
            return None
        self._probe_task = asyncio.get_running_loop().create_task(self._probe_round(images, priority))
        return self._probe_task

    async def read_server_once(self) -> None:
        """Ask the server which it is and its window, once (only for an endpoint that is probed)."""
        if self._server_task is None:
            if self.dialect.probed != "not yet":
                return
            self._server_task = asyncio.get_running_loop().create_task(self._read_server())
        await asyncio.shield(self._server_task)

    async def aclose(self) -> None:
        """Cancel a probe round or server read still under way (the client is closing)."""
        tasks = [t for t in (self._probe_task, self._server_task) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _read_server(self) -> None:
        facts = await read_server(str(self._sdk.base_url), self._config.model, self._auth)
        declared = await asyncio.to_thread(kind_of, self._config.server_status)
        if declared:  # a server the agent started says which it is; a busy one may not answer the read
            facts = ServerFacts(facts.window, declared == "llama-server", declared == "llama-cpp-python")
        self.server_window, self.llama_server = facts.window, facts.llama_server
        self.finishes_abandoned = facts.finishes_abandoned
        if self.finishes_abandoned:
            log.info("LLM endpoint %s is llama-cpp-python's server: it answers one request at a time "
                     "and finishes each it began, so a decision's request may run to the decision's "
                     "deadline and is not sent twice", self.base_url)
        if self.llama_server:
            log.info("LLM endpoint %s is llama.cpp's llama-server: answers are held to the schema "
                     "by a grammar of ours (no whitespace runs)", self.base_url)
        if self.server_window:
            log.info("LLM endpoint %s: context window %d tokens", self.base_url, self.server_window)

    async def _probe_round(self, images: bool, priority: Priority) -> None:
        """One round: the message probes and (where pictures are wanted) the image probe, every request
        at once; each finding is judged against the dialect as it is when the answers are in, so what
        a call learnt meanwhile (a refused parameter) stays."""
        texts = self.dialect.probed == "not yet"
        pictures = images and self.dialect.sends_images and not self._images_probed
        image_probe = image_counts(self._notes, lambda m: self._probe_image(m, priority)) if pictures else None
        found: ImageCounts | None = None
        if texts:
            self._probe_rounds += 1
            message_probe = probe_counts(self._notes, lambda m: self._probe(m, priority))
            if image_probe is None:
                counts = await message_probe
            else:
                counts, found = await asyncio.gather(message_probe, image_probe)
            judged = judge_counts(self.dialect, counts)
            if judged.probed == "probed" or self._probe_rounds >= MAX_PROBE_ROUNDS:
                self.adopt(judged, "probe")
        elif image_probe is not None and self.dialect.probed == "probed":
            found = await image_probe
        elif image_probe is not None:
            image_probe.close()  # never awaited: the endpoint was not probed
        if found is not None and self.dialect.probed == "probed" and self.dialect.sends_images:
            self._images_probed = True
            self.adopt(judge_image_probe(self.dialect, *found), "image probe")

    def _wants_probe(self, images: bool) -> bool:
        if self.dialect.probed == "not yet":
            return True
        return images and self.dialect.probed == "probed" and not self._images_probed and self.dialect.sends_images

    def adopt(self, dialect: Dialect, why: str) -> None:
        before, self.dialect = self.dialect, dialect
        if {**before.record(), "found_by": ""} != {**dialect.record(), "found_by": ""}:
            log.warning("LLM endpoint %s (model %s), after the %s: %s", self.base_url, self._config.model, why,
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
    def _auth(self) -> dict[str, str]:
        key = self._sdk.api_key
        return {} if key == PLACEHOLDER_KEY else {"Authorization": f"Bearer {key}"}

    async def _probe_request(self, messages: list[dict[str, Any]], priority: Priority) -> Any:
        timeout = min(self._config.request_timeout, PROBE_TIMEOUT_S)
        request: dict[str, Any] = {"model": self._config.model, "messages": messages, self.limit_key: 1}
        async with contextlib.AsyncExitStack() as stack:
            if self.finishes_abandoned:  # one request at a time: the probes wait here, not in the server's queue
                await stack.enter_async_context(self.server_slot.slot(priority))
            await stack.enter_async_context(self._gate.slot(priority))
            async with asyncio.timeout(timeout):
                return await self._sdk.chat.completions.create(**request, timeout=timeout,
                                                               extra_headers={PROBE_HEADER: "dialect"})

    # ---- learning from what play meets ---------------------------------------------------------------

    def refusal(self, exc: openai.APIStatusError, mode: Mode, sent: list[dict[str, Any]]) -> Refusal | None:
        return classify_refusal(exc.status_code, self._errors.refusal_words(exc), mode=mode,
                                had_images=has_images(sent), sent_temperature=self.send_temperature,
                                sent_max_tokens=not self.use_max_completion_tokens)

    def change(self, refusal: Refusal, mode: Mode) -> bool:
        """Change what later requests send; False for an unexplained refusal (plain text once)."""
        if refusal == "structured":
            lower = replace(self.dialect, structured=mode).step_down()
            self.adopt(lower or replace(self.dialect, structured="text"), "refusal")
        elif refusal == "images":
            self.adopt(replace(self.dialect, images="refused"), "refusal")
        elif refusal == "temperature":
            self.send_temperature = False
        elif refusal == "max_tokens":
            self.use_max_completion_tokens = True
        else:
            return False
        return True

    def context_refused(self, exc: openai.APIStatusError, sent: list[dict[str, Any]], limit: int) -> bool:
        """A refusal of a prompt too long for the window: the window it names (or one just under what
        was sent) is kept, so later prompts are fitted before they go out."""
        said = self._errors.refusal_words(exc)
        if isinstance(exc.body, dict):  # llama-server names the window in fields beside its message
            said += " " + json.dumps(exc.body, default=str)[:2000]
        if not is_context_refusal(said):
            return False
        window = window_from_refusal(said) or max(1, int(estimate_tokens(sent) * REFUSED_WINDOW_SHARE) + limit)
        log.warning("the server refused a prompt of about %d tokens (+%d for the answer) as too long for the "
                    "model's context window (%d tokens)", estimate_tokens(sent), limit, window)
        self.adopt(replace(self.dialect, context_tokens=window), "context refusal")
        return True

    def short_prompt(self, result: LLMResult, sent: list[dict[str, Any]]) -> bool:
        """A prompt that did not arrive whole: warn, change the dialect; True when a resend can carry it."""
        result.prompt_short = True
        changed = after_short_prompt(self.dialect, sent, result.prompt_tokens)
        fix = SHORT_PROMPT_FIX[short_kind(self.dialect, changed)]
        log.warning("the server counted %d prompt tokens for about %d sent: %s", result.prompt_tokens,
                    result.prompt_estimate, fix)
        self.adopt(changed, "short prompt")
        result.error = (f"prompt did not arrive whole: the server counted {result.prompt_tokens} of about "
                        f"{result.prompt_estimate} tokens ({fix})")
        return changed.context_tokens is None
