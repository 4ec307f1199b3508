"""An endpoint's request dialect, and how to find it: pure functions, no I/O.

OpenAI-compatible servers differ in what they accept and in what they silently drop:

* **structured output**: OpenAI, vLLM, Ollama and LM Studio take ``json_schema``; the llama.cpp
  family (llama-cpp-python) refuses it, some with a 5xx, and takes ``json_object`` with the schema
  inside; others take only plain ``json_object``, or nothing. The client starts at the configured
  rung of :data:`LADDER` and steps down one rung per refusal that names the parameter.
* **content**: a list of parts (text and images) is what vision needs, but a server whose model has
  no vision may drop a list whole, so the model never sees the game. Text goes as a plain string
  whenever a message has no image; images go only where they were seen to arrive.
* **system role**: a chat template without a system role drops the system message; its text is
  then folded into the first user message.

The client keeps one :class:`Dialect` per endpoint (base_url + model) for the life of the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from agent.core.llm.result import Mode

LADDER: tuple[Mode, ...] = ("json_schema", "json_object_schema", "json_object", "text")
Images = Literal["sent", "refused", "unseen", "off"]
"""sent: images go as image parts; refused: the server answered image parts with an error;
unseen: accepted but not seen (the prompt tokens did not grow); off: the config says so."""
System = Literal["kept", "folded"]

CHARS_PER_TOKEN = 4
"""Our estimate of a prompt's tokens: about four characters of English a token. Denser text (JSON,
numbers, other languages) has more tokens than this says, so the estimate errs low."""
MESSAGE_OVERHEAD_TOKENS = 4
ARRIVAL_FLOOR = 0.5
"""A prompt counted at under half our estimate did not arrive whole."""
MIN_CHECKED_ESTIMATE = 64
"""Below this the counts are too small to compare (template overhead dominates)."""
SYSTEM_SEEN_SHARE = 0.5
"""A system text counts as kept when at least half its estimated tokens show in the count."""
IMAGE_SEEN_TOKENS = 8
"""An image counts as seen when it adds at least this many prompt tokens (OpenAI counts 85)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """What requests to one endpoint look like now."""

    structured: Mode = "json_schema"
    parts: bool = True
    """Content may be a list of parts (needed for images)."""
    images: Images = "sent"
    system: System = "kept"
    probed: str = "not yet"
    """How the content and system rules were found: "not yet", "probed", "known", "configured" or
    "probe failed: …"."""
    context_tokens: int | None = None
    """The most prompt tokens the server was seen to keep when it cut a prompt (its context window)."""

    @property
    def sends_images(self) -> bool:
        return self.parts and self.images == "sent"

    def step_down(self) -> Dialect | None:
        """The next structured-output rung, or None at the bottom."""
        i = LADDER.index(self.structured)
        return replace(self, structured=LADDER[i + 1]) if i + 1 < len(LADDER) else None

    def record(self) -> dict[str, Any]:
        """The fields of the transcript's ``llm_endpoint`` record and of ``--check-llm``'s table."""
        return {"structured_output": self.structured, "content": "parts" if self.parts else "string",
                "images": self.images, "system_role": self.system, "found_by": self.probed,
                "context_tokens": self.context_tokens}

    def describe(self) -> str:
        """One line for logs."""
        parts = [f"structured output {self.structured}", "content as parts" if self.parts else "content as strings",
                 f"images {self.images}", f"system role {self.system}"]
        if self.context_tokens:
            parts.append(f"context cut at {self.context_tokens} tokens")
        return ", ".join(parts)


# ---- refusals ---------------------------------------------------------------------------------------

Refusal = Literal["structured", "images", "temperature", "max_tokens", "unexplained"]

_STRUCTURED_WORDS = ("response_format", "json_schema", "json_object", "structured", "schema", "grammar")
_IMAGE_WORDS = ("image", "content part", "multimodal", "vision", "mmproj")


def classify_refusal(status: int, said: str, *, mode: Mode, had_images: bool, sent_temperature: bool,
                     sent_max_tokens: bool) -> Refusal | None:
    """What a refused request was refusing, from its status and the server's words, or None when it
    is not a refusal of a request parameter (a 5xx without such words is a server error to retry).

    ``said`` is the error's parameter name and message; servers word the same refusal many ways
    (OpenAI names ``param``; llama-cpp-python answers a 500 with pydantic's validation errors).
    """
    said = said.lower()
    if had_images and any(w in said for w in _IMAGE_WORDS):
        return "images"
    if mode != "text" and any(w in said for w in _STRUCTURED_WORDS):
        return "structured"
    if status >= 500:
        return None
    if status not in (400, 422):
        return None
    if sent_temperature and "temperature" in said:
        return "temperature"
    if sent_max_tokens and "max_tokens" in said:
        return "max_tokens"
    return "unexplained"


# ---- the messages as the endpoint wants them ------------------------------------------------------------


def is_image(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "image_url"


def has_images(messages: list[dict[str, Any]]) -> bool:
    return any(isinstance(m.get("content"), list) and any(is_image(p) for p in m["content"]) for m in messages)


def text_of(content: Any) -> str:
    """The text of a message's content, image parts left out."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def shape_messages(messages: list[dict[str, Any]], dialect: Dialect, no_images_note: str) -> list[dict[str, Any]]:
    """``messages`` as ``dialect`` wants them; the caller's list is not changed.

    Images the endpoint does not take are left out and ``no_images_note`` is added to the text of
    each message that had them, so the prompt never speaks of pictures that are not there.
    """
    keep_images = dialect.sends_images
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            dropped = not keep_images and any(is_image(p) for p in content)
            parts = [p for p in content if keep_images or not is_image(p)]
            if dropped and no_images_note:
                parts.append({"type": "text", "text": no_images_note})
            content = parts if any(is_image(p) for p in parts) else text_of(parts)
        out.append({**message, "content": content})
    if dialect.system == "folded":
        out = _fold_system(out)
    return out


def _fold_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system messages' text put before the first user message's (chat templates without a
    system role drop the message; many of them do the same fold themselves)."""
    system = "\n\n".join(text_of(m["content"]) for m in messages if m.get("role") == "system").strip()
    rest = [m for m in messages if m.get("role") != "system"]
    if not system:
        return rest
    for i, message in enumerate(rest):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            folded: Any = [{"type": "text", "text": system}, *content]
        else:
            folded = f"{system}\n\n{content or ''}".rstrip()
        return [*rest[:i], {**message, "content": folded}, *rest[i + 1:]]
    return [{"role": "user", "content": system}, *rest]


# ---- did the prompt arrive? ---------------------------------------------------------------------------


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """Our own count of a request's prompt tokens, from its text alone (images are counted so
    differently by each server that they are left out: the estimate errs low)."""
    chars = sum(len(text_of(m.get("content"))) for m in messages)
    return chars // CHARS_PER_TOKEN + MESSAGE_OVERHEAD_TOKENS * len(messages)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The request's text in the order a chat template lays it out (roles and contents)."""
    return "\n".join(f"{m.get('role')}: {text_of(m.get('content'))}" for m in messages)


def shared_prefix_share(before: str, now: str) -> float:
    """The share of ``now`` that starts exactly as ``before`` did: what a server that keeps the last
    prompt's cache (the llama.cpp family: one slot, the longest shared prefix) need not read again."""
    if not now:
        return 0.0
    # Bisected by slice comparisons (C, a few microseconds), not os.path.commonprefix's loop over
    # every character in Python: 0.3 ms of the event loop a call for a prompt of 8,000 characters.
    low, high = 0, min(len(before), len(now))
    while low < high:
        mid = (low + high + 1) // 2
        if before[:mid] == now[:mid]:
            low = mid
        else:
            high = mid - 1
    return low / len(now)


def prompt_arrived(prompt_tokens: int, estimate: int) -> bool:
    """False when the server counted far fewer tokens than were sent; True when it cannot be told
    (no usage reported, or a prompt too short to judge)."""
    if prompt_tokens <= 0 or estimate < MIN_CHECKED_ESTIMATE:
        return True
    return prompt_tokens >= ARRIVAL_FLOOR * estimate


def after_short_prompt(dialect: Dialect, sent: list[dict[str, Any]], prompt_tokens: int) -> Dialect:
    """The dialect to use after a prompt that did not arrive whole, given what was ``sent``.

    Parts are the likeliest loss (a text-only model's server drops a list of parts whole), then the
    system message; when neither was sent, or the probe already showed both arrive, the server cut
    the prompt to its context window, which no change of dialect fixes: that is recorded as
    ``context_tokens`` for the caller to fit prompts to.
    """
    if dialect.probed == "probed":
        return replace(dialect, context_tokens=max(prompt_tokens, 1))
    if any(isinstance(m.get("content"), list) for m in sent):
        return replace(dialect, parts=False, images="unseen" if dialect.images == "sent" else dialect.images)
    if dialect.system == "kept" and any(m.get("role") == "system" for m in sent):
        return replace(dialect, system="folded")
    return replace(dialect, context_tokens=max(prompt_tokens, 1))


# ---- what the probes found ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProbeCounts:
    """Prompt tokens the server counted for the probe requests (None: that probe failed)."""

    base: int | None
    """One short user message, as a string."""
    with_system: int | None
    """The same, after a system message holding the probe text."""
    as_parts: int | None
    """The probe text and the short message as one user message of text parts."""
    as_string: int | None
    """The same text as one user message, as a string."""
    probe_tokens: int
    """Our estimate of the probe text's tokens."""


def judge_probes(dialect: Dialect, counts: ProbeCounts) -> Dialect:
    """The dialect the probe requests show: parts dropped, system role dropped."""
    found = dialect
    need = SYSTEM_SEEN_SHARE * counts.probe_tokens
    if counts.as_parts is not None and counts.as_string is not None and counts.as_string - counts.as_parts >= need:
        found = replace(found, parts=False, images="unseen" if found.images == "sent" else found.images)
    if counts.base is not None and counts.with_system is not None and counts.with_system - counts.base < need:
        found = replace(found, system="folded")
    return replace(found, probed="probed")


def judge_image_probe(dialect: Dialect, base: int | None, with_image: int | None, refused: bool) -> Dialect:
    if refused:
        return replace(dialect, images="refused")
    if base is not None and with_image is not None and with_image - base < IMAGE_SEEN_TOKENS:
        return replace(dialect, images="unseen")
    return dialect


KNOWN_HOSTS = re.compile(r"^https://api\.openai\.com(/|$)")
"""Endpoints whose dialect is known (OpenAI itself): no probe requests are spent on them."""


def known_dialect(base_url: str) -> bool:
    return bool(KNOWN_HOSTS.match(base_url))


# ---- what the log says -------------------------------------------------------------------------------

CHANGES: dict[Refusal, str] = {
    "structured": "asking for JSON another way from now on",
    "images": "sending no images from now on",
    "unexplained": "asking in plain text this once",
    "temperature": "leaving out temperature from now on",
    "max_tokens": "sending max_completion_tokens instead of max_tokens from now on",
}

SHORT_PROMPT_FIX = {
    "parts": "the server drops content sent as a list of parts: sending text as plain strings, without images",
    "system": "the server's chat template drops the system message: folding it into the first user message",
    "context": "the server cut the prompt to its context window: give the model a larger context "
               "(Ollama: num_ctx or OLLAMA_CONTEXT_LENGTH; llama.cpp: --ctx-size / n_ctx) or set llm.context_tokens",
}

def short_kind(before: Dialect, after: Dialect) -> str:
    if after.parts != before.parts:
        return "parts"
    if after.system != before.system:
        return "system"
    return "context"
