"""``python -m agent --study FILE --browser-game DIR [--godot-web T] --public HOST:PORT``: an online study.

Builds (or reuses) the real game, prepares its engine and pack for the public (assets.py), makes
one player factory per condition, and serves the participants' origin (app.py) until Ctrl-C or
SIGTERM; then running turns end with ``finish`` and sockets close politely. Every minute the
participants who closed their page and did not come back are handled as the study file says
(``online.on_leave``).

With ``--console [HOST:PORT]`` (or a Wizard-of-Oz condition, which needs it) the experimenter
console is served too, on its own address (loopback by default, a token off loopback), never on
the participants' origin: the study panel, every participant's game as it runs (supervised as
in-lab, each in its condition's console mode), and a notice when the LLM server stops or when a
spend cap switches a game, a participant or the study to the offline planner.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from aiohttp import web

from agent.core.game import stop_signals
from agent.core.images import ImagePool
from agent.core.net import is_loopback
from agent.core.redact import Secrets
from agent.core.studies.online import OnlineRun
from agent.core.studies.pricing import missing_prices
from agent.core.studies.run import StudyRun
from agent.games.tangram.config import Config
from agent.games.tangram.console.start import ConsoleServer, ConsoleSetupError, start_online_console, wizard_notice
from agent.games.tangram.link.lifecycle import Seat, prepare_seat
from agent.games.tangram.online.app import make_app
from agent.games.tangram.online.assets import AssetError, Assets, prepare_assets
from agent.games.tangram.online.deadlines import make_runner
from agent.games.tangram.online.guard import RateLimiter, proxy_address
from agent.games.tangram.online.sockets import GameSockets
from agent.games.tangram.webgame.build import BuildError, build_game, default_cache

log = logging.getLogger(__name__)

LEAVE_SWEEP_S = 60.0
IDLE_SWEEP_S = 10.0
"""How often idle participants are looked for (a time-out comes at most this late)."""
TIMED_OUT = 4003
"""The close code of a game socket whose participant was timed out and dropped."""
SHUTDOWN_S = 15.0


class OnlineError(Exception):
    """The online study cannot start; one line."""


@dataclass(frozen=True)
class PublicRequest:
    host: str
    port: int
    trusted_proxy: str | None
    gaips: Path
    template: Path | None


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--public", metavar="HOST:PORT",
                       help="with --study and --browser-game: serve an online study, each participant in their own "
                            "browser from a link, on this address (behind a TLS proxy: docs/online-study.md)")
    group.add_argument("--trusted-proxy", metavar="ADDRESS",
                       help="the reverse proxy's address (e.g. 127.0.0.1): only its X-Forwarded-For/-Proto are "
                            "believed")


def parse_public(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OnlineError(f"--public {text!r} is not HOST:PORT (e.g. 127.0.0.1:8443)")
    return host, int(port)


def public_request(args: argparse.Namespace) -> PublicRequest | None:
    """The online study the flags ask for, or None; OnlineError for flags that do not go together."""
    public = getattr(args, "public", None)
    if public is None:
        if getattr(args, "trusted_proxy", None) is not None:
            raise OnlineError("--trusted-proxy needs --public HOST:PORT")
        return None
    if getattr(args, "study", None) is None:
        raise OnlineError("--public serves a study: add --study FILE")
    if getattr(args, "browser_game", None) is None:
        raise OnlineError("--public serves the real game: add --browser-game DIR (docs/browser-game.md)")
    host, port = parse_public(public)
    try:
        proxy = proxy_address(getattr(args, "trusted_proxy", None))
    except ValueError as exc:
        raise OnlineError(str(exc)) from exc
    template = getattr(args, "godot_web", None)
    return PublicRequest(host, port, proxy, Path(args.browser_game).expanduser(),
                         None if template is None else Path(template).expanduser())


async def seats_of(run: StudyRun) -> tuple[dict[str, Seat], Seat]:
    """Every condition's seat (lifecycle.prepare_seat), and the offline planner's, which plays the games
    over the spend caps (the first condition's config with ``player: planner``, no LLM client)."""
    seats: dict[str, Seat] = {}
    try:
        for condition in run.study.conditions:
            config: Config = condition.config  # type: ignore[assignment]
            seats[condition.name] = await prepare_seat(config, condition.name)
        first: Config = run.study.conditions[0].config  # type: ignore[assignment]
        planner = await prepare_seat(first.model_copy(update={"player": "planner"}), "planner", with_client=False)
    except BaseException:
        await close_seats(list(seats.values()))
        raise
    return seats, planner


async def close_seats(seats: list[Seat]) -> None:
    for seat in seats:
        if seat.factory is not None:
            await seat.factory.aclose()


async def start_console(run: StudyRun, online: OnlineRun, sockets: GameSockets, seats: list[Seat],
                        secrets: Secrets, public_port: int) -> ConsoleServer | None:
    """The experimenter console of the online study, when ``--console`` asks for it or a condition is
    Wizard-of-Oz (the console plays its AI turns), wired to ``sockets``' games; None without it.
    OnlineError (one line) when it cannot be served."""
    first: Config = run.study.conditions[0].config  # type: ignore[assignment]
    wizards = [c.name for c in run.study.conditions if c.console == "wizard"]
    if not first.console.enabled and not wizards:
        return None
    if wizards and not first.console.enabled:
        log.info("condition %s is Wizard-of-Oz: starting the experimenter console", ", ".join(wizards))
    cfg = first.console
    if cfg.port != 0 and cfg.port == public_port:
        raise OnlineError(f"the console needs its own port: --console {cfg.host}:{cfg.port} is --public's port "
                          "(e.g. --console 127.0.0.1:8080)")
    try:
        server = await start_online_console(first, run, secrets)
    except ConsoleSetupError as exc:
        raise OnlineError(str(exc)) from exc
    hub = server.console
    sockets.supervise = hub.wrap
    if hub.study is not None:
        sockets.on_change = hub.study.changed
    for seat in seats:
        if seat.factory is not None:
            seat.factory.on_llm_server(lambda _state, line: hub.announce(line))
    online.spend.subscribe(hub.announce)
    return server


async def _sweep(online: OnlineRun) -> None:
    while True:
        await asyncio.sleep(LEAVE_SWEEP_S)
        try:
            for pid in await online.apply_leaving():
                log.info("participant %s dropped out: never started a game, or closed their page and did not "
                         "come back (on_leave: drop); their order sequence goes to the next participant", pid)
        except Exception:  # the sweep must go on
            log.exception("handling participants who left failed")


async def time_out_idle(online: OnlineRun, sockets: GameSockets | None, now: datetime | None = None) -> list[str]:
    """One idle sweep (:meth:`OnlineRun.apply_idle`): a participant timed out and dropped loses their
    game's socket; returns the ids timed out."""
    timed_out = []
    for pid, why, dropped in await online.apply_idle(now):
        log.info("participant %s timed out (%s)%s", pid, why,
                 ": dropped out, their order sequence goes to the next participant" if dropped
                 else ": kept (on_leave: keep); a sign of life brings them back")
        live = None if sockets is None else sockets.live.get(pid)
        if dropped and live is not None and not live[0].closed:
            await live[0].close(code=TIMED_OUT, message=b"timed out")
        timed_out.append(pid)
    return timed_out


async def _idle_sweep(online: OnlineRun, sockets: GameSockets | None) -> None:
    while True:
        await asyncio.sleep(IDLE_SWEEP_S)
        try:
            await time_out_idle(online, sockets)
        except Exception:  # the sweep must go on
            log.exception("timing out idle participants failed")


async def serve_online(run: StudyRun, request: PublicRequest) -> int:
    """Build (or reuse) the game and its public assets, then :func:`serve_assets`."""
    try:
        built = await asyncio.to_thread(build_game, request.gaips, request.template)
        assets = await asyncio.to_thread(prepare_assets, built.folder, default_cache() / "online")
    except (BuildError, AssetError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return await serve_assets(run, assets, request.host, request.port, request.trusted_proxy)


async def serve_assets(run: StudyRun, assets: Assets, host: str, port: int, trusted_proxy: str | None) -> int:
    """Serve the study's participants' origin on ``host:port`` with the prepared ``assets`` until
    SIGINT or SIGTERM. Whatever was started is stopped in reverse order, on every way out (one
    exit stack)."""
    online = OnlineRun(run)
    first: Config = run.study.conditions[0].config  # type: ignore[assignment]
    missing = missing_prices(run.study)
    if missing is not None:
        print(f"error: {missing}", file=sys.stderr)
        return 2
    async with contextlib.AsyncExitStack() as stack:
        seats, planner = await seats_of(run)
        every = [*seats.values(), planner]
        stack.push_async_callback(close_seats, every)
        secrets = run.study.secrets()
        limiter = RateLimiter()
        images = ImagePool(first.images.decode_workers)
        stack.callback(images.close)
        sockets = GameSockets(online, seats, first, limiter, secrets, images, planner)
        try:
            console = await start_console(run, online, sockets, every, secrets, port)
        except OnlineError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if console is not None:
            stack.push_async_callback(console.stop)
        runner = make_runner(make_app(online, assets, sockets, limiter, trusted_proxy), limiter.limits)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        with stop_signals() as stop:
            try:
                await web.TCPSite(runner, host, port, reuse_address=True).start()
            except OSError as exc:
                in_use = exc.errno == errno.EADDRINUSE
                print(f"error: {'port in use' if in_use else 'cannot listen'} on {host}:{port}"
                      f"{'' if in_use else f': {exc.strerror or exc}'}", file=sys.stderr)
                return 2
            port = int(runner.addresses[0][1])
            for seat in every:
                if seat.factory is not None:
                    seat.factory.prime_soon()
            sweeper = asyncio.create_task(_sweep(online))
            stack.callback(sweeper.cancel)
            if online.idle_limits.any:
                idler = asyncio.create_task(_idle_sweep(online, sockets))
                stack.callback(idler.cancel)
            where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
            spec = online.spec
            entry = (f"open recruitment: http://{where}/join?PROLIFIC_PID=..." if spec.recruitment == "open"
                     else "participants' links: python -m agent study invite --study FILE --n N")
            print(f"Online study {run.study.name!r} (Godot {assets.engine}) served on http://{where}/ - {entry}; "
                  "Ctrl-C stops.", file=sys.stderr, flush=True)
            log.info("the games' transcripts go to %s", run.transcripts_dir)
            if console is not None:
                address = f"{console.url}?token={console.token}" if console.token else console.url
                print(f"Experimenter console: {address}", file=sys.stderr, flush=True)
                wizards = wizard_notice(run.study, address)
                if wizards is not None:
                    print(wizards, file=sys.stderr, flush=True)
            if not is_loopback(host) and trusted_proxy is None:
                log.warning("serving on %s without a TLS proxy in front: participants' traffic is not encrypted "
                            "(docs/online-study.md)", host)
            await stop.wait()
        log.info("shutting down: ending running turns and flushing transcripts")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHUTDOWN_S):
                await sockets.close_all()
    return 0
