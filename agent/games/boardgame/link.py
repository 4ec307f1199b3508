"""The transport to the engine: one WebSocket, a reader task sorting frames into responses and pushes.

The protocol has no request ids, so requests go one at a time and a response is the next frame of
the matching ``*_response`` type (or an ``error``); anything else that arrives meanwhile is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from agent.core.limits import Throttle
from agent.games.boardgame.protocol import (
    MAX_FRAME_BYTES,
    ProtocolError,
    PushEvent,
    ServerMessage,
    dump,
    parse_server_frame,
)

log = logging.getLogger(__name__)

FrameObserver = Callable[[str, str], None]
"""Called with ("in" | "out", frame text) for every frame, e.g. to write a transcript."""
MAX_OBSERVED_CHARS = 4_000
IGNORED_LOG_EVERY_S = 10.0
"""Unreadable frames are logged at most this often, with a count: an engine sending 100,000 of
them costs a few lines, not 100,000."""


class LinkLost(ConnectionError):
    """The WebSocket closed or the engine stopped answering; reconnect and resume."""


class Link:
    """One WebSocket to the engine. Requests are one at a time (the protocol has no request ids)."""

    def __init__(self, connection: ClientConnection, on_push: Callable[[PushEvent], None],
                 on_frame: FrameObserver | None = None) -> None:
        self._connection = connection
        self._on_push = on_push
        self._on_frame: FrameObserver = on_frame or (lambda direction, text: None)
        self._responses: asyncio.Queue[ServerMessage] = asyncio.Queue(maxsize=64)
        self._closed = asyncio.Event()
        self.protocol_errors = 0
        self._ignored_log = Throttle(IGNORED_LOG_EVERY_S)
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, on_push: Callable[[PushEvent], None], timeout: float,
                   on_frame: FrameObserver | None = None) -> Link:
        try:
            connection = await connect(url, open_timeout=timeout, max_size=MAX_FRAME_BYTES, max_queue=16)
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            raise LinkLost(f"cannot connect to {url}: {exc}") from None
        return cls(connection, on_push, on_frame)

    async def _read(self) -> None:
        try:
            async for frame in self._connection:
                self._observe("in", frame)
                try:
                    message = parse_server_frame(frame)
                except ProtocolError as exc:
                    self._ignore(len(frame), str(exc))
                    continue
                except Exception as exc:  # a parser bug must not kill the reader (and with it the match)
                    self._ignore(len(frame), f"unreadable ({type(exc).__name__}: {str(exc)[:200]})")
                    continue
                if isinstance(message, PushEvent):
                    try:
                        self._on_push(message)
                    except Exception:  # an observer's bug must not stop the reader
                        log.exception("handling a push event failed")
                elif self._responses.full():
                    self.protocol_errors += 1
                    log.warning("ignoring an unrequested %s frame", message.type)
                else:
                    self._responses.put_nowait(message)
        except ConnectionClosed:
            pass
        except Exception as exc:  # the request waiting on this link gets LinkLost, with the reason logged once
            log.warning("stopped reading from the engine: %s: %s", type(exc).__name__, str(exc)[:200])
        finally:
            self._closed.set()

    def _ignore(self, size: int, reason: str) -> None:
        self.protocol_errors += 1
        now, held = self._ignored_log.ready()
        if now:
            note = f" ({held} more not logged in the last {IGNORED_LOG_EVERY_S:.0f} s)" if held else ""
            log.warning("ignoring a frame from the engine (%d bytes): %s%s", size, reason, note)

    async def request(self, message: Any, timeout: float) -> ServerMessage:
        """Send ``message``; its ``*_response`` or an ``error``. LinkLost on a closed link or a timeout."""
        # Responses left over from an abandoned request would answer the wrong question.
        while not self._responses.empty():
            self._responses.get_nowait()
        try:
            text = dump(message)
            self._observe("out", text)
            await self._connection.send(text)
        except ConnectionClosed:
            raise LinkLost("the engine closed the connection") from None
        expected = f"{message.type}_response"
        try:
            async with asyncio.timeout(timeout):
                while True:
                    reply = await self._next()
                    if reply.type in (expected, "error"):
                        return reply
                    log.debug("dropping a late %s while waiting for %s", reply.type, expected)
        except TimeoutError:
            raise LinkLost(f"the engine did not answer {message.type} within {timeout:g} s") from None

    def _observe(self, direction: str, frame: str | bytes) -> None:
        text = frame if isinstance(frame, str) else frame.decode("utf-8", "replace")
        try:
            self._on_frame(direction, text[:MAX_OBSERVED_CHARS])
        except Exception:  # an observer's bug must not break the link
            log.exception("recording a frame failed")

    async def _next(self) -> ServerMessage:
        getter = asyncio.ensure_future(self._responses.get())
        closed = asyncio.ensure_future(self._closed.wait())
        try:
            done, _ = await asyncio.wait({getter, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
            if not getter.done():
                getter.cancel()
        if getter in done:
            return getter.result()
        raise LinkLost("the engine closed the connection")

    async def close(self) -> None:
        await self._connection.close()
        self._reader.cancel()
        try:
            await self._reader
        except asyncio.CancelledError:
            pass
