"""Forge as the core sees it: flags, start-up checks, and serving until Ctrl-C or SIGTERM.

Forge (the open-source Magic: The Gathering engine, headless/"HTTP agent" mode) is the client:
it POSTs each decision to the URL it is given (e.g. http://localhost:5005/decide) and waits for
the answer. We are the server. Light at import: the server and the LLM client load in ``main``.
"""

from __future__ import annotations

import argparse
import logging
import sys

from agent.core.config import ConfigError
from agent.core.game import Game, lazy_llm_sample, stop_signals
from agent.core.net import add_listen_arguments, apply_listen_arguments, is_loopback
from agent.games.forge.config import ForgeConfig

log = logging.getLogger("agent")

SHUTDOWN_GRACE_S = 5.0
"""Beyond the decision deadline, for closing games and flushing transcripts at shutdown."""


def add_arguments(group: argparse._ArgumentGroup) -> None:
    add_listen_arguments(group, port_help="port to listen on (default: 5005)",
                         token_help="require 'Authorization: Bearer TOKEN' on every request")
    group.add_argument("--deadline", type=float, help="seconds the LLM has per decision before the heuristic answers")


def apply_arguments(config: ForgeConfig, args: argparse.Namespace) -> ForgeConfig:
    server = apply_listen_arguments(config.server, args)
    decision = config.decision.model_copy()
    if getattr(args, "deadline", None) is not None:
        if not 0.05 < args.deadline <= 25:
            raise ConfigError(f"--deadline {args.deadline:g} must be above 0.05 s and at most 25 s "
                              "(Forge's early client gives up after 30 s)")
        decision.deadline = args.deadline
    return config.model_copy(update={"server": server, "decision": decision})


def check(config: ForgeConfig) -> None:
    """Host, key and templates, before anything listens."""
    from agent.games.forge.factory import make_decider

    if not config.server.allow_remote and not is_loopback(config.server.host):
        raise ConfigError(f"host {config.server.host} is not a loopback address; add --allow-remote to permit it")
    make_decider(config, with_client=False)


async def main(config: ForgeConfig, args: argparse.Namespace) -> int:
    import asyncio

    from agent.core.redact import Secrets
    from agent.games.forge.factory import make_decider
    from agent.games.forge.server import ForgeServer, ServerSetupError

    decider = make_decider(config)
    server = ForgeServer(config, decider, Secrets(config.secret_values()))
    # Signals are caught before the banner: whoever reads it may stop us at once.
    with stop_signals() as stop:
        try:
            await server.start()
        except ServerSetupError as exc:
            if decider.client is not None:
                await decider.client.aclose()
            print(f"error: {exc}", file=sys.stderr)
            return 2
        who = "heuristic"
        if config.player == "llm":
            who = f"LLM {config.llm.model}, heuristic after {config.decision.deadline:g}s"
        print(f"Forge agent ({who}) listening on http://{config.server.host}:{server.port}/decide "
              "(POST / works too) - point Forge's agent endpoint here; Ctrl-C stops.", file=sys.stderr, flush=True)
        await stop.wait()
    log.info("shutting down: closing games and flushing transcripts")
    limit = config.decision.deadline + SHUTDOWN_GRACE_S
    try:
        async with asyncio.timeout(limit):
            await server.shutdown()
    except TimeoutError:
        log.error("shutdown took over %.0f s; exiting anyway", limit)
    if decider.client is not None:
        await decider.client.aclose()
    return 0



GAME = Game(
    name="forge",
    summary="ForgeHeadless Magic: The Gathering: serves http://localhost:5005 (POST / or /decide) for Forge",
    config_model=ForgeConfig,
    main=main,
    add_arguments=add_arguments,
    apply_arguments=apply_arguments,
    check=check,
    llm_sample=lazy_llm_sample("agent.games.forge.llm_sample"),
)
