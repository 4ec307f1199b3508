"""A study game as a session would leave it, without a game: its transcript (one turn played)
beside the study's database, its rows started and ended. No tests live here."""

from __future__ import annotations

from agent.core.studies.run import Assignment, StudyRun
from agent.core.transcript import Transcript


async def play_recorded_game(run: StudyRun, assignment: Assignment, completed: bool = True) -> None:
    t = Transcript(run.transcripts_dir, tags=assignment.config.tags)
    started = await run.game_started(assignment, t.session_id, t.path)
    await t.open()
    t.record("session_start", **assignment.session_metadata({"game": "tangram", "tags": {}}))
    t.record("turn_start", turn=1)
    t.record("turn_end", turn=1, outcome="played", seconds=1.0)
    t.record("session_end", reason="disconnected")
    await t.close()
    await run.game_ended(started, completed=completed)
