"""A study run: participants move through their sequences, session metadata carries the study, and
a process killed with SIGKILL in any state resumes exactly where it was."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent.core.studies.metadata import study_metadata
from agent.core.studies.migrations import SCHEMA_VERSION
from agent.core.studies.run import StudyRun
from agent.core.studies.store import StoreError
from tests.core.study_child import load

ROOT = Path(__file__).resolve().parents[2]
STUDY = """name: pilot
design: within
conditions:
  a: {overrides: {tags: {wave: '2'}}}
  b: {}
  c: {}
"""


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    return path


async def test_a_participant_plays_their_sequence_and_completes(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        assert await run.current() is None  # nobody started yet: no game is the study's
        await run.next_participant("P01")
        played = []
        while (assignment := await run.current()) is not None:
            started = await run.game_started(assignment, f"s{assignment.position}", study_path.parent / "t.jsonl")
            played.append((assignment.condition, assignment.order, dict(assignment.config.tags)))
            assert await run.game_ended(started, completed=True)
        assert played == [("a", 1, {"wave": "2", "participant": "P01", "condition": "a", "order": "1"}),
                          ("b", 2, {"participant": "P01", "condition": "b", "order": "2"}),
                          ("c", 3, {"participant": "P01", "condition": "c", "order": "3"})]
        status = await run.status()
        assert status.participants[0].state == "completed" and status.counts["completed"] == 1
        # Named relative to the database's folder (the transcript is beside it), found again through the run.
        games = await run.store.games()
        assert [g.transcript for g in games] == ["t.jsonl"] * 3
        assert [run.transcript_of(g) for g in games] == [study_path.parent / "t.jsonl"] * 3


async def test_session_metadata_carries_study_plan_and_tags(study_path: Path) -> None:
    study = load(study_path)
    async with await StudyRun.open(study) as run:
        await run.next_participant("P01")
        assignment = await run.current()
        assert assignment is not None
        base = study_metadata(study.condition("a").config)
        meta = assignment.session_metadata(base)
        assert meta["study"] == "pilot" and meta["plan_sha256"] == study.plan.hash
        assert meta["tags"] == {"wave": "2", "participant": "P01", "condition": "a", "order": "1"}
        assert meta["config_sha256"] == base["config_sha256"]  # tags never change the config hash
        assert "study" not in base  # the plain metadata stays as it was


async def test_a_game_not_completed_is_played_again_on_the_same_condition(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        await run.next_participant("P01")
        first = await run.current()
        assert first is not None
        started = await run.game_started(first, "s1", None)
        await run.game_ended(started, completed=False, reason="socket closed")
        again = await run.current()
        assert again is not None and (again.condition, again.position) == ("a", 1)
        assert (await run.game_started(again, "s2", None)).attempt == 2


async def test_only_one_participant_is_active_and_dropped_sequences_are_reused(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        await run.next_participant("P01")
        with pytest.raises(StoreError, match="P01 is still active"):
            await run.next_participant("P02")
        await run.pause("P01")
        p2 = await run.next_participant("P02")
        await run.drop("P02")
        p3 = await run.next_participant("P03")
        assert (p2.sequence, p3.sequence, p3.replaces) == (2, 2, "P02")
        with pytest.raises(StoreError, match="P03 is active: pause or drop them before resuming P01"):
            await run.resume("P01")
        with pytest.raises(StoreError, match="participant P02 is dropped and cannot be resumed"):
            await run.resume("P02")
        with pytest.raises(StoreError, match="already exists"):
            await run.next_participant("P01")
        with pytest.raises(StoreError, match="participant id 'a b'"):
            await run.next_participant("a b")


async def test_a_game_of_a_participant_dropped_meanwhile_is_not_the_studys(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        await run.next_participant("P01")
        assignment = await run.current()
        assert assignment is not None
        started = await run.game_started(assignment, "s1", None)
        await run.drop("P01")
        assert not await run.game_ended(started, completed=True)  # the drop ended it already
        with pytest.raises(StoreError, match="P01 is dropped"):
            await run.game_started(assignment, "s2", None)


async def test_a_changed_plan_is_refused_with_one_line(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        await run.next_participant("P01")
    _write(study_path, STUDY.replace("design: within", "design: between"))
    with pytest.raises(StoreError) as info:
        await StudyRun.open(load(study_path))
    assert "holds the study 'pilot' with plan" in str(info.value) and "\n" not in str(info.value)


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _kill_after(study_path: Path, *actions: str) -> None:
    """Run the child until it is in the state, then SIGKILL it (no clean-up of any kind)."""
    child = subprocess.Popen([sys.executable, "-m", "tests.core.study_child", str(study_path), *actions],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.strip() == "ready", (line, child.stderr.read() if child.stderr else "")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


async def _current(study_path: Path) -> tuple[str, str, int] | None:
    async with await StudyRun.open(load(study_path)) as run:
        a = await run.current()
        return None if a is None else (a.participant, a.condition, a.position)


@pytest.mark.parametrize("actions, expected", [
    ((), None),
    (("next:P01",), ("P01", "a", 1)),
    (("next:P01", "start"), ("P01", "a", 1)),  # started, never ended: the same condition again
    (("next:P01", "start", "fail"), ("P01", "a", 1)),
    (("next:P01", "start", "end"), ("P01", "b", 2)),
    (("next:P01", "start", "end", "start"), ("P01", "b", 2)),
    (("next:P01", "pause:P01"), None),
    (("next:P01", "drop:P01"), None),
    (("next:P01", "start", "end", "start", "end", "start", "end"), None),  # completed
])
async def test_resume_after_a_kill_in_every_state(study_path: Path, actions: tuple[str, ...],
                                                  expected: tuple[str, str, int] | None) -> None:
    _kill_after(study_path, *actions)
    assert await _current(study_path) == expected


async def test_after_a_kill_mid_game_the_replay_is_a_new_attempt_and_the_old_one_is_closed(study_path: Path) -> None:
    _kill_after(study_path, "next:P01", "start")
    async with await StudyRun.open(load(study_path)) as run:
        assignment = await run.current()
        assert assignment is not None
        replay = await run.game_started(assignment, "again", None)
        games = await run.store.games("P01")
        assert replay.attempt == 2 and [(g.attempt, g.completed, g.end_reason) for g in games] == [
            (1, False, "replaced by attempt 2"), (2, None, None)]


async def test_resume_after_a_kill_when_paused_or_dropped(study_path: Path) -> None:
    _kill_after(study_path, "next:P01", "start", "end", "pause:P01")
    async with await StudyRun.open(load(study_path)) as run:
        await run.resume("P01")
        a = await run.current()
        assert a is not None and (a.condition, a.position) == ("b", 2)
        await run.drop("P01")
    _kill_after(study_path, "next:P02")
    async with await StudyRun.open(load(study_path)) as run:
        status = await run.status()
        assert [(p.id, p.state, p.sequence) for p in status.participants] == [("P01", "dropped", 1),
                                                                             ("P02", "active", 1)]


async def test_a_kill_inside_a_write_transaction_leaves_nothing_half_done(study_path: Path) -> None:
    _kill_after(study_path, "next:P01", "hold-write")
    async with await StudyRun.open(load(study_path)) as run:
        assert [p.id for p in await run.store.participants()] == ["P01"]  # GHOST was never committed
        await run.pause("P01")  # and the database is writable at once: no lock left behind
        await run.next_participant("P02")


async def test_two_connections_at_once_share_the_slot_and_the_later_one_counts(study_path: Path) -> None:
    async with await StudyRun.open(load(study_path)) as run:
        await run.next_participant("P01")
        a, b = await asyncio.gather(run.current(), run.current())
        assert a == b and a is not None
        first, second = await asyncio.gather(run.game_started(a, "s1", None), run.game_started(a, "s2", None))
        assert sorted([first.attempt, second.attempt]) == [1, 2]
        older = first if first.attempt == 1 else second
        assert not await run.game_ended(older, completed=True)  # replaced: its end moves nobody on
        current = await run.current()
        assert current is not None and current.position == 1


def test_two_processes_starting_participants_at_once_leave_one_active(study_path: Path) -> None:
    children = [subprocess.Popen([sys.executable, "-m", "agent", "study", "next", pid, "--study", str(study_path)],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for pid in ("P01", "P02")]
    results = [(c.wait(timeout=120), c.stderr.read() if c.stderr else "") for c in children]
    assert sorted(code for code, _ in results) == [0, 2], results
    assert any("is still active" in err for _, err in results), results


async def test_several_games_per_condition_are_tagged_with_their_repeat(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text("name: r\ndesign: fixed\ngames_per_condition: 2\nconditions: {a: {}, b: {}}\n")
    async with await StudyRun.open(load(path)) as run:
        await run.next_participant("P01")
        seen = []
        while (a := await run.current()) is not None:
            seen.append(dict(a.config.tags))
            await run.game_ended(await run.game_started(a, f"s{a.position}", None), completed=True)
        assert [(t["condition"], t["order"], t["repeat"]) for t in seen] == [
            ("a", "1", "1"), ("a", "1", "2"), ("b", "2", "1"), ("b", "2", "2")]


async def test_a_damaged_or_newer_database_is_one_line(study_path: Path) -> None:
    study = load(study_path)
    _write(study.store, "not a database at all " * 100)
    with pytest.raises(StoreError, match="cannot be used: file is not a database"):
        await StudyRun.open(study)
    study.store.unlink()
    async with await StudyRun.open(study):
        pass
    with sqlite3.connect(study.store) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match=f"its schema is version 99, this agent knows up to {SCHEMA_VERSION}"):
        await StudyRun.open(study)


async def test_a_lab_game_waits_for_the_consent_its_participant_pages_ask(tmp_path: Path) -> None:
    """With questionnaires and a consent text, the lab's participant pages open with the consent page:
    no game of theirs is bound before they agreed, even where no questionnaire comes before it."""
    import yaml

    from agent.games import read_study

    data = yaml.safe_load((ROOT / "configs" / "study-example.yaml").read_text())
    data["questionnaires"].pop(data["flow"].pop("before_first"))
    data["online"] = {"consent": "You agree to take part."}
    data.pop("store", None)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    async with await StudyRun.open(read_study(path)) as run:
        await run.next_participant("P01")
        assert await run.current() is not None
        assert await run.playable() is None
        await run.store.set_consent("P01", True)
        playable = await run.playable()
        assert playable is not None and playable.position == 1
