"""``--check-llm``: the request play sends, once, before a study starts; a table of what came through.

A wrong key, model name or URL, a server that refuses the structured-output form, or one that
silently drops the system message, the images or the whole prompt otherwise shows up only in play,
with a participant waiting. The check sends the game's own decision request (its real schema, its
templates rendered with their sample context, its pictures when the config sends them) through the
same client play uses, with a check word in the system prompt and another in the user text, and
reports what the endpoint accepted, what the model saw and how long a decision took.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import Any

from agent.core.config import GameConfig
from agent.core.llm import LLMClient, LLMResult
from agent.core.llm.dialect import ARRIVAL_FLOOR, Dialect, has_images, text_of
from agent.core.llm.sample import LLMSample
from agent.core.prompts import PromptSet, load_prompts
from agent.core.resources import prompts_dir

CHECK_TIMEOUT_S = 180.0
"""A first request to a small local model on a CPU can take a minute; longer is a problem to report."""
CHECK_TEMPLATES = ("check_system", "check_user")


@dataclass(frozen=True)
class LLMCheck:
    ok: bool
    message: str
    """The whole report: a table, then the verdict (and the fix when it failed)."""
    rows: list[tuple[str, str]] = field(default_factory=list)


def add_check_words(messages: list[dict[str, Any]], prompts: PromptSet, system_nonce: str, user_nonce: str,
                    images: bool) -> list[dict[str, Any]]:
    """``messages`` with a check word in the system text and another in the user text."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "system":
            content = prompts.render("check_system", {"system": text_of(content), "system_nonce": system_nonce})
        elif message["role"] == "user":
            note = prompts.render("check_user", {"user_nonce": user_nonce, "images": images})
            content = [*content, {"type": "text", "text": note}] if isinstance(content, list) \
                else f"{content}\n\n{note}"
        out.append({**message, "content": content})
    return out


def judge(result: LLMResult, dialect: Dialect, refused: int, system_nonce: str, user_nonce: str,
          images_wanted: bool) -> LLMCheck:
    """The table and the verdict for one check call (pure, for tests)."""
    rows: list[tuple[str, str]] = []
    endpoint = dialect.record()
    own_grammar = (result.endpoint or {}).get("grammar") == "own"
    rows.append(("structured output", f"{endpoint['structured_output']}"
                 + (f" ({refused} form{'s' if refused != 1 else ''} refused first)" if refused else "")
                 + (", sent as our own grammar (llama-server: no whitespace runs)" if own_grammar else "")))
    rows.append(("content", "list of parts" if dialect.parts else "plain strings (the server drops lists of parts)"))
    if images_wanted:
        rows.append(("images", {"sent": "accepted and seen", "refused": "refused by the server: left out",
                                "unseen": "not seen by the model: left out", "off": "off"}[dialect.images]))
    else:
        rows.append(("images", "none sent (this config sends no pictures)"))
    rows.append(("system role", "kept" if dialect.system == "kept"
                 else "folded into the user message (the chat template drops it)"))
    rows.append(("found by", dialect.probed))
    server = (result.endpoint or {}).get("server")
    if server == "llama-cpp-python":
        rows.append(("server", "llama-cpp-python: one request at a time, each begun answered whole; a decision's "
                               "request runs to its deadline, not sent twice"))
    elif server:
        rows.append(("server", server))
    share = f" ({100 * result.prompt_tokens / result.prompt_estimate:.0f} %)" if result.prompt_estimate else ""
    counted = f"{result.prompt_tokens:,} counted for about {result.prompt_estimate:,} sent{share}" \
        if result.prompt_tokens else "not reported by the server (cannot tell whether the prompt arrived)"
    rows.append(("prompt tokens", counted))
    window = (result.endpoint or {}).get("context_window")
    rows.append(("context window", "unknown: the server does not tell it (llm.context_tokens sets it)" if not window
                 else f"{window:,} tokens: " + {"compact": "the full prompt does not fit, its compact form is sent",
                                                "full": "the prompt fits"}.get(result.prompt_form, result.prompt_form)))
    said = result.text or ""
    rows.append(("check words", f"system {'repeated' if system_nonce in said else 'not repeated'}, "
                                f"user {'repeated' if user_nonce in said else 'not repeated'}"
                                " (a small model may not repeat them; the token count is the proof)"))
    rows.append(("decision", f"{result.latency_s:.1f} s, {result.completion_tokens} completion tokens, "
                             f"finish {result.finish_reason or '?'}"))
    fix = _fix(result, dialect)
    if fix is None:
        verdict = "LLM check passed: play will send what this table shows"
        return LLMCheck(True, _table(rows, verdict), rows)
    return LLMCheck(False, _table(rows, f"LLM check failed: {fix}"), rows)


def _fix(result: LLMResult, dialect: Dialect) -> str | None:
    if result.prompt_short or (result.prompt_tokens and result.prompt_estimate
                               and result.prompt_tokens < ARRIVAL_FLOOR * result.prompt_estimate):
        if dialect.context_tokens:
            return (f"the server keeps only about {dialect.context_tokens} prompt tokens of about "
                    f"{result.prompt_estimate}: give the model a larger context window (Ollama: num_ctx or "
                    "OLLAMA_CONTEXT_LENGTH; llama.cpp: --ctx-size / n_ctx)")
        return ("the model cannot see the prompt: the server drops what is sent; set llm.system_role: fold "
                "and send no images (images.send_board/send_drawer: false), or serve a model that takes them")
    if not result.ok:
        if result.error and "cut off at max_tokens" in result.error:
            return f"{result.error}: raise llm.max_tokens or use a model that answers more briefly"
        if dialect.structured == "text" and result.data is None:
            return (f"{result.error}; no structured-output form works with this server and the model's "
                    "plain-text reply held no JSON object: use a server with JSON grammars (llama.cpp, vLLM, "
                    "Ollama) or a larger model")
        return str(result.error)
    return None


def _table(rows: list[tuple[str, str]], verdict: str) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join([*(f"  {name:<{width}}  {value}" for name, value in rows), verdict])


async def check_llm(config: GameConfig, sample: LLMSample | None) -> LLMCheck:
    """Send ``sample`` (the game's decision request) once with ``config.llm``; never raises on
    provider failures. Without a sample (a game that gives none) a minimal JSON request is sent."""
    sample = sample or LLMSample(
        messages=[{"role": "system", "content": "You check a connection."}, {"role": "user", "content": "Answer."}],
        schema={"type": "object", "properties": {"reasoning": {"type": "string"}}, "required": ["reasoning"],
                "additionalProperties": False},
        schema_name="check")
    prompts = load_prompts(prompts_dir("llm"), {"system": "", "system_nonce": "", "user_nonce": "", "images": True},
                           CHECK_TEMPLATES)
    system_nonce, user_nonce = f"K{secrets.token_hex(3)}", f"Q{secrets.token_hex(3)}"
    images = has_images(sample.messages)
    messages = add_check_words(sample.messages, prompts, system_nonce, user_nonce, images)
    compact = sample.compact
    shorter = None if compact is None else \
        (lambda: add_check_words(compact, prompts, system_nonce, user_nonce, has_images(compact)))
    llm = config.llm.model_copy(update={"request_timeout": max(config.llm.request_timeout, CHECK_TIMEOUT_S)})
    async with LLMClient(llm, config.api_key()) as client:
        where = f"model {llm.model!r} at {client.base_url}"
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_S + 30):
                result = await client.complete_json(messages, sample.schema, sample.schema_name, compact=shorter)
        except TimeoutError:
            return LLMCheck(False, f"LLM check failed: {where} gave no answer in {CHECK_TIMEOUT_S:.0f} s")
        if not any(a.status == 200 for a in result.attempts):
            return LLMCheck(False, f"LLM check failed: {where}: {result.error}")
        checked = judge(result, client.dialect, client.refused_requests, system_nonce, user_nonce, images)
    head = f"LLM check of {where} (answered as {result.model!r}):"
    return LLMCheck(checked.ok, f"{head}\n{checked.message}", checked.rows)
