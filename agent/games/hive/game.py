"""The bee arena as the core sees it: flags, start-up checks, and one match played to its end.

``python -m agent --game hive --connect 127.0.0.1:8000`` dials the arena, plays one match as one
team and prints one result line; the exit status is 0 when the match reached ``gameover``, 1
when the arena could not be reached or went away, 2 for a bad configuration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.core.config import ConfigError, check_api_key
from agent.core.game import Game, lazy_llm_sample
from agent.games.hive.config import HiveConfig


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--connect", metavar="HOST:PORT",
                       help="the arena to join (default: from the config, 127.0.0.1:8000)")
    group.add_argument("--team", help="team name sent to the arena")
    group.add_argument("--seed", type=int, help="seed for the strategy's tie-breaks")
    group.add_argument("--arena-log", type=Path, metavar="FILE",
                       help="the arena's log file, read after gameover for the winner (the wire never says)")


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"--connect {text!r} is not HOST:PORT (e.g. 127.0.0.1:8000)")
    return host, int(port)


def apply_arguments(config: HiveConfig, args: argparse.Namespace) -> HiveConfig:
    arena = config.arena.model_copy()
    if args.connect:
        arena.host, arena.port = parse_address(args.connect)
    if args.team:
        try:
            arena = type(arena).model_validate({**arena.model_dump(), "team": args.team})
        except ValueError as exc:
            raise ConfigError(f"--team {args.team!r}: must be 1-64 printable characters without commas") from exc
    update: dict[str, object] = {"arena": arena}
    if args.seed is not None:
        update["seed"] = args.seed
    return config.model_copy(update=update)


def check(config: HiveConfig) -> None:
    """Key and templates, before dialling the arena."""
    check_api_key(config)
    if config.direct.enabled and not config.uses_llm():
        raise ConfigError("direct.enabled needs player: llm (the LLM picks the moves)")
    if config.uses_llm():
        from agent.games.hive.coach.coach import load_hive_prompts

        load_hive_prompts(config.resolve_dir(config.prompts_dir))


async def main(config: HiveConfig, args: argparse.Namespace) -> int:
    from agent.core.game import Interrupted, run_interruptible
    from agent.games.hive.link.match import play_configured

    try:
        outcome = await run_interruptible(play_configured(config, getattr(args, "arena_log", None)))
    except Interrupted:
        # Ctrl-C or SIGTERM: the match left the arena (it counts a forfeit) and flushed the transcript.
        print("hive: interrupted before the match ended", file=sys.stderr, flush=True)
        return 130
    print(outcome.result_line(), flush=True)
    if outcome.client.ending != "gameover":
        print(f"error: {outcome.client.detail or outcome.client.ending}", file=sys.stderr)
        return 1
    return 0



GAME = Game(
    name="hive",
    summary="the Hive Helsinki bee arena: dials the arena (TCP), plays one match, prints the result",
    config_model=HiveConfig,
    main=main,
    add_arguments=add_arguments,
    apply_arguments=apply_arguments,
    check=check,
    llm_sample=lazy_llm_sample("agent.games.hive.coach.sample"),
)
