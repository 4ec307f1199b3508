"""python -m agent.analyze --study: the study's participants and games joined to the sessions, and
the summary grouped by condition and by order."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from agent.analyze.__main__ import main
from agent.core.studies.run import StudyRun
from agent.core.transcript import Transcript
from agent.games import read_study

STUDY = """name: join
design: within
conditions:
  explain: {config: offline}
  silent: {config: offline}
"""


async def _transcript(folder: Path, session: str, meta: dict, seconds: float) -> None:
    t = Transcript(folder, session_id=session, tags=meta["tags"])
    await t.open()
    t.record("session_start", **meta)
    t.record("turn_start", turn=1)
    t.record("turn_end", turn=1, outcome="played", seconds=seconds)
    t.record("session_end", reason="disconnected")
    await t.close()


async def _play(tmp_path: Path) -> Path:
    """Two participants in opposite orders; P02's first game is interrupted once and played again."""
    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    study = read_study(path)
    transcripts = tmp_path / "transcripts"
    async with await StudyRun.open(study) as run:
        for pid in ("P01", "P02"):
            await run.next_participant(pid)
            n = 0
            while (a := await run.current()) is not None:
                n += 1
                session = f"{pid}-{n}"
                started = await run.game_started(a, session, None)
                meta = a.session_metadata({"game": "tangram", "player_kind": "planner", "tags": {}})
                await _transcript(transcripts, session, meta, seconds=float(a.order))
                await run.game_ended(started, completed=not (pid == "P02" and n == 1))
    return path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def test_sessions_get_condition_order_carry_over_and_completion(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    study = asyncio.run(_play(tmp_path))
    out = tmp_path / "out"
    assert main([str(tmp_path / "transcripts"), "--out", str(out), "--study", str(study), "--jobs", "1"]) == 0
    assert "study join: 2 participants, 5 games started, 5 of them among these transcripts" in capsys.readouterr().out
    rows = {r["session"]: r for r in _csv(out / "sessions.csv")}
    got = {s: (r["participant"], r["condition"], r["order"], r["previous_condition"], r["attempt"],
               r["game_completed"], r["study"]) for s, r in rows.items()}
    assert got == {
        "P01-1": ("P01", "explain", "1", "(first)", "1", "True", "join"),
        "P01-2": ("P01", "silent", "2", "explain", "1", "True", "join"),
        "P02-1": ("P02", "silent", "1", "(first)", "1", "False", "join"),
        "P02-2": ("P02", "silent", "1", "(first)", "2", "True", "join"),
        "P02-3": ("P02", "explain", "2", "silent", "1", "True", "join")}
    assert {r["session"]: r["condition"] for r in _csv(out / "turns.csv")}["P02-3"] == "explain"
    people = _csv(out / "participants.csv")
    assert [(p["participant"], p["order"], p["completed"], p["attempts"], p["state"]) for p in people] == [
        ("P01", "explain > silent", "2", "2", "completed"), ("P02", "silent > explain", "2", "3", "completed")]
    assert len(_csv(out / "study_games.csv")) == 5
    html = (out / "summary.html").read_text()
    assert "<h2>By condition</h2>" in html and "<h2>By order</h2>" in html


def test_a_study_that_does_not_load_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text('{"kind": "session_start", "session": "x"}\n')
    bad = tmp_path / "s.yaml"
    bad.write_text("name: s\ndesign: within\nconditions: {}\n")
    assert main([str(tmp_path / "t"), "--out", str(tmp_path / "o"), "--study", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: study {bad}: field 'conditions'") and err.count("\n") == 1
