"""Online participants: many active at once, each let in by their own link code, each game by its
own ticket; invitations, open recruitment with Prolific's ids, consent, completion, leaving."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.core.studies.migrations import MIGRATIONS, SCHEMA_VERSION, migrate
from agent.core.studies.online import OnlineRun, ProlificIds, digest
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError
from tests.core.study_child import load

STUDY = """name: web-pilot
design: within
conditions:
  a: {}
  b: {}
online:
  recruitment: {recruitment}
  consent: "We record your moves and chat. Taking part is voluntary."
  completion_code: C0DE42
  completion_url: https://app.prolific.com/submissions/complete?cc=C0DE42
  on_leave: drop
  leave_grace_s: 60
  max_participants: 3
"""


def study_at(tmp_path: Path, recruitment: str = "invite") -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace("{recruitment}", recruitment))
    return path


async def play_all(run: StudyRun, online: OnlineRun, code: str) -> list[str]:
    played = []
    while (got := await online.ticket(code)) is not None:
        ticket, assignment = got
        assert await online.admit(ticket) == assignment
        started = await run.game_started(assignment, f"s-{code[:4]}-{assignment.position}", None)
        played.append(assignment.condition)
        await run.game_ended(started, completed=True)
        assert await online.admit(ticket) is None  # a used ticket is refused
    return played


async def test_invited_participants_play_at_once_in_counterbalanced_order(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        invites = await online.invite(2)
        assert [i.number for i in invites] == [1, 2] and invites[0].code != invites[1].code
        assert invites[0].link("https://study.example.org/") == f"https://study.example.org/p/{invites[0].code}"
        visits = [await online.start(i.code) for i in invites]
        assert [v.stage for v in visits if v] == ["consent", "consent"]
        for i in invites:
            await online.answer_consent(i.code, True)
        # Both active together, each with a ticket for their own first game.
        first = [await online.ticket(i.code) for i in invites]
        assert all(f is not None for f in first)
        rows = await run.store.participants()
        assert [(r.id, r.state, r.online, r.source) for r in rows] == [
            ("L0001", "active", True, "invite"), ("L0002", "active", True, "invite")]
        assert await run.current() is None  # the in-lab question: no in-lab participant is active
        orders = [await play_all(run, online, i.code) for i in invites]
        assert orders == [["a", "b"], ["b", "a"]]
        done = await online.visit(invites[0].code)
        assert done is not None and done.stage == "done" and done.completion_code == "C0DE42"
        assert done.completion_url is not None and done.completion_url.endswith("cc=C0DE42")
        # Nothing secret is kept: neither the codes nor the tickets are in the database.
        raw = await asyncio.to_thread(lambda: b"".join(p.read_bytes() for p in tmp_path.glob("study.db*")))
        assert invites[0].code.encode() not in raw and digest(invites[0].code).encode() in raw


async def test_forged_replaced_and_other_participants_tickets_are_refused(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        one, two = await online.invite(2)
        for i in (one, two):
            await online.start(i.code)
            await online.answer_consent(i.code, True)
        got = await online.ticket(one.code)
        assert got is not None
        old, assignment = got
        for forged in (None, "", "x" * 24, old[:-1] + ("A" if old[-1] != "A" else "B"), "../../etc/passwd",
                       one.code):  # the link code is no ticket
            assert await online.admit(forged) is None
        # A reload (or a second browser) takes a new ticket: the old one stops working.
        again = await online.ticket(one.code)
        assert again is not None and again[1] == assignment
        assert await online.admit(old) is None
        admitted = await online.admit(again[0])
        assert admitted is not None and admitted.participant == "L0001"
        theirs = await online.ticket(two.code)
        assert theirs is not None
        other = await online.admit(theirs[0])
        assert other is not None and other.participant == "L0002"  # bound to its own participant
        assert await online.ticket("y" * 24) is None and await online.start("y" * 24) is None


async def test_consent_refused_drops_the_participant_and_gives_no_game(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        (one,) = await online.invite(1)
        await online.start(one.code)
        assert await online.ticket(one.code) is None  # no game before the consent page is answered
        visit = await online.answer_consent(one.code, False)
        assert visit is not None and visit.stage == "refused"
        assert await online.ticket(one.code) is None
        row = (await run.store.participants())[0]
        assert (row.consent, row.state) == ("refused", "dropped")
        # The answer is final: agreeing afterwards changes nothing.
        again = await online.answer_consent(one.code, True)
        assert again is not None and again.stage == "refused"


async def test_open_recruitment_records_prolific_ids_and_refuses_a_second_take(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path, "open"))) as run:
        online = OnlineRun(run)
        ids = ProlificIds.parse({"PROLIFIC_PID": "5f0c" * 6, "STUDY_ID": "s1", "SESSION_ID": "sess1"})
        assert ids is not None
        code, visit = await online.enter_open(ids)
        # The visit is kept, but nobody starts (no sequence is taken) before the consent.
        assert visit.participant is None and visit.stage == "consent"
        assert await run.store.participants() == []
        # The same Prolific session coming back before consenting: its visit moves to the new code.
        code, _ = await online.enter_open(ids)
        assert (await online.visit(code)) is not None
        started = await online.answer_consent(code, True)
        assert started is not None and started.participant == "W00001" and started.stage == "play"
        row = (await run.store.participants())[0]
        assert (row.prolific_pid, row.prolific_study, row.prolific_session, row.source) == (
            "5f0c" * 6, "s1", "sess1", "open")
        # The same Prolific session coming back: the same participant, a new code, the old one dead.
        code2, visit2 = await online.enter_open(ids)
        assert visit2.participant == "W00001" and code2 != code
        assert await online.visit(code) is None and await online.visit(code2) is not None
        with pytest.raises(StoreError, match="already taken part"):
            await online.enter_open(ProlificIds("5f0c" * 6, "s1", "another-session"))
        # Without platform ids: anonymous participants, up to max_participants (3) who started.
        for _ in range(2):
            anonymous, _ = await online.enter_open(None)
            await online.answer_consent(anonymous, True)
        with pytest.raises(StoreError, match="its 3 participants"):
            await online.enter_open(None)


def test_prolific_ids_are_checked() -> None:
    assert ProlificIds.parse({"STUDY_ID": "x"}) is None
    with pytest.raises(ValueError, match="SESSION_ID"):
        ProlificIds.parse({"PROLIFIC_PID": "abc", "SESSION_ID": "<script>"})


async def test_invitation_only_study_refuses_the_open_address(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        with pytest.raises(StoreError, match="invitation only"):
            await OnlineRun(run).enter_open(None)


async def test_a_participant_who_left_is_dropped_after_the_grace_and_their_sequence_reused(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        one, two, three = await online.invite(3)
        await online.start(one.code)
        await online.start(two.code)
        await online.left(one.code)
        assert await online.apply_leaving() == []  # still within the grace
        later = datetime.now(UTC) + timedelta(seconds=61)
        await online.left(two.code)
        await online.left(two.code, gone=False)  # back in time: kept
        assert await online.apply_leaving(later) == ["L0001"]
        third = await online.start(three.code)
        assert third is not None
        rows = {r.id: r for r in await run.store.participants()}
        assert rows["L0003"].sequence == rows["L0001"].sequence and rows["L0003"].replaces == "L0001"
        assert rows["L0002"].state == "active"


async def test_in_lab_rule_of_one_active_participant_still_holds_beside_online_ones(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        for invite in await online.invite(2):
            await online.start(invite.code)
        await run.next_participant("P01")
        with pytest.raises(StoreError, match="P01 is still active"):
            await run.next_participant("P02")
        current = await run.current()
        assert current is not None and current.participant == "P01"
        with sqlite3.connect(run.store.path) as conn, pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO participants (id, number, sequence, conditions, state, created_at, updated_at)"
                         " VALUES ('P02', 99, 1, '[]', 'active', 'x', 'x')")


async def test_many_participants_take_tickets_at_once(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        invites = await online.invite(40)
        visits = await asyncio.gather(*(online.start(i.code) for i in invites))
        assert len({v.participant for v in visits if v}) == 40
        for i in invites:
            await online.answer_consent(i.code, True)
        tickets = await asyncio.gather(*(online.ticket(i.code) for i in invites))
        sequences = [t[1].condition for t in tickets if t]
        assert sequences.count("a") == sequences.count("b") == 20


def test_schema_one_databases_migrate_to_online(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO participants (id, number, sequence, conditions, state, created_at, updated_at) "
                 "VALUES ('P01', 1, 1, '[\"a\"]', 'active', 'x', 'x')")
    conn.execute("COMMIT")
    assert migrate(conn) == 1
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT online, consent FROM participants").fetchone() == (0, None)
    conn.close()


async def test_a_participant_who_never_starts_a_game_releases_their_sequence(tmp_path: Path) -> None:
    # on_leave keep or drop alike: a participant who agreed and never connected a game holds a
    # sequence and played nothing; after start_grace_s they are dropped and the next one takes it.
    path = study_at(tmp_path)
    path.write_text(path.read_text().replace("on_leave: drop", "on_leave: keep"))
    async with await StudyRun.open(load(path)) as run:
        online = OnlineRun(run)
        one, two, three = await online.invite(3)
        await online.answer_consent(one.code, True)
        await online.answer_consent(two.code, True)
        got = await online.ticket(two.code)
        assert got is not None
        await run.game_started(got[1], "s-two", None)  # two started their game; one never did
        assert await online.apply_leaving() == []
        later = datetime.now(UTC) + timedelta(seconds=online.spec.start_grace_s + 1)
        assert await online.apply_leaving(later) == ["L0001"]
        drops = [e for e in await run.store.events() if e["action"] == "drop"]
        assert drops[0]["participant"] == "L0001" and "never started a game" in drops[0]["detail"]
        await online.answer_consent(three.code, True)
        rows = {r.id: r for r in await run.store.participants()}
        assert rows["L0003"].sequence == rows["L0001"].sequence and rows["L0003"].replaces == "L0001"


async def test_the_study_database_and_its_side_files_are_private(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))) as run:
        online = OnlineRun(run)
        (one,) = await online.invite(1)
        await online.answer_consent(one.code, True)
        modes = await asyncio.to_thread(lambda: {p.name: oct(p.stat().st_mode & 0o777)
                                                 for p in tmp_path.glob("study.db*")})
        assert set(modes) >= {"study.db", "study.db-wal", "study.db-shm"}
        assert modes == dict.fromkeys(modes, "0o600")


async def test_an_older_database_made_readable_by_others_is_made_private(tmp_path: Path) -> None:
    async with await StudyRun.open(load(study_at(tmp_path))):
        pass
    (tmp_path / "study.db").chmod(0o644)
    async with await StudyRun.open(load(study_at(tmp_path))):
        assert (tmp_path / "study.db").stat().st_mode & 0o777 == 0o600
