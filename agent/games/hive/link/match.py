"""Play one configured match: LLM client, coach, transcript and session around the TCP client."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.core.redact import Secrets
from agent.core.studies.metadata import study_metadata
from agent.core.transcript import transcript_for
from agent.games.hive.config import HiveConfig
from agent.games.hive.link.client import ClientOutcome, play
from agent.games.hive.link.session import HiveSession
from agent.games.hive.protocol import MatchLog, ProtocolError, parse_log

log = logging.getLogger(__name__)


@dataclass
class MatchOutcome:
    team: str
    client: ClientOutcome
    score: int
    arena_log: MatchLog | None = None
    session: dict[str, Any] = field(default_factory=dict)

    def result_line(self) -> str:
        seat = "?" if self.client.player is None else str(self.client.player)
        if self.arena_log is not None and self.arena_log.turns:
            last = self.arena_log.turns[-1]
            scores = (last.score0, last.score1)
            winner = self.arena_log.winner
            who = "draw" if winner is None else f"player {winner} ({self.arena_log.names[winner]})"
            return (f"hive: team={self.team} seat={seat} score={self.score} "
                    f"arena-score={scores[0]}-{scores[1]} winner={who} end={self.client.ending} "
                    f"turns={self.client.states}")
        return (f"hive: team={self.team} seat={seat} score={self.score} winner=unknown "
                f"(the arena does not send scores; pass --arena-log) end={self.client.ending} "
                f"turns={self.client.states}")


def _read_log(path: Path) -> MatchLog | None:
    try:
        return parse_log(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ProtocolError) as exc:
        log.warning("cannot read the arena log %s: %s", path, exc)
        return None


async def play_configured(config: HiveConfig, arena_log: Path | None = None) -> MatchOutcome:
    """Dial the arena from ``config``, play to the end, and say how it went."""
    secrets = Secrets(config.secret_values())
    transcript = transcript_for(config, secrets)
    await transcript.open()
    llm = None
    prompts = None
    if config.uses_llm():
        from agent.core.llm import LLMClient
        from agent.games.hive.coach.coach import load_hive_prompts
        from agent.games.hive.coach.sample import llm_sample

        llm = LLMClient(config.llm, config.api_key())
        prompts = load_hive_prompts(config.resolve_dir(config.prompts_dir))
        sample = llm_sample(config)  # a model server primed while the bees start
        llm.prime_soon(sample)
    session = HiveSession(team=config.arena.team, seed=config.seed, transcript=transcript, llm=llm,
                          prompts=prompts, coach_config=config.coach if config.uses_llm() else None,
                          direct=config.direct if llm is not None else None)
    study = await asyncio.to_thread(study_metadata, config, config.resolve_dir(config.prompts_dir))
    transcript.record("session_start", team=config.arena.team, arena=f"{config.arena.host}:{config.arena.port}",
                      player=config.player, **study)
    try:
        outcome = await play(config.arena.host, config.arena.port, config.arena.team, session,
                             connect_timeout=config.arena.connect_timeout, idle_timeout=config.arena.idle_timeout)
    except asyncio.CancelledError:
        # Interrupted (Ctrl-C): still stop the coach and flush what the transcript has.
        transcript.record("session_end", reason="interrupted", ending="interrupted", **session.summary())
        await session.aclose()
        if llm is not None:
            await llm.aclose()
        await transcript.close()
        raise
    await session.aclose()
    if llm is not None:
        await llm.aclose()
    parsed = None
    if arena_log is not None and outcome.ending == "gameover":
        # The arena writes its last lines just before closing; give the file a moment to be complete.
        for _ in range(20):
            parsed = await asyncio.to_thread(_read_log, arena_log)
            if parsed is not None and parsed.result_line:
                break
            await asyncio.sleep(0.1)
    summary = session.summary()
    transcript.record("session_end", reason=outcome.ending, ending=outcome.ending, detail=outcome.detail,
                      seat=outcome.player, states=outcome.states, **summary)
    await transcript.close()
    return MatchOutcome(config.arena.team, outcome, session.score, parsed, summary)
