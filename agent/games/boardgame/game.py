"""The Boardgame Protocol as the core sees it: dial an engine, create or join a match, play it out.

``python -m agent --game boardgame --connect ws://127.0.0.1:8765 --agent-id A [--match M]``
prints one line per match with the result. Heavy modules load inside ``main``.
"""

from __future__ import annotations

import argparse

from agent.core.config import ConfigError, check_api_key
from agent.core.game import Game, lazy_llm_sample
from agent.games.boardgame.config import BoardgameConfig


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--connect", metavar="URL", help="the engine's WebSocket URL (default ws://127.0.0.1:8765)")
    group.add_argument("--agent-id", help="our agent id (default: agent)")
    group.add_argument("--match", metavar="MATCH_ID", help="join this match instead of creating one")
    group.add_argument("--board-game", help="the game to create, e.g. tictactoe or connect_four "
                                            "(default: the engine's)")
    group.add_argument("--opponent", choices=("engine", "random", "strong", "none"),
                       help="who takes the other seat of a created match (default: the engine's bot)")
    group.add_argument("--seat", type=int, choices=(1, 2), help="our seat in a created match (1 moves first)")
    group.add_argument("--player", choices=("offline", "llm", "random"), help="who decides (default: the config's)")
    group.add_argument("--matches", type=int, help="matches to play one after another (default 1)")
    group.add_argument("--search-seconds", type=float, help="connect-four search time per move (default 1)")


def apply_arguments(config: BoardgameConfig, args: argparse.Namespace) -> BoardgameConfig:
    engine: dict[str, object] = {}
    for flag, field in (("connect", "url"), ("agent_id", "agent_id"), ("match", "match_id"),
                        ("board_game", "board_game"), ("opponent", "opponent"), ("seat", "seat")):
        value = getattr(args, flag, None)
        if value is not None:
            engine[field] = value
    play: dict[str, object] = {}
    if getattr(args, "matches", None) is not None:
        play["matches"] = args.matches
    if getattr(args, "search_seconds", None) is not None:
        play["search_seconds"] = args.search_seconds
    data = config.model_dump(exclude={"source"})
    data["engine"] = {**data["engine"], **engine}
    data["play"] = {**data["play"], **play}
    if getattr(args, "player", None) is not None:
        data["player"] = args.player
    from pydantic import ValidationError

    try:
        updated = BoardgameConfig.model_validate({**data, "source": config.source})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"command line: {field}: {err['msg']}") from exc
    return updated


def check(config: BoardgameConfig) -> None:
    """The key and the templates of an LLM config, the game code, before anything dials."""
    from agent.games.boardgame.rules.registry import GAMES

    if config.engine.board_game is not None and config.engine.board_game not in GAMES:
        raise ConfigError(f"engine.board_game {config.engine.board_game!r} is not a game this agent knows "
                          f"({', '.join(GAMES)})")
    if config.uses_llm():
        check_api_key(config)
        from agent.games.boardgame.templates import load_templates

        load_templates(config)


async def main(config: BoardgameConfig, args: argparse.Namespace) -> int:
    import sys

    from agent.core.game import Interrupted, run_interruptible
    from agent.games.boardgame.runner import run

    try:
        return await run_interruptible(run(config))
    except Interrupted:
        # Ctrl-C or SIGTERM: the match was left (the engine's clock decides it), the transcript flushed.
        print("boardgame: interrupted before the match ended", file=sys.stderr, flush=True)
        return 130



GAME = Game(
    name="boardgame",
    summary="the Boardgame Protocol 1.0.0: dials an engine (ws://127.0.0.1:8765), creates or joins a match",
    config_model=BoardgameConfig,
    main=main,
    add_arguments=add_arguments,
    apply_arguments=apply_arguments,
    check=check,
    llm_sample=lazy_llm_sample("agent.games.boardgame.llm_sample"),
)
