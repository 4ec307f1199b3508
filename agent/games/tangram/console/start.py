"""Start the console next to the agent's server: what ``--console`` does in ``main``."""

from __future__ import annotations

from agent.core.redact import Secrets
from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer, ConsoleSetupError
from agent.games.tangram.link.factory import PlayerSource

__all__ = ["Console", "ConsoleServer", "ConsoleSetupError", "start_console"]


async def start_console(config: Config, source: PlayerSource, secrets: Secrets) -> tuple[ConsoleServer, PlayerSource]:
    """Serve the console; returns its server and the player source sessions must be built from."""
    cfg = config.console
    console = Console(config, secrets)
    server = ConsoleServer(console, cfg.host, cfg.port, cfg.token)
    await server.start()
    return server, console.wrap(source)
