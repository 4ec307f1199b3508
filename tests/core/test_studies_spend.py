"""An online study's running LLM spend: seeded from the database once, added to per call in memory,
checked against the caps with no query, each cap's crossing told once."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.core.studies.online import OnlineRun
from agent.core.studies.run import StudyRun
from agent.core.studies.spend import usd
from tests.core.study_child import load

STUDY = """name: capped
design: within
conditions:
  a: {}
  b: {}
online:
  spend_cap_participant_usd: 0.5
  spend_cap_study_usd: 0.8
"""


async def started_game(online: OnlineRun) -> tuple[str, int]:
    """A new participant's first game, started: their id and the game's row id."""
    (invite,) = await online.invite(1)
    visit = await online.start(invite.code)
    assert visit is not None and visit.assignment is not None
    started = await online.run.game_started(visit.assignment, f"s-{visit.participant}", None)
    return visit.participant, started.game_id


async def test_the_totals_start_from_the_database_and_then_count_in_memory(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(STUDY)
    async with await StudyRun.open(load(tmp_path / "study.yaml")) as run:
        online = OnlineRun(run)
        one, game = await started_game(online)
        await run.store.set_game_spend(game, 0.3, "llm")  # an earlier run of the agent
        two, _ = await started_game(online)
        assert await online.over_cap(one) is None
        assert online.spend.spent(one) == pytest.approx(0.3) and online.spend.spent() == pytest.approx(0.3)
        await run.store.set_game_spend(game, 5.0, "llm")  # read once: the meter does not look again
        assert await online.over_cap(one) is None and online.spend.spent(one) == pytest.approx(0.3)

        told: list[str] = []
        online.spend.subscribe(told.append)
        guard = online.spend.account(one)
        guard.add(0.15)
        assert guard.refusal() is None and told == []
        guard.add(0.1)  # $0.55 for the participant
        assert guard.refusal() == "participant L0001's LLM spend $0.55 reached the cap $0.50"
        assert told == ["participant L0001's LLM spend $0.55 reached the cap $0.50: the offline planner plays the "
                        "rest of their games"]
        guard.add(0.01)
        assert len(told) == 1  # once per participant

        await online.over_cap(two)
        other = online.spend.account(two)
        assert other.refusal() is None
        other.add(0.3)  # $0.86 for the study
        assert other.refusal() == "the study's LLM spend $0.86 reached its cap $0.80"
        assert guard.refusal() == "the study's LLM spend $0.86 reached its cap $0.80"
        assert told[1:] == ["the study's LLM spend $0.86 reached its cap $0.80: the offline planner plays every game "
                            "from now on (running games at their next LLM call)"]
        other.add(0.0)
        other.add(-1.0)  # nothing, or nonsense, costs nothing
        assert online.spend.spent() == pytest.approx(0.86)


def test_amounts_read_as_dollars_and_cents_or_small_fractions() -> None:
    assert [usd(v) for v in (0.0, 0.5, 0.0035, 0.000001, 12.345, 1234.5)] == [
        "$0.00", "$0.50", "$0.0035", "$0.000001", "$12.35", "$1,234.50"]
