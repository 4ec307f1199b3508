"""One agent run: players from the config, a transcript, the matches, one printed line each."""

from __future__ import annotations

import asyncio
import logging
import random
import sys
import traceback
from typing import Any

from jinja2 import TemplateError

from agent.core.config import ConfigError
from agent.core.llm import LLMClient
from agent.core.prompts import PromptSet
from agent.core.redact import Secrets
from agent.core.studies.metadata import study_metadata
from agent.core.transcript import transcript_for
from agent.games.boardgame.client import ClientError, ClientSettings, MatchClient
from agent.games.boardgame.config import BoardgameConfig
from agent.games.boardgame.players.base import MovePlayer, Player, TextPlayer
from agent.games.boardgame.players.guarded import GuardedPlayer
from agent.games.boardgame.players.llm import LLMPlayer, rules_template
from agent.games.boardgame.players.offline import make_offline
from agent.games.boardgame.rules.base import GameRules
from agent.games.boardgame.templates import load_templates

log = logging.getLogger(__name__)

TURN_RECORDS = ("turn_start", "turn_end")
"""Client events whose fields are all our own (turn id, outcome, seconds, counts)."""


def guard_seconds(config: BoardgameConfig) -> float:
    """Each guard search's budget: the offline search's, but well inside one attempt's time."""
    return min(config.play.search_seconds, config.play.decision_seconds / 4)


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
    """Play the configured matches, one transcript each (a match is a study's session)."""
    rng = random.Random(config.seed)
    secrets = Secrets(config.secret_values())
    # Once per run: it reads every template file to hash it.
    study = await asyncio.to_thread(study_metadata, config, config.resolve_dir(config.prompts_dir))
    llm: LLMClient | None = None
    prompts: PromptSet | None = None
    if config.uses_llm():
        try:
            prompts = load_templates(config)
        except Exception as exc:  # checked at start-up already; a file changed since
            print(f"error: {exc}", file=sys.stderr)
            return 2
        llm = LLMClient(config.llm, config.api_key())
        from agent.games.boardgame.llm_sample import llm_sample

        sample = llm_sample(config)  # a model server primed while the match is made
        llm.prime_soon(sample)

    def offline(rules: GameRules[Any]) -> MovePlayer:
        kind = "random" if config.player == "random" else "best"
        return make_offline(kind, rules, random.Random(rng.random()), seconds=config.play.search_seconds)

    async def play_match(index: int, settings: ClientSettings) -> int:
        transcript = transcript_for(config, secrets)
        await transcript.open()
        transcript.record("session_start", player=config.player, match_index=index, url=settings.url,
                          agent_id=settings.agent_id, board_game=settings.game, match_id=settings.match_id,
                          **study)

        def player(rules: GameRules[Any]) -> Player:
            if llm is not None and prompts is not None:
                model = LLMPlayer(llm, prompts, transcript=transcript, max_calls=config.play.max_llm_calls,
                               decision_seconds=config.play.decision_seconds)
                if config.llm.guard == "decided":
                    return GuardedPlayer(model, rules, guard_seconds(config), transcript)
                return model
            return offline(rules)

        def text_player(game: str) -> TextPlayer:
            """The LLM player for a game we have no plugin for, if prompts/boardgame has its rules text."""
            if llm is None or prompts is None:
                raise ClientError(f"the game {game!r} has no rules plugin here; only the LLM player can play it")
            name = rules_template(game)
            try:
                prompts.env.get_template(f"{name}.j2")
            except TemplateError as exc:
                raise ClientError(f"the game {game!r} has no rules plugin here and no rules text: write "
                                  f"{prompts.directory / (name + '.j2')} ({exc})") from None
            return LLMPlayer(llm, prompts, transcript=transcript, max_calls=config.play.max_llm_calls,
                               decision_seconds=config.play.decision_seconds)

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind in TURN_RECORDS:
                transcript.record(kind, **data)  # the analysis reads turn, outcome, seconds at the top
            else:
                transcript.record(kind, data=data)  # pushes carry the engine's keys: never spread them
            if kind == "match_created":
                # The id another agent needs to join (--match), before the match is played out.
                print(f"boardgame: created {data['game']} match {data['match_id']}", file=sys.stderr, flush=True)

        client = MatchClient(settings, player, offline, on_event=on_event,
                             on_frame=lambda direction, text: transcript.record(f"frame_{direction}", frame=text),
                             text_player=text_player if llm is not None else None)
        reason = "interrupted"
        try:
            result = await client.play()
            transcript.record("result", line=result.line(), outcome=result.outcome, winners=result.winners,
                              match_id=result.match_id, moves=result.moves, illegal=result.illegal,
                              fallbacks=result.fallbacks)
            reason = result.outcome
            print(result.line(), flush=True)
            return 0 if result.status == "ended" else 1
        except ClientError as exc:
            print(f"error: {exc}", file=sys.stderr)
            transcript.record("error", message=str(exc))
            reason = "error"
            raise
        except asyncio.CancelledError:
            transcript.record("interrupted")
            raise
        except Exception as exc:  # a bug of ours: one line for the user, the traceback in the transcript
            print(f"error: the match failed: {type(exc).__name__}: {str(exc)[:300]} "
                  "(a bug in the agent; its traceback is in the transcript)", file=sys.stderr)
            transcript.record("error", message=f"{type(exc).__name__}: {exc}"[:2000],
                              traceback=traceback.format_exc(limit=20)[-8000:])
            reason = "error"
            raise ClientError(str(exc)) from None
        finally:
            transcript.record("session_end", reason=reason)
            await transcript.close()

    status = 0
    try:
        for index in range(config.play.matches):
            settings = client_settings(config)
            if index and settings.match_id is not None:
                break  # a joined match is played once
            try:
                if await play_match(index, settings):
                    status = 1
            except ClientError:
                return 1  # said on stderr and in the transcript
    finally:
        if llm is not None:
            await llm.aclose()
    return status


__all__ = ["ConfigError", "run"]
