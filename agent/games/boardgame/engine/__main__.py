"""Run the reference engine: ``python -m agent.games.boardgame.engine --game connect_four --bot strong``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

from agent.games.boardgame.engine.server import BOT_KINDS, Engine, EngineSettings
from agent.games.boardgame.rules.registry import GAMES


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agent.games.boardgame.engine",
        description="A Boardgame Protocol 1.0.0 engine hosting matches with built-in bots.")
    parser.add_argument("--game", action="append", choices=GAMES,
                        help="a game to host (repeat for several; default tictactoe)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one; default 8765)")
    parser.add_argument("--bot", choices=BOT_KINDS, default="strong",
                        help="who takes the other seat of a match an agent creates (default strong)")
    parser.add_argument("--bot-delay", type=float, default=0.0, help="seconds a bot waits before moving")
    parser.add_argument("--bot-seconds", type=float, default=1.0,
                        help="search time of a bot that searches by time (default 1)")
    parser.add_argument("--turn-timeout", type=float, default=300.0,
                        help="seconds an agent has per move before it forfeits (0 = no limit; default 300)")
    parser.add_argument("--reconnect-grace", type=float, default=60.0,
                        help="seconds a match waits for its disconnected agents (default 60)")
    parser.add_argument("--max-matches", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=None, help="seed the bots' random choices")
    parser.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = parser.parse_args(argv)
    for name in ("bot_delay", "bot_seconds", "turn_timeout", "reconnect_grace"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must not be negative")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be from 0 to 65535")
    if args.max_matches < 1:
        parser.error("--max-matches must be at least 1")
    return args


async def run(args: argparse.Namespace) -> int:
    settings = EngineSettings(games=tuple(dict.fromkeys(args.game or ["tictactoe"])), bot=args.bot,
                              turn_timeout=args.turn_timeout or None, reconnect_grace=args.reconnect_grace,
                              max_matches=args.max_matches, bot_delay=args.bot_delay,
                              bot_search_seconds=args.bot_seconds, seed=args.seed)
    engine = Engine(settings)
    try:
        port = await engine.start(args.host, args.port)
    except OSError as exc:
        print(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"engine listening on ws://{args.host}:{port} hosting {', '.join(settings.games)} (bot: {settings.bot})",
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await engine.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
