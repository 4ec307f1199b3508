"""Idle time-outs (core/studies/idle.py, OnlineRun.apply_idle): judged by the server from the last sign
of life the store recorded, with a clock the test gives (no waiting); handled as ``online.on_leave``
says; the limits validated in the study file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.core.studies.idle import IdleLimits, idle_for, parse_stamp
from agent.core.studies.online import OnlineRun
from agent.core.studies.run import StudyRun
from agent.core.studies.study_file import StudyError
from tests.core.study_child import load
from tests.questionnaire_study import QUESTIONNAIRES

STUDY = """name: idle
design: within
conditions:
  a: {}
  b: {}
online:
  consent: "We record your moves and chat."
  on_leave: {on_leave}
  page_timeout_s: 120
  game_timeout_s: 600
  timeout_warning_s: 30
""" + QUESTIONNAIRES

ABOUT = {"age": 30, "games": "never"}


def study_at(tmp_path: Path, on_leave: str = "drop", study: str = STUDY) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(study.replace("{on_leave}", on_leave))
    return path


async def last_sign(run: StudyRun, pid: str) -> datetime:
    row = await run.store.participant(pid)
    assert row is not None and row.active_at is not None
    return parse_stamp(row.active_at)


def test_idle_for_says_why_only_past_the_limit_of_where_the_participant_is() -> None:
    limits = IdleLimits(page_s=120, game_s=None, warn_s=30)
    since = "2026-12-06T10:00:00.000000Z"
    start = parse_stamp(since)
    assert idle_for(limits, "page", since, start + timedelta(seconds=120)) is None
    assert idle_for(limits, "page", since, start + timedelta(seconds=121)) == \
        "idle 121 s on a questionnaire page (the study allows 120 s)"
    assert idle_for(limits, "game", since, start + timedelta(days=3)) is None  # no game limit
    assert not IdleLimits().any and limits.any


async def test_idle_on_a_page_times_out_drops_and_gives_the_sequence_to_the_next(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        first, second = await online.invite(2)
        visit = await online.answer_consent(first.code, True)
        assert visit is not None and visit.stage == "questionnaire"
        pid = visit.participant
        assert pid is not None
        seen = await last_sign(run, pid)
        assert await online.apply_idle(seen + timedelta(seconds=119)) == []
        # A draft is a sign of life: the limit counts from it.
        assert await online.draft(first.code, 1, {"age": 3}, {})
        later = await last_sign(run, pid)
        assert later >= seen
        assert await online.apply_idle(later + timedelta(seconds=100)) == []
        timed = await online.apply_idle(later + timedelta(seconds=121))
        assert timed == [(pid, "idle 121 s on a questionnaire page (the study allows 120 s)", True)]
        assert await online.apply_idle(later + timedelta(seconds=500)) == []  # once
        status = (await run.status()).participants[0]
        assert (status.state, status.outcome, status.place) == ("dropped", "timed_out", "timed out")
        assert status.dropped_why == "timed out: idle 121 s on a questionnaire page (the study allows 120 s)"
        back = await online.visit(first.code)
        assert back is not None and back.stage == "timed_out"
        assert await online.ticket(first.code) is None
        # The sequence goes back to the balance, as for a drop.
        nxt = await online.answer_consent(second.code, True)
        assert nxt is not None and nxt.participant is not None
        row = await run.store.participant(nxt.participant)
        assert row is not None and row.replaces == pid and row.sequence == 1


async def test_in_a_game_the_game_limit_applies_and_an_ai_turn_is_a_sign_of_life(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        (invite,) = await online.invite(1)
        visit = await online.answer_consent(invite.code, True)
        assert visit is not None and visit.participant is not None
        pid = visit.participant
        visit = await online.submit(invite.code, 1, "en", ABOUT, {})
        assert visit is not None and visit.stage == "play"
        got = await online.ticket(invite.code)
        assert got is not None
        started = await run.game_started(got[1], "s-1", None)
        seen = await last_sign(run, pid)
        assert await online.apply_idle(seen + timedelta(seconds=300)) == []  # past the page's limit, not the game's
        await run.store.count_ai_turns(started.game_id, 1)
        turn = await last_sign(run, pid)
        assert await online.apply_idle(turn + timedelta(seconds=599)) == []
        timed = await online.apply_idle(turn + timedelta(seconds=601))
        assert [(p, dropped) for p, _, dropped in timed] == [(pid, True)] and "on a game" in timed[0][1]
        game = (await run.store.games(pid))[0]
        assert game.ended_at is not None and not game.completed and game.end_reason == "timed out"


async def test_with_on_leave_keep_a_timed_out_participant_keeps_their_place_and_comes_back(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path, "keep"))) as run:
        online = OnlineRun(run)
        (invite,) = await online.invite(1)
        visit = await online.answer_consent(invite.code, True)
        assert visit is not None and visit.participant is not None
        pid = visit.participant
        timed = await online.apply_idle(await last_sign(run, pid) + timedelta(seconds=200))
        assert [(p, dropped) for p, _, dropped in timed] == [(pid, False)]
        status = (await run.status()).participants[0]
        assert (status.state, status.outcome) == ("active", "timed_out")
        assert status.place.startswith("timed out (kept")
        back = await online.visit(invite.code)  # a sign of life: back where they were
        assert back is not None and back.stage == "questionnaire"
        status = (await run.status()).participants[0]
        assert (status.state, status.outcome) == ("active", None)
        assert status.place == "questionnaire about (before the first game)"


async def test_no_limits_no_time_outs(tmp_path: Path) -> None:
    plain = "\n".join(line for line in STUDY.splitlines() if "timeout" not in line) + "\n"
    async with await StudyRun.open(load(study_at(tmp_path, study=plain))) as run:
        online = OnlineRun(run)
        (invite,) = await online.invite(1)
        await online.answer_consent(invite.code, True)
        assert await online.apply_idle(datetime.now(UTC) + timedelta(days=30)) == []


@pytest.mark.parametrize(("lines", "message"), [
    ("  page_timeout_s: 120\n  timeout_warning_s: 120\n",
     "timeout_warning_s (120) must be shorter than page_timeout_s"),
    ("  game_timeout_s: 60\n", "timeout_warning_s (60) must be shorter than game_timeout_s (60)"),
    ("  page_timeout_s: 5\n", "page_timeout_s"),
    ("  game_timeout_s: -1\n", "game_timeout_s"),
])
def test_the_limits_are_checked_in_the_study_file(tmp_path: Path, lines: str, message: str) -> None:
    text = "name: idle\ndesign: within\nconditions:\n  a: {}\n  b: {}\nonline:\n" + lines
    with pytest.raises(StudyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load(study_at(tmp_path, study=text))
