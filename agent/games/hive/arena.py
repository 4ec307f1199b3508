"""A local Hive Arena: the TCP server two agents connect to, written from the rules.

It plays the role of the real arena: accepts exactly two connections, reads each team name
(one read, 2 s), shuffles the seats, then for every turn sends the active bee's view and reads
the answer with a single read of at most 200 bytes that must end with the newline, within 2 s;
anything else forfeits the match. At the end both agents get ``gameover`` and the connections
close. The log has the arena's format (see agent.games.hive.protocol).

    python -m agent.games.hive.arena --port 8000 --log match.log [--seed N] [--host 127.0.0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent.games.hive.protocol import (
    GAMEOVER,
    MAX_LINE,
    ProtocolError,
    format_state,
    log_turn_line,
    parse_command,
)
from agent.games.hive.rules import ArenaState, apply_command, forfeit, new_arena, turn_player_bee, view

log = logging.getLogger(__name__)

ANSWER_TIMEOUT_S = 2.0
MAX_TURNS = 60_000
"""Beyond any real match (each flower buys at most 1000 turns before the timeout); stops a runaway loop."""
CLOSE_TIMEOUT_S = 2.0
"""How long the closed server may wait for its connections to be gone."""
LOG_CHUNK = 500
"""Log lines gathered before they are handed to the writer thread."""


@dataclass
class ArenaResult:
    names: tuple[str, str] = ("?", "?")
    """Team names by player number (after the seat shuffle)."""
    scores: tuple[int, int] = (0, 0)
    winner: int | None = None
    turns: int = 0
    forfeit: int | None = None
    """The player that failed to answer in time or answered badly."""
    reason: str = ""
    answer_ms: list[list[float]] = field(default_factory=lambda: [[], []])
    """Per player, the time from sending a state to having its answer."""
    connected_order: tuple[int, int] = (0, 1)
    """connected_order[i] = the player number given to the i-th connection."""
    played: bool = False
    """False when the match never started (a name missing or too slow)."""


@dataclass
class _Client:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    name: str = ""


async def _single_read(reader: asyncio.StreamReader, timeout: float) -> bytes:
    """One read of at most MAX_LINE bytes, like one recv(); b'' on timeout or a closed peer."""
    try:
        return await asyncio.wait_for(reader.read(MAX_LINE), timeout)
    except (TimeoutError, ConnectionError):
        return b""


class Arena:
    """One match. ``await serve()`` listens, plays, writes the log and returns the result."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, log_path: Path | None = None,
                 seed: int | None = None, answer_timeout: float = ANSWER_TIMEOUT_S,
                 on_listening: Callable[[int], None] | None = None) -> None:
        self.host = host
        self.port = port
        self.log_path = log_path
        self.rng = random.Random(seed)
        self.answer_timeout = answer_timeout
        self.on_listening = on_listening
        self.listening = asyncio.Event()
        self._clients: list[_Client] = []
        self._accepting: asyncio.Queue[_Client] = asyncio.Queue(maxsize=2)
        self._connections = 0
        self._closing = False

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        if self._connections > 2 or self._closing:
            writer.close()  # the real arena accepts exactly two connections
            return
        self._accepting.put_nowait(_Client(reader, writer))

    async def serve(self) -> ArenaResult:
        server = await asyncio.start_server(self._on_connect, self.host, self.port, backlog=2)
        self.port = server.sockets[0].getsockname()[1]
        self.listening.set()
        if self.on_listening:
            self.on_listening(self.port)
        result = ArenaResult()
        # No `async with server:` here: its exit awaits Server.wait_closed(), which since Python 3.12.1
        # waits for every open connection, and the players' connections close only after the match.
        try:
            for _ in range(2):
                client = await self._accepting.get()
                data = await _single_read(client.reader, self.answer_timeout)
                if not data.endswith(b"\n"):
                    result.reason = "a client did not send its name"
                    self._clients.append(client)
                    return result
                client.name = data[:-1].decode("utf-8", errors="replace").strip() or "?"
                self._clients.append(client)
            server.close()
            return await self._play(result)
        finally:
            self._closing = True
            server.close()
            await self._hang_up(result.played)
            # Every connection is closed by now, so this returns at once on every Python; the bound
            # only guards against a connection the loop accepted but has not handed to _on_connect yet.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), CLOSE_TIMEOUT_S)

    async def _hang_up(self, played: bool) -> None:
        while not self._accepting.empty():
            self._clients.append(self._accepting.get_nowait())
        for client in self._clients:
            # Like the real arena: gameover after a match; without one it just hangs up.
            with contextlib.suppress(Exception):
                if played:
                    client.writer.write(GAMEOVER.encode() + b"\n")
                    await asyncio.wait_for(client.writer.drain(), 1.0)
            client.writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.writer.wait_closed(), 1.0)

    async def _play(self, result: ArenaResult) -> ArenaResult:
        state = new_arena(self.rng)
        swap = self.rng.randrange(2) == 0
        seats = [self._clients[1], self._clients[0]] if swap else list(self._clients)
        result.connected_order = (1, 0) if swap else (0, 1)
        result.names = (seats[0].name, seats[1].name)
        result.played = True
        out = _LogWriter(self.log_path)
        await out.open()
        try:
            out.write(f"# Player 0: {seats[0].name}\n# Player 1: {seats[1].name}\n")
            await self._turns(state, seats, out, result)
            if state.game_over and result.forfeit is None:
                player, bee = turn_player_bee(state.turn)
                out.write(log_turn_line(state.turn, player, bee, state.scores, state.grid_digits(), -1, -1))
            if state.winner is not None:
                out.write(f"# Winner: player {state.winner} ({seats[state.winner].name})\n")
            else:
                out.write("# Draw\n")
        finally:
            await out.close()
        result.scores = (state.scores[0], state.scores[1])
        result.winner = state.winner
        result.turns = state.turn
        return result

    async def _turns(self, state: ArenaState, seats: list[_Client], out: _LogWriter, result: ArenaResult) -> None:
        while not state.game_over and state.turn < MAX_TURNS:
            turn, player, bee, row, col, digits = view(state)
            client = seats[player]
            try:
                client.writer.write(format_state(turn, player, bee, row, col, digits))
            except (ConnectionError, RuntimeError):
                self._forfeit(state, player, out, result, "timeout", "could not send the state")
                return
            sent = time.perf_counter()
            data = await _single_read(client.reader, self.answer_timeout)
            result.answer_ms[player].append((time.perf_counter() - sent) * 1000)
            try:
                action, direction = parse_command(data)
            except ProtocolError as exc:
                self._forfeit(state, player, out, result, "timeout/bad command", str(exc))
                return
            out.write(log_turn_line(turn, player, bee, state.scores, state.grid_digits(), action, direction))
            apply_command(state, action, direction, self.rng)
            if out.pending >= LOG_CHUNK:
                await out.flush()

    @staticmethod
    def _forfeit(state: ArenaState, player: int, out: _LogWriter, result: ArenaResult, word: str, why: str) -> None:
        out.write(f"# Player {player} {word}\n")
        forfeit(state, player)
        result.forfeit = player
        result.reason = f"player {player} forfeits: {why}"
        log.info("%s", result.reason)


class _LogWriter:
    """The match log, written in chunks from a worker thread so the event loop never waits on disk."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: TextIO | None = None
        self._lines: list[str] = []

    @property
    def pending(self) -> int:
        return len(self._lines)

    async def open(self) -> None:
        if self.path is not None:
            self._file = await asyncio.to_thread(open, self.path, "w", encoding="utf-8")

    def write(self, text: str) -> None:
        if self._file is not None:
            self._lines.append(text)

    async def flush(self) -> None:
        if self._file is not None and self._lines:
            chunk, self._lines = self._lines, []
            await asyncio.to_thread(self._file.writelines, chunk)

    async def close(self) -> None:
        if self._file is not None:
            await self.flush()
            await asyncio.to_thread(self._file.close)
            self._file = None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agent.games.hive.arena",
                                description="A local Hive Arena: accepts two agents, plays one match, writes the log.")
    p.add_argument("--port", type=int, required=True, help="TCP port to listen on (0: any free port, printed)")
    p.add_argument("--log", type=Path, required=True, help="match log file to write")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--seed", type=int, help="random seed (flowers, seats, chance); default: the clock")
    p.add_argument("--timeout", type=float, default=ANSWER_TIMEOUT_S,
                   help="seconds an agent has per answer (default 2)")
    return p


async def _main(args: argparse.Namespace) -> int:
    arena = Arena(args.host, args.port, args.log, args.seed, args.timeout,
                  on_listening=lambda port: print(f"arena listening on {args.host}:{port}", flush=True))
    result = await arena.serve()
    if not result.played:
        print(f"no match: {result.reason}", flush=True)
        return 1
    outcome = "draw" if result.winner is None else f"winner player {result.winner} ({result.names[result.winner]})"
    extra = f"; {result.reason}" if result.reason else ""
    print(f"{result.names[0]} {result.scores[0]} - {result.scores[1]} {result.names[1]}, "
          f"{result.turns} turns, {outcome}{extra}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"error: --port {args.port} is not a port number", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("error: --timeout must be positive", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(_main(args))
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
