"""Keeping secrets (the API key, the server token) out of everything the agent writes.

One :class:`Secrets` object knows the values and masks them in text; the transcript, the log
handlers and the websockets logger all use it, so there is one rule for what counts as a secret.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

MASK = "***"
MIN_SECRET_CHARS = 4
"""Shorter values are not masked: replacing every "abc" would mangle ordinary text."""


class Secrets:
    def __init__(self, values: Iterable[str | None] = ()) -> None:
        # Each secret also in the form json.dumps escapes it, in case it holds a quote or a backslash;
        # longest first so that a secret containing another is masked whole.
        self.values: tuple[str, ...] = tuple(sorted(
            {form for v in values if v and len(v) >= MIN_SECRET_CHARS
             for form in (v, json.dumps(v, ensure_ascii=False)[1:-1])}, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.values)

    def mask(self, text: str) -> str:
        for secret in self.values:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


class SecretFilter(logging.Filter):
    """Masks known secrets in every record a handler emits, whoever logged it."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            text = record.getMessage()
            masked = self.secrets.mask(text)
            if masked != text:
                record.msg, record.args = masked, ()
        return True


class MaskingLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger that masks secrets before emitting, for libraries we hand a logger to
    (websockets logs request paths, ``?token=`` included) even when no handler filter is set."""

    def __init__(self, logger: logging.Logger, secrets: Secrets) -> None:
        super().__init__(logger, {})
        self.secrets = secrets

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if not self.isEnabledFor(level):
            return
        if self.secrets:
            try:
                text = str(msg) % args if args else str(msg)
            except (TypeError, ValueError):
                text = " ".join(str(x) for x in (msg, *args))
            msg, args = self.secrets.mask(text), ()
        self.logger.log(level, msg, *args, **kwargs)
