"""One agent run: players from the config, a transcript, the matches, one printed line each."""

from __future__ import annotations

import logging
import random
import sys
from typing import Any

from agent.core.config import ConfigError
from agent.core.llm import LLMClient
from agent.core.prompts import PromptSet, load_prompts
from agent.core.redact import Secrets
from agent.core.transcript import Transcript
from agent.games.boardgame.client import ClientError, ClientSettings, MatchClient
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import MovePlayer, Player
from agent.games.boardgame.players.llm import TEMPLATES, LLMPlayer, rules_template
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.rules.registry import GAMES, get_rules

log = logging.getLogger(__name__)


def sample_context() -> dict[str, Any]:
    """A complete context for checking the templates at start-up."""
    from agent.games.boardgame.players.base import Turn
    from agent.games.boardgame.players.llm import prompt_context

    rules = get_rules(GAMES[0])
    return prompt_context(Turn(rules, rules.initial(), 0, 1, ("an example refusal",)), "the rules")


def load_templates(config: BoardgameConfig) -> PromptSet:
    directory = config.resolve_dir(config.prompts_dir)
    names = (*TEMPLATES, *(rules_template(game) for game in GAMES))
    return load_prompts(directory, sample_context(), names=names)


def client_settings(config: BoardgameConfig) -> ClientSettings:
    engine = config.engine
    create: dict[str, Any] = {"seat": engine.seat}
    if engine.opponent != "engine":
        create["bot"] = engine.opponent
    if engine.name:
        create["name"] = engine.name
    return ClientSettings(url=engine.url, agent_id=engine.agent_id, game=engine.board_game,
                          match_id=engine.match_id, create_settings=create,
                          max_attempts=config.play.max_attempts, decision_seconds=config.play.decision_seconds,
                          response_timeout=engine.response_timeout, reconnect_attempts=engine.reconnect_attempts)


async def run(config: BoardgameConfig) -> int:
    rng = random.Random(config.seed)
    transcript = Transcript(config.resolve_dir(config.transcripts.dir) if config.transcripts.enabled else None,
                            secrets=Secrets(config.secret_values()))
    await transcript.open()
    llm: LLMClient | None = None
    prompts: PromptSet | None = None
    if config.uses_llm():
        try:
            prompts = load_templates(config)
        except Exception as exc:  # checked at start-up already; a file changed since
            print(f"error: {exc}", file=sys.stderr)
            return 2
        llm = LLMClient(config.llm, config.api_key())

    def offline(rules: GameRules[Any]) -> MovePlayer:
        kind = "random" if config.player == "random" else "best"
        return make_offline(kind, rules, random.Random(rng.random()), seconds=config.play.search_seconds)

    def player(rules: GameRules[Any]) -> Player:
        if llm is not None and prompts is not None:
            return LLMPlayer(llm, prompts, record=transcript.record)
        return offline(rules)

    status = 0
    try:
        for index in range(config.play.matches):
            settings = client_settings(config)
            if index and settings.match_id is not None:
                break  # a joined match is played once
            client = MatchClient(settings, player, offline,
                                 on_event=lambda kind, data: transcript.record(kind, data=data))
            try:
                result = await client.play()
            except ClientError as exc:
                print(f"error: {exc}", file=sys.stderr)
                transcript.record("error", message=str(exc))
                return 1
            transcript.record("result", line=result.line(), outcome=result.outcome, winners=result.winners)
            print(result.line(), flush=True)
            if result.status != "ended":
                status = 1
    finally:
        if llm is not None:
            await llm.aclose()
        await transcript.close()
    return status


__all__ = ["ConfigError", "run"]
