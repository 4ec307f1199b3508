"""Start the console next to the agent's server: what ``--console`` does in ``main``."""

from __future__ import annotations

from agent.core.redact import Secrets
from agent.core.studies.run import StudyRun
from agent.core.studies.study_file import Study
from agent.games.tangram.config import Config
from agent.games.tangram.console.hub import Console
from agent.games.tangram.console.web import ConsoleServer, ConsoleSetupError
from agent.games.tangram.link.factory import PlayerSource
from agent.games.tangram.link.study import StudyLink

__all__ = ["Console", "ConsoleServer", "ConsoleSetupError", "start_console", "start_online_console",
           "start_study_console", "wizard_notice"]


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


def wizard_notice(study: Study, address: str) -> str | None:
    """The start-up line of a study with Wizard-of-Oz conditions (None without one): someone must be at
    the console, on ``address``, for every game of them, since their AI turns wait for that person."""
    wizards = [c for c in study.conditions if c.console == "wizard"]
    if not wizards:
        return None
    quoted = [repr(c.name) for c in wizards]
    names = " and ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
    which, it, its = (f"Condition {names} is", "it", "its") if len(wizards) == 1 else (
        f"Conditions {names} are", "them", "their")
    fallbacks = {c.config.console.wizard_fallback for c in wizards}  # type: ignore[attr-defined]
    unanswered = ("plays the offline planner's suggestion" if fallbacks == {"suggestion"} else
                  "passes" if fallbacks == {"pass"} else "plays the planner's suggestion or passes (as configured)")
    return (f"{which} Wizard-of-Oz: someone must be at the experimenter console, {address}, for every game of "
            f"{it}: {its} AI turns wait for that person, and a turn nobody answers {unanswered} at its deadline.")
