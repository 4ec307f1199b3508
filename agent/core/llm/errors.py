"""Provider failures: which to retry, how long to wait, and one short key-free line for each."""

from __future__ import annotations

import email.utils
import json
import re
from datetime import UTC, datetime

import openai


class ReplyTooLarge(Exception):
    """The provider announced a response body far larger than any reply we asked for."""

    def __init__(self, size: int) -> None:
        super().__init__(f"response body of {size} bytes")
        self.size = size


STATUS_WORDS = {
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

_KEYLIKE = re.compile(r"\b(sk-|Bearer\s+)[\w\-*.]{4,}", re.IGNORECASE)


def too_large(exc: BaseException | None) -> ReplyTooLarge | None:
    """The ReplyTooLarge behind ``exc``, raw or wrapped (the SDK's versions differ)."""
    if isinstance(exc, ReplyTooLarge):
        return exc
    cause = getattr(exc, "__cause__", None)
    return cause if isinstance(cause, ReplyTooLarge) else None


def retryable(exc: BaseException) -> bool:
    """Whether waiting and asking the same again may help (a refused parameter is decided apart)."""
    if too_large(exc):
        return False  # asking again would bring the same flood
    if isinstance(exc, (openai.APIConnectionError, TimeoutError)):  # APITimeoutError included
        return True
    if isinstance(exc, openai.APIStatusError):
        if exc.code == "insufficient_quota":  # a 429 that waiting will not fix
            return False
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def status_of(exc: BaseException) -> int | None:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def retry_after(exc: BaseException | None) -> float | None:
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


class RequestTimedOut(TimeoutError):
    """A request that ran out of its own time limit (``request_timeout``, or more where the server
    finishes every request it began), which the message names."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timed out after {seconds:.3g}s")
        self.seconds = seconds


class Describer:
    """Short, specific, key-free lines for failures of one endpoint."""

    def __init__(self, secret: str, base_url: str, request_timeout: float, max_tokens: int) -> None:
        self._secret = secret
        self._base_url = base_url
        self._timeout = request_timeout
        self._max_tokens = max_tokens

    def describe(self, exc: BaseException | None, tries: int | None) -> str:
        n = f" ({tries} attempt{'s' if tries != 1 else ''})" if tries else ""
        if isinstance(exc, RequestTimedOut):
            return f"timed out after {exc.seconds:.3g}s{n}"
        if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
            return f"timed out after {self._timeout:g}s{n}"
        flood = too_large(exc)
        if flood is not None:
            return f"reply of {flood.size} bytes is far over max_tokens={self._max_tokens}; not read{n}"
        if isinstance(exc, openai.APIConnectionError):
            cause = type(exc.__cause__).__name__ if exc.__cause__ else "connection error"
            return f"cannot reach {self._base_url}{n}: {cause}"
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            words = STATUS_WORDS.get(status, "server error" if status >= 500 else "error")
            return f"HTTP {status} from provider: {words}{n}: {self.provider_message(exc)}"
        if isinstance(exc, UnicodeEncodeError):  # our request, not their answer
            return f"request could not be encoded{n}: {exc.reason}"
        if isinstance(exc, ValueError):  # the SDK could not decode the body
            return f"malformed response from provider{n}: {type(exc).__name__}"
        return f"{type(exc).__name__}{n}: {self.clean(str(exc), 120)}"

    def provider_message(self, exc: openai.APIStatusError, limit: int = 160) -> str:
        body = exc.body
        if isinstance(body, dict):
            text = body.get("message") or body.get("error") or json.dumps(body)
        else:
            text = body if isinstance(body, str) and body else exc.message
        return self.clean(str(text), limit)

    def refusal_words(self, exc: openai.APIStatusError) -> str:
        """Everything the server said about a refused request, for telling what it refused."""
        return f"{exc.param or ''} {self.provider_message(exc, 2000)}"

    def clean(self, text: object, limit: int) -> str:
        """One line, bounded, with anything key-like removed (some servers echo the key back)."""
        line = " ".join(str(text)[: 4 * limit].split())
        if self._secret:
            line = line.replace(self._secret, "***")
        line = _KEYLIKE.sub(r"\1***", line)
        return line if len(line) <= limit else line[: limit - 1] + "…"
