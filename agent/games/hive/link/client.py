"""The TCP side of an agent: connect, send the team name, answer every state, stop at gameover.

The transport is thin: each state line is parsed strictly, handed to a synchronous ``Decider``
(pure and quick, so the answer never waits on anything slow), and the answer goes out in one
write. A line that cannot be understood is logged and answered with a harmless command, since
silence would forfeit the match. The arena closing, refusing, or taking its time to accept are
all outcomes, never crashes.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agent.games.hive.protocol import (
    GAMEOVER,
    MAX_LINE,
    SAFE_COMMAND,
    BeeView,
    ProtocolError,
    format_command,
    parse_state,
)

log = logging.getLogger(__name__)

LOGGED_BAD_LINES = 20
"""Bad lines logged one by one; beyond this they are only counted (a flood must not flood the log)."""
DECIDE_LIMIT_S = 1.6
"""Hard stop for an awaitable decision: the arena forfeits at 2 s."""

Ending = Literal["gameover", "closed", "idle", "refused"]


class Decider(Protocol):
    def decide(self, view: BeeView) -> tuple[int, int] | Awaitable[tuple[int, int]]:
        """The command for this state: at once, or (research modes) an awaitable that the
        client bounds by DECIDE_LIMIT_S, answering a safe command when it runs over."""
        ...

    def bad_line(self, line: str, error: str) -> None:
        """A line that was not a state (already answered with a safe command)."""
        ...


@dataclass
class ClientOutcome:
    ending: Ending
    player: int | None = None
    """Our seat, from the first state line (None if no state came)."""
    states: int = 0
    bad_lines: int = 0
    decision_ms: list[float] = field(default_factory=list)
    """Time from having a whole line to having written the answer."""
    detail: str = ""


def check_team_name(name: str) -> str:
    """A name the arena can take: one line, printable, short enough for one read."""
    if not name or not name.isprintable() or len(name.encode("utf-8")) > MAX_LINE - 1:
        raise ValueError(f"team name must be 1-{MAX_LINE - 1} printable bytes on one line, got {name!r}")
    return name


async def connect(host: str, port: int, timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Dial the arena, retrying while it is not listening yet, for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        left = deadline - time.monotonic()
        try:
            return await asyncio.wait_for(asyncio.open_connection(host, port, limit=4 * MAX_LINE), max(left, 0.01))
        except (OSError, TimeoutError) as exc:
            if time.monotonic() + delay >= deadline:
                raise ConnectionRefusedError(f"could not connect to {host}:{port} within {timeout:g} s: {exc}") from exc
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


def _checked(command: object) -> tuple[int, int]:
    """A decider's command, or ValueError: an out-of-range answer would forfeit the match."""
    if (isinstance(command, tuple) and len(command) == 2
            and all(isinstance(x, int) for x in command) and 0 <= command[0] <= 3 and 0 <= command[1] <= 7):
        return int(command[0]), int(command[1])
    raise ValueError(f"the decider answered {command!r}, not (action 0-3, direction 0-7)")


class LineReader:
    """Splits the arena's byte stream into lines, cutting any line longer than MAX_LINE."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()

    async def next_line(self) -> tuple[bytes, bool]:
        """The next line without its newline and whether it was too long (then only its head).

        Raises IncompleteReadError when the stream ends before a newline.
        """
        too_long = False
        head = b""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                if too_long or newline + 1 > MAX_LINE:
                    return (head or line[:80]), True
                return line, False
            if len(self._buffer) > MAX_LINE:
                # Keep only the start for the message; skip the rest up to the newline.
                too_long = True
                head = head or bytes(self._buffer[:80])
                self._buffer.clear()
            chunk = await self._reader.read(4 * MAX_LINE)
            if not chunk:
                raise asyncio.IncompleteReadError(head or bytes(self._buffer), None)
            self._buffer += chunk


async def play(host: str, port: int, team: str, decider: Decider, *, connect_timeout: float = 30.0,
               idle_timeout: float = 600.0) -> ClientOutcome:
    """Play one match to its end; never raises for anything the arena does."""
    team = check_team_name(team)
    try:
        reader, writer = await connect(host, port, connect_timeout)
    except ConnectionRefusedError as exc:
        return ClientOutcome("refused", detail=str(exc))
    outcome = ClientOutcome("closed")
    try:
        writer.write(team.encode("utf-8") + b"\n")
        lines = LineReader(reader)
        while True:
            try:
                raw, too_long = await asyncio.wait_for(lines.next_line(), idle_timeout)
            except asyncio.IncompleteReadError as exc:
                outcome.ending = "closed"
                outcome.detail = "the arena closed the connection" + (
                    f" after a partial line {exc.partial[:40]!r}" if exc.partial else "")
                break
            except TimeoutError:
                outcome.ending = "idle"
                outcome.detail = f"nothing from the arena for {idle_timeout:g} s"
                break
            started = time.perf_counter()
            line = raw.decode("ascii", errors="replace").rstrip("\r")
            if line == GAMEOVER:
                outcome.ending = "gameover"
                break
            command = SAFE_COMMAND
            try:
                if too_long:
                    raise ProtocolError(f"line longer than {MAX_LINE} bytes starting {line[:40]!r}")
                view = parse_state(line)
            except ProtocolError as exc:
                outcome.bad_lines += 1
                if outcome.bad_lines <= LOGGED_BAD_LINES:
                    log.warning("bad line from the arena, answering %d,%d: %s", *SAFE_COMMAND, exc)
                with contextlib.suppress(Exception):
                    decider.bad_line(line[:MAX_LINE], str(exc))
            else:
                outcome.states += 1
                if outcome.player is None:
                    outcome.player = view.player
                try:
                    answer = decider.decide(view)
                    if inspect.isawaitable(answer):
                        answer = await asyncio.wait_for(answer, DECIDE_LIMIT_S)
                    command = _checked(answer)
                except TimeoutError:
                    log.warning("no decision within %.1f s on turn %d; answering a safe command",
                                DECIDE_LIMIT_S, view.turn)
                except Exception:  # a strategy bug must not forfeit the match
                    log.exception("the decider failed on turn %d; answering a safe command", view.turn)
            writer.write(format_command(*command))
            outcome.decision_ms.append((time.perf_counter() - started) * 1000)
    except ConnectionError as exc:
        outcome.ending = "closed"
        outcome.detail = f"connection lost: {exc}"
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 1.0)
    return outcome
