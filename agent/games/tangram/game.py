"""Tangram as the core sees it: flags, start-up checks, and serving until Ctrl-C or SIGTERM.

The game (GAIPS Tangram Collaboration Platform, Godot 4) is the WebSocket client and dials
ws://localhost:5000; we are the server. The first SIGINT/SIGTERM stops politely: running turns end
with ``finish``, sockets close with 1001, transcripts are flushed, all within ``SHUTDOWN_S``. A
second signal exits at once.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from typing import TYPE_CHECKING

from agent.core.config import ConfigError
from agent.core.game import Game, lazy_llm_sample, stop_signals
from agent.core.net import add_listen_arguments, apply_listen_arguments
from agent.games.tangram.config import Config, ConsoleConfig

if TYPE_CHECKING:
    from agent.core.studies.run import StudyRun
    from agent.games.tangram.link.factory import PlayerFactory
    from agent.games.tangram.link.study import StudyLink

log = logging.getLogger("agent")

SHUTDOWN_S = 15.0
"""The polite shutdown gives up after this long (a game that stopped reading, a stuck disk)."""


def add_arguments(group: argparse._ArgumentGroup) -> None:
    add_listen_arguments(group, port_help="port to listen on (default: 5000, which the game dials)",
                         token_help="require clients to connect with ?token=TOKEN")
    group.add_argument("--console", nargs="?", const="", metavar="HOST:PORT",
                       help="serve the experimenter console (default 127.0.0.1:8080; see docs/console.md)")
    group.add_argument("--console-token", metavar="TOKEN",
                       help="token for a console off loopback (default: a new one, printed at start)")
    group.add_argument("--lab-pages", type=int, metavar="PORT",
                       help="with --study and questionnaires, in the lab: the participants' pages' port on 127.0.0.1 "
                            "(default 8090; 'study next --pages-port PORT' prints links to it)")
    from agent.games.tangram.online.public import add_arguments as add_online_arguments
    from agent.games.tangram.webgame.launch import add_arguments as add_browser_game_arguments

    add_browser_game_arguments(group)
    add_online_arguments(group)


def apply_arguments(config: Config, args: argparse.Namespace) -> Config:
    from agent.games.tangram.online.public import OnlineError, public_request
    from agent.games.tangram.webgame.launch import BrowserGameError, check_arguments

    try:
        check_arguments(args)  # --browser-game: one line for a bad folder or template, before anything listens
        public_request(args)  # --public: with --study and --browser-game
    except (BrowserGameError, OnlineError) as exc:
        raise ConfigError(str(exc)) from exc
    server = apply_listen_arguments(config.server, args)
    return config.model_copy(update={"server": server, "console": _console_arguments(config, args)})


def _console_arguments(config: Config, args: argparse.Namespace) -> ConsoleConfig:
    from agent.core.net import is_loopback
    from agent.games.tangram.console.address import new_token, parse_address

    console = config.console.model_copy()
    if getattr(args, "console", None) is not None:
        console.enabled = True
        console.host, console.port = parse_address(args.console, console.host, console.port)
    token = getattr(args, "console_token", None)
    if token is not None:
        if len(token) < 16:
            raise ConfigError("--console-token must be at least 16 characters")
        console.token = token
    if console.enabled and not is_loopback(console.host) and not console.token:
        console.token = new_token()  # off loopback there is always a token; main prints it once
    return console


def check(config: Config) -> None:
    """Templates, key and the planner's figures, before anything listens."""
    from agent.games.tangram.link.factory import make_player_factory

    make_player_factory(config, with_client=False)


async def main(config: Config, args: argparse.Namespace) -> int:
    from agent.games.tangram.link.factory import make_player_factory

    return await _serve(config, args, make_player_factory(config), None)


async def serve_study(run: StudyRun, args: argparse.Namespace) -> int:
    """``python -m agent --study FILE``: every condition's player ready in one process, each game
    connection bound to the active participant's next condition (link/study.py). A Wizard-of-Oz
    condition needs the console, so it is started when ``--console`` was not given. With
    ``--browser-game DIR --public HOST:PORT`` it is an online study instead: participants in their own
    browsers, from their links (agent/games/tangram/online/, docs/online-study.md)."""
    from agent.games.tangram.link.study import StudyLink, StudySetupError
    from agent.games.tangram.online.public import public_request, serve_online

    request = public_request(args)
    if request is not None:
        return await serve_online(run, request)

    try:
        link = await StudyLink.build(run, run.study.secrets())
    except StudySetupError as exc:
        print(f"error: study {run.study.path}: {exc}", file=sys.stderr)
        return 2
    config = link.first.config
    wizards = [c.name for c in run.study.conditions if c.console == "wizard"]
    if wizards and not config.console.enabled:
        log.info("condition %s is Wizard-of-Oz: starting the experimenter console", ", ".join(wizards))
        config = config.model_copy(update={"console": config.console.model_copy(update={"enabled": True})})
    status = await run.status()
    print(f"Study {run.study.name} ({status.design}, {len(link.seats)} conditions, plan {status.plan_sha256}): "
          f"{status.balance}; active participant: {status.active or 'none yet'}", file=sys.stderr, flush=True)
    if run.study.questionnaires is None:
        return await _serve(config, args, None, link)
    return await _serve_with_lab_pages(run, config, args, link)


async def _serve_with_lab_pages(run: StudyRun, config: Config, args: argparse.Namespace, link: StudyLink) -> int:
    """The lab study with questionnaires: its participants' pages on loopback (online/lab.py) while it serves."""
    from agent.core.studies.lab import LAB_PAGES_PORT
    from agent.games.tangram.online.lab import LabPagesError, lab_pages

    port = getattr(args, "lab_pages", None)
    try:
        async with lab_pages(run, LAB_PAGES_PORT if port is None else port) as pages:
            print(f"Participants' pages (this machine only): {pages.url}/p/... - their games start when their pages "
                  "reach them; each participant's link: python -m agent study next ID --study FILE"
                  f"{'' if port is None else f' --pages-port {pages.port}'}", file=sys.stderr, flush=True)
            return await _serve(config, args, None, link)
    except LabPagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        await link.aclose()
        return 2


class _Refused(Exception):
    """A part of the server could not start; its one line was printed."""


async def _serve(config: Config, args: argparse.Namespace, factory: PlayerFactory | None,
                 study: StudyLink | None) -> int:
    """Serve games until Ctrl-C or SIGTERM: one config's (``factory``), or a study's (``study``).
    Whatever was started is stopped in reverse order, on every way out (one exit stack)."""
    try:
        async with contextlib.AsyncExitStack() as stack:
            await _serve_until_stopped(config, args, factory, study, stack)
    except _Refused:
        return 2
    return 0


async def _serve_until_stopped(config: Config, args: argparse.Namespace, factory: PlayerFactory | None,
                               study: StudyLink | None, stack: contextlib.AsyncExitStack) -> None:
    import asyncio

    from agent.core.redact import Secrets
    from agent.games.tangram.link.factory import PlayerSource
    from agent.games.tangram.link.server import AgentServer, ServerSetupError
    from agent.games.tangram.webgame.launch import BrowserGameError, request_from
    from agent.games.tangram.webgame.launch import start as start_browser_game

    if study is not None:
        stack.push_async_callback(study.aclose)
        secrets = study.secrets
    else:
        assert factory is not None
        stack.push_async_callback(factory.aclose)
        secrets = Secrets(config.secret_values())
    browser_request = request_from(args)
    browser = None
    if browser_request is not None:
        try:
            browser = await start_browser_game(browser_request)
        except BrowserGameError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise _Refused from exc
        stack.push_async_callback(browser.stop)
    source: PlayerSource | None = factory
    if config.console.enabled:
        from agent.games.tangram.console.start import ConsoleSetupError, start_console, start_study_console

        try:
            if study is not None:
                console = await start_study_console(config, study, secrets)
            else:
                assert factory is not None
                console, source = await start_console(config, factory, secrets)
        except ConsoleSetupError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise _Refused from exc
        stack.push_async_callback(console.stop)
        hub = console.console
        factories = [factory] if study is None else [seat.factory for seat in study.seats.values()]
        for each in factories:
            if each is not None:
                each.on_llm_server(lambda _state, line: hub.announce(line))
        token = f"?token={config.console.token}" if config.console.token else ""
        print(f"Experimenter console: {console.url}{token}", file=sys.stderr, flush=True)
    if study is not None:
        source = study.first.players
    assert source is not None
    server = AgentServer(config, source, secrets, study_link=study)
    with stop_signals() as stop:
        try:
            await server.start()
        except ServerSetupError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise _Refused from exc
        if study is not None:
            study.prime_soon()
        elif factory is not None:
            factory.prime_soon()
        model = config.llm.model if config.player == "llm" else "offline planner"
        what = f"study {study.run.study.name}" if study is not None else model
        print(f"Tangram agent ({what}) listening on ws://{config.server.host}:{server.port} - start the game; "
              "Ctrl-C stops.", file=sys.stderr, flush=True)
        if browser is not None:
            browser.announce(server.port)
        if study is not None:
            for seat in study.seats.values():
                cfg = seat.config
                log.info("condition %s: %s%s", seat.name,
                         cfg.llm.model if cfg.player == "llm" else "offline planner",
                         f", transcripts go to {study.run.transcripts_dir}" if cfg.transcripts.enabled else "")
        elif config.transcripts.enabled:
            tags = ", ".join(f"{k}={v}" for k, v in sorted(config.tags.items()))
            log.info("transcripts go to %s%s", config.transcripts.dir, f" (tags: {tags})" if tags else "")
        await stop.wait()
    log.info("shutting down: ending running turns and flushing transcripts")
    try:
        async with asyncio.timeout(SHUTDOWN_S):
            await server.shutdown()
    except TimeoutError:
        log.error("shutdown took over %.0f s; exiting anyway", SHUTDOWN_S)


GAME = Game(
    name="tangram",
    summary="the GAIPS Tangram Collaboration Platform: serves ws://localhost:5000, which the game dials",
    config_model=Config,
    main=main,
    add_arguments=add_arguments,
    apply_arguments=apply_arguments,
    check=check,
    llm_sample=lazy_llm_sample("agent.games.tangram.llm_player.sample"),
    serve_study=serve_study,
)
