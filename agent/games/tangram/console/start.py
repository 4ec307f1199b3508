"""Start the console next to the agent's server: what ``--console`` does in ``main``."""

from __future__ import annotations

from agent.core.redact import Secrets
from agent.core.studies.run import StudyRun
from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer, ConsoleSetupError
from agent.games.tangram.link.factory import PlayerSource
from agent.games.tangram.link.study import StudyLink

__all__ = ["Console", "ConsoleServer", "ConsoleSetupError", "start_console", "start_online_console",
           "start_study_console"]


async def start_console(config: Config, source: PlayerSource, secrets: Secrets) -> tuple[ConsoleServer, PlayerSource]:
    """Serve the console; returns its server and the player source sessions must be built from."""
    cfg = config.console
    console = Console(config, secrets)
    server = ConsoleServer(console, cfg.host, cfg.port, cfg.token)
    await server.start()
    return server, console.wrap(source)


async def start_study_console(config: Config, link: StudyLink, secrets: Secrets) -> ConsoleServer:
    """Serve the console for a study: every condition's sessions supervised (each in its own
    condition's console mode: a Wizard-of-Oz condition's games open in wizard mode), and the
    study's participants and controls shown."""
    cfg = config.console
    console = Console(config, secrets)
    panel = console.show_study(link.run)
    link.supervise(console.wrap)
    link.on_change = panel.changed
    server = ConsoleServer(console, cfg.host, cfg.port, cfg.token)
    await server.start()
    await panel.refresh()
    panel.start()
    return server


async def start_online_console(config: Config, run: StudyRun, secrets: Secrets) -> ConsoleServer:
    """Serve the console for an online study, on its own address: the study's participants and
    controls, and every game the participants play, once the online side supervises each game's
    players with ``server.console.wrap`` (each in its condition's console mode) and tells
    ``server.console.study.changed`` when a game starts or ends."""
    cfg = config.console
    console = Console(config, secrets)
    panel = console.show_study(run, online=True)
    server = ConsoleServer(console, cfg.host, cfg.port, cfg.token)
    await server.start()
    await panel.refresh()
    panel.start()
    return server
