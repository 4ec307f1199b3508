"""A study's data made for the results tests without playing games: participants go through the
example study's flow in the store (as the simulator's pilot does, sim/pilot.py), answer every page
with the pilot's own answers (core/studies/simulated.py, ``effects`` on the scales), and each game
leaves a short transcript whose pieces placed are drawn per condition. Some participants can be
screened out (two failed attention checks), stop after their first game, withdraw, or play a game
during an LLM outage. No tests live here."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from pathlib import Path

from agent.core.resources import PROJECT_DIR
from agent.core.studies.run import StudyRun
from agent.core.studies.simulated import simulated_answers
from agent.core.transcript import Transcript
from agent.games import read_study

EXAMPLE = PROJECT_DIR / "configs" / "study-example.yaml"


def example_copy(folder: Path) -> Path:
    """The shipped example study, its database in ``folder``."""
    path = folder / "study.yaml"
    path.write_text(EXAMPLE.read_text(encoding="utf-8") + "store: pilot.db\n", encoding="utf-8")
    return path


async def _game(folder: Path, session: str, meta: dict, pieces: int, outage: bool) -> None:
    t = Transcript(folder, session_id=session, tags=meta["tags"])
    await t.open()
    t.record("session_start", **meta)
    if outage:
        t.record("llm_server", state="down", line="the model's server does not answer")
    for turn in range(1, 5):
        t.record("turn_start", turn=turn)
        t.record("turn_end", turn=turn, outcome="played", seconds=1.0, pieces_on_board=min(pieces, turn * 2))
    t.record("session_end", reason="finished")
    await t.close()


async def simulate(path: Path, participants: int, effects: Mapping[str, float], seed: int = 0, *,
                   screened_out: Collection[str] = (), stop_after_one: Collection[str] = (),
                   withdraw: Collection[str] = (), outage: Collection[str] = ()) -> list[str]:
    """Run ``participants`` (P01, P02, ...) through the study at ``path``; returns their ids."""
    study = read_study(path)
    q = study.questionnaires
    assert q is not None
    rng = random.Random(seed)
    ids = [f"P{i:02d}" for i in range(1, participants + 1)]
    transcripts = path.parent / "pilot-transcripts"
    async with await StudyRun.open(study) as run:
        for pid in ids:
            await run.next_participant(pid)
            row = await run.store.participant(pid)
            assert row is not None
            failures = 0
            for step in run.steps_of(row):
                if (await run.store.participant(pid)).state == "dropped":  # type: ignore[union-attr]
                    break
                if step.kind == "game":
                    if pid in stop_after_one and step.position > 1:
                        await run.drop(pid)
                        break
                    a = await run.current()
                    assert a is not None and a.condition == step.condition
                    session = f"{pid}-{step.position}"
                    started = await run.game_started(a, session, None)
                    meta = a.session_metadata({"game": "tangram", "player_kind": "planner", "tags": {}})
                    pieces = rng.randint(3, 6)
                    await _game(transcripts, session, meta, pieces, pid in outage and step.position == 1)
                    await run.game_ended(started, completed=True)
                elif step.questionnaire is not None:
                    answers, other = simulated_answers(q.specs[step.questionnaire], step.condition, effects, rng,
                                                       len(row.conditions))
                    if pid in screened_out and "check" in answers and failures < 2:
                        answers["check"] = "square"
                        failures += 1
                    await run.answer_page(pid, step, "en", answers, other)
            if pid in withdraw:
                await run.withdraw(pid)
    return ids
