"""``python -m agent``: check everything that can be checked, then serve until Ctrl-C or SIGTERM.

Start-up failures (config, key, templates, port) print one clear line and exit with status 2
before anything listens, so a study never starts half-configured.

The first SIGINT/SIGTERM stops politely: running turns end with ``finish``, sockets close with
1001, transcripts are flushed, all within ``SHUTDOWN_S``. A second signal exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from dotenv import load_dotenv

from agent.config import Config, ConfigError, load_config
from agent.factory import PlayerFactory, make_player_factory
from agent.prompts import PromptError
from agent.server import AgentServer, ServerSetupError
from agent.redact import SecretFilter, Secrets

log = logging.getLogger("agent")

SHUTDOWN_S = 15.0
"""The polite shutdown gives up after this long (a game that stopped reading, a stuck disk)."""
QUIET_LOGGERS = ("httpx", "httpcore", "openai", "websockets.server")
"""Their DEBUG output holds whole request bodies (base64 images) and request paths."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m agent",
                                description="AI partner for the Tangram Collaboration Platform (serves ws://HOST:PORT).")
    p.add_argument("--config", type=Path, help="YAML config (default: the offline planner, no LLM)")
    p.add_argument("--host", help="interface to listen on (default: localhost = 127.0.0.1 and ::1)")
    p.add_argument("--port", type=int, help="port to listen on (default: 5000)")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], type=str.upper,
                   help="log verbosity (default: from the config, INFO)")
    p.add_argument("--allow-remote", action="store_true", help="permit a non-loopback --host")
    p.add_argument("--token", help="require clients to connect with ?token=TOKEN")
    return p


def prepare(args: argparse.Namespace) -> Config:
    """Load and check the configuration; raises ConfigError/PromptError with a one-line reason."""
    config = load_config(args.config)
    server = config.server.model_copy()
    if args.host is not None:
        server.host = args.host
    if args.port is not None:
        if not 0 <= args.port <= 65535:
            raise ConfigError(f"--port {args.port} is not a port number")
        server.port = args.port
    if args.allow_remote:
        server.allow_remote = True
    if args.token:
        server.token = args.token
    config = config.model_copy(update={"server": server})
    if args.log_level:
        config = config.model_copy(update={"log_level": args.log_level})
    return config


async def serve_forever(config: Config, factory: PlayerFactory) -> int:
    server = AgentServer(config, factory, Secrets(config.secret_values()))
    try:
        await server.start()
    except ServerSetupError as exc:
        await factory.aclose()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    model = config.llm.model if config.player == "llm" else "offline planner"
    print(f"Tangram agent ({model}) listening on ws://{config.server.host}:{server.port} - start the game; "
          "Ctrl-C stops.", file=sys.stderr, flush=True)
    await stop.wait()
    for sig in signals:  # a second Ctrl-C or SIGTERM now takes the default way out: at once
        loop.remove_signal_handler(sig)
    log.info("shutting down: ending running turns and flushing transcripts")
    try:
        async with asyncio.timeout(SHUTDOWN_S):
            await server.shutdown()
    except TimeoutError:
        log.error("shutdown took over %.0f s; exiting anyway", SHUTDOWN_S)
    await factory.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    # The .env of the folder the agent is started from; variables already set in the shell win.
    load_dotenv(Path.cwd() / ".env", override=False)
    args = build_parser().parse_args(argv)
    try:
        config = prepare(args)
        # Building the factory checks the templates and the planner's figures: still before serving.
        factory = make_player_factory(config)
    except (ConfigError, PromptError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=config.log_level, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
                        stream=sys.stderr)
    secrets = Secrets(config.secret_values())
    for handler in logging.getLogger().handlers:
        handler.addFilter(SecretFilter(secrets))
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return asyncio.run(serve_forever(config, factory))
