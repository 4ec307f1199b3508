"""What an aiohttp server logs about its peers' mistakes: one line each, rate-limited.

aiohttp logs every malformed request (a 100 KB URL, a bad Content-Length) with a full traceback
at ERROR, and so does a handler whose client hung up: anyone who can reach the port can fill the
log. :class:`QuietHttpLog` is the logger its request handler is given instead (``AppRunner(...,
logger=QuietHttpLog(...))``): malformed HTTP (a broken request body too: bad gzip, a bad chunk)
becomes one WARNING line and a hang-up one INFO line, each at most once per interval with a count
of those held back; any other exception is logged in full, as before, because that is a bug of ours.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from agent.core.limits import Throttle

MAX_REASON_CHARS = 200


class QuietHttpLog(logging.LoggerAdapter):
    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        super().__init__(logger, {})
        self.interval = interval
        self._malformed = Throttle(interval)
        self._hangups = Throttle(interval)

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        exc = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        peer = f" from {args[0]}" if args and isinstance(args[0], str) else ""
        if isinstance(exc, HttpProcessingError):
            self.one_line(self._malformed, logging.WARNING, "malformed HTTP request%s answered with %s: %s",
                          peer, exc.code or 400, short_reason(exc.message or str(exc)))
        elif isinstance(exc, RequestPayloadError):  # found reading a body aiohttp reads after its handler
            self.one_line(self._malformed, logging.WARNING, "malformed HTTP request body%s: %s", peer,
                          short_reason(str(exc)))
        elif isinstance(exc, ConnectionError):
            self.one_line(self._hangups, logging.INFO, "client%s hung up: %s", peer, short_reason(str(exc)))
        else:
            self.logger.exception(msg, *args, exc_info=exc_info, **kwargs)

    def one_line(self, throttle: Throttle, level: int, msg: str, *args: object) -> None:
        now, held = throttle.ready()
        if now:
            note = f" ({held} more like it in the last {self.interval:.0f} s not logged)" if held else ""
            self.logger.log(level, msg + note, *args)


def short_reason(text: str) -> str:
    """``text`` on one line, clipped (aiohttp's messages span lines and may quote the request)."""
    return " ".join(text.split())[:MAX_REASON_CHARS]
